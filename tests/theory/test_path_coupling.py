"""Tests of the path-coupling bounds (LPW 2nd ed. Theorem 14.6, Corollary 14.8)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError, InvalidProbabilityError
from glauber.theory.contraction import theorem5_contraction_factor, theorem5_tmix_bound
from glauber.theory.path_coupling import (
    path_coupling_distance_bound,
    path_coupling_tmix_bound,
    rate_from_contraction_factor,
)

SETTINGS = settings(max_examples=60, deadline=None)


def test_hand_values() -> None:
    assert path_coupling_distance_bound(10, 0.1, 5.0) == pytest.approx(5 * math.exp(-1.0))
    # log(5 / 0.25) / 0.1 = 10 log 20 = 29.96 -> 30
    assert path_coupling_tmix_bound(0.1, 5.0, 0.25) == 30
    assert path_coupling_tmix_bound(1.0, 0.1, 0.25) == 0  # diameter below eps: already mixed
    assert rate_from_contraction_factor(0.5) == pytest.approx(math.log(2))
    assert rate_from_contraction_factor(0.0) == math.inf


@SETTINGS
@given(st.floats(1e-4, 5.0), st.floats(1.0, 1e4), st.floats(0.01, 0.99))
def test_tmix_bound_is_first_time_the_distance_bound_reaches_eps(
    rate: float, diameter: float, eps: float
) -> None:
    t = path_coupling_tmix_bound(rate, diameter, eps)
    assert path_coupling_distance_bound(t, rate, diameter) <= eps * (1 + 1e-9)
    if t >= 1:
        assert path_coupling_distance_bound(t - 1, rate, diameter) > eps * (1 - 1e-9)


@SETTINGS
@given(st.integers(1, 200), st.floats(0.0, 0.99), st.floats(0.01, 0.99))
def test_path_coupling_with_theorem5_factor_is_at_least_as_good(
    n: int, a: float, eps: float
) -> None:
    # rate = -log(1 - (1-a)/n) >= (1-a)/n, so Corollary 14.8 beats the printed Theorem 5 bound.
    rate = rate_from_contraction_factor(theorem5_contraction_factor(n, a))
    if math.isinf(rate):  # n = 1: one step couples
        return
    assert path_coupling_tmix_bound(rate, n, eps) <= theorem5_tmix_bound(n, a, eps, integer=True)


def test_errors() -> None:
    with pytest.raises(InvalidParameterError):
        rate_from_contraction_factor(1.0)
    with pytest.raises(InvalidParameterError):
        rate_from_contraction_factor(-0.1)
    with pytest.raises(InvalidParameterError):
        path_coupling_distance_bound(-1, 0.1, 1.0)
    with pytest.raises(InvalidParameterError):
        path_coupling_distance_bound(1, 0.0, 1.0)
    with pytest.raises(InvalidParameterError):
        path_coupling_tmix_bound(0.1, 0.0, 0.25)
    with pytest.raises(InvalidProbabilityError):
        path_coupling_tmix_bound(0.1, 2.0, 0.0)


def test_tmix_bound_is_never_below_the_exact_ceiling_at_extremes():
    # Found by the adversarial battery: a plain float ceiling gave 706200475968612, one below
    # the exact ceil(log(4999998 / 1e-300) / 1e-12) (computed in 60-digit arithmetic).
    import mpmath

    from glauber.theory.path_coupling import path_coupling_tmix_bound

    with mpmath.workdps(60):
        for rate, diameter, eps in [(1e-12, 4999998.0, 1e-300), (3e-7, 1e9, 1e-12),
                                    (0.1, 5.0, 0.25), (1e-15, 2.0, 0.49)]:
            exact = int(mpmath.ceil(mpmath.log(mpmath.mpf(diameter) / mpmath.mpf(eps))
                                    / mpmath.mpf(rate)))
            assert exact <= path_coupling_tmix_bound(rate, diameter, eps) <= exact + 2
