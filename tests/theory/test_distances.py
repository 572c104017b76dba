"""Tests of glauber.theory.distances: TV (half L1) and the Hilbert projective distance."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.core.arrays import log_softmax
from glauber.errors import InvalidParameterError, NonFiniteScoresError
from glauber.theory.distances import (
    hilbert_distance,
    hilbert_distance_upper,
    tv_distance,
    tv_rounding_bound,
)

SETTINGS = settings(max_examples=60, deadline=None)


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _tv_by_events(p: list[float], q: list[float]) -> Fraction:
    """Slow reference: TV = max over events S of |p(S) - q(S)|, in exact fractions."""
    fp = [Fraction(x) for x in p]
    fq = [Fraction(x) for x in q]
    best = Fraction(0)
    for r in range(len(p) + 1):
        for event in itertools.combinations(range(len(p)), r):
            best = max(best, abs(sum(fp[a] for a in event) - sum(fq[a] for a in event)))
    return best


laws = st.integers(2, 6).flatmap(
    lambda q: st.tuples(
        st.lists(st.floats(-6, 6), min_size=q, max_size=q),
        st.lists(st.floats(-6, 6), min_size=q, max_size=q),
    )
)


def test_tv_is_half_l1_on_hand_values() -> None:
    # Point mass vs uniform on two letters: L1 = 1, TV = 1/2.
    assert tv_distance([1.0, 0.0], [0.5, 0.5]) == pytest.approx(0.5)
    # Disjoint supports: TV = 1.
    assert tv_distance([1.0, 0.0, 0.0], [0.0, 0.5, 0.5]) == pytest.approx(1.0)
    assert tv_distance([0.2, 0.8], [0.2, 0.8]) == 0.0


def test_tv_broadcasts_over_batches_and_axis() -> None:
    p = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    q = np.array([0.5, 0.5])
    np.testing.assert_allclose(tv_distance(p, q), [0.5, 0.0, 0.5])
    np.testing.assert_allclose(tv_distance(p.T, q[:, None], axis=0), [0.5, 0.0, 0.5])


@SETTINGS
@given(laws)
def test_tv_equals_largest_event_gap(pair: tuple[list[float], list[float]]) -> None:
    p, q = (_softmax(np.array(s)) for s in pair)
    expected = float(_tv_by_events(p.tolist(), q.tolist()))
    assert tv_distance(p, q) == pytest.approx(expected, abs=1e-12)


def test_hilbert_hand_value_and_constant_invariance() -> None:
    # differences (0, 1, 3): oscillation 3.
    assert hilbert_distance([0.0, 1.0, 5.0], [0.0, 0.0, 2.0]) == pytest.approx(3.0)
    assert hilbert_distance([10.0, 11.0, 15.0], [-4.0, -4.0, -2.0]) == pytest.approx(3.0)
    np.testing.assert_allclose(
        hilbert_distance(np.zeros((2, 3)), np.array([[0.0, 1.0, 2.0], [5.0, 5.0, 5.0]])), [2.0, 0.0]
    )


@SETTINGS
@given(laws)
def test_tv_at_most_tanh_quarter_hilbert(pair: tuple[list[float], list[float]]) -> None:
    # Sharper Lemma 6 (docs/theory.md, `tanh`): TV(softmax s, softmax t) <= tanh(H/4) <= H/4.
    s, t = (np.array(v) for v in pair)
    h = hilbert_distance(s, t)
    tv = tv_distance(_softmax(s), _softmax(t))
    assert tv <= math.tanh(h / 4) + 1e-12
    assert math.tanh(h / 4) <= h / 4 + 1e-15


@SETTINGS
@given(st.floats(0.0, 30.0))
def test_symmetric_two_point_law_attains_tanh(theta: float) -> None:
    # Log-odds +theta/2 and -theta/2: Hilbert distance theta, TV = sigmoid(theta/2) -
    # sigmoid(-theta/2) = tanh(theta/4).
    s = np.array([theta / 2, 0.0])
    t = np.array([0.0, theta / 2])
    assert hilbert_distance(s, t) == pytest.approx(theta)
    assert tv_distance(_softmax(s), _softmax(t)) == pytest.approx(math.tanh(theta / 4), abs=1e-12)


def test_errors() -> None:
    with pytest.raises(NonFiniteScoresError):
        hilbert_distance([0.0, -np.inf], [0.0, 0.0])
    with pytest.raises(InvalidParameterError):
        tv_distance([0.5, np.nan], [0.5, 0.5])
    with pytest.raises(InvalidParameterError):
        tv_distance([0.5, 0.5], [0.2, 0.3, 0.5])


# ------------------------------------------------------------------ rounding-safe versions
MP = mpmath.mp.clone()
MP.dps = 80


def _mp(x) -> mpmath.mpf:
    f = Fraction(float(x))
    return MP.mpf(f.numerator) / f.denominator


score_vectors = st.integers(2, 12).flatmap(lambda q: st.tuples(
    st.lists(st.floats(-1.0, 1.0), min_size=q, max_size=q),
    st.lists(st.floats(-1.0, 1.0), min_size=q, max_size=q),
    st.floats(-20.0, 8.0).map(lambda e: 10.0**e)))


@settings(max_examples=200, deadline=None)
@given(vectors=score_vectors, dtype=st.sampled_from(["float64", "float32"]))
def test_hilbert_distance_upper_is_never_below_the_exact_oscillation(vectors, dtype):
    # Oracle: the oscillation of the exact differences of the scores as stored, in fractions.
    s, t, scale = vectors
    a = (np.array(s) * scale).astype(dtype)
    b = (np.array(t) * scale).astype(dtype)
    diff = a - b  # rounded in dtype, as the estimator computes it
    bound = float(hilbert_distance_upper(diff.max(), diff.min(), dtype))
    exact = [Fraction(float(x)) - Fraction(float(y)) for x, y in zip(a, b)]
    osc = max(exact) - min(exact)
    assert Fraction(bound) >= osc
    # and not loose: within the rounding of the extremes (a zero oscillation gets their ulps)
    slack = 4 * np.finfo(dtype).eps * (abs(float(diff.max())) + abs(float(diff.min())))
    assert bound <= float(osc) * (1 + 1e-5) + slack + 1e-300


@settings(max_examples=150, deadline=None)
@given(vectors=score_vectors, tau=st.floats(-3.0, 6.0).map(lambda e: 10.0**e))
def test_tv_rounding_bound_covers_the_computed_tv(vectors, tau):
    # Oracle: TV of softmax(s / tau) and softmax(t / tau) in mpmath at 80 digits, from the
    # float64 scores as stored; the library's path is log_softmax, exp, half the L1 sum.
    s, t, scale = vectors
    a, b = np.array(s) * scale * 1e3, np.array(t) * scale * 1e3
    lp, lq = log_softmax(a / tau), log_softmax(b / tau)
    computed = float(0.5 * np.sum(np.abs(np.exp(lp) - np.exp(lq))))

    def soft(v):
        w = [MP.exp(_mp(x) / _mp(tau)) for x in v]
        z = MP.fsum(w)
        return [x / z for x in w]

    exact = MP.fsum(abs(x - y) for x, y in zip(soft(a), soft(b))) / 2
    M = max(np.abs(a).max(), np.abs(b).max())
    lam = max(np.abs(lp).max(), np.abs(lq).max())
    bound = tv_rounding_bound(len(a), M, lam, tau)
    assert abs(_mp(computed) - exact) <= _mp(bound)
    assert bound < 1e-13 * (1 + M / tau + lam)  # of the order of u (M / tau + Lambda + q)


@pytest.mark.parametrize("formats", [dict(model_dtype="bfloat16"), dict(score_error_ulps=8.0)])
def test_tv_rounding_bound_refuses_model_error_it_does_not_bound(formats) -> None:
    # The TV bound is for the scores as returned; a model format or error passed to it would be
    # left out silently and the bound too small for what the caller meant.
    from glauber.theory.distances import tv_rounding_bound
    from glauber.theory.floating import RoundingFormats

    with pytest.raises(InvalidParameterError, match="scores as returned"):
        tv_rounding_bound(3, 1.0, 2.0, 1.0, RoundingFormats(**formats))
    assert tv_rounding_bound(3, 1.0, 2.0, 1.0, RoundingFormats()) > 0
