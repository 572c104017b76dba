"""Lag-coupling estimates (Biswas, Jacob and Vanetti 2019, Theorem 2.5) against exact TV.

Oracles: the exact law of the chain after ``t`` steps from the start law (the exact transition
matrix of :class:`glauber.exact.ExactChain`) against its exact stationary law; the bound's own
form ``E[max(0, ceil((tau^(L) - L - t) / L))]`` recomputed from the returned meeting times.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import ConvergenceError, InvalidParameterError, InvalidTemperatureError
from glauber.estimators.lag_coupling import MIN_PAIRS, lag_coupling_bound
from glauber.exact.chain import ExactChain
from glauber.toy_models import IsingModel, RandomTableModel


def exact_tv(model, tau, starts, steps):
    chain = ExactChain(model, tau)
    Pt, pi = chain.transition_matrix().T.tocsr(), chain.stationary()
    mu = np.zeros(chain.num_states)
    np.add.at(mu, chain.index_of(np.atleast_2d(starts)), 1.0 / len(np.atleast_2d(starts)))
    out = []
    for _ in range(max(steps) + 1):
        out.append(0.5 * float(np.abs(mu - pi).sum()))
        mu = Pt @ mu
    return np.array(out)[list(steps)]


def test_the_upper_limit_covers_the_exact_tv_of_fast_chains():
    model = RandomTableModel(3, 3, rng=5)
    starts = np.zeros((1, 3), dtype=int)
    steps = [0, 1, 2, 4, 8]
    tv = exact_tv(model, 1.0, starts, steps)
    covered = 0
    for seed in range(20):
        b = lag_coupling_bound(model, 1.0, starts, lag=4, n_pairs=100, seed=seed)
        covered += sum(tv[k] <= b.at(t)[1] for k, t in enumerate(steps))
    assert covered >= 0.95 * 20 * len(steps)


def test_the_estimate_is_the_bound_of_its_meeting_times():
    b = lag_coupling_bound(IsingModel(nx.cycle_graph(4)), 2.0, [0, 1, 0, 1], lag=3, n_pairs=50,
                           seed=4)
    T = b.meeting_times
    assert (T >= 1).all() and len(T) == 50
    for t in (0, 1, 5, int(T.max())):
        v = [max(0, math.ceil((int(s) - t) / 3)) for s in T]
        assert b.at(t)[0] == pytest.approx(min(1.0, float(np.mean(v))))
        assert b.at(t)[1] >= b.at(t)[0]
    assert b.at(0)[0] == 1.0  # every pair counts at least its first coupled step
    assert not b.rigorous and "not rigorous" in b.summary(3) and "95% CI" in b.summary(3)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 1000), tau=st.sampled_from([0.8, 1.5, 3.0]),
       lag=st.sampled_from([1, 2, 5]))
def test_the_bound_never_increases_and_reaches_its_allowance(seed, tau, lag):
    model = RandomTableModel(3, 2, rng=seed)
    b = lag_coupling_bound(model, tau, [0, 0, 0], lag=lag, n_pairs=MIN_PAIRS, seed=seed)
    assert np.all(np.diff(b.estimate) <= 1e-12)
    assert b.at(len(b.steps) + 10) == (0.0, pytest.approx(-math.log(0.05) / MIN_PAIRS))
    hit = b.first_below(0.25)
    assert hit is None or b.upper[hit] <= 0.25


def test_a_large_lag_gives_a_tighter_bound_late():
    model = IsingModel(nx.cycle_graph(5))
    small = lag_coupling_bound(model, 1.5, np.zeros(5, int), lag=1, n_pairs=200, seed=0)
    large = lag_coupling_bound(model, 1.5, np.zeros(5, int), lag=50, n_pairs=200, seed=0)
    assert large.at(20)[0] <= small.at(20)[0]


def test_same_seed_same_result():
    model = RandomTableModel(3, 3, rng=1)
    a = lag_coupling_bound(model, 1.0, [[0, 1, 2], [2, 2, 0]], lag=2, n_pairs=30, seed=9)
    b = lag_coupling_bound(model, 1.0, [[0, 1, 2], [2, 2, 0]], lag=2, n_pairs=30, seed=9)
    np.testing.assert_array_equal(a.meeting_times, b.meeting_times)
    np.testing.assert_array_equal(a.upper, b.upper)


def test_bad_input_says_what_to_raise():
    model = RandomTableModel(3, 3, rng=1)
    with pytest.raises(InvalidParameterError, match="raise lag to >= 1"):
        lag_coupling_bound(model, 1.0, [0, 0, 0], lag=0)
    with pytest.raises(InvalidParameterError, match=f"raise n_pairs to >= {MIN_PAIRS}"):
        lag_coupling_bound(model, 1.0, [0, 0, 0], n_pairs=5)
    with pytest.raises(InvalidTemperatureError):
        lag_coupling_bound(model, float("nan"), [0, 0, 0])
    with pytest.raises(InvalidParameterError, match="level"):
        lag_coupling_bound(model, 1.0, [0, 0, 0], level=1.0)
    # a metastable chain whose pairs cannot meet in 3 steps: refused, not guessed
    with pytest.raises(ConvergenceError, match="raise max_steps"):
        lag_coupling_bound(IsingModel(nx.cycle_graph(6)), 0.3, [[0] * 6, [1] * 6], lag=1,
                           n_pairs=MIN_PAIRS, max_steps=3)


def test_trajectory_reports_the_estimate_beside_r_hat(tmp_path, capsys):
    import json

    from glauber.cli import main

    out = tmp_path / "run"
    assert main(["trajectory", "--model", "ising-cycle:n=5", "--tau", "2", "--steps", "60",
                 "--chains", "4", "--out", str(out), "--no-progress", "--lag-coupling", "5",
                 "--lag-pairs", "40"]) == 0
    printed = capsys.readouterr().out
    report = json.loads((out / "lag_coupling.json").read_text())
    assert report["rigorous"] is False and report["step"] == 60 and report["pairs"] == 40
    assert f"lag coupling: {report['text']}" in printed and "diagnostics:" in printed
    assert main(["trajectory", "--model", "ising-cycle:n=5", "--steps", "10", "--out",
                 str(tmp_path / "bad"), "--lag-coupling", "3", "--lag-pairs", "2"]) == 2
    assert "raise n_pairs" in capsys.readouterr().err and not (tmp_path / "bad").exists()
