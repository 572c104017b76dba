"""Tests of Lemma 6 (and its tanh form) and Corollary 7 (glauber.theory.influence_bounds)."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError, InvalidTemperatureError
from glauber.theory.contraction import alpha_row
from glauber.theory.influence_bounds import (
    corollary7_alpha_bound,
    corollary7_holds,
    influence_matrix_bound,
    lemma6_bound,
    tanh_bound,
)

SETTINGS = settings(max_examples=40, deadline=None)
temperatures = st.floats(0.05, 20.0)


def _exact_influence_and_oscillation(
    table: np.ndarray, n: int, q: int, tau: float
) -> tuple[np.ndarray, np.ndarray]:
    """Brute force Definition 2 and Lemma 6's Delta for scores table[site, state, token].

    The score of site i must not depend on x_i: the table is indexed by the state with x_i
    overwritten by 0.
    """
    states = list(itertools.product(range(q), repeat=n))
    index = {x: k for k, x in enumerate(states)}
    C = np.zeros((n, n))
    D = np.zeros((n, n))
    for i in range(n):
        for x in states:
            ctx = x[:i] + (0,) + x[i + 1 :]
            s_x = table[i, index[ctx]]
            p_x = np.exp(s_x / tau) / np.exp(s_x / tau).sum()
            for j in range(n):
                if j == i:
                    continue
                for b in range(q):
                    y = ctx[:j] + (b,) + ctx[j + 1 :]
                    s_y = table[i, index[y]]
                    p_y = np.exp(s_y / tau) / np.exp(s_y / tau).sum()
                    C[i, j] = max(C[i, j], 0.5 * np.abs(p_x - p_y).sum())
                    diff = s_x - s_y
                    D[i, j] = max(D[i, j], diff.max() - diff.min())
    return C, D


@SETTINGS
@given(st.floats(0.0, 1e3), temperatures)
def test_tanh_bound_is_sharper_than_lemma6(delta: float, tau: float) -> None:
    assert tanh_bound(delta, tau) <= lemma6_bound(delta, tau) + 1e-15
    assert tanh_bound(delta, tau) <= 1.0


def test_hand_values_and_elementwise_arrays() -> None:
    assert lemma6_bound(2.0, 0.5) == pytest.approx(1.0)  # 2 / (4 * 0.5)
    assert tanh_bound(4.0, 1.0) == pytest.approx(math.tanh(1.0))
    arr = np.array([[0.0, 1.0], [2.0, 8.0]])
    np.testing.assert_allclose(lemma6_bound(arr, 2.0), arr / 8.0)
    np.testing.assert_allclose(tanh_bound(arr, 2.0), np.tanh(arr / 8.0))
    assert tanh_bound(np.inf, 1.0) == 1.0


@settings(max_examples=25, deadline=None)
@given(
    st.integers(2, 3),
    st.integers(2, 3),
    temperatures,
    st.integers(0, 2**32 - 1),
)
def test_exact_influences_obey_both_bounds_on_random_score_models(
    n: int, q: int, tau: float, seed: int
) -> None:
    # Lemma 6 (true) and its tanh form, checked by brute force on random conditionals.
    rng = np.random.default_rng(seed)
    table = rng.normal(scale=2.0, size=(n, q**n, q))
    C, D = _exact_influence_and_oscillation(table, n, q, tau)
    sharp = influence_matrix_bound(D, tau, sharp=True)
    assert np.all(C <= sharp + 1e-12)
    assert np.all(sharp <= influence_matrix_bound(D, tau, sharp=False) + 1e-12)
    # Corollary 7: its hypothesis gives alpha(tau) < 1.
    assert alpha_row(C) <= corollary7_alpha_bound(D, tau, sharp=True) + 1e-12
    assert alpha_row(C) <= corollary7_alpha_bound(D, tau) + 1e-12
    if corollary7_holds(D, tau):
        assert alpha_row(C) < 1.0


def test_corollary7_hand_example_and_diagonal_ignored() -> None:
    D = np.array([[100.0, 1.0, 1.0], [0.5, 100.0, 0.5], [3.0, 0.0, 100.0]])
    # off-diagonal row sums 2, 1, 3: max 3 < 4 tau iff tau > 3/4.
    assert corollary7_holds(D, 1.0)
    assert not corollary7_holds(D, 0.75)
    assert corollary7_alpha_bound(D, 1.0) == pytest.approx(3.0 / 4.0)
    assert corollary7_alpha_bound(D, 1.0, sharp=True) == pytest.approx(math.tanh(3.0 / 4.0))
    assert np.all(np.diag(influence_matrix_bound(D, 1.0)) == 0.0)


@SETTINGS
@given(st.integers(1, 5), temperatures, st.integers(0, 2**32 - 1))
def test_corollary7_holds_iff_alpha_bound_below_one(n: int, tau: float, seed: int) -> None:
    D = np.random.default_rng(seed).exponential(scale=2.0, size=(n, n))
    total = corollary7_alpha_bound(D, tau)
    if abs(total - 1.0) > 1e-9:
        assert corollary7_holds(D, tau) == (total < 1.0)


@pytest.mark.parametrize("tau", [0.0, -1.0, math.nan, math.inf, True, "1"])
def test_bad_temperature(tau: object) -> None:
    with pytest.raises(InvalidTemperatureError):
        lemma6_bound(1.0, tau)  # type: ignore[arg-type]
    with pytest.raises(InvalidTemperatureError):
        tanh_bound(1.0, tau)  # type: ignore[arg-type]
    with pytest.raises(InvalidTemperatureError):
        corollary7_holds(np.zeros((2, 2)), tau)  # type: ignore[arg-type]


def test_bad_oscillations() -> None:
    with pytest.raises(InvalidParameterError):
        lemma6_bound(-0.1, 1.0)
    with pytest.raises(InvalidParameterError):
        tanh_bound([0.1, math.nan], 1.0)
    with pytest.raises(InvalidParameterError):
        corollary7_holds(np.ones((2, 3)), 1.0)
    with pytest.raises(InvalidParameterError):
        corollary7_alpha_bound([[0.0, -1.0], [0.0, 0.0]], 1.0)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 6),
       log_scale=st.floats(-20.0, 3.0), log_tau=st.floats(-3.0, 7.0))
def test_bounds_survive_their_own_rounding(seed, n, log_scale, log_tau):
    # Oracle: the same sums in mpmath at 60 digits from the float64 Delta. A bound computed in
    # round-to-nearest may land below the exact value by an ulp, and Corollary 7 near its
    # tanh limit (x - tanh x ~ x^3/3 < u x for x < 1e-8) has no slack to absorb it.
    mp = mpmath.mp.clone()
    mp.dps = 60
    rng = np.random.default_rng(seed)
    Delta = rng.random((n, n)) * 10.0**log_scale
    np.fill_diagonal(Delta, 0.0)
    tau = 10.0**log_tau
    exact = [[mp.mpf(float(Delta[i, j])) / (4 * mp.mpf(tau)) for j in range(n)] for i in range(n)]
    lem, sharp = influence_matrix_bound(Delta, tau, sharp=False), influence_matrix_bound(Delta, tau)
    for i, j in itertools.product(range(n), repeat=2):
        if i != j:
            assert mp.mpf(float(lem[i, j])) >= exact[i][j]
            assert mp.mpf(float(sharp[i, j])) >= mp.tanh(exact[i][j])
    rows = [mp.fsum(exact[i][j] for j in range(n) if j != i) for i in range(n)]
    tanh_rows = [mp.fsum(mp.tanh(exact[i][j]) for j in range(n) if j != i) for i in range(n)]
    assert mp.mpf(corollary7_alpha_bound(Delta, tau)) >= max(rows)
    assert mp.mpf(corollary7_alpha_bound(Delta, tau, sharp=True)) >= max(tanh_rows)
    assert corollary7_alpha_bound(Delta, tau) <= float(max(rows)) * (1 + 1e-13)
