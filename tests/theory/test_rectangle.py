"""Tests of Proposition 4 (the rectangle test) and its closed forms (glauber.theory.rectangle)."""

from __future__ import annotations

import itertools
import math
from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import (
    InvalidParameterError,
    InvalidTemperatureError,
    NonFiniteScoresError,
    VocabularyError,
)
from glauber.theory.rectangle import (
    asymmetric_ising_rectangle_delta,
    delta_at_tau,
    rectangle_delta,
    rectangle_delta_from_edges,
)

SETTINGS = settings(max_examples=50, deadline=None)


def _ising_log_conditional(
    J: np.ndarray, h: np.ndarray, x: np.ndarray, i: int, tau: float
) -> np.ndarray:
    """log p(s | x_{-i}) over s in (-1, +1): p(s) ∝ exp(s f_i / tau), f_i = h_i + sum J_ik x_k."""
    f = h[i] + sum(J[i, k] * x[k] for k in range(len(x)) if k != i)
    s = np.array([-1.0, 1.0]) * f / tau
    return s - np.logaddexp(s[0], s[1])


def _with(x: np.ndarray, site: int, value: int) -> np.ndarray:
    out = x.copy()
    out[site] = value
    return out


def _four_conditionals(
    log_conditional: Callable[[np.ndarray, int], np.ndarray],
    x: np.ndarray,
    i: int,
    j: int,
    a_new: int,
    b_new: int,
) -> tuple[np.ndarray, ...]:
    """Conditionals (i | x), (j | y), (j | x), (i | w); y = x(i->a_new), w = x(j->b_new)."""
    y, w = _with(x, i, a_new), _with(x, j, b_new)
    return (
        log_conditional(x, i),
        log_conditional(y, j),
        log_conditional(x, j),
        log_conditional(w, i),
    )


@SETTINGS
@given(
    st.integers(2, 5),
    st.data(),
    st.floats(0.1, 10.0),
    st.integers(0, 2**32 - 1),
)
def test_asymmetric_ising_closed_form(n: int, data: st.DataObject, tau: float, seed: int) -> None:
    # Spins are stored as +-1 here; the conditional's index 0 is spin -1 and index 1 is +1.
    rng = np.random.default_rng(seed)
    J = rng.normal(size=(n, n))
    h = rng.normal(size=n)
    x = rng.choice([-1, 1], size=n)
    i, j = data.draw(st.permutations(range(n)))[:2]

    def log_conditional(state: np.ndarray, site: int) -> np.ndarray:
        return _ising_log_conditional(J, h, state, site, tau)

    def token(spin: int) -> int:
        return (spin + 1) // 2

    lps = _four_conditionals(log_conditional, x, i, j, -x[i], -x[j])
    delta = rectangle_delta(*lps, token(x[i]), token(-x[i]), token(x[j]), token(-x[j]))
    closed = asymmetric_ising_rectangle_delta(J, i, j, tau, x_i=int(x[i]), x_j=int(x[j]))
    assert delta == pytest.approx(closed, abs=1e-9)
    assert abs(closed) == pytest.approx(4 * abs(J[i, j] - J[j, i]) / tau)


def test_symmetric_ising_is_compatible() -> None:
    J = np.array([[0.0, 0.7, -0.2], [0.7, 0.0, 1.1], [-0.2, 1.1, 0.0]])
    for i, j in itertools.permutations(range(3), 2):
        for xi, xj in itertools.product((-1, 1), repeat=2):
            assert asymmetric_ising_rectangle_delta(J, i, j, 0.3, xi, xj) == 0.0


@SETTINGS
@given(st.integers(2, 4), st.integers(2, 3), st.integers(0, 2**32 - 1))
def test_conditionals_of_any_joint_have_zero_delta(n: int, q: int, seed: int) -> None:
    # Proposition 4: a random joint pi (also what an autoregressive model defines) is compatible
    # with its own conditionals, so every rectangle telescopes to log pi(z)/pi(x).
    rng = np.random.default_rng(seed)
    log_pi = rng.normal(scale=2.0, size=(q,) * n)

    def log_conditional(state: np.ndarray, site: int) -> np.ndarray:
        idx = list(state)
        idx[site] = slice(None)
        row = log_pi[tuple(idx)]
        return row - np.logaddexp.reduce(row)

    x = rng.integers(0, q, size=n)
    i, j = rng.choice(n, size=2, replace=False)
    a_new = (x[i] + 1 + rng.integers(0, q - 1)) % q
    b_new = (x[j] + 1 + rng.integers(0, q - 1)) % q
    lps = _four_conditionals(log_conditional, x, i, j, a_new, b_new)
    assert rectangle_delta(*lps, x[i], a_new, x[j], b_new) == pytest.approx(0.0, abs=1e-9)


def test_raw_scores_and_log_probs_agree_and_tau_scaling() -> None:
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(4, 5))  # four arbitrary (incompatible) conditionals over q = 5
    delta1 = rectangle_delta(*scores, 0, 3, 1, 4)
    log_probs = scores - np.logaddexp.reduce(scores, axis=1, keepdims=True)
    assert rectangle_delta(*log_probs, 0, 3, 1, 4) == pytest.approx(delta1)
    # By hand: (s0[3]-s0[0]) + (s1[4]-s1[1]) - (s2[4]-s2[1]) - (s3[3]-s3[0])
    by_hand = (scores[0, 3] - scores[0, 0]) + (scores[1, 4] - scores[1, 1]) - (
        scores[2, 4] - scores[2, 1]
    ) - (scores[3, 3] - scores[3, 0])
    assert delta1 == pytest.approx(by_hand)
    for tau in (0.25, 1.0, 3.0):
        at_tau = scores / tau
        at_tau = at_tau - np.logaddexp.reduce(at_tau, axis=1, keepdims=True)
        expected = delta_at_tau(delta1, tau)
        assert rectangle_delta(*at_tau, 0, 3, 1, 4) == pytest.approx(expected)


def test_batched_rectangles_and_edges() -> None:
    rng = np.random.default_rng(4)
    batch = rng.normal(size=(4, 6, 3))
    a, a_new = np.array([0, 1, 2, 0, 1, 2]), np.array([1, 2, 0, 2, 0, 1])
    out = rectangle_delta(*batch, a, a_new, 0, 2)
    assert out.shape == (6,)
    for k in range(6):
        assert out[k] == pytest.approx(rectangle_delta(*batch[:, k], a[k], a_new[k], 0, 2))
    assert rectangle_delta_from_edges(1.0, 2.0, 0.5, 2.0) == pytest.approx(0.5)
    np.testing.assert_allclose(delta_at_tau([1.0, -2.0], 2.0), [0.5, -1.0])


def test_errors() -> None:
    lp = np.log([0.5, 0.5])
    with pytest.raises(VocabularyError):
        rectangle_delta(lp, lp, lp, lp, 0, 2, 0, 1)
    with pytest.raises(VocabularyError):
        rectangle_delta(lp, lp, lp, lp, 0, 1.0, 0, 1)
    with pytest.raises(NonFiniteScoresError):
        rectangle_delta(np.array([0.0, -np.inf]), lp, lp, lp, 0, 1, 0, 1)
    with pytest.raises(InvalidParameterError):
        rectangle_delta(np.zeros((2, 2)), np.zeros((3, 2)), lp, lp, [0, 1, 0], 1, 0, 1)
    with pytest.raises(InvalidParameterError):
        asymmetric_ising_rectangle_delta(np.zeros((3, 3)), 1, 1)
    with pytest.raises(InvalidParameterError):
        asymmetric_ising_rectangle_delta(np.zeros((3, 3)), 0, 1, x_i=0)
    with pytest.raises(InvalidTemperatureError):
        asymmetric_ising_rectangle_delta(np.zeros((3, 3)), 0, 1, tau=-1.0)
    with pytest.raises(InvalidTemperatureError):
        delta_at_tau(1.0, math.inf)
