"""Tests of glauber.theory.distances: TV (half L1) and the Hilbert projective distance."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError, NonFiniteScoresError
from glauber.theory.distances import hilbert_distance, tv_distance

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
