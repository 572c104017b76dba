"""Theorem 5 certificates (corrected) under floating point: nothing rigorous may be contradicted.

Oracles: mpmath at 80 significant digits (matrix powers by repeated squaring, singular values),
exact rational sums (fractions), and the closed form of the symmetric 2 x 2 case
``1^T M^t 1 = 2 ((1 + c)/2)^t`` (``1`` is an eigenvector of ``M`` with eigenvalue ``(1 + c)/2``).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import PrecisionError
from glauber.theory import (
    certify_contraction,
    coupling_distance_bound,
    matrix_power_certificate,
    matrix_power_search,
    theorem5_tmix_bound,
)
from glauber.theory.verified_power import (
    alpha_gap_lower,
    exact_power_search,
    power_sum_bounds,
    spectral_norm_upper,
    tmix_upper,
)

from ..support import power_sum_mp

mp = mpmath.mp.clone()
mp.dps = 80


def test_issue_reproducer_gives_the_exact_answer():
    c = 1 - 3e-10
    # Closed form: f(t) = 2 lam^t, lam = (1 + c)/2 (c as the exact double), so the least t with
    # f(t) <= 1/4 is ceil(log 8 / -log lam).
    lam = (1 + mp.mpf(Fraction(c).numerator) / Fraction(c).denominator) / 2
    t_star = int(mp.ceil(mp.log(8) / -mp.log(lam)))
    assert t_star == 13862942464
    assert 2 * lam**t_star <= mp.mpf(1) / 4 < 2 * lam ** (t_star - 1)
    C = np.array([[0.0, c], [c, 0.0]])
    assert matrix_power_certificate(C, 0.25) == t_star
    r = matrix_power_search(C, 0.25)
    assert (r.t, r.rigorous, r.minimal) == (t_star, True, True)
    assert r.method.startswith("exact")


def _near_critical(seed: int, n: int, log_gap: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    C = rng.random((n, n)) * (rng.random((n, n)) < 0.8)
    np.fill_diagonal(C, 0.0)
    if not C.any():
        C[0, 1] = 1.0
    rho = max(abs(np.linalg.eigvals(C)))
    if rho == 0.0:  # nilpotent: make it a cycle
        C = np.roll(np.eye(n), 1, axis=1)
        rho = 1.0
    return C * ((1.0 - 10.0**log_gap) / rho)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 4), log_gap=st.floats(-12.0, -3.0),
       eps=st.sampled_from([0.25, 0.01, 0.4]))
def test_near_critical_certificates_are_never_contradicted(seed, n, log_gap, eps):
    C = _near_critical(seed, n, log_gap)
    r = matrix_power_search(C, eps)
    if math.isinf(r.t):
        return
    assert r.rigorous  # n <= 24: the exact search always decides
    assert power_sum_mp(C, int(r.t)) <= eps
    if r.minimal:
        assert power_sum_mp(C, int(r.t) - 1) > eps


def test_unprovable_case_is_marked_not_rigorous_and_the_bare_function_refuses():
    # Rounding of each product (4 (n + 2) 2**-53 ~ 1.8e-15) outruns the decay per step
    # ((1 - c)/2 = 1e-15): float enclosures cannot prove any t; without the exact search the
    # result must say so.
    c = 1 - 2e-15
    C = np.array([[0.0, c], [c, 0.0]])
    r = matrix_power_search(C, 0.25, exact_max_sites=0)
    assert not r.rigorous and "rounding" in r.reason
    exact = exact_power_search(C, 0.25)
    assert exact.t is not None and power_sum_mp(C, int(exact.t)) <= 0.25 < power_sum_mp(C, int(exact.t) - 1)
    # more sites than the exact search takes: the bare certificate raises, the report keeps the
    # norm certificates (rigorous) and drops the matrix power from "best"
    n = 25
    C = (1 - 1e-13) * (np.ones((n, n)) - np.eye(n)) / (n - 1)
    with pytest.raises(PrecisionError, match="not proved"):
        matrix_power_certificate(C, 0.25)
    cert = certify_contraction(C, 0.25)
    assert "matrix_power" not in cert.rigorous and cert.best in ("row", "col", "spectral")
    assert "unverified" in cert.precision_note


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 6), t=st.integers(0, 10**6))
def test_power_sum_enclosure_contains_the_80_digit_value(seed, n, t):
    C = _near_critical(seed, n, -2.0)
    (b,) = power_sum_bounds(C, [t])
    exact = power_sum_mp(C, t)
    assert b.lower <= exact <= b.upper
    assert coupling_distance_bound(C, t) >= exact


def test_coupling_bound_takes_astronomical_times():
    C = np.array([[0.0, 0.5], [0.5, 0.0]])
    assert 0.0 <= coupling_distance_bound(C, 10**400) < 1e-320  # an upper bound on ~0.75**1e400
    stochastic = np.array([[0.0, 1.0], [1.0, 0.0]])  # rho = 1: f(t) = 2 for every t
    assert coupling_distance_bound(stochastic, 10**400) >= 2.0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 7), log_gap=st.floats(-15.0, -1.0))
def test_alpha_gaps_are_lower_bounds(seed, n, log_gap):
    rng = np.random.default_rng(seed)
    C = rng.random((n, n))
    np.fill_diagonal(C, 0.0)
    C = C / max(C.sum(axis=1).max(), 1e-300) * (1 - 10.0**log_gap)
    gaps = alpha_gap_lower(C)
    exact_row = min(1 - sum(Fraction(float(v)) for v in C[i]) for i in range(n))
    exact_col = min(1 - sum(Fraction(float(v)) for v in C[:, j]) for j in range(n))
    assert Fraction(gaps.row) <= exact_row and Fraction(gaps.col) <= exact_col
    sigma = max(mp.svd_r(mp.matrix(C.tolist()), compute_uv=False)) if n > 1 else mp.mpf(0)
    upper = spectral_norm_upper(C)
    assert upper >= sigma
    assert upper <= float(sigma) * (1 + 1e-6) + 1e-300  # and it is tight
    assert Fraction(gaps.spectral) <= 1 - Fraction(upper)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 10**6), a=st.floats(0.0, 1.0, exclude_max=True),
       eps=st.floats(1e-300, 0.999))
def test_integer_tmix_bound_is_never_below_the_exact_ceiling(n, a, eps):
    got = theorem5_tmix_bound(n, a, eps, integer=True)
    exact = mp.ceil(n / (1 - mp.mpf(a)) * (mp.log(n) + mp.log(1 / mp.mpf(eps))))
    assert got >= exact
    assert got <= exact * (1 + 1e-12) + 1  # and within rounding of it
    assert tmix_upper(n, 0.0, eps) == math.inf
