"""The verdict that opens ``glauber certify``'s table: the answer first, categories consistent.

Oracles:
- the exact chain, enumerated independently of the certificate (``ExactChain.mixing_time`` and
  ``ExactChain.influence_matrix``): the verdict's t_mix must be that number, and a window whose
  exact ``rho(C) >= 1`` must list "Theorem 5, corrected" under *proved* (a proved negative),
  never under *gives nothing here*;
- Perron-Frobenius monotonicity: a searched (realised) influence matrix with ``rho >= 1``
  proves that no certificate exists (docs/theory.md), so the full-chain verdict says so;
- Theorem 8's closed form on the Ising cycle: in an aligned state every site's margin is
  ``Delta* = 4 J`` (docs/theory.md, `thm8-escape`), so the escape bound
  ``|V| e^{-Delta*/tau} = 2 e^{-4/tau}`` is >= 1 (vacuous) exactly when ``tau >= 4 / ln 2``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from glauber.certify import Certificate, certify, format_certificate
from glauber.certify.stages import build_claims
from glauber.certify.verdict import CATEGORIES, LEGEND, WIDTH, verdict_answers, verdict_lines
from glauber.core.restrict import RestrictedModel
from glauber.errors import InvalidParameterError
from glauber.exact import ExactChain
from glauber.models import resolve_model
from glauber.toy_models import IsingModel, PlantedBasinModel

SMALL = dict(n_rectangles=5, budget=5, n_pairs=1)
DATA = Path(__file__).parent / "data"
#: A window of a toy chain whose exact rho(C) >= 1 (checked below by enumeration).
WINDOW = "curie-weiss:n=8,alpha=3@0,1,0,1,1,0,1,1[2-4]"


def _block(cert, **kw) -> str:
    return "\n".join(verdict_lines(cert, **kw))


def _category(block: str, title: str) -> str:
    """The items listed under one category of the verdict (empty when it says nothing)."""
    assert title in CATEGORIES
    # at the start of a line: an answer may contain "  proved:" (the bracket's, after its label)
    start = block.index(f"\n  {title}:")
    ends = [block.index(f"\n  {t}:", start + 1) for t in CATEGORIES
            if f"\n  {t}:" in block[start + 1:]] + [block.index("  legend")]
    return block[start:min(e for e in ends if e > start)]


def _answer(cert, question: str, **kw) -> str:
    return dict(verdict_answers(cert, **kw))[question]


def _well_formed(block: str) -> None:
    for line in block.splitlines():
        assert len(line) <= WIDTH, line
        assert not line.rstrip().endswith("..."), line  # wrapped, never cut


def test_window_answers_with_the_exact_tmix_and_a_proved_negative():
    model = resolve_model(WINDOW)
    assert isinstance(model, RestrictedModel) and model.n == 3
    tau = 0.5
    chain = ExactChain(model, tau)
    tmix = chain.mixing_time(0.25)
    rho = max(abs(np.linalg.eigvals(chain.influence_matrix())))
    assert rho > 1.05  # the oracle: no Theorem 5 certificate can exist for this window
    cert = certify(model, tau, n_rectangles=5, budget=5, n_pairs=0)
    block = _block(cert, outputs={"certificate (JSON)": "out/w.json"})
    _well_formed(block)
    first = block.splitlines()
    mixing = _answer(cert, "fast mixing at tau = 0.5?")
    assert mixing.startswith(f"known exactly: t_mix(0.25) = {tmix} steps")
    assert f"{tmix} steps" in "\n".join(first[:2])
    assert "none can exist" in _answer(cert, "Theorem 5 certificate?")
    assert "Theorem 5, corrected" in _category(block, "proved")
    assert "Theorem 5, corrected" not in _category(block, "gives nothing here")
    assert f"t_mix(0.25) = {tmix} steps" in _category(block, "known exactly")
    assert "out/w.json" in "\n".join(first[:10])


def test_full_chain_proves_no_certificate_and_says_mixing_is_not_known():
    cert = certify(resolve_model("curie-weiss:n=8,alpha=3"), 1.0, exhaustive=False, exact=False,
                   n_rectangles=5, budget=5, n_pairs=0, search_budget=300)
    assert cert.influence.searched and cert.exact is None
    C = cert.influence.C  # realised values: the oracle is its own spectral radius
    assert max(abs(np.linalg.eigvals(C))) > 1.05
    block = _block(cert)
    _well_formed(block)
    assert _answer(cert, "fast mixing at tau = 1?").startswith("not known")
    assert "none can exist at tau = 1, proved" in _answer(cert, "Theorem 5 certificate?")
    assert "Theorem 5, corrected" in _category(block, "proved")
    assert _category(block, "known exactly").strip() == "known exactly: nothing"


def test_toy_answers_with_the_certified_bound_beside_the_exact_tmix():
    cert = certify(IsingModel(nx.cycle_graph(6)), 2.0, **SMALL)
    chain = ExactChain(IsingModel(nx.cycle_graph(6)), 2.0)
    tmix = chain.mixing_time(0.25)
    bound = cert.influence.contraction.best_bound
    assert tmix <= bound < math.inf  # corrected Theorem 5 holds on the exact chain
    block = _block(cert)
    _well_formed(block)
    mixing = _answer(cert, "fast mixing at tau = 2?")
    assert f"t_mix(0.25) = {tmix} steps" in mixing
    assert f"proved: t_mix(0.25) <= {int(bound)} steps (Theorem 5, corrected" in mixing
    assert _answer(cert, "Theorem 5 certificate?").startswith("yes, proved")
    assert "known exactly" in _answer(cert, "compatible?")  # every rectangle of an Ising chain
    assert "Theorem 5, corrected" in _category(block, "proved")


def test_the_real_cdr3_window_lists_theorem5_as_proved():
    """The main job's window (AntiBERTy, trastuzumab VH 98-100, tau = 1): exact rho(C) = 1.475.
    Its claims are rebuilt from the stored stage results with today's code."""
    cert = _rebuilt(DATA / "cdr3-window.json")
    assert cert.exact.contraction.spectral_radius > 1.4
    block = _block(cert, outputs={"certificate (JSON)": "results/main/cdr3-window.json"})
    _well_formed(block)
    assert "Theorem 5, corrected" in _category(block, "proved")
    assert "Theorem 5, corrected" not in _category(block, "gives nothing here")
    head = "\n".join(format_certificate(
        cert, {"certificate (JSON)": "results/main/cdr3-window.json"}).splitlines()[:10])
    assert f"t_mix(0.25) = {cert.exact.tmix} steps" in head
    assert "none can exist at tau = 1, proved" in head
    assert "results/main/cdr3-window.json" in head


def _rebuilt(path: Path) -> Certificate:
    c = Certificate.from_json(path.read_text())
    return dataclasses.replace(c, claims=build_claims(c))


@pytest.mark.parametrize("bracket, words", [
    ({"tau_cert": 12.5, "tau_no_cert": 2.0},
     ("certified for tau >= 12.5", "none can exist at tau = 2", "ratio 6.25")),
    ({"tau_cert": None, "tau_no_cert": 2.0},
     ("no certified temperature found", "none can exist at tau = 2")),
    ({"tau_cert": 3.0, "tau_no_cert": 1.0, "upper_monotone": False},
     ("certified at tau = 3, the lowest found", "none can exist at tau = 1")),
    ({"tau_cert": 3.0, "tau_no_cert": None},
     ("certified for tau >= 3", "no temperature found where none can exist")),
])
def test_bracket_is_stated_when_present(bracket, words):
    cert = certify(IsingModel(nx.cycle_graph(4)), 1.0, bracket=False, **SMALL)
    assert "bracket:" not in _block(cert)  # without the stage (and in older certificates)
    answer = _answer(cert, "bracket:", bracket=bracket)
    for w in words:
        assert w in answer


def test_bracket_is_read_from_a_certificate_json_extended_by_hand(tmp_path):
    from glauber.certify.verdict import certificate_bracket

    cert = certify(IsingModel(nx.cycle_graph(4)), 1.0, **SMALL)
    data = json.loads(cert.to_json())
    back = certificate_bracket(Certificate.from_dict(data))
    assert (back["tau_cert"], back["tau_no_cert"]) == (cert.bracket.tau_cert,
                                                        cert.bracket.tau_no_cert)
    data["bracket"] = {"tau_cert": 4.0, "tau_no_cert": 0.5}
    # the bracket stage's JSON is decoded into its type: a partial one is a typed error
    with pytest.raises(InvalidParameterError, match="certificate.bracket lacks the field"):
        Certificate.from_dict(data)
    del data["bracket"]  # a certificate older than the bracket
    assert certificate_bracket(Certificate.from_dict(data)) is None
    assert certificate_bracket(type("C", (), {"bracket": {"tau_cert": 4.0}})()) == {
        "tau_cert": 4.0}


def test_files_answer_names_every_output_or_says_none_was_written():
    cert = certify(IsingModel(nx.cycle_graph(4)), 1.0, **SMALL)
    assert _answer(cert, "files:").startswith("none written")
    outputs = {"certificate (JSON)": "a/b.json", "report (HTML)": "a/b.html"}
    assert _answer(cert, "files:", outputs=outputs) == (
        "certificate (JSON) a/b.json; report (HTML) a/b.html")


def test_sampled_influences_are_never_listed_as_proved():
    cert = certify(IsingModel(nx.cycle_graph(4)), 4.0, exhaustive=False, exact=False,
                   search_budget=0, **SMALL)
    assert not cert.claim("thm5-corrected").rigorous
    block = _block(cert)
    assert "Theorem 5, corrected" not in _category(block, "proved")
    assert "Theorem 5, corrected" in _category(block, "estimated only (not proofs)")
    assert _answer(cert, "fast mixing at tau = 4?").startswith("not known")


def test_exact_certificate_is_listed_as_proved_and_explained_once():
    cert = certify(IsingModel(nx.cycle_graph(4)), 4.0, **SMALL)
    claim = cert.claim("thm5-corrected")
    assert claim.rigorous and claim.hypothesis_held  # the oracle the block must follow
    text = format_certificate(cert)
    head = text.split("== model ==")[0]
    assert "Theorem 5, corrected" in _category(head + "  legend", "proved")
    assert text.count("legend of the claims") == 1 and "[held; RIGOROUS]" in head
    assert head.index("== verdict ==") < head.index("legend")


def test_vacuous_trap_bounds_are_marked_and_not_claimed():
    tau = 8.0
    assert 2 * math.exp(-4 / tau) >= 1 and math.exp(4 / tau) / 8 < 1  # both bounds vacuous
    cert = certify(IsingModel(nx.cycle_graph(4)), tau, np.zeros((1, 4), dtype=int), **SMALL)
    block = _block(cert)
    assert "Theorem 8 on a perfect trap (its bounds are vacuous)" in _category(
        block, "gives nothing here")
    assert "Theorem 8" not in _category(block, "proved")
    margins = format_certificate(cert).split("== margins & Theorem 8 ==")[1].split("==")[0]
    assert "(vacuous)" in margins


def test_useful_trap_bound_is_proved_without_a_vacuous_mark():
    tau = 1.0
    assert 2 * math.exp(-4 / tau) < 1
    cert = certify(IsingModel(nx.cycle_graph(4)), tau, np.zeros((1, 4), dtype=int), **SMALL)
    proved = _category(_block(cert), "proved")
    assert "Theorem 8 on a perfect trap" in proved and "vacuous" not in proved


def test_trap_tmix_bound_states_its_mass_condition_when_unchecked():
    """Theorem 8's t_mix bound needs mu({x}) <= 1/2; without the exact law it is conditional."""
    cert = certify(IsingModel(nx.cycle_graph(4)), 1.0, np.zeros((1, 4), dtype=int),
                   exact=False, **SMALL)
    trap = cert.claim("thm8-trap")
    assert trap.rigorous and "if mu({x}) <= 1/2, not checked here" in trap.certifies
    assert "Theorem 8" not in _answer(cert, "fast mixing at tau = 1?")


def test_legend_names_every_label():
    for label in ("[held; RIGOROUS]", "[held; not rigorous]", "[not held;", "(vacuous)"):
        assert label in LEGEND


def test_first_ten_lines_of_the_command_answer_the_newcomer(tmp_path, capsys, monkeypatch):
    """Does it mix fast, provably? What is t_mix for the window? Where are the files? (A
    relative path, as the main job writes results/main/cdr3-window.json.)"""
    from glauber.cli import main

    monkeypatch.chdir(tmp_path)
    path = Path("results") / "window.json"
    path.parent.mkdir()
    assert main(["certify", "--model", "curie-weiss:n=8,alpha=3", "--context",
                 "0,1,0,1,1,0,1,1", "--sites", "2-4", "--tau", "0.5", "--pairs", "0",
                 "--rectangles", "5", "--json", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = "\n".join(lines[:10])
    tmix = ExactChain(resolve_model(WINDOW), 0.5).mixing_time(0.25)
    assert f"known exactly: t_mix(0.25) = {tmix} steps" in head
    assert "none can exist at tau = 0.5, proved" in head
    assert f"certificate (JSON) {path}" in head  # before the bracket's longer answer
    answers = "\n".join(lines[:lines.index("", 3)])
    assert "bracket:" in answers
    saved = Certificate.from_json(path.read_text())
    assert saved.positions == (2, 3, 4) and saved.site_numbering.startswith("0-based")
    assert saved.source.command.startswith("glauber certify --model curie-weiss")


def test_searched_budget_is_capped_at_a_tabulation_and_reported_as_its_fraction():
    # 6 x 2^5 = 192 distinct queries tabulate the 6-cycle: the default search budget (2,000)
    # is capped there (at a tabulation the exact value is known), and the model section says
    # how many distinct queries the search asked and which fraction of the table that is.
    cert = certify(IsingModel(nx.cycle_graph(6)), 1.0, exhaustive=False, exact=False, **SMALL)
    assert cert.settings.search_budget == 192
    r = cert.influence
    assert r.searched and 0 < r.queries <= 192 and r.query_fraction == r.queries / 192
    assert (f"searched: {r.queries:,} distinct queries ({100 * r.query_fraction:.3g}% of the "
            "n q^(n-1) that tabulate the model)") in format_certificate(cert)


def test_vacuous_basin_bounds_are_marked_and_not_claimed():
    # Planted basin {x : at least 4 of 5 sites hold token 0} at a high temperature: Theorem 8's
    # escape bound |V| e^{-Delta*/tau} = 3 e^{-6/40} >= 1 and its t_mix bound
    # e^{Delta*/tau} / (4 |V|) = e^{0.15} / 12 < 1, whatever Delta* <= 6 is: both say nothing,
    # as for a trap (test_vacuous_trap_bounds_are_marked_and_not_claimed).
    model = PlantedBasinModel(5, 3, token=0, strength=6.0)
    states = np.array([[0, 0, 0, 0, 0], [1, 2, 0, 1, 2]])
    cert = certify(model, 40.0, states, basin=lambda x: (x == 0).sum(axis=1) >= 4, **SMALL)
    claim = cert.claim("thm8-basin")
    b = cert.basin.basin
    assert b.holds and b.escape_bound >= 1 and b.tmix_lower_bound < 1
    assert claim.details["vacuous_escape"] and claim.details["vacuous_tmix"]
    assert "(vacuous: a probability bound >= 1)" in claim.certifies
    assert "(vacuous: below 1 step)" in claim.certifies
    block = _block(cert)
    assert "Theorem 8 on the given basin (its bounds are vacuous)" in " ".join(
        _category(block, "gives nothing here").split())  # the verdict wraps its lines
    assert "Theorem 8 on the given basin" not in _category(block, "proved")
