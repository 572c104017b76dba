"""Margins (Appendix A.1, Assumption 1 / Theorem 8), escape probabilities and count drift (§5.4)."""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import (
    BasinError,
    InvalidParameterError,
    InvalidTemperatureError,
    VocabularyError,
)
from glauber.estimators import drift, escape_probability, margins
from glauber.theory.drift import band_drift_escape_bound
from glauber.toy_models import FunctionModel, PottsModel

from ..support import score_tables, states, table_model
from ._reference import (
    TorchModel,
    count_drift,
    escape_probabilities,
    raw_scores,
    stationary,
    transition_matrix,
)


#: Random score tables (scale ``scale``) with q <= 3, 2 to 4 sites.
def tables(scale: float = 1.0):
    return score_tables(81, (scale, scale), min_sites=2, max_sites=4, max_q=3)


def _count_basin(token: int, at_least: int):
    return lambda s: (np.asarray(s) == token).sum(axis=1) >= at_least


# ------------------------------------------------------------------------------------ margins


@settings(max_examples=20, deadline=None)
@given(model=tables(2.0))
def test_margins_match_scores(model):
    n, q = model.n, model.q
    xs = states(n, q)
    res = margins(model, xs)
    for s, x in enumerate(xs):
        for i in range(n):
            sc = raw_scores(model, x, i)
            want = sc[x[i]] - np.max(np.delete(sc, x[i]))
            assert res.margins[s, i] == pytest.approx(want, abs=1e-10)
    np.testing.assert_array_equal(res.perfect, (res.margins > 0).all(axis=1))
    assert res.delta_star == pytest.approx(res.margins.min())


@settings(max_examples=20, deadline=None)
@given(model=tables(3.0), tau=st.floats(0.1, 3.0), token=st.integers(0, 2),
       extra=st.integers(0, 1))
def test_assumption1_and_theorem8_against_enumeration(model, tau, token, extra):
    n, q = model.n, model.q
    token = token % q
    basin = _count_basin(token, n - 1 - extra if n - 1 - extra > 0 else 1)
    xs = states(n, q)
    inside = basin(xs)
    res = margins(model, xs[inside], tau=tau, basin=basin)
    b = res.basin
    # reference: exit-causing (site, token) pairs by enumeration
    dstar, argmax_ok, kmax = math.inf, True, 0
    for s, x in enumerate(xs[inside]):
        k = 0
        for i in range(n):
            sc = raw_scores(model, x, i)
            exits = []
            for a in range(q):
                y = x.copy()
                y[i] = a
                if a != x[i] and not basin(y[None])[0]:
                    exits.append(a)
            assert b.exit_sites[s, i] == bool(exits)
            if exits:
                k += 1
                dstar = min(dstar, min(sc[x[i]] - sc[a] for a in exits))
                argmax_ok &= bool(sc[x[i]] >= sc.max())
        kmax = max(kmax, k)
    if math.isfinite(dstar):
        assert b.delta_star == pytest.approx(dstar)
    else:
        assert math.isinf(b.delta_star)
    assert b.argmax_holds == argmax_ok and b.k == kmax
    assert b.holds == (argmax_ok and dstar > 0)
    # The exact escape probabilities computed beside the margins agree with the kernel's.
    P = transition_matrix(model, tau)
    np.testing.assert_allclose(res.basin_escape, escape_probabilities(P, inside)[inside],
                               rtol=1e-9, atol=1e-15)
    for s, x in enumerate(xs[inside]):
        alone = np.all(xs == x, axis=1)
        assert res.escape[s] == pytest.approx(escape_probabilities(P, alone)[alone][0], rel=1e-9)
    if b.holds:
        # Theorem 8 (true as printed) and the sharper form bound the exact escape probability.
        esc = escape_probabilities(P, inside)[inside]
        assert esc.max() <= b.escape_bound + 1e-12
        assert esc.max() <= b.sharper_escape_bound + 1e-12
        assert b.tmix_lower_bound == pytest.approx(math.exp(dstar / tau) / (4 * q)) or math.isinf(
            dstar
        )
    else:
        assert b.escape_bound is None and b.tmix_lower_bound is None
    json.dumps(res.to_dict(), allow_nan=False)


def test_singleton_potts_basin_closed_form():
    # Potts on K_3, coupling 3, basin {(0,0,0)}: at each site colour 0 has two agreeing
    # neighbours (score 6), every other colour 0, so Delta_star = 6 and
    # P(x, B^c) = 1 - p(0) = 2 / (e^{6/tau} + 2).
    model = PottsModel(nx.complete_graph(3), q=3, coupling=3.0)
    basin = lambda s: (np.asarray(s) == 0).all(axis=1)  # noqa: E731
    x = np.zeros((1, 3), dtype=int)
    for tau in (0.5, 1.0, 4.0):
        m = margins(model, x, tau=tau, basin=basin)
        assert m.basin.holds and m.basin.delta_star == pytest.approx(6.0)
        assert m.basin.escape_bound == pytest.approx(3 * math.exp(-6 / tau))
        assert m.basin.sharper_escape_bound == pytest.approx(2 * math.exp(-6 / tau))
        # one-state basin without `basin`: the per-trap bounds are the same numbers
        assert m.trap_escape_bound[0] == pytest.approx(3 * math.exp(-6 / tau))
        e = escape_probability(model, x, basin, tau)
        assert e.per_state[0] == pytest.approx(2 / (math.exp(6 / tau) + 2), rel=1e-12)
        assert e.per_state[0] <= m.basin.sharper_escape_bound


def test_margins_perfect_and_approximate_traps():
    # Independent sites preferring token 1 by 2.0: all-ones is a perfect trap (margins 2),
    # a state with one 0 has a margin -2 there (approximate).
    model = FunctionModel(3, 2, lambda x, i: np.tile([0.0, 2.0], (len(x), 1)))
    res = margins(model, np.array([[1, 1, 1], [1, 0, 1]]), tau=1.0)
    np.testing.assert_allclose(res.margins, [[2, 2, 2], [2, -2, 2]])
    assert res.perfect.tolist() == [True, False] and res.n_perfect == 1
    assert res.trap_tmix_lower_bound[0] == pytest.approx(math.exp(2.0) / 8)
    assert math.isnan(res.trap_tmix_lower_bound[1])


def test_margins_errors():
    model = table_model(3, 2, seed=0)
    basin = _count_basin(1, 3)
    with pytest.raises(BasinError):
        margins(model, np.zeros((0, 3), dtype=int), basin=basin)
    with pytest.raises(BasinError):
        margins(model, np.zeros((1, 3), dtype=int), basin=basin)  # outside the basin
    with pytest.raises(InvalidParameterError):
        margins(model, np.zeros((0, 3), dtype=int))
    with pytest.raises(InvalidTemperatureError):
        margins(model, np.ones((1, 3), dtype=int), tau=-1.0, basin=basin)
    with pytest.raises(InvalidParameterError):
        margins(model, np.ones((2, 3), dtype=int), basin=lambda s: np.ones(5, dtype=bool))


# ------------------------------------------------------------------------------------ escape


@settings(max_examples=20, deadline=None)
@given(model=tables(), tau=st.floats(0.2, 3.0), token=st.integers(0, 2))
def test_escape_probability_and_conductance_against_enumeration(model, tau, token):
    n, q = model.n, model.q
    token = token % q
    basin = _count_basin(token, max(1, n - 1))
    xs = states(n, q)
    inside = basin(xs)
    P = transition_matrix(model, tau)
    pi = stationary(P)
    res = escape_probability(model, xs[inside], basin, tau, weights=pi[inside])
    want = escape_probabilities(P, inside)[inside]
    np.testing.assert_allclose(res.per_state, want, atol=1e-12)
    # conductance Phi(B) = sum_{x in B} pi(x) P(x, B^c) / pi(B)
    assert res.mean == pytest.approx((pi[inside] @ want) / pi[inside].sum(), abs=1e-10)
    assert res.weighted


def test_escape_torch_matches_numpy_and_errors():
    toy = table_model(3, 3, seed=3)
    basin = _count_basin(0, 2)
    xs = states(3, 3)
    xs = xs[basin(xs)]
    a = escape_probability(toy, xs, basin, 0.7)
    b = escape_probability(TorchModel(toy), xs, basin, 0.7, batch_size=5)
    np.testing.assert_allclose(a.per_state, b.per_state, atol=1e-12)
    json.dumps(a.to_dict(), allow_nan=False)
    with pytest.raises(BasinError):
        escape_probability(toy, xs[:0], basin, 1.0)
    with pytest.raises(BasinError):
        escape_probability(toy, np.array([[1, 1, 2]]), basin, 1.0)
    with pytest.raises(InvalidTemperatureError):
        escape_probability(toy, xs, basin, float("nan"))
    with pytest.raises(InvalidParameterError):
        escape_probability(toy, xs, basin, 1.0, weights=np.ones(2))


def test_margins_torch_matches_numpy():
    toy = table_model(3, 3, seed=4, scale=2.0)
    basin = _count_basin(1, 2)
    xs = states(3, 3)
    xs = xs[basin(xs)]
    a = margins(toy, xs, tau=0.5, basin=basin)
    b = margins(TorchModel(toy), xs, tau=0.5, basin=basin)
    np.testing.assert_allclose(a.margins, b.margins, atol=1e-12)
    np.testing.assert_allclose(a.basin.exit_margin, b.basin.exit_margin, atol=1e-12)


# ------------------------------------------------------------------------------------ drift


@settings(max_examples=20, deadline=None)
@given(model=tables(), tau=st.floats(0.2, 3.0))
def test_drift_matches_transition_matrix(model, tau):
    n, q = model.n, model.q
    xs = states(n, q)
    want = count_drift(transition_matrix(model, tau), xs, token=1)
    res = drift(model, xs, 1, tau)
    np.testing.assert_allclose(res.per_state, want, atol=1e-12)
    np.testing.assert_array_equal(res.counts, (xs == 1).sum(axis=1))


def test_drift_independent_sites_closed_form_and_band_certificate():
    # Independent sites with p(1) = e^3 / (1 + e^3): E[X_1 - X_0] = p - X/n exactly.
    n = 8
    model = FunctionModel(n, 2, lambda x, i: np.tile([0.0, 3.0], (len(x), 1)))
    p = math.exp(3) / (1 + math.exp(3))
    rng = np.random.default_rng(0)
    xs = rng.integers(2, size=(200, n))
    res = drift(model, xs, 1, 1.0, band=(1, 5), T=10)
    np.testing.assert_allclose(res.per_state, p - xs.sum(axis=1) / n, atol=1e-12)
    inside = (res.counts > 1) & (res.counts < 5)
    assert res.n_in_band == inside.sum()
    eps = res.band_min_drift
    assert eps == pytest.approx(p - res.counts[inside].max() / n)
    assert res.certificate == band_drift_escape_bound(eps, 1, 5, 10)
    assert res.vacuous is False and res.rigorous is False  # sampled band: an estimate
    full = drift(model, states(n, 2), 1, 1.0, band=(1, 5), T=10, band_states_complete=True)
    assert full.band_min_drift == pytest.approx(p - 4 / n) and full.rigorous
    assert not full.all_positive  # states with many 1s drift down
    json.dumps(full.to_dict(), allow_nan=False)


def test_drift_negative_band_is_vacuous_and_errors():
    model = FunctionModel(4, 2, lambda x, i: np.tile([2.0, 0.0], (len(x), 1)))
    xs = states(4, 2)
    res = drift(model, xs, 1, 1.0, band=(0, 4), T=5, band_states_complete=True)
    assert res.certificate is None and res.vacuous and not res.rigorous
    with pytest.raises(VocabularyError):
        drift(model, xs, 2, 1.0)
    with pytest.raises(InvalidParameterError):
        drift(model, xs, 1, 1.0, band=(1, 3))  # no T
    with pytest.raises(InvalidParameterError):
        drift(model, xs, 1, 1.0, band=(3, 1), T=5)
    with pytest.raises(InvalidParameterError):
        drift(model, xs[:1], 1, 1.0, band=(1, 3), T=5)  # state 0000 has count 0: not inside
    with pytest.raises(InvalidTemperatureError):
        drift(model, xs, 1, 0.0)


def test_drift_torch_matches_numpy():
    toy = table_model(3, 3, seed=7)
    xs = states(3, 3)
    a = drift(toy, xs, 2, 0.6)
    b = drift(TorchModel(toy), xs, 2, 0.6, batch_size=4)
    np.testing.assert_allclose(a.per_state, b.per_state, atol=1e-12)


@pytest.mark.parametrize("seed, token, at_least", [(12, 0, 2), (3, 1, 3), (5, 2, 1)])
def test_agrees_with_exact_chain(seed, token, at_least):
    from glauber.exact.chain import ExactChain

    model = table_model(3, 3, seed=seed, scale=3.0)
    chain = ExactChain(model, tau=0.9)
    basin = _count_basin(token, at_least)
    xs = states(3, 3)
    inside = basin(xs)
    pi = chain.stationary()
    res = escape_probability(model, xs[inside], basin, 0.9, weights=pi[inside])
    np.testing.assert_allclose(res.per_state, chain.escape_probabilities(inside), atol=1e-12)
    assert res.mean == pytest.approx(chain.conductance(inside), abs=1e-10)
    exact = chain.margins(inside)
    mine = margins(model, xs[inside], tau=0.9, basin=basin, basin_complete=True).basin
    # One BasinMargins type: the estimator over every basin state equals the exact chain's.
    assert mine.delta_star == pytest.approx(exact.delta_star) or (
        math.isinf(mine.delta_star) and math.isinf(exact.delta_star)
    )
    assert mine.site_gap_min == pytest.approx(exact.site_gap_min) or (
        math.isinf(mine.site_gap_min) and math.isinf(exact.site_gap_min)
    )
    fields = ("holds", "argmax_holds", "k", "max_exit_tokens", "basin_size", "boundary_states",
              "complete")
    assert [getattr(mine, f) for f in fields] == [getattr(exact, f) for f in fields]
