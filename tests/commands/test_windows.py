"""Chosen sites of a full sequence on the command line: ``--context`` and ``--sites``.

Oracles: the closed form of a restricted Ising chain (a window of a cycle with frozen
neighbours is the Ising model of the induced path with boundary fields h_i = J sum of the frozen
neighbours' spins: docs/theory.md, the Gibbs conditional of a Markov random field), the
restrict() of the same arguments, and the typed errors of bad input (raised before any model
query).
"""

from __future__ import annotations

import contextlib
import io
import json

import networkx as nx
import numpy as np
import pytest

import glauber.cli
from glauber.core.restrict import restrict
from glauber.errors import (
    InvalidParameterError,
    SequenceLengthError,
    StateSpaceTooLargeError,
    VocabularyError,
)
from glauber.exact.chain import ExactChain
from glauber.models import (
    parse_sites,
    resolve_context,
    resolve_model,
    split_window_spec,
    window_spec,
)
from glauber.toy_models import IsingModel
from glauber.toy_models.specs import parse_toy_spec


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = glauber.cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("spec", "length", "expected"), [
    ("98-100", 120, [97, 98, 99]),
    ("1", 1, [0]),
    ("5, 9,12-14", 20, [4, 8, 11, 12, 13]),
    ("3,1", 3, [2, 0]),  # window order is the order given
])
def test_parse_sites_is_one_based_and_inclusive(spec, length, expected):
    assert parse_sites(spec, length).tolist() == expected


@pytest.mark.parametrize(("spec", "needle"), [
    ("0-2", "outside"), ("120-121", "outside"), ("5,5", "twice"), ("4-6,6", "twice"),
    ("9-7", "backwards"), ("", "not a position"), ("a", "not a position"), ("1-", "not a"),
])
def test_bad_sites_are_typed_errors(spec, needle):
    with pytest.raises(InvalidParameterError, match=needle):
        parse_sites(spec, 120)


def test_window_spec_round_trips_and_refuses_delimiters():
    for model, ctx, sites in [("antiberty", "trastuzumab-vh", "98-100"),
                              ("ising-cycle:n=4,J=1.0", "0,1,0,1", None),
                              ("hf:some/model", "a short text", "2")]:
        assert split_window_spec(window_spec(model, ctx, sites)) == (model, ctx, sites)
    assert window_spec("antiberty", None) == "antiberty"
    with pytest.raises(InvalidParameterError, match="needs --context"):
        window_spec("antiberty", None, "1-3")
    with pytest.raises(InvalidParameterError, match="file"):
        window_spec("antiberty", "AB[C", "1")


def test_toy_window_is_restrict_and_the_induced_ising_with_boundary_fields():
    # Cycle of 8 spins, J = 0.7, field 0: resample positions 3-5 (0-based 2, 3, 4) with the
    # others frozen. The window is the path 2-3-4 whose ends see the frozen spins 1 and 5 as a
    # field: h_2 = J s_1, h_4 = J s_5 (spin s = +1 for token 1, -1 for token 0).
    context = [0, 1, 0, 1, 1, 0, 1, 0]
    model = resolve_model("ising-cycle:n=8,J=0.7@" + ",".join(map(str, context)) + "[3-5]")
    direct = restrict(parse_toy_spec("ising-cycle:n=8,J=0.7"), context, [2, 3, 4])
    spins = 2 * np.asarray(context) - 1
    fields = np.array([0.7 * spins[1], 0.0, 0.7 * spins[5]])
    induced = IsingModel(nx.path_graph(3), 0.7, fields)
    for tau in (0.5, 1.0, 3.0):
        P = ExactChain(model, tau).dense_transition_matrix()
        np.testing.assert_allclose(P, ExactChain(direct, tau).dense_transition_matrix(), 0, 0)
        np.testing.assert_allclose(P, ExactChain(induced, tau).dense_transition_matrix(),
                                   rtol=0, atol=1e-13)
    assert model.name.endswith("[positions 3-5 of 8]")


def test_contexts_of_toys_are_checked_before_any_query():
    model = parse_toy_spec("ising-cycle:n=4")
    assert resolve_context(model, "0, 1 1,0").tolist() == [0, 1, 1, 0]
    with pytest.raises(VocabularyError, match="0..1"):
        resolve_context(model, "0,1,2,0")
    with pytest.raises(SequenceLengthError, match="one token index per site"):
        resolve_context(model, "0,1")
    with pytest.raises(InvalidParameterError, match="comma-separated"):
        resolve_context(model, "up,down")


def test_context_from_a_file(tmp_path):
    path = tmp_path / "ctx.txt"
    path.write_text("# a comment\n\n1,1,0,0\n0,0,0,0\n")
    model = resolve_model(window_spec("ising-cycle:n=4", str(path), "2"))
    assert model.context.tolist() == [1, 1, 0, 0] and model.sites.tolist() == [1]
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(InvalidParameterError, match="holds no sequence"):
        resolve_model(window_spec("ising-cycle:n=4", str(tmp_path / "empty.txt")))


def test_length_must_agree_with_the_window():
    spec = "ising-cycle:n=6@0,0,0,0,0,0[1-2]"
    assert resolve_model(spec, 6).n == 2 and resolve_model(spec, 2).n == 2
    with pytest.raises(SequenceLengthError, match="context sets the length"):
        resolve_model(spec, 4)


def test_certify_window_on_the_command_line_is_exact_and_records_its_source(tmp_path):
    out = tmp_path / "w.json"
    code, text, err = run("certify", "--model", "ising-cycle:n=8,J=0.7", "--context",
                          "0,1,0,1,1,0,1,0", "--sites", "3-5", "--pairs", "0", "--json",
                          str(out))
    assert code == 0, err
    assert "exact chain over all 8 states" in text
    data = json.loads(out.read_text())
    assert data["source"]["spec"] == "ising-cycle:n=8,J=0.7@0,1,0,1,1,0,1,0[3-5]"
    assert data["exact"]["tmix"] == ExactChain(resolve_model(data["source"]["spec"]),
                                               1.0).mixing_time(0.25)


@pytest.mark.parametrize(("argv", "needle"), [
    (["--sites", "1-3"], "needs --context"),
    (["--context", "0,1,0,1", "--sites", "5"], "outside"),
    (["--context", "0,1,0", "--sites", "1"], "one token index per site"),
    (["--context", "0,1,0,1", "--sites", "1,1"], "twice"),
])
def test_bad_windows_exit_2_with_one_line(argv, needle):
    code, _, err = run("certify", "--model", "ising-cycle:n=4", "--pairs", "0", *argv)
    assert code == 2 and needle in err and "Traceback" not in err


def test_exact_above_the_limit_is_refused_before_any_query():
    # 2**22 states: above the exact limit of 20**5 (a 5-site window of amino acids)
    code, _, err = run("certify", "--model", "ising-cycle:n=22", "--exact", "--pairs", "0")
    assert code == 2 and "exact limit" in err
    with pytest.raises(StateSpaceTooLargeError):
        from glauber.certify import certify

        class Refuses:
            n, q = 22, 2

            def scores(self, states, sites):
                raise AssertionError("queried before the size check")

        certify(Refuses(), 1.0, exact=True)


def test_alpha_curve_window_is_exact_from_one_table(tmp_path):
    code, text, err = run("alpha-curve", "--model", "ising-cycle:n=8,J=0.7", "--context",
                          "0,1,0,1,1,0,1,0", "--sites", "3-5", "--taus", "0.25,1,4",
                          "--out", str(tmp_path), "--no-progress")
    assert code == 0, err
    res = json.loads((tmp_path / "alpha_curve.json").read_text())
    assert res["exhaustive"] and res["model_rows"] == 3 * 2 ** 2
    window = resolve_model(res["model"])
    for row in res["rows"]:
        assert row["exact_tmix"] == ExactChain(window, row["tau"]).mixing_time(0.25)
    assert "certificate holds from" in text and "tau_no_cert" in text


def test_phase_diagram_window_takes_its_length_from_the_sites(tmp_path):
    code, _, err = run("phase-diagram", "--model", "ising-cycle:n=8", "--context",
                       "0,1,0,1,1,0,1,0", "--sites", "3-5", "--taus", "1", "--pairs", "2",
                       "--budget", "20", "--out", str(tmp_path), "--no-progress")
    assert code == 0, err
    rows = json.loads((tmp_path / "phase_diagram.json").read_text())["rows"]
    assert [r["n"] for r in rows] == [3]
    code, _, err = run("phase-diagram", "--model", "ising-cycle:n=8", "--context",
                       "0,1,0,1,1,0,1,0", "--sites", "3-5", "--lengths", "8", "--taus", "1",
                       "--out", str(tmp_path / "b"), "--no-progress")
    assert code == 2 and "does not apply to a window" in err


def test_trajectory_runs_on_a_window_and_refuses_a_length(tmp_path):
    code, _, err = run("trajectory", "--model", "ising-cycle:n=8", "--context",
                       "0,1,0,1,1,0,1,0", "--sites", "3-5", "--steps", "100", "--chains", "2",
                       "--checkpoint-every", "50", "--window", "20", "--out", str(tmp_path),
                       "--no-progress")
    assert code == 0, err
    summary = json.loads((tmp_path / "trajectory_summary.json").read_text())
    assert summary["config"]["n"] == 3
    assert summary["config"]["model"] == "ising-cycle:n=8@0,1,0,1,1,0,1,0[3-5]"
    rows = (tmp_path / "trajectory.csv").read_text().splitlines()[1:]
    assert len(rows) == 2 * (100 // 10 + 1)
    code, _, err = run("trajectory", "--model", "ising-cycle:n=8", "--context",
                       "0,1,0,1,1,0,1,0", "--sites", "3-5", "--length", "8", "--out",
                       str(tmp_path / "b"), "--no-progress")
    assert code == 2 and "--length does not apply to a window" in err
