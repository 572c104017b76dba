"""The bracket stage of certify: both sides of Theorem 5 in every certificate.

Oracles: the exact chain (its exact influence matrix decides each side at its temperature, its
exact t_mix bounds the proved one), the Ising cycle's closed-form threshold
``1/atanh(1/2)`` (the closed-form bound ``tanh(1/tau)`` on each edge has ``rho = 2 tanh(1/tau)``),
and the JSON round trip.
"""

from __future__ import annotations

import contextlib
import io
import json
import math

import networkx as nx
import numpy as np

import glauber.cli
from glauber.certify import Certificate, ClaimKey, certify, format_certificate
from glauber.certify.verdict import verdict_answers
from glauber.exact.chain import ExactChain
from glauber.toy_models import FunctionModel, IsingModel
from glauber.toy_models.random_table import RandomTableModel

SMALL = dict(n_rectangles=8, budget=10, n_pairs=1)


def bracket_sentence(cert):
    """The verdict's one sentence on the bracket ("" when the certificate has none)."""
    return dict(verdict_answers(cert)).get("bracket:", "")


def _rho(C):
    return float(np.max(np.abs(np.linalg.eigvals(C))))


def test_exact_chain_bracket_each_side_holds_and_the_proved_tmix_bounds_the_exact_one():
    model = RandomTableModel(3, 3, 4)
    cert = certify(model, 2.0, **SMALL)
    b = cert.bracket
    assert b.lower_method == "exact (table)" and "tabulated" in b.upper_method
    assert b.tau_no_cert is not None and b.tau_cert is not None
    assert _rho(ExactChain(model, b.tau_no_cert).influence_matrix()) >= 1.0
    assert _rho(ExactChain(model, b.tau_cert).influence_matrix()) < 1.0
    claim = cert.claim(ClaimKey.THEOREM5_UPPER)
    assert claim.rigorous == b.certified_at_tau
    if b.certified_at_tau:
        assert claim.holds and cert.exact.tmix <= b.tmix_bound
    assert b.upper_C.shape == (3, 3) and np.all(b.upper_C >= ExactChain(
        model, 2.0).influence_matrix())
    sentence = bracket_sentence(cert)
    # a table is not known to decrease in tau: certified where evaluated, not "from" there
    assert f"certified at tau = {b.tau_cert:g}" in sentence
    assert f"none can exist at tau = {b.tau_no_cert:g}" in sentence
    assert "bracket:" in format_certificate(cert) and "== bracket" in format_certificate(cert)


def test_searched_chain_uses_the_witnesses_and_the_closed_form():
    model = IsingModel(nx.cycle_graph(14), coupling=1.0)  # 2^14 states: not enumerated
    cert = certify(model, 1.0, exhaustive=False, exact=False, search_budget=150, **SMALL)
    b = cert.bracket
    assert b.upper_method == "closed-form" and b.upper_monotone
    assert b.lower_method == "search witnesses" and b.lower_rows > 0
    assert 1 / math.atanh(0.5) < b.tau_cert <= (1 / math.atanh(0.5)) * (1 + 1e-3)
    # an Ising cycle has rho(c) = tanh(2/tau) < 1 at every tau: no temperature is ruled out
    assert b.tau_no_cert is None
    sentence = bracket_sentence(cert)
    assert "no temperature found where none can exist" in sentence
    assert "closed-form" in sentence and "the highest found" not in sentence


def test_bracket_survives_json_and_old_certificates_load():
    cert = certify(IsingModel(nx.path_graph(4)), 1.5, **SMALL)
    text = cert.to_json()
    data = json.loads(text)
    assert set(data["bracket"]) >= {"tau_cert", "tau_no_cert", "grid", "upper_C", "ratio"}
    back = Certificate.from_json(text)
    assert back == cert and back.bracket.tau_cert == cert.bracket.tau_cert
    del data["bracket"]  # a certificate written before the bracket existed
    old = Certificate.from_dict(data)
    assert getattr(old, "bracket", None) is None and bracket_sentence(old) == ""
    assert certify(IsingModel(nx.path_graph(4)), 1.5, bracket=False, **SMALL).bracket is None


def test_a_model_without_an_upper_bound_gets_a_lower_side_and_the_reason():
    big = FunctionModel(14, 2, lambda x, i: np.stack([x.sum(1), -x.sum(1)], 1) * 0.3)
    cert = certify(big, 1.0, exhaustive=False, exact=False, search_budget=100, **SMALL)
    b = cert.bracket
    assert b.tau_cert is None and b.upper_method == "none" and b.upper_C is None
    assert "no upper bound" in b.note and "window" in b.note
    assert "no certified temperature found" in bracket_sentence(cert)


def test_command_line_prints_and_writes_the_bracket(tmp_path, monkeypatch):
    monkeypatch.setattr(glauber.cli, "COMMANDS", ("certify",))
    out = io.StringIO()
    path = tmp_path / "cert.json"
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = glauber.cli.main(["certify", "--model", "ising-cycle:n=5", "--tau", "2",
                                 "--rectangles", "8", "--pairs", "0", "--json", str(path)])
    assert code == 0
    assert "bracket:" in out.getvalue() and "== bracket" in out.getvalue()
    data = json.loads(path.read_text())
    assert data["bracket"]["tau_cert"] is not None
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert glauber.cli.main(["certify", "--model", "ising-cycle:n=5", "--tau", "2",
                                 "--rectangles", "8", "--pairs", "0", "--no-bracket",
                                 "--json", str(path)]) == 0
    assert json.loads(path.read_text())["bracket"] is None
