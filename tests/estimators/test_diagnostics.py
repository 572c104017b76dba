"""Convergence diagnostics (glauber.estimators.diagnostics).

Oracles: ArviZ's own array functions called observable by observable (the numbers must be
ArviZ's, to 1e-12); an independent transcription of Vehtari et al. (2021), eq. 4-5 and §4.2, of
the rank-normalised split R-hat (catches a chain/draw axis swap); closed-form observables
(Hamming distances, indicators, energies summed state by state); and exact Markov chains for the
two behaviours the study relies on: chains started from the stationary law give R-hat within
0.01 of 1, and a two-basin toy started in both basins gives R-hat > 1.1 before its exact t_mix.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from glauber.errors import InvalidParameterError, MissingDependencyError
from glauber.estimators import convergence_diagnostics, glauber_chains
from glauber.estimators.diagnostics import (
    TAIL_PROBS,
    chain_observables,
    energy_of_states,
    evaluation_points,
)
from glauber.exact.chain import ExactChain
from glauber.toy_models import parse_toy_spec

arviz = pytest.importorskip("arviz_stats.base").array_stats  # the 'diagnostics' extra


def _ar1(rng, chains, draws, rho, shift=None):
    x = np.zeros((chains, draws))
    e = rng.normal(size=(chains, draws))
    for t in range(1, draws):
        x[:, t] = rho * x[:, t - 1] + e[:, t]
    return x if shift is None else x + np.asarray(shift)[:, None]


def test_every_number_is_arviz_s_own():
    rng = np.random.default_rng(0)
    obs = np.stack([_ar1(rng, 6, 300, 0.9), _ar1(rng, 6, 300, 0.3, [0, 0, 0, 0, 1, 1]),
                    np.floor(_ar1(rng, 6, 300, 0.95))], axis=2)
    res = convergence_diagnostics(obs)
    for p, d in enumerate(res.draws):
        for k in range(obs.shape[2]):
            x = obs[:, :d, k]
            assert res.rhat[p, k] == pytest.approx(arviz.rhat(x, method="rank"), abs=1e-12)
            assert res.ess_bulk[p, k] == pytest.approx(arviz.ess(x, method="bulk"), abs=1e-12)
            assert res.ess_tail[p, k] == pytest.approx(
                arviz.ess(x, method="tail", prob=TAIL_PROBS), abs=1e-12)


def _split(x):
    """Vehtari et al. (2021) §4.1: each chain cut into its first and last halves."""
    half = x.shape[1] // 2
    return np.vstack([x[:, :half], x[:, x.shape[1] - half:]])


def _rhat(s):
    """Their eq. 3-4: sqrt(((n-1)/n W + B/n) / W) from within and between variances."""
    n = s.shape[1]
    w = s.var(axis=1, ddof=1).mean()
    b = n * s.mean(axis=1).var(ddof=1)
    return math.sqrt(((n - 1) / n * w + b / n) / w)


def _rank_normalised_rhat(x):
    """Their §4.2: z = Phi^-1((r - 3/8) / (S + 1/4)) of the pooled ranks of the split chains,
    R-hat of z and of the folded draws |s - median|, the larger of the two."""
    def z(v):
        r = stats.rankdata(v, method="average").reshape(v.shape)
        return stats.norm.ppf((r - 3 / 8) / (v.size + 1 / 4))

    s = _split(x)
    return max(_rhat(z(s)), _rhat(z(np.abs(s - np.median(s)))))


def test_rhat_matches_the_paper_s_definition_not_a_transposed_array():
    rng = np.random.default_rng(1)
    x = _ar1(rng, 4, 201, 0.8, [0, 0.3, 0, 0.6])
    res = convergence_diagnostics(x[:, :, None], points=[201])
    assert res.rhat[-1, 0] == pytest.approx(_rank_normalised_rhat(x), rel=1e-10)
    assert res.rhat[-1, 0] != pytest.approx(_rank_normalised_rhat(x.T[:4]), rel=1e-3)


@st.composite
def _draw_arrays(draw):
    """Random ``(chains, draws, observables)`` arrays of the kinds a trajectory records: real
    draws, ties (rounded, indicators), random walks, a large offset, a constant prefix."""
    chains, draws, count = (draw(st.integers(2, 8)), draw(st.integers(4, 60)),
                            draw(st.integers(1, 3)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.normal(size=(chains, draws, count))
    kind = draw(st.sampled_from(["normal", "ties", "walk", "indicator", "offset", "prefix"]))
    if kind == "ties":
        x = np.round(x)
    elif kind == "walk":
        x = x.cumsum(axis=1)
    elif kind == "indicator":
        x = (x > 1.0).astype(float)
    elif kind == "offset":
        x = 1e9 + 1e-3 * x
    elif kind == "prefix":
        x[:, : draws // 2] = 0.0
    return x


@settings(max_examples=60, deadline=None, derandomize=True)
@given(_draw_arrays())
def test_rhat_equals_arviz_and_the_paper_on_random_arrays(x):
    # The R-hat of every observable at every evaluation point is ArviZ's on the same draws (the
    # first d of every chain, axes chain then draw), and the independent transcription of
    # Vehtari et al. (2021) §4.2 above, to 1e-12 (relative above 1); infinite where a half-chain
    # is constant (W = 0) in all three; NaN exactly where those draws are all equal.
    res = convergence_diagnostics(x)
    for p, d in enumerate(res.draws):
        for k in range(x.shape[2]):
            y = x[:, :d, k]
            if y.min() == y.max():
                assert np.isnan(res.rhat[p, k])
                continue
            with np.errstate(divide="ignore", invalid="ignore"):  # a constant half: W = 0
                theirs, paper = arviz.rhat(y, method="rank"), _rank_normalised_rhat(y)
            for ref in (theirs, paper):
                assert (res.rhat[p, k] == ref == np.inf
                        or abs(res.rhat[p, k] - ref) <= 1e-12 * max(1.0, abs(ref)))


def test_convergence_steps_constants_and_the_verdict():
    rng = np.random.default_rng(2)
    draws = 1500
    iid = rng.normal(size=(8, draws))
    stuck = np.repeat(np.arange(8.0)[:, None], draws, axis=1)  # each chain constant, all differ
    late = np.zeros((8, draws))
    late[:, 1000:] = rng.normal(size=(8, draws - 1000))  # constant until draw 1000
    const = np.ones((8, draws))
    obs = np.stack([iid, late, const], axis=2)
    res = convergence_diagnostics(obs, names=["iid", "late", "const"], steps=10 * np.arange(draws))
    assert res.constant.tolist() == [False, False, True]
    assert np.isnan(res.rhat[:, 2]).all() and np.isnan(res.rhat[res.draws <= 1000, 1]).all()
    k = int(res.first_converged[0])
    assert k >= 0 and res.rhat[k, 0] < 1.01 and res.ess_bulk[k, 0] >= 400
    assert all(not (res.rhat[j, 0] < 1.01 and res.ess_bulk[j, 0] >= 400) for j in range(k))
    assert res.steps[k] == 10 * (res.draws[k] - 1)  # the recorded step of the last draw used
    assert res.first_converged_step(1) is None or res.first_converged_step(1) > 10 * 1000
    both = convergence_diagnostics(np.stack([iid, stuck], axis=2), names=["iid", "stuck"])
    assert both.converged_step is None and both.rhat[-1, 1] > 1e3
    assert "NOT converged" in both.verdict() and "stuck" in both.verdict()
    report = res.report()
    assert set(report["observables"]) == {"iid", "late"} and report["constant_observables"] == [
        "const"]
    for entry in report["observables"].values():
        assert {"rhat", "ess_bulk", "ess_tail", "first_converged_step"} <= set(entry)
    none = convergence_diagnostics(np.ones((4, 10, 2)))
    assert none.converged_step is None and none.verdict().startswith("not assessed")


@pytest.mark.parametrize("bad, needle", [
    (np.zeros((1, 10, 1)), "at least 2"),
    (np.zeros((4, 3, 1)), "at least 4 draws"),
    (np.zeros((4, 10)), "shape"),
    (np.zeros((4, 10, 0)), "no observable"),
    (np.where(np.eye(10)[None, :, :1] > 0, np.nan, 0.0).repeat(4, 0), "not finite"),
    (np.full((4, 10, 1), np.inf), "not finite"),
    ([["a"]], "real numbers"),
])
def test_bad_input_is_a_typed_error(bad, needle):
    with pytest.raises(InvalidParameterError, match=needle):
        convergence_diagnostics(bad)


def test_bad_names_steps_and_points():
    x = np.zeros((4, 10, 2))
    with pytest.raises(InvalidParameterError, match="names"):
        convergence_diagnostics(x, names=["a"])
    with pytest.raises(InvalidParameterError, match="steps"):
        convergence_diagnostics(x, steps=[1, 2])
    with pytest.raises(InvalidParameterError, match="evaluation points"):
        convergence_diagnostics(x, points=[3, 10])


def test_missing_arviz_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "arviz_stats", None)
    monkeypatch.setitem(sys.modules, "arviz_stats.base", None)
    with pytest.raises(MissingDependencyError, match=r"glauber\[diagnostics\]"):
        convergence_diagnostics(np.random.default_rng(0).normal(size=(4, 10, 1)))


@pytest.mark.parametrize("draws, per", [(4, 1), (5, 2), (1000, 2), (1001, 4), (12345, 3)])
def test_evaluation_points_are_geometric_and_end_at_the_last_draw(draws, per):
    pts = evaluation_points(draws, per)
    assert pts[0] == 4 and pts[-1] == draws and np.all(np.diff(pts) > 0)
    assert len(pts) <= per * math.log2(draws / 4) + 2
    assert pts.sum() <= draws / (1 - 2 ** (-1 / per)) + draws  # a constant times the last one


def test_observables_from_their_definitions():
    rng = np.random.default_rng(3)
    states = rng.integers(3, size=(7, 4, 5))
    starts = states[0]
    obs, names = chain_observables(states, starts, 3, energy=np.arange(28.0).reshape(7, 4))
    assert obs.shape[:2] == (4, 7) and names[0] == "energy"
    for c in range(4):
        for r in range(7):
            assert obs[c, r, 0] == 4 * r + c
            for j in range(4):
                assert obs[c, r, 1 + j] == sum(states[r, c, i] != starts[j, i] for i in range(5))
            for k, name in enumerate(names[5:], start=5):
                site, tok = name[2:].split("]=")
                assert obs[c, r, k] == float(states[r, c, int(site) - 1] == int(tok))
    seen = sum(len(set(states[:, :, i].ravel())) for i in range(5)
               if len(set(states[:, :, i].ravel())) > 1)
    assert len(names) == 1 + 4 + seen


def test_energies_are_sums_of_the_sites_own_terms():
    model = parse_toy_spec("asym-ising:n=3")
    x = np.array([[0, 1, 1], [1, 1, 0]])
    pll, raw = energy_of_states(model, x, "pll"), energy_of_states(model, x, "logits")
    for b in range(2):
        s = [model.scores(x[[b]], np.array([i]))[0] for i in range(3)]
        assert raw[b] == pytest.approx(-sum(s[i][x[b, i]] for i in range(3)), abs=1e-12)
        lse = [math.log(np.exp(v).sum()) for v in s]
        assert pll[b] == pytest.approx(-sum(s[i][x[b, i]] - lse[i] for i in range(3)), abs=1e-12)
    with pytest.raises(InvalidParameterError, match="energy kind"):
        energy_of_states(model, x, "joint")


def _run(model, tau, x0, steps, every, seed):
    run = glauber_chains(model, tau, x0, steps, seed=seed, record_every=every)
    obs, names = chain_observables(run.trajectory, run.trajectory[0], model.q,
                                   energy_of_states(model, run.trajectory.reshape(-1, model.n))
                                   .reshape(run.trajectory.shape[:2]))
    return convergence_diagnostics(obs, names, run.recorded_steps)


def test_chains_started_from_the_stationary_law_give_rhat_near_one():
    # Started from mu, every draw of every chain has law mu: no chain differs from another in
    # law, and split R-hat tends to 1 as the draws grow (Vehtari et al. 2021, §3).
    model = parse_toy_spec("ising-cycle:n=6")
    chain = ExactChain(model, 2.0)  # t_mix = 24 steps
    pi = chain.stationary()
    x0 = chain.states()[np.random.default_rng(4).choice(len(pi), size=8, p=pi)]
    res = _run(model, 2.0, x0, 20_000, 10, 5)
    live = ~res.constant
    assert np.all(np.abs(res.rhat[-1, live] - 1) < 0.01), res.rhat[-1, live]


def test_a_two_basin_toy_started_in_both_basins_has_rhat_above_1_1_before_t_mix():
    # Curie-Weiss, alpha = 1.5, tau = 0.5 (beta alpha = 3 > 1): two basins around the aligned
    # states; exact t_mix(1/4) = 8890 steps. Four chains start in each basin.
    model = parse_toy_spec("curie-weiss:n=8,alpha=1.5")
    tmix = ExactChain(model, 0.5).mixing_time(0.25)
    assert tmix > 8000
    x0 = np.repeat(np.array([[0] * 8, [1] * 8]), 4, axis=0)
    res = _run(model, 0.5, x0, tmix // 2, 10, 6)
    worst = np.nanmax(res.rhat[:, ~res.constant], axis=1)
    assert np.all(worst > 1.1), worst
    assert res.converged_step is None
