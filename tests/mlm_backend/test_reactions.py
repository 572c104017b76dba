"""The reaction SMILES masked LMs of rxnmapper (ALBERT) and rxnfp (BERT), registered offline.

Oracles: the model's own full forward pass (plain transformers, float32) on ids of the SMILES
with ``[MASK]`` put through the ``[CLS] ... [SEP]`` tokenizer built from the package's
``vocab.txt`` (independent of HFMaskedLM's framing and head split); torch's own float64
LayerNorm and decoder on the model's pre-LayerNorm activations (independent of the float64
head's algorithm); score differences realised by real forwards (below the weight bound); the
example reaction's true tokens (masked-token accuracy); the first lines of the shipped
``vocab.txt`` written out by hand; and hand-split SMILES for the regex. The loader tests need
the packages (``pip install --no-deps rxnmapper==0.4.3 rxnfp==0.1.0``, as scripts/setup.sh
installs them) and are skipped without them.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from glauber.core.conditionals import log_conditionals
from glauber.errors import MissingDependencyError, VocabularyError
from glauber.estimators import glauber_chains, influence_upper_bound, search_influence
from glauber.mlm_backend import load_model
from glauber.mlm_backend.heads import layernorm_head_parts
from glauber.mlm_backend.reactions import (
    RXNFP_SMILES_REGEX,
    RXNMAPPER_SMILES_REGEX,
    smiles_splitter,
    window_alphabet,
)
from glauber.mlm_backend.sequences import REACTION_SMILES
from glauber.models import resolve_model

pytestmark = pytest.mark.usefixtures("single_thread")
PACKAGES = {"rxnmapper": "AlbertForMaskedLM", "rxnfp": "BertForMaskedLM"}
SPECIALS = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
#: The first 20 ordinary lines of the shipped vocab.txt (the same file in both packages).
FIRST_20 = ["c", "C", "(", ")", "O", "1", "2", "=", "N", ".", "n", "3", "F", "Cl", ">>", "~",
            "-", "4", "[C@H]", "S"]
#: Float32's unit roundoff.
U32 = 2.0**-24


def _needs(package: str):
    return pytest.mark.skipif(importlib.util.find_spec(package) is None,
                              reason=f"needs pip install --no-deps {package}")


@pytest.fixture(scope="module", params=[pytest.param(p, marks=_needs(p)) for p in PACKAGES])
def reaction_lm(request):
    """``(name, model over the whole reaction)``, loaded once per package."""
    mlm = load_model(request.param)
    return request.param, mlm.with_length(len(mlm.encode(REACTION_SMILES)))


def _masked_forward(mlm, i):
    """The plain transformers model's logits at position ``i`` of the reaction, masked there,
    through the package's own ``[CLS] ... [SEP]`` tokenizer."""
    tokens = mlm.vocabulary.tokens(REACTION_SMILES)
    tok = mlm.tokenizer
    text = "".join(tok.mask_token if k == i else t for k, t in enumerate(tokens))
    enc = tok(text, return_tensors="pt")
    assert enc["input_ids"].shape[1] == mlm.n + 2
    with torch.inference_mode():
        return mlm.model(**enc).logits[0, i + 1].double()


@pytest.mark.parametrize("regex", [RXNMAPPER_SMILES_REGEX, RXNFP_SMILES_REGEX])
def test_the_smiles_regex_splits_atoms_bonds_and_names_a_bad_character(regex):
    split = smiles_splitter(regex)
    assert split("Br[C@@H](Cl)c1ccccc1>>O=C=O") == [
        "Br", "[C@@H]", "(", "Cl", ")", "c", "1", "c", "c", "c", "c", "c", "1", ">>", "O", "=",
        "C", "=", "O"]
    assert "".join(split(REACTION_SMILES)) == REACTION_SMILES
    with pytest.raises(VocabularyError, match=r"'X' at character 4 of the SMILES"):
        split("CCOX>>C")


def test_only_rxnfps_regex_reads_three_digit_ring_closures():
    assert smiles_splitter(RXNFP_SMILES_REGEX)("C%(123)CC%(123)") == [
        "C", "%(123)", "C", "C", "%(123)"]
    with pytest.raises(VocabularyError, match=r"'%' at character 2 of the SMILES"):
        smiles_splitter(RXNMAPPER_SMILES_REGEX)("C%(123)CC%(123)")


def test_a_missing_package_says_what_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in PACKAGES else real(name, *a))
    for name in PACKAGES:
        with pytest.raises(MissingDependencyError, match=f"pip install --no-deps {name}=="):
            load_model(name)


def test_the_shipped_model_scores_as_its_own_forward_and_predicts_the_reaction(reaction_lm):
    name, mlm = reaction_lm
    assert type(mlm.model).__name__ == PACKAGES[name] and mlm.head == "float64"
    # 591 tokens less the five specials and ten [unused] slots
    assert mlm.q == 576 and not any(t in SPECIALS or t.startswith("[unused") for t in mlm.labels)
    assert mlm.labels[:20] == tuple(FIRST_20)
    x = mlm.encode(REACTION_SMILES)
    n = len(x)
    assert n == 54 and mlm.decode(x) == REACTION_SMILES
    scores = mlm.scores(x[None].expand(n, n), torch.arange(n))
    for i in (0, 17, 40, 53):
        plain = _masked_forward(mlm, i)[list(mlm.vocab)]
        # the float64 head against the model's own float32 head: float32 rounding of the
        # head's last layers only (a few hundred units of roundoff of the largest logit)
        assert float((scores[i] - plain).abs().max()) <= 512 * U32 * float(plain.abs().max())
    accuracy = float((scores.argmax(1) == x).double().mean())
    print(f"{name} masked-token accuracy on the example reaction: {accuracy:.3f}")
    assert accuracy > 0.7


def test_the_head_only_path_is_the_plain_model_to_float32_rounding(reaction_lm):
    _, mlm = reaction_lm
    masked = load_model(mlm.name, head="masked").with_length(mlm.n)
    assert masked.head == "masked"
    x = mlm.encode(REACTION_SMILES)
    sites = torch.tensor([3, 31, 44])
    got = masked.scores(x[None].expand(3, -1), sites)
    assert got.dtype == torch.float32
    for row, i in zip(got, sites.tolist()):
        plain = _masked_forward(mlm, i)[list(mlm.vocab)]
        # the same float32 operations on one gathered row: equal up to the order of the sums
        assert float((row.double() - plain).abs().max()) <= 64 * U32 * float(plain.abs().max())


def test_the_float64_head_is_torchs_float64_layernorm_and_decoder(reaction_lm):
    _, mlm = reaction_lm
    parts = layernorm_head_parts(mlm.model)
    x = mlm.encode(REACTION_SMILES)
    sites = torch.tensor([0, 26, 45, 53])
    ids = mlm.masked_input_ids(x[None].expand(4, -1), sites)
    with torch.inference_mode():
        hidden = mlm._parts.encoder(input_ids=ids).last_hidden_state[torch.arange(4), sites + 1]
        pre = parts.pre(hidden).double()
        z = torch.nn.functional.layer_norm(
            pre, pre.shape[-1:], parts.norm.weight.double(), parts.norm.bias.double(),
            parts.norm.eps)
        ref = z @ parts.decoder.weight.double().T
        for bias in (parts.decoder.bias, parts.bias):
            if bias is not None:
                ref = ref + bias.double()
    ref = ref[:, list(mlm.vocab)]
    got = mlm.scores(x[None].expand(4, -1), sites).double()
    # float64 all through, rounded once to the float32 of the returned scores (half an ulp);
    # the model's float32 head misses by hundreds of ulps (the test above)
    assert bool(((got - ref).abs() <= U32 * ref.abs() + 1e-10).all())


def test_the_weight_bound_holds_over_searched_and_realised_influence(reaction_lm):
    name, mlm = reaction_lm
    window = resolve_model(f"{name}@reaction[45-46]")
    assert window.q == 576 and window.decode(window.default_states()[0]) == "Sc"
    bound = window.oscillation_upper_bound()
    assert bound.method == "layernorm-head" and bound.Delta.shape == (2, 2)
    # realised oscillation of site 45's scores as site 46 takes 6 tokens
    states = np.repeat(window.default_states(), 6, axis=0)
    states[:, 1] = [0, 1, 5, 10, 19, 300]
    s = window.scores(states, np.zeros(6, dtype=np.int64)).double()
    diff = s[:, :, None] - s[:, None, :]
    assert float((diff[:, None] - diff[None, :]).max()) <= bound.Delta[0, 1]
    found = search_influence(window, 4.0, budget=24, seed=0)
    upper = influence_upper_bound(window, 4.0, tabulate=False)
    assert found.C.max() > 0 and np.all(upper.C >= found.C - found.tolerance)


def test_special_tokens_are_never_sampled_nor_allowed(reaction_lm):
    name, mlm = reaction_lm
    ids = mlm.tokenizer.convert_tokens_to_ids(sorted(SPECIALS))
    assert not set(ids) & set(mlm.vocab)
    # at tau = 50 the conditionals are nearly uniform over the 576 tokens
    run = glauber_chains(mlm, 50.0, mlm.encode(REACTION_SMILES)[None].expand(2, -1), 20,
                         seed=1)
    text = "".join(mlm.decode(run.final_states))
    assert text != REACTION_SMILES * 2 and not any(t in text for t in SPECIALS | {"[unused"})
    with pytest.raises(VocabularyError, match=r"\[MASK\]"):
        load_model(name, allowed_tokens=["C", "O", "[MASK]"])


def test_a_smiles_character_outside_the_alphabet_is_named_with_its_position(reaction_lm):
    name, mlm = reaction_lm
    with pytest.raises(VocabularyError, match=r"'X' at character 7 of the SMILES"):
        mlm.encode("CC(C)SX>>C")
    with pytest.raises(VocabularyError, match=r"character 7"):
        resolve_model(f"{name}@CC(C)SX>>C")


def test_the_alphabet_window_is_the_conditional_renormalised_on_the_alphabet(reaction_lm):
    from glauber.experiments.domains import reaction_window

    name, mlm = reaction_lm
    alphabet = window_alphabet(REACTION_SMILES)
    assert alphabet == [*FIRST_20, "[O-]", "[K+]"]
    window = reaction_window(name)
    assert (window.n, window.q) == (3, 22) and list(window.labels) == alphabet
    states = np.array([[19, 0, 5], [2, 14, 21]])  # S c 1, then ( >> [K+]
    sites = np.array([0, 2])
    got = log_conditionals(window, states, sites, 0.5)
    full = [mlm.labels.index(t) for t in alphabet]
    embedded = window.embed(torch.as_tensor(states))  # alphabet indices -> tokens of the reaction
    rows = mlm.scores(torch.as_tensor(full)[embedded], torch.as_tensor(window.sites[sites]))
    ref = torch.log_softmax(rows[:, full] / 0.5, dim=1)
    torch.testing.assert_close(torch.as_tensor(got), ref, rtol=0, atol=1e-10)
