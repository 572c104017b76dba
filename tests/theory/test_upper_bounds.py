"""Rigorous upper-bound arithmetic of the influence bracket.

* :func:`influence_matrix_bound`: never below ``tanh(Delta / (4 tau))`` evaluated at 50 digits;
* :func:`pairwise_oscillation`: the exact oscillation of pairwise scores, against enumeration
  of every pair of contexts;
* :func:`rho_upper`, :func:`weighted_tmix_upper`: Collatz–Wielandt bounds against spectral
  radii known in closed form and at 50 digits (mpmath eigenvalues), and against
  ``1^T M^t 1`` at 80 digits;
* :func:`alpha_upper`: exact rational row and column sums;
* :func:`softmax_tv_rounding`: covers the float64 TV of two softmaxes against 50 digits.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError, InvalidTemperatureError
from glauber.theory.floating import gamma, softmax_tv_rounding
from glauber.theory.influence_bounds import influence_matrix_bound, pairwise_oscillation
from glauber.theory.verified_power import alpha_upper, rho_upper, weighted_tmix_upper

MP = mpmath.mp.clone()
MP.dps = 50


@settings(max_examples=100, deadline=None, database=None)
@given(st.floats(0.0, 1e6), st.floats(1e-8, 1e8))
def test_tanh_upper_is_never_below_the_50_digit_value(delta, tau):
    C = influence_matrix_bound(np.array([[0.0, delta], [0.0, 0.0]]), tau)
    exact = MP.tanh(MP.mpf(delta) / (4 * MP.mpf(tau)))
    assert MP.mpf(float(C[0, 1])) >= exact
    assert C[0, 1] <= 1.0 and C[1, 0] == 0.0 and C[0, 0] == 0.0
    if exact < 0.5:  # and tight: a few ulps
        assert float(C[0, 1]) <= float(exact) * (1 + 1e-14) + 1e-300


def test_tanh_upper_survives_a_temperature_where_4_tau_overflows():
    # counterexample to the earlier (Delta / (4 tau)) order: 4 * 1e308 = inf gave a quotient of
    # 0 and a bound of 1e-323, where the exact value is tanh(1e308 / 4e308) = tanh(1/4)
    C = influence_matrix_bound(np.array([[0.0, 1e308], [0.0, 0.0]]), 1e308)
    assert MP.mpf(float(C[0, 1])) >= MP.tanh(MP.mpf(1) / 4)


@pytest.mark.parametrize("tau", [0.0, -1.0, math.nan, math.inf])
def test_tanh_upper_refuses_bad_temperatures(tau):
    with pytest.raises(InvalidTemperatureError):
        influence_matrix_bound(np.zeros((2, 2)), tau)


def _enumerated_oscillation(K: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Lemma 6's Delta of s_i(a; x) = h[i, a] + sum_{k != i} K[i, k, a, x_k], every pair."""
    n, _, q, _ = K.shape
    D = np.zeros((n, n))
    for x in itertools.product(range(q), repeat=n):
        for j in range(n):
            for b in range(q):
                y = list(x)
                y[j] = b
                for i in range(n):
                    if i == j:
                        continue
                    sx = h[i] + sum(K[i, k, :, x[k]] for k in range(n) if k != i)
                    sy = h[i] + sum(K[i, k, :, y[k]] for k in range(n) if k != i)
                    d = sx - sy
                    D[i, j] = max(D[i, j], d.max() - d.min())
    return D


@settings(max_examples=25, deadline=None, database=None)
@given(st.integers(2, 3), st.integers(2, 3), st.integers(0, 2**16))
def test_pairwise_oscillation_is_the_enumerated_one(n, q, seed):
    rng = np.random.default_rng(seed)
    K = rng.standard_normal((n, n, q, q))
    h = rng.standard_normal((n, q))
    exact = _enumerated_oscillation(K, h)
    # the enumerated scores are float sums of n terms: within gamma_n of their absolute sum
    err = gamma(n + 1, 2.0**-53) * (np.abs(h).max(axis=1) + np.abs(K).max(axis=(2, 3)).sum(1))
    bound = pairwise_oscillation(K, err)
    assert np.all(bound >= exact)
    np.testing.assert_allclose(bound, exact, rtol=1e-12, atol=1e-12)
    # without the score rounding the exact-arithmetic value can fall below the computed one
    assert np.all(pairwise_oscillation(K) >= exact - 1e-13)
    # the score rounding is added: 4 per unit of score error
    widened = pairwise_oscillation(K, np.full(n, 0.25))
    off = ~np.eye(n, dtype=bool)
    assert np.all(widened[off] >= bound[off] + 1.0 - 1e-12)


def test_pairwise_oscillation_of_ising_and_potts_closed_forms():
    s = np.array([-1.0, 1.0])
    K = np.zeros((3, 3, 2, 2))
    K[0, 1] = 0.7 * np.outer(s, s)  # Ising: 4 |J|
    assert pairwise_oscillation(K)[0, 1] == pytest.approx(2.8, rel=1e-15)
    P = np.zeros((2, 2, 4, 4))
    P[1, 0] = -1.5 * np.eye(4)  # Potts: 2 |J|
    assert pairwise_oscillation(P)[1, 0] == pytest.approx(3.0, rel=1e-15)
    with pytest.raises(InvalidParameterError):
        pairwise_oscillation(np.zeros((2, 3, 2, 2)))
    with pytest.raises(InvalidParameterError):
        pairwise_oscillation(np.full((2, 2, 2, 2), np.inf))


def _mp_rho(C: np.ndarray) -> float:
    with MP.workdps(50):
        return float(max(abs(v) for v in MP.eig(MP.matrix(C.tolist()))[0]))


@settings(max_examples=20, deadline=None, database=None)
@given(st.integers(2, 6), st.integers(0, 2**16), st.floats(0.0, 0.9), st.booleans())
def test_rho_upper_is_an_upper_bound_and_tight(n, seed, density, reducible):
    rng = np.random.default_rng(seed)
    C = rng.random((n, n)) * (rng.random((n, n)) >= density)
    if reducible:
        C = np.triu(C)  # nilpotent: rho = 0
    np.fill_diagonal(C, 0.0)
    exact = _mp_rho(C)
    r = rho_upper(C)
    assert r >= exact
    assert r <= exact * (1 + 1e-6) + 1e-6  # near the Perron root, reducible patterns included


@pytest.mark.parametrize("n,c", [(3, 0.2), (120, 0.008), (50, 1 / 49)])
def test_rho_upper_of_uniform_influence(n, c):
    C = np.full((n, n), c)
    np.fill_diagonal(C, 0.0)
    assert rho_upper(C) >= (n - 1) * c  # rho = (n - 1) c exactly
    assert rho_upper(C) <= (n - 1) * c * (1 + 1e-12)


def _coupling_sum(C: np.ndarray, t: int):
    with MP.workdps(80):
        n = C.shape[0]
        M = MP.matrix([[MP.mpf(float(C[i, j])) / n + (MP.mpf(n - 1) / n if i == j else 0)
                        for j in range(n)] for i in range(n)])
        v = MP.matrix([1] * n)
        P = M**t
        return MP.fsum(P * v)


@settings(max_examples=12, deadline=None, database=None)
@given(st.integers(2, 5), st.integers(0, 2**16), st.floats(0.05, 0.95))
def test_weighted_tmix_bound_meets_the_coupling_bound(n, seed, target):
    rng = np.random.default_rng(seed)
    C = rng.random((n, n))
    np.fill_diagonal(C, 0.0)
    C *= target / _mp_rho(C)  # spectral radius = target < 1
    r, t = weighted_tmix_upper(C, 0.25)
    assert r >= target * (1 - 1e-12) and math.isfinite(t)
    # d(t) <= 1^T M^t 1 <= eps at the bound (80 digits), so t_mix(1/4) <= t is proved
    assert _coupling_sum(C, int(t)) <= 0.25


def test_weighted_tmix_has_no_bound_at_rho_one():
    C = np.array([[0.0, 1.0], [1.0, 0.0]])
    r, t = weighted_tmix_upper(C, 0.25)
    assert r >= 1.0 and t == math.inf


@settings(max_examples=30, deadline=None, database=None)
@given(st.integers(1, 8), st.integers(0, 2**16))
def test_alpha_upper_is_the_exact_sum_rounded_up(n, seed):
    rng = np.random.default_rng(seed)
    C = rng.random((n, n)) * 10.0 ** rng.uniform(-20, 0)
    for axis in (0, 1):
        lines = C if axis == 1 else C.T
        exact = max(sum((Fraction(float(v)) for v in line), Fraction(0)) for line in lines)
        got = alpha_upper(C, axis)
        assert Fraction(got) >= exact
        assert got == float(exact) or got == math.nextafter(float(exact), math.inf)


@settings(max_examples=50, deadline=None, database=None)
@given(st.integers(2, 20), st.floats(-6, 6), st.floats(-8, 8), st.integers(0, 2**16))
def test_softmax_tv_rounding_covers_the_float64_tv(q, log_scale, log_tau, seed):
    rng = np.random.default_rng(seed)
    s = rng.standard_normal((2, q)) * 10.0**log_scale
    tau = 10.0**log_tau
    z = s / tau
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    tv = 0.5 * np.abs(p[0] - p[1]).sum()
    with MP.workdps(50):
        def law(row):
            e = [MP.exp(MP.mpf(float(v)) / MP.mpf(tau)) for v in row]
            total = MP.fsum(e)
            return [v / total for v in e]
        a, b = law(s[0]), law(s[1])
        exact = MP.fsum(abs(u - v) for u, v in zip(a, b)) / 2
    tol = softmax_tv_rounding(float(np.abs(s).max()), tau, q)
    assert abs(MP.mpf(float(tv)) - exact) <= tol
