"""Tests of Theorem 8 and the bottleneck bound (glauber.theory.escape)."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from glauber.errors import (
    BasinError,
    InvalidParameterError,
    InvalidProbabilityError,
    InvalidTemperatureError,
    VocabularyError,
)
from glauber.theory.escape import (
    bottleneck_distance_lower_bound,
    bottleneck_tmix_lower_bound,
    sharper_escape_bound,
    theorem8_escape_bound,
    theorem8_tmix_lower_bound,
)

SETTINGS = settings(max_examples=50, deadline=None)


def test_hand_values() -> None:
    assert theorem8_escape_bound(3, 2.0, 0.5) == pytest.approx(3 * math.exp(-4.0))
    assert sharper_escape_bound(10, 2, 3, 2.0, 0.5) == pytest.approx(0.2 * 2 * math.exp(-4.0))
    assert sharper_escape_bound(10, 0, 3, 2.0, 0.5) == 0.0
    assert theorem8_tmix_lower_bound(3, 2.0, 0.5) == pytest.approx(math.exp(4.0) / 12)
    # e^{10000} overflows: the largest float is returned (still a lower bound; never inf)
    assert theorem8_tmix_lower_bound(2, 1e4, 1.0) == sys.float_info.max


@SETTINGS
@given(
    st.integers(1, 50),
    st.data(),
    st.integers(2, 1000),
    st.floats(1e-3, 50.0),
    st.floats(0.05, 20.0),
)
def test_sharper_bound_never_exceeds_printed(
    n: int, data: st.DataObject, q: int, delta_star: float, tau: float
) -> None:
    assume(delta_star / tau < 600)  # keep e^{-delta_star/tau} a normal float
    k = data.draw(st.integers(0, n))
    printed = theorem8_escape_bound(q, delta_star, tau)
    assert sharper_escape_bound(n, k, q, delta_star, tau) <= printed
    # The t_mix bound is 1 / (4 x the printed conductance bound).
    lower = theorem8_tmix_lower_bound(q, delta_star, tau)
    assert lower == pytest.approx(1 / (4 * printed), rel=1e-12)


@SETTINGS
@given(
    st.integers(2, 8),
    st.floats(0.01, 10.0),
    st.floats(0.05, 5.0),
    st.integers(0, 2**32 - 1),
)
def test_margin_gives_the_per_token_bound_of_the_proof(
    q: int, delta_star: float, tau: float, seed: int
) -> None:
    # The proof's key step: if token x_i beats every exit token a by >= delta_star, then
    # p_tau(a) <= e^{-delta_star/tau}, so the exit mass of one site is <= (q-1) e^{-delta_star/tau}.
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=q)
    exit_tokens = rng.random(q) < 0.5
    exit_tokens[0] = False  # token 0 is the current (argmax) token
    scores[exit_tokens] = np.minimum(scores[exit_tokens], scores[0] - delta_star)
    probs = np.exp(scores / tau) / np.exp(scores / tau).sum()
    assert np.all(probs[exit_tokens] <= math.exp(-delta_star / tau) * (1 + 1e-12))
    exit_mass = probs[exit_tokens].sum()
    assert exit_mass <= sharper_escape_bound(1, 1, q, delta_star, tau) * (1 + 1e-12)


def _two_state_distance(a: float, b: float, t: int) -> float:
    # P = [[1-a, a], [b, 1-b]], pi = (b, a)/(a+b); P^t(x, .) - pi = (1-a-b)^t (delta_x - pi),
    # so d(t) = max(a, b)/(a+b) |1-a-b|^t (Levin–Peres–Wilmer 2nd ed., Section 1.3).
    return max(a, b) / (a + b) * abs(1 - a - b) ** t


@SETTINGS
@given(st.floats(1e-3, 1.0), st.floats(1e-3, 1.0), st.integers(0, 200))
def test_bottleneck_bound_on_two_state_chain(a: float, b: float, t: int) -> None:
    # A = {0}: pi(A) = b/(a+b), Phi(A) = Q(A, A^c)/pi(A) = a. The chain need not be
    # reversible for Theorem 7.4's bound (two-state chains happen to be).
    pi_A = b / (a + b)
    assume(0 < pi_A < 1)
    assert _two_state_distance(a, b, t) >= bottleneck_distance_lower_bound(t, pi_A, a) - 1e-12


@SETTINGS
@given(st.floats(0.01, 0.99), st.floats(0.0, 1.0), st.floats(0.01, 0.99))
def test_tmix_lower_bound_is_where_the_distance_bound_reaches_eps(
    pi_A: float, phi_A: float, eps: float
) -> None:
    bound = bottleneck_tmix_lower_bound(pi_A, phi_A, eps)
    assert bound >= 0.0
    if math.isfinite(bound) and bound > 1:
        # every t below the bound still has d(t) > eps
        t = math.ceil(bound) - 1
        assert bottleneck_distance_lower_bound(t, pi_A, phi_A) > eps - 1e-12


def test_bottleneck_hand_values_and_limits() -> None:
    assert bottleneck_distance_lower_bound(10, 0.5, 0.01) == pytest.approx(0.4)
    assert bottleneck_tmix_lower_bound(0.5, 0.01, 0.25) == pytest.approx(25.0)
    # LPW Theorem 7.4 form: pi(A) <= 1/2 and eps = 1/4 gives t_mix >= 1 / (4 Phi).
    assert bottleneck_tmix_lower_bound(0.5, 0.02) == pytest.approx(1 / (4 * 0.02))
    assert bottleneck_tmix_lower_bound(0.5, 0.0) == math.inf
    assert bottleneck_tmix_lower_bound(0.8, 0.1, 0.25) == 0.0


def test_errors() -> None:
    with pytest.raises(InvalidParameterError):
        theorem8_escape_bound(2, 0.0, 1.0)
    with pytest.raises(InvalidParameterError):
        theorem8_tmix_lower_bound(2, -1.0, 1.0)
    with pytest.raises(VocabularyError):
        theorem8_escape_bound(1, 1.0, 1.0)
    with pytest.raises(InvalidTemperatureError):
        theorem8_escape_bound(2, 1.0, 0.0)
    with pytest.raises(InvalidParameterError):
        sharper_escape_bound(3, 4, 2, 1.0, 1.0)
    for pi_A in (0.0, 1.0):
        with pytest.raises(BasinError):
            bottleneck_distance_lower_bound(1, pi_A, 0.1)
        with pytest.raises(BasinError):
            bottleneck_tmix_lower_bound(pi_A, 0.1)
    with pytest.raises(InvalidProbabilityError):
        bottleneck_distance_lower_bound(1, 1.5, 0.1)
    with pytest.raises(InvalidProbabilityError):
        bottleneck_tmix_lower_bound(0.5, -0.1)
    with pytest.raises(InvalidProbabilityError):
        bottleneck_tmix_lower_bound(0.5, 0.1, eps=1.0)
    with pytest.raises(InvalidParameterError):
        bottleneck_distance_lower_bound(-1, 0.5, 0.1)


def test_escape_bounds_stay_upper_bounds_in_the_subnormal_range():
    # Found by the adversarial battery: q * exp(-x) multiplied exp's subnormal rounding by q,
    # giving 9.88e-324 below the exact 9.893e-324 (q = 468, Delta*/tau = 749.9).
    import mpmath

    from glauber.theory.escape import theorem8_escape_bound

    with mpmath.workdps(50):
        for q, delta, tau in [(468, 10**2.875, 1.0), (2, 744.0, 1.0), (20, 7.4e4, 100.0)]:
            exact = q * mpmath.exp(-mpmath.mpf(delta) / mpmath.mpf(tau))
            value = theorem8_escape_bound(q, delta, tau)
            assert 0 < value and value >= exact
