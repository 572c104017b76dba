"""Tests of the corrected Section 5.4 drift certificate (glauber.theory.drift)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError
from glauber.theory.drift import band_drift_escape_bound, boundary_drift_as_printed

SETTINGS = settings(max_examples=40, deadline=None)


def _exact_escape_probability(up: np.ndarray, down: np.ndarray, a: int, b: int, T: int) -> float:
    """P(X_t <= a for some t <= T | X_0 = b) for a lazy +-1 walk, by exact dynamic programming.

    ``up[x]``/``down[x]`` are the step probabilities at level ``x`` (levels 0..len-1, with
    ``len > b + T`` so the top is never reached); level ``a`` is made absorbing.
    """
    levels = len(up)
    dist = np.zeros(levels)
    dist[b] = 1.0
    absorbed = 0.0
    for _ in range(T):
        new = np.zeros(levels)
        live = np.arange(a + 1, levels)
        new[live] += dist[live] * (1 - up[live] - down[live])
        new[live[:-1] + 1] += dist[live[:-1]] * up[live[:-1]]
        new[live - 1] += dist[live] * down[live]
        absorbed += new[a]
        new[a] = 0.0
        dist = new
    return absorbed


def test_hand_value() -> None:
    # (2 eps / c^2)(b - a - c) = 1 * 9 with eps = 1/2, c = 1, b - a = 10.
    result = band_drift_escape_bound(eps=0.5, a=80, b=90, T=100)
    assert result.bound == pytest.approx(100 * math.exp(-9.0))
    assert result.exponent == pytest.approx(9.0)
    assert not result.vacuous
    assert result.to_dict()["T"] == 100


def test_vacuous_and_trivial_cases() -> None:
    # A band no wider than one step gives nothing.
    narrow = band_drift_escape_bound(eps=0.9, a=0, b=1, T=1)
    assert narrow.bound == 1.0 and narrow.vacuous
    assert band_drift_escape_bound(eps=0.5, a=0, b=50, T=0).bound == 0.0
    # c scales the exponent: (2 * 0.5 / 4)(20 - 2) = 4.5
    assert band_drift_escape_bound(0.5, 0, 20, 1, c=2.0).exponent == pytest.approx(4.5)


@SETTINGS
@given(
    st.floats(0.05, 0.9),
    st.integers(2, 10),
    st.integers(1, 40),
    st.integers(0, 2**32 - 1),
)
def test_bound_holds_for_exact_walks_with_band_drift(
    eps: float, width: int, T: int, seed: int
) -> None:
    # Any lazy +-1 walk with drift >= eps at every level strictly inside (a, b), arbitrary
    # behaviour elsewhere, started at b: the exact escape probability obeys the bound.
    rng = np.random.default_rng(seed)
    a, b = 1, 1 + width
    levels = b + T + 2
    down = rng.random(levels) * 0.5
    up = rng.random(levels) * (1 - down)
    inside = np.arange(a + 1, b)
    down[inside] = rng.random(inside.size) * (1 - eps) / 2
    up[inside] = down[inside] + eps + rng.random(inside.size) * (1 - eps - 2 * down[inside])
    assert np.all(up[inside] - down[inside] >= eps - 1e-12)
    assert np.all(up + down <= 1 + 1e-12)
    exact = _exact_escape_probability(up, down, a, b, T)
    assert exact <= band_drift_escape_bound(eps, a, b, T).bound + 1e-12


@pytest.mark.parametrize("eps, width, T", [(0.5, 20, 1000), (0.6, 15, 500), (0.2, 10, 200)])
def test_bound_holds_for_adversarial_walk(eps: float, width: int, T: int) -> None:
    # No laziness inside the band (largest variance for the drift) and an immediate return from
    # above b (as many excursions as possible).
    a, b = 1, 1 + width
    levels = b + T + 2
    up, down = np.zeros(levels), np.ones(levels)
    up[a + 1 : b], down[a + 1 : b] = (1 + eps) / 2, (1 - eps) / 2
    exact = _exact_escape_probability(up, down, a, b, T)
    assert exact <= band_drift_escape_bound(eps, a, b, T).bound


def test_printed_boundary_criterion_proves_nothing() -> None:
    # Positive drift AT the boundary level b only; strong negative drift just inside the basin.
    a, b, T = 0, 10, 200
    levels = b + T + 2
    up = np.full(levels, 0.45)
    down = np.full(levels, 0.45)
    up[b], down[b] = 0.6, 0.3  # boundary drift +0.3 > 0
    inside = np.arange(a + 1, b)
    up[inside], down[inside] = 0.05, 0.9
    assert boundary_drift_as_printed([up[b] - down[b]])
    assert _exact_escape_probability(up, down, a, b, T) > 0.5


@SETTINGS
@given(st.floats(0.01, 1.0), st.integers(2, 100), st.integers(1, 10**6))
def test_bound_monotone_in_horizon_and_width(eps: float, width: int, T: int) -> None:
    base = band_drift_escape_bound(eps, 0, width, T).bound
    assert band_drift_escape_bound(eps, 0, width, T + 1).bound >= base
    assert band_drift_escape_bound(eps, 0, width + 1, T).bound <= base
    assert 0.0 <= base <= 1.0


def test_boundary_drift_as_printed_reports_minimum() -> None:
    assert boundary_drift_as_printed([0.02, 0.05])
    assert not boundary_drift_as_printed(np.array([0.02, -0.001]))
    assert not boundary_drift_as_printed([0.0])


def test_errors() -> None:
    with pytest.raises(InvalidParameterError):
        band_drift_escape_bound(0.0, 0, 10, 5)
    with pytest.raises(InvalidParameterError):
        band_drift_escape_bound(1.5, 0, 10, 5)  # drift larger than the step c = 1
    with pytest.raises(InvalidParameterError):
        band_drift_escape_bound(0.5, 10, 10, 5)
    with pytest.raises(InvalidParameterError):
        band_drift_escape_bound(0.5, 0, 10, -1)
    with pytest.raises(InvalidParameterError):
        band_drift_escape_bound(0.5, 0, math.inf, 5)
    with pytest.raises(InvalidParameterError):
        boundary_drift_as_printed([])
    with pytest.raises(InvalidParameterError):
        boundary_drift_as_printed([0.1, math.nan])
