"""Windows too large to step every start (4 amino acids: 160,000 states), the score-table plan
of ``--dry-run``, and the table built through an executor.

Oracles: the exact worst-start ``t_mix`` of the same chain computed below the stepping limit
(the bracket of a chain above it must contain it: corrected Theorem 5 above, the distances from
a few starts and the spectral bound d(t) >= |lambda|^t / 2 below, LPW 2nd ed., Section 4.5 and
Theorem 12.5); the plan's sizes from ``n q^(n-1)`` and ``8 n q^n q`` bytes counted by hand; the
certificate computed in this process, against one whose shards crossed a process boundary.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import glauber.cli
from glauber.certify import certify, format_certificate
from glauber.certify.exact import _best_trap, exact_values
from glauber.certify.report import report_html
from glauber.certify.verdict import categorised
from glauber.commands.certify import table_plan_text
from glauber.core import restrict
from glauber.certify import pipeline
from glauber.exact import chain_mixing, mixing, sparse
from glauber.exact.chain import ExactChain
from glauber.exact.table_shards import plan_rates, table_plan
from glauber.exact.window import window_stationary
from glauber.toy_models import RandomJointModel, RandomTableModel

from ..support import CountingModel


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.sampled_from([0.2, 0.5, 1.0]),
       tau=st.sampled_from([0.7, 1.0, 2.0]))
def test_the_bracket_above_the_stepping_limit_holds_the_exact_tmix(seed, scale, tau):
    model = RandomTableModel(3, 5, rng=seed, scale=scale)  # 125 states: does not factor
    exact = ExactChain(model, tau).mixing_time(0.25)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(chain_mixing, "EXACT_TMIX_MAX_STATES", 100)  # as if it had 160,000
        values = exact_values(ExactChain(model, tau), 0.25)
    assert values.tmix is None
    assert values.tmix_lower <= exact
    if values.tmix_upper is not None:  # corrected Theorem 5 needs rho(C) < 1
        assert exact <= values.tmix_upper
    assert any("t_mix" in note for note in values.notes)


def test_a_contracting_chain_above_the_limit_gets_both_ends():
    model = RandomTableModel(3, 5, rng=3, scale=0.1)
    exact = ExactChain(model, 1.0).mixing_time(0.25)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(chain_mixing, "EXACT_TMIX_MAX_STATES", 100)
        cert = certify(model, 1.0, exact=True, n_rectangles=5, n_pairs=0)
    e = cert.exact
    assert e.tmix is None and e.tmix_upper is not None
    assert 1 <= e.tmix_lower <= exact <= e.tmix_upper
    assert f"{e.tmix_lower:,} <= t_mix(0.25) <= {e.tmix_upper:,} steps" in format_certificate(cert)


def test_a_chain_without_a_certificate_above_the_limit_gets_a_lower_end_that_holds():
    # strong scores at a low temperature: no Theorem 5 certificate, so no upper end, and the
    # solved law's error is unbounded; two starts' distance from each other needs no law
    model = RandomTableModel(3, 5, rng=0, scale=3.0)
    exact = ExactChain(model, 0.5).mixing_time(0.25)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(chain_mixing, "EXACT_TMIX_MAX_STATES", 100)
        cert = certify(model, 0.5, exact=True, n_rectangles=5, n_pairs=0)
    e = cert.exact
    assert e.tmix is None and e.tmix_upper is None and 1 <= e.tmix_lower <= exact
    text = " ".join(format_certificate(cert).split())  # the verdict wraps its lines
    assert (f"t_mix(0.25) > {e.tmix_lower - 1:,} steps from the worst start (a rigorous lower "
            "bound") in text


def test_the_plan_counts_rows_shards_and_bytes_by_hand():
    model = RandomJointModel(3, 4, rng=0)  # 3 x 4^2 = 48 rows
    plan = table_plan(model, shard_rows=10, rates={"cpu": 4.0}, rate_notes={"cpu": "test"})
    assert (plan.rows, plan.shards, plan.rows_left) == (48, 3 * math.ceil(16 / 10), 48)
    assert plan.table_bytes == 8 * 3 * 4**3 * 4 and plan.disk_bytes == 8 * 48 * 4
    assert plan.seconds("cpu") == 12.0 and math.isinf(plan.seconds("gpu"))
    rates, notes = plan_rates(4, ray_cpus=8)
    assert rates["ray"] == 2 * rates["cpu"] and "uncalibrated" in notes["gpu"]


def test_the_plan_sees_the_shards_on_disk(tmp_path):
    full = RandomJointModel(5, 3, rng=7)
    window = restrict(full, np.array([0, 2, 1, 1, 0]), [3, 0, 2])
    keyed = CountingModel(window)  # keyed, as a restricted masked LM is
    assert table_plan(keyed, tmp_path / "none").shards_done == 0
    chain = ExactChain(keyed, 1.0, cache=tmp_path)
    chain.scores()
    (folder,) = tmp_path.iterdir()
    plan = table_plan(keyed, folder)
    assert plan.shards_done == plan.shards == 3 and plan.rows_left == 0


def test_dry_run_prints_the_plan_and_asks_nothing(monkeypatch):
    monkeypatch.setattr(glauber.cli, "COMMANDS", ("certify",))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = glauber.cli.main(["certify", "--model", "ising-cycle:n=4", "--dry-run"])
    text = out.getvalue()
    assert code == 0
    assert "score table: 32 rows (n q^(n-1) = 4 x 2^3)" in text
    assert "nothing computed (--dry-run)" in text and "== claims ==" not in text
    for where in ("cpu:", "ray:", "gpu:"):
        assert where in text
    assert "certify builds it by default (64 states" in table_plan_text(
        RandomJointModel(6, 2, rng=0))
    full = RandomJointModel(5, 3, rng=7)  # a window of 4 sites: 3^4 = 81 states
    window = restrict(full, np.array([0, 2, 1, 1, 0]), [0, 1, 2, 3])
    assert "by default (81 states <= 3,200,000)" in table_plan_text(window)


def test_the_window_limits_agree():
    from glauber.certify import EXACT_WINDOW_MAX_STATES
    from glauber.exact.window import WINDOW_MAX_STATES
    from glauber.models import EXACT_WINDOW_MAX_STATES as MODELS_LIMIT

    assert EXACT_WINDOW_MAX_STATES == MODELS_LIMIT == WINDOW_MAX_STATES == 20**5


def _wide_window() -> Any:
    """A window of 4 sites over 5 tokens (625 states): what 5 amino acids are to 20."""
    full = RandomTableModel(5, 5, rng=1, scale=0.1)
    return restrict(full, np.array([0, 2, 1, 1, 4]), [0, 1, 2, 3])


@pytest.fixture
def matrix_free(monkeypatch):
    """Every chain above 256 states over more tokens than sites is matrix-free, and stepped
    only up to 100 states."""
    monkeypatch.setattr(sparse, "SPARSE_MAX_STATES", 256)
    monkeypatch.setattr(pipeline, "SPARSE_MAX_STATES", 256)
    monkeypatch.setattr(chain_mixing, "EXACT_TMIX_MAX_STATES", 100)


def test_a_window_above_the_sparse_limit_is_exact_by_default(matrix_free, monkeypatch):
    window = _wide_window()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sparse, "SPARSE_MAX_STATES", 2**20)
        reference = ExactChain(window, 1.0)
        exact = mixing.mixing_time(reference.transition_matrix(), reference.stationary(), 0.25,
                                   method="stepping")
    cert = certify(window, 1.0, n_rectangles=5, n_pairs=0)
    e = cert.exact
    assert e is not None and e.num_states == 625 and e.rectangles is None
    assert e.tmix is None and 1 <= e.tmix_lower <= exact <= e.tmix_upper
    np.testing.assert_array_equal(cert.influence.C, reference.influence_matrix())
    pi = reference.stationary()
    assert e.mode_state == tuple(reference.states()[np.argmax(pi)])
    best, traps = _best_trap(reference, np.log(pi))
    assert e.perfect_traps == best["perfect_traps"] == 1
    assert [t.state for t in e.traps] == [t.state for t in traps]
    np.testing.assert_allclose([(t.delta_star, t.exact_escape, t.log_mass) for t in e.traps],
                               [(t.delta_star, t.exact_escape, t.log_mass) for t in traps],
                               rtol=1e-9)
    # the gap is not computed, but proved from below: the dense gap of the same chain obeys it
    assert e.absolute_gap is None and 0 < e.absolute_gap_lower <= reference.absolute_spectral_gap()
    text = format_certificate(cert)
    assert "accuracy" in text and "||pi P - pi||_1" in text
    assert f">= {e.absolute_gap_lower:.4g} proved" in text  # the note
    assert "(proved from C; no upper bound)" in text  # the table row
    assert any("absolute spectral gap >= " in item for item in sum(categorised(cert), []))
    page = report_html([(cert.to_dict(), "window.json")])
    assert "(proved from C; no upper bound), not computed" in page
    assert type(cert).from_json(cert.to_json()).exact == e
    monkeypatch.setattr("glauber.exact.window_chain.window_stationary",
                        lambda op: window_stationary(op, tol=1e-300))
    refused = certify(window, 1.0, n_rectangles=5, n_pairs=0)
    assert refused.exact is None and "metastable" in refused.exact_note
    assert f"<= t_mix(0.25) <= {e.tmix_upper}" in refused.exact_note


def test_the_bracket_of_a_window_above_the_exhaustive_limit_is_exact(matrix_free, monkeypatch):
    # as if the 625 states were 5 amino acids' 3,200,000: above what the other stages
    # enumerate and what a source tabulates by default; the chain's table still answers
    monkeypatch.setattr("glauber.certify.bracket.TABULATE_MAX_STATES", 100)
    monkeypatch.setattr(pipeline, "EXACT_MAX_STATES", 100)
    window = _wide_window()
    cert = certify(window, 1.0, n_rectangles=5, n_pairs=0, max_exhaustive_states=100)
    b = cert.bracket
    assert cert.exact is not None and not cert.influence.exhaustive
    assert b.upper_method == "tabulated" and b.lower_method == "exact (table)"
    assert b.tau_no_cert is not None and b.ratio < 1.01
    # oracle: the spectral radius of the exact C of the chain itself, at each end
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sparse, "SPARSE_MAX_STATES", 2**20)
        reference = ExactChain(window, 1.0)
    rho = [float(np.abs(np.linalg.eigvals(reference.at(t).influence_matrix())).max())
           for t in (b.tau_no_cert, b.tau_cert)]
    assert rho[0] >= 1.0 - 1e-9 and rho[1] < 1.0


def test_the_verdict_reads_the_exact_chains_certificate_when_the_stage_searched(
        matrix_free, monkeypatch):
    monkeypatch.setattr("glauber.certify.bracket.TABULATE_MAX_STATES", 100)
    monkeypatch.setattr(pipeline, "EXACT_MAX_STATES", 100)
    window = _wide_window()  # scale 0.1: the exact C certifies at tau = 1
    cert = certify(window, 1.0, n_rectangles=5, n_pairs=0, max_exhaustive_states=100,
                   bracket=False)
    x = cert.exact.contraction
    assert not cert.influence.exhaustive and x.best != "none"
    assert cert.exact.tmix_upper == math.ceil(x.best_bound)
    text = " ".join(format_certificate(cert).split())
    assert (f"Theorem 5 certificate? yes, proved: t_mix(0.25) <= {math.ceil(x.best_bound)} "
            "steps at tau = 1 (Theorem 5, corrected: ") in text
    assert "certificate on the exact chain's influence matrix; the influence stage searched" in text


def test_dry_run_says_the_exact_chain_takes_five_sites(matrix_free, monkeypatch):
    plan = table_plan(_wide_window())  # 4 sites x 5 tokens: 4 x 125 rows of 5 scores
    assert plan.compact and plan.table_bytes == plan.disk_bytes == 8 * 4 * 5**3 * 5
    text = table_plan_text(_wide_window())
    assert "in memory (compact: the matrix-free chain never expands it)" in text
    assert "certify builds it by default (625 states <= 3,200,000" in text
    assert "matrix-free" in text
    spins = RandomJointModel(9, 2, rng=0)  # 512 states, more sites than tokens: no factor
    assert "beyond the exact chain's sparse limit of 256" in table_plan_text(spins)
    monkeypatch.setattr("glauber.core.memory.available_memory", lambda: 1000)
    assert "does not fit" in table_plan_text(_wide_window())


def test_a_table_built_in_other_processes_gives_the_same_certificate(tmp_path, monkeypatch):
    full = RandomJointModel(5, 3, rng=7)
    window = CountingModel(restrict(full, np.array([0, 2, 1, 1, 0]), [3, 0, 2]))
    monkeypatch.setenv("GLAUBER_CACHE", str(tmp_path / "here"))
    here = certify(window, 1.0, exact=True, n_rectangles=5, n_pairs=0)
    monkeypatch.setenv("GLAUBER_CACHE", str(tmp_path / "there"))  # nothing on disk there
    with concurrent.futures.ProcessPoolExecutor(2) as pool:  # every task is pickled
        there = certify(window, 1.0, exact=True, n_rectangles=5, n_pairs=0,
                        executor=pool)
    (folder,) = (tmp_path / "there" / "score_tables").iterdir()
    assert len(list(folder.rglob("shard_*.npz"))) == 3  # each shard came back and was saved
    assert there.exact == here.exact
    np.testing.assert_array_equal(there.influence.C, here.influence.C)
    assert there.timings.rows == here.timings.rows == 27
