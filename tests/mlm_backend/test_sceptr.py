"""SCEPTR's TCR masked LMs (glauber.mlm_backend.sceptr), registered offline as sceptr and
sceptr-cdr3.

Oracles: the package's own model (``sceptr.variant.*()``, libtcrlm's ``Bert`` and tokeniser
fed a TCR built from its V genes through tidytcells) for the tokens and the logits; the shipped
TCR's true residues (masked-token accuracy); the exact chain of a window (ExactChain) for the
weight bound's order upper >= exact >= searched; hand-made bad input for the errors. The tests
that read weights need ``pip install --no-deps sceptr==1.2.0`` and skip without it; the
cross-check also needs libtcrlm (``pip install sceptr==1.2.0`` brings it) and skips without it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json

import numpy as np
import pytest
import torch

from glauber.core.conditionals import log_conditionals
from glauber.core.restrict import restrict
from glauber.errors import MissingDependencyError, SequenceLengthError, VocabularyError
from glauber.estimators import glauber_chains, influence_upper_bound, search_influence
from glauber.exact import ExactChain
from glauber.mlm_backend import load_model
from glauber.mlm_backend.sceptr import TCR_LOOPS, parse_tcr
from glauber.mlm_backend.sequences import AMINO_ACIDS, SCEPTR_EXAMPLE_TCR
from glauber.models import resolve_model

pytestmark = pytest.mark.usefixtures("single_thread")
needs_sceptr = pytest.mark.skipif(importlib.util.find_spec("sceptr") is None,
                                  reason="needs pip install --no-deps sceptr==1.2.0")
needs_libtcrlm = pytest.mark.skipif(
    any(importlib.util.find_spec(p) is None for p in ("libtcrlm", "tidytcells", "pandas")),
    reason="needs libtcrlm (pip install sceptr==1.2.0 installs it)")
#: The example TCR as sceptr's documentation gives it (V alleles and CDR3s).
EXAMPLE = ("TRAV38-1*01", "CAHRSAGGGTSYGKLTF", "TRBV2*01", "CASSEFQGDNEQFF")
CDR3B_START = 43  # 0-based index of the CDR3B's first residue in the six-loop state


@pytest.fixture(scope="module")
def sceptr():
    return load_model("sceptr", tcr="sceptr-example")


def _all_masked(model):
    x = model.default_states()
    n = model.n
    return x.expand(n, n), torch.arange(n)


@needs_sceptr
@needs_libtcrlm
@pytest.mark.parametrize("name, variant", [("sceptr", "mlm_only"),
                                           ("sceptr-cdr3", "cdr3_only_mlm_only")])
def test_tokens_and_logits_are_the_packages_own(name, variant):
    import sceptr.variant
    from libtcrlm import schema

    ref = getattr(sceptr.variant, variant)()
    tcr = schema.make_tcr_from_components(*EXAMPLE)
    tokens = ref._tokeniser.tokenise(tcr)  # [n + 1, 4]: <cls> and one row per residue
    model = load_model(name, tcr="sceptr-example")
    states, sites = _all_masked(model)
    n = model.n
    assert n == tokens.shape[0] - 1 == (57 if name == "sceptr" else 31)
    masked = tokens[None].repeat(n, 1, 1)
    masked[torch.arange(n), torch.arange(n) + 1, 0] = 1  # libtcrlm's MASK, as its collator
    assert torch.equal(model.token_rows(states, sites), masked)
    with torch.no_grad():
        logits = ref._bert.get_mlm_token_predictions_for(masked)[torch.arange(n), sites + 1]
    scores = model.scores(states, sites)
    torch.testing.assert_close(scores, logits, atol=2e-5, rtol=1e-5)
    accuracy = float((scores.argmax(1) == states[0]).double().mean())
    assert accuracy > 0.6, accuracy


@needs_sceptr
def test_the_shipped_tcr_is_predicted_and_reads_back(sceptr):
    assert sceptr.n == 57 and sceptr.q == 20 and "".join(sceptr.labels) == AMINO_ACIDS
    assert sceptr.layout.lengths == (7, 8, 17, 5, 6, 14) and sceptr.layout.loops == TCR_LOOPS
    assert sceptr.decode(sceptr.default_states()[0]) == SCEPTR_EXAMPLE_TCR
    assert sceptr.decode(sceptr.encode("EFQ")) == "EFQ"  # a window's state: plain residues
    states, sites = _all_masked(sceptr)
    scores = sceptr.scores(states, sites)
    print("sceptr masked-token accuracy on the example TCR:",
          float((scores.argmax(1) == states[0]).double().mean()))
    assert float((scores.argmax(1) == states[0]).double().mean()) > 0.7


@needs_sceptr
def test_special_tokens_are_never_sites_nor_values_at_any_temperature(sceptr):
    # the vocabulary is libtcrlm's amino-acid tokens 3..22: NULL 0, MASK 1 and CLS 2 are not
    assert tuple(sceptr.vocab) == tuple(range(3, 23))
    window = restrict(sceptr, sceptr.default_states()[0].numpy(),
                      np.arange(CDR3B_START + 4, CDR3B_START + 7))
    for tau in (1e-3, 1.0, 1e6):
        logp = log_conditionals(window, window.default_states().repeat(3, 0), np.arange(3), tau)
        assert logp.shape == (3, 20) and torch.isfinite(logp).all()
    end = glauber_chains(window, 1e6, window.default_states().repeat(8, 0), 30, seed=0)
    final = end.final_states
    assert final.min() >= 0 and final.max() < 20
    assert set("".join(window.decode(final.reshape(-1, window.n)))) <= set(AMINO_ACIDS)


@needs_sceptr
def test_weight_bound_exceeds_exact_oscillation_exceeds_searched(sceptr):
    window = restrict(sceptr, sceptr.default_states()[0].numpy(),
                      [CDR3B_START + 5, CDR3B_START + 6])
    tau = 1.0
    chain = ExactChain(window, tau)
    D, C = chain.oscillation_matrix(), chain.influence_matrix()
    upper = influence_upper_bound(window, tau, tabulate=False)
    assert upper.method == "layernorm-head"
    off = ~np.eye(2, dtype=bool)
    assert np.all(upper.Delta[off] >= D[off]) and np.all(upper.C >= C - 1e-12)
    found = search_influence(window, tau, budget=20, seed=0)  # half the 40-row table
    assert np.all(found.C <= C + found.tolerance) and np.all(found.Delta <= D + 1e-4)
    print(f"Delta: bound {upper.Delta[0, 1]:.4g} >= exact {D.max():.4g} >= searched "
          f"{found.Delta.max():.4g}; C: bound {upper.C.max():.4g} >= exact {C.max():.4g} >= "
          f"searched {found.C.max():.4g}")
    assert D.max() > 0  # the window's sites do influence each other


def test_an_amino_acid_outside_the_alphabet_names_itself_its_loop_and_site():
    with pytest.raises(VocabularyError, match=r"'X' at CDR3B position 3 \(site 46\)"):
        parse_tcr("TSENNYY/QEAYKQQN/CAHRSAGGGTSYGKLTF/SNHLY/FYNNEI/CAXSEFQGDNEQFF", TCR_LOOPS)
    with pytest.raises(VocabularyError, match="capitals"):
        parse_tcr("cass", TCR_LOOPS)
    with pytest.raises(SequenceLengthError, match="4 '/'-separated loops"):
        parse_tcr("A/C/D/E", TCR_LOOPS)
    layout, residues = parse_tcr(SCEPTR_EXAMPLE_TCR, ("CDR3A", "CDR3B"))  # keeps the CDR3s
    assert residues == "CAHRSAGGGTSYGKLTFCASSEFQGDNEQFF" and layout.lengths == (17, 14)
    layout, residues = parse_tcr("CASSF", TCR_LOOPS)  # a lone CDR3B
    assert layout.lengths == (0, 0, 0, 0, 0, 5) and residues == "CASSF"


def test_a_missing_package_or_weights_file_says_what_to_do(monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "sceptr" else real(name, *a))
    with pytest.raises(MissingDependencyError, match=r"pip install --no-deps sceptr==1\.2\.0"):
        load_model("sceptr")
    spec = importlib.machinery.ModuleSpec("sceptr", None, is_package=True)
    spec.submodule_search_locations = [str(tmp_path)]
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: spec if name == "sceptr" else real(name, *a))
    where = tmp_path / "_model_saves" / "SCEPTR_CDR3_only_MLM_only"
    with pytest.raises(MissingDependencyError, match="config.json and state_dict.pt") as info:
        load_model("sceptr-cdr3")
    assert f"in {where}: put those files" in str(info.value)


@needs_sceptr
def test_a_tcr_that_disagrees_with_the_models_layout_is_refused(sceptr):
    with pytest.raises(SequenceLengthError, match="loop lengths"):
        sceptr.encode("TSENNYY/QEAYKQQN/CAHRSAGGGTSYGKLTF/SNHLY/FYNNEI/CASSEF")
    with pytest.raises(SequenceLengthError, match="with_context"):
        sceptr.with_length(20)
    other = sceptr.with_context("///SNHLY/FYNNEI/CASSEF")  # the beta chain only
    assert other.n == 17 and other.layout.lengths == (0, 0, 0, 5, 6, 6)
    assert other.cache_key != sceptr.cache_key
    assert load_model("sceptr", n=6).decode(other.encode("CASSEF")) == "CASSEF"


@needs_sceptr
@pytest.mark.slow  # about 10 s on an idle core: the exact stage of 8,000 states
def test_a_three_site_window_is_certified_exactly_end_to_end(tmp_path, monkeypatch, capsys):
    from glauber.cli import main

    monkeypatch.setenv("GLAUBER_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "cert.json"
    code = main(["certify", "--model", "sceptr", "--context", "sceptr-example",
                 "--sites", "48-50", "--no-bracket", "--pairs", "0", "--rectangles", "10",
                 "--contexts", "1", "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "sceptr[positions 48-50 of 57]" in text and "known exactly: t_mix(0.25) =" in text
    cert = json.loads(out.read_text())
    assert cert["n"] == 3 and cert["q"] == 20 and cert["exact"]["num_states"] == 20 ** 3
    assert cert["source"]["spec"] == "sceptr@sceptr-example[48-50]"
    window = resolve_model(cert["source"]["spec"])  # what glauber recheck rebuilds
    assert window.decode(window.default_states()[0]) == "EFQ"  # CDR3B residues 5-7
    thm5 = next(c for c in cert["claims"] if c["key"] == "thm5-corrected")
    assert thm5["holds"] and thm5["rigorous"]
    assert 1 <= cert["exact"]["tmix"] == thm5["exact"] <= thm5["bound"]


@needs_sceptr
def test_the_same_seed_gives_the_same_chains(sceptr):
    window = resolve_model("sceptr@sceptr-example[46-49]")
    starts = window.default_states().repeat(4, 0)
    runs = [glauber_chains(window, 1.0, starts, 20, seed=7) for _ in range(2)]
    other = glauber_chains(window, 1.0, starts, 20, seed=8)
    first, second, third = (r.final_states for r in (*runs, other))
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, third)
