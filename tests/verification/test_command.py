"""``glauber verify``: the theorem table from exact toy chains.

Oracles: the statements' own exit semantics (a quick run passes; every refuted as-printed form
shows a counterexample), deliberately broken bounds (a theory function monkeypatched to a wrong
value must make the command exit 1: the command can fail), the full exact chain as the oracle of
the lumped count chain (lumpability: the full kernel summed over a level), the independent
absorbing-chain routine of :mod:`glauber.toy_models.counterexamples`, and Hypothesis properties
over random score tables and temperatures.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import math
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import glauber.theory.contraction
import glauber.theory.escape
import glauber.theory.influence_bounds
from glauber.cli import main
from glauber.core.io import write_json_atomic
from glauber.exact.basins import hitting_probability_within
from glauber.exact.chain import ExactChain
from glauber.exact.count_chain import CountChain, curie_weiss_gap, planted_gap
from glauber.toy_models import CurieWeissLumpedChain, CurieWeissModel, IsingModel, PlantedBasinModel
from glauber.verification import STATEMENTS, STATEMENTS_BY_NAME, run_statements
from glauber.verification.battery import count_basin, random_table_model
from glauber.verification.instances import ChainInstance


def _strict_json(path: Path) -> dict:
    def reject(token: str) -> None:
        raise AssertionError(f"non-strict JSON constant {token} in {path}")

    return json.loads(path.read_text(), parse_constant=reject)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, dict, Path]:
    folder = tmp_path_factory.mktemp("verify")
    path = folder / "table.json"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["verify", "--quick", "--json", str(path)])
    return code, out.getvalue(), _strict_json(path), folder


# ------------------------------------------------------------------------------ the command


def test_quick_run_passes_with_a_row_per_statement(quick_run) -> None:
    code, text, report, folder = quick_run
    assert code == 0 and report["ok"] is True
    rows = {row["name"]: row for row in report["rows"]}
    assert list(rows) == [s.name for s in STATEMENTS]
    for name, row in rows.items():
        assert row["instances_checked"] > 0, name
        assert row["hypothesis_held"] > 0, name
        assert row["instances_checked"] == len(row["instances"]), name
        assert row["errors"] == 0, name
        assert name in text
        for cited in row["theory"]:  # every cited function exists and is callable
            module, _, attribute = cited.rpartition(".")
            assert module.startswith("glauber.theory."), cited
            assert callable(getattr(importlib.import_module(module), attribute)), cited
    assert [p.name for p in folder.iterdir()] == ["table.json"]  # no temp file left behind


def test_refuted_rows_show_counterexamples_and_the_rest_hold(quick_run) -> None:
    _, text, report, _ = quick_run
    for row in report["rows"]:
        evaluated = [c for c in row["instances"] if c["holds"] is not None]
        failed = [c for c in evaluated if c["holds"] is False]
        if row["status"] == "refuted":
            assert row["failures"] == len(failed) > 0
            assert row["corrected_by"] in STATEMENTS_BY_NAME
            assert STATEMENTS_BY_NAME[row["corrected_by"]].status == "corrected"
            # a refutation happens where the printed hypothesis holds
            assert all(c["hypothesis"] for c in failed)
            assert f"{row['name']}: refuted as printed" in text
            worst = row["worst_slack"]
            assert worst < 0  # the printed bound is violated
        else:
            assert row["failures"] == 0 and not failed, row["name"]
    names = {row["name"]: row for row in report["rows"]}
    assert any("theorem5_counterexample" in c for c in names["thm5-printed"]["counterexamples"])
    assert any("boundary_drift_counterexample" in c
               for c in names["drift-printed"]["counterexamples"])


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    return code, out.getvalue()


@pytest.mark.parametrize(
    ("module", "name", "broken", "statement"),
    [
        # upper bounds made too small
        (glauber.theory.influence_bounds, "lemma6_bound",
         lambda delta, tau: np.asarray(delta) / (400.0 * tau), "lemma6"),
        (glauber.theory.escape, "theorem8_escape_bound",
         lambda q, delta_star, tau: 1e-3 * q * math.exp(-delta_star / tau), "thm8-escape"),
        # the corrected Theorem 5 with the wrong sum (rows instead of columns)
        (glauber.theory.contraction, "alpha_col", glauber.theory.contraction.alpha_row,
         "thm5-corrected"),
        # a lower bound made too large
        (glauber.theory.escape, "theorem8_tmix_lower_bound",
         lambda q, delta_star, tau: 1e300, "thm8-tmix"),
    ],
)
def test_a_broken_bound_makes_the_command_fail(monkeypatch, module, name, broken,
                                               statement) -> None:
    code, text = _run(["verify", "--quick", "--statement", statement])
    assert code == 0, text  # the statement holds with the real function ...
    monkeypatch.setattr(module, name, broken)
    code, text = _run(["verify", "--quick", "--statement", statement])
    assert code == 1  # ... and the command notices when it is wrong
    assert f"FAILED {statement}: fails on" in text


def test_a_refuted_row_without_counterexample_fails(monkeypatch) -> None:
    # A printed bound so loose that nothing violates it: the row can no longer show the
    # counterexample its status claims, so the command must not pass.
    monkeypatch.setattr(glauber.theory.contraction, "theorem5_contraction_factor",
                        lambda n, a: 10.0)
    code, text = _run(["verify", "--quick", "--statement", "thm5-printed"])
    assert code == 1
    assert "no instance reproduces the counterexample" in text


def test_statement_filter_and_unknown_names(tmp_path: Path) -> None:
    path = tmp_path / "two.json"
    code, _ = _run(["verify", "--quick", "--statement", "tanh", "cor7", "--json", str(path)])
    assert code == 0
    assert [r["name"] for r in _strict_json(path)["rows"]] == ["tanh", "cor7"]
    with pytest.raises(SystemExit) as excinfo, contextlib.redirect_stderr(io.StringIO()):
        main(["verify", "--statement", "theorem-99"])
    assert excinfo.value.code == 2


def test_json_is_written_atomically(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    write_json_atomic(path, {"a": 1})
    assert _strict_json(path) == {"a": 1}
    with pytest.raises(ValueError):
        write_json_atomic(path, {"a": float("nan")})  # strict JSON refuses NaN mid-write
    assert _strict_json(path) == {"a": 1}  # the old file is intact
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    size=st.sampled_from([(2, 2), (3, 2), (2, 3), (4, 2)]),
    seed=st.integers(0, 10**6),
    scale=st.floats(0.2, 3.0),
    tau=st.floats(0.3, 4.0),
)
def test_verified_and_corrected_statements_hold_on_random_score_tables(
    size: tuple[int, int], seed: int, scale: float, tau: float
) -> None:
    n, q = size
    model = random_table_model(n, q, np.random.default_rng(seed), scale)
    basins = (count_basin(model, 0, n, 0, 50), count_basin(model, 1, n - 1, 0, 20))
    instance = ChainInstance("random", "random-table", model, tau, basins=basins)
    for outcome in run_statements(STATEMENTS, [instance], progress=False):
        assert not outcome.errors, outcome.statement.name
        if outcome.statement.status != "refuted":
            assert outcome.failures == 0, (outcome.statement.name, outcome.checks)


@pytest.mark.parametrize("tau", [0.7, 2.0])
def test_theorem5_as_printed_fails_on_every_ising_path(tau: float) -> None:
    # Heat-bath Ising on the path 0-1-2-3-4, zero field, beta = 1/tau (LPW 2nd ed. 15.1): an end
    # site's one neighbour has influence tanh(beta) (odd degree), an inner site's neighbours
    # tanh(2 beta)/2 each (even degree). Row sums: tanh(beta) at the ends, tanh(2 beta) inside,
    # so alpha_row = tanh(2 beta). A pair differing at site 3 (next to the end 4): sites 2 and 4
    # disagree after their update with probabilities tanh(2 beta)/2 and tanh(beta), so
    # E[d_H] = (n - 1 + tanh(beta) + tanh(2 beta)/2) / n, above the printed factor
    # (n - 1 + tanh(2 beta)) / n because tanh(beta) > tanh(2 beta)/2 (tanh is concave).
    n, beta = 5, 1.0 / tau
    model = IsingModel(nx.path_graph(n))
    instance = ChainInstance("path", "ising", model, tau, log_weight=model.log_weight)
    (check,) = STATEMENTS_BY_NAME["thm5-printed"].check(instance)
    assert check.hypothesis_held and check.holds is False
    assert check.bound == pytest.approx((n - 1 + math.tanh(2 * beta)) / n, rel=1e-12)
    assert check.exact == pytest.approx(
        (n - 1 + math.tanh(beta) + math.tanh(2 * beta) / 2) / n, rel=1e-12
    )
    (corrected,) = STATEMENTS_BY_NAME["thm5-corrected"].check(instance)
    assert corrected.holds  # column sums: tanh(beta) + tanh(2 beta)/2 at site 3


# ------------------------------------------------------------------- the lumped count chain


def _lumped_from_full(chain: ExactChain, token: int) -> tuple[np.ndarray, np.ndarray]:
    """Kernel of the count from the full chain (every state of a level must agree) and the law
    of the count under the full stationary distribution."""
    counts = (chain.states() == token).sum(axis=1)
    P = chain.dense_transition_matrix()
    levels = chain.n + 1
    lumped = np.zeros((levels, levels))
    for k in range(levels):
        rows = P[counts == k]
        per_level = np.stack([rows[:, counts == m].sum(axis=1) for m in range(levels)], axis=1)
        np.testing.assert_allclose(per_level, per_level[:1].repeat(len(rows), 0), atol=1e-14)
        lumped[k] = per_level[0]
    pi = np.bincount(counts, weights=chain.stationary(), minlength=levels)
    return lumped, pi


@pytest.mark.parametrize(
    ("model", "token", "chain"),
    [
        (CurieWeissModel(6, 1.5), 1, CountChain(6, 2, curie_weiss_gap(6, 1.5), 0.8)),
        (PlantedBasinModel(4, 3, token=2, strength=3.0), 2, CountChain(4, 3, planted_gap(4, 3.0),
                                                                     0.8)),
    ],
)
def test_count_chain_is_the_full_chain_lumped(model, token, chain) -> None:
    full = ExactChain(model, 0.8)
    lumped, pi = _lumped_from_full(full, token)
    np.testing.assert_allclose(chain.transition_matrix().toarray(), lumped, atol=1e-14)
    np.testing.assert_allclose(chain.stationary(), pi, rtol=1e-10)
    counts = (full.states() == token).sum(axis=1)
    b = chain.n - 1
    basin = counts >= b
    # exit times and escape probabilities depend only on the level
    exits = full.expected_hitting_times(~basin)
    for k, value in zip(range(b, chain.n + 1), chain.expected_exit_times(b)):
        np.testing.assert_allclose(exits[counts == k], value, rtol=1e-9)
    # Assumption 1 data: margin g(b - 1) at the b token sites of the boundary level
    margins = full.margins(basin)
    assert margins.delta_star == pytest.approx(chain.score_gap[b - 1], rel=1e-12)
    assert margins.k == b
    # hitting probabilities: the full chain's by its own routine, the lumped by matrix powers
    full_hit = full.hitting_probability_within(counts <= 1, 25)
    lumped_hit = chain.hitting_probability(1, 25)
    np.testing.assert_allclose(full_hit, lumped_hit[counts], atol=1e-12)


def test_curie_weiss_closed_form_stationary_law_solves_detailed_balance() -> None:
    # The Curie-Weiss lumped chain is the count chain of spin +1; its closed-form Gibbs law
    # (LPW 2nd ed. Section 15.2) must equal the generic detailed-balance solution.
    cw = CurieWeissLumpedChain(41, 1.3, tau=0.9, field=0.1)
    generic = CountChain(41, 2, curie_weiss_gap(41, 1.3, field=0.1), 0.9)
    np.testing.assert_array_equal(cw.transition_matrix().toarray(),
                                  generic.transition_matrix().toarray())
    np.testing.assert_allclose(cw.log_stationary(), generic.log_stationary(), atol=1e-10)


@pytest.mark.parametrize("horizon", [7, 5000])  # sparse stepping, then dense squaring
def test_hitting_probability_within_against_stepping(horizon) -> None:
    rng = np.random.default_rng(3)
    P = rng.random((5, 5)) * (rng.random((5, 5)) < 0.3) + 1e-3 * np.eye(5)
    P /= P.sum(axis=1, keepdims=True)
    target = np.array([False, True, False, False, True])
    u = target.astype(float)
    for _ in range(horizon):  # u_{t+1} = 1_A + 1_{A^c} P u_t
        u = np.where(target, 1.0, P @ u)
    np.testing.assert_allclose(hitting_probability_within(sp.csr_matrix(P), target, horizon), u,
                               rtol=1e-12)
