"""Tests of the heat-bath Ising oracles (glauber.theory.ising_closed_forms; LPW 2nd ed. Ch. 15)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError, InvalidProbabilityError
from glauber.theory import ising_closed_forms
from glauber.theory.contraction import coupling_distance_bound

SETTINGS = settings(max_examples=40, deadline=None)


def _heat_bath_cycle(n: int, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Dense heat-bath kernel and Gibbs law of zero-field Ising on the n-cycle (spins +-1)."""
    states = np.array(list(itertools.product((-1, 1), repeat=n)))
    index = {tuple(s): k for k, s in enumerate(states)}
    energy = np.array([sum(s[v] * s[(v + 1) % n] for v in range(n)) for s in states])
    pi = np.exp(beta * energy)
    pi /= pi.sum()
    P = np.zeros((len(states), len(states)))
    for k, s in enumerate(states):
        for v in range(n):
            field = s[(v - 1) % n] + s[(v + 1) % n]
            p_plus = math.exp(beta * field) / (math.exp(beta * field) + math.exp(-beta * field))
            for spin, prob in ((1, p_plus), (-1, 1 - p_plus)):
                target = s.copy()
                target[v] = spin
                P[k, index[tuple(target)]] += prob / n
    return P, pi


@pytest.mark.parametrize("n", [3, 4, 5, 6])
@pytest.mark.parametrize("beta", [0.0, 0.2, 0.7, 1.5])
def test_cycle_relaxation_time_matches_exact_spectrum(n: int, beta: float) -> None:
    P, pi = _heat_bath_cycle(n, beta)
    # Reversible: D^{1/2} P D^{-1/2} is symmetric and has P's eigenvalues.
    root = np.sqrt(pi)
    eig = np.sort(np.linalg.eigvalsh(root[:, None] * P / root[None, :]))
    gap = 1.0 - eig[-2]
    assert 1.0 / gap == pytest.approx(
        ising_closed_forms.ising_cycle_relaxation_time(n, beta), rel=1e-9
    )


def _influence_by_enumeration(beta: float, degree: int) -> float:
    # Every configuration of the other degree-1 neighbours; conditional written with exp.
    best = 0.0
    for others in itertools.product((-1, 1), repeat=degree - 1):
        s = sum(others)
        probs = []
        for j_spin in (-1, 1):
            field = s + j_spin
            up, down = math.exp(beta * field), math.exp(-beta * field)
            probs.append(up / (up + down))
        best = max(best, abs(probs[1] - probs[0]))  # TV of two-point laws = |p_+ - p_+'|
    return best


@SETTINGS
@given(st.floats(-3.0, 3.0), st.integers(1, 9))
def test_neighbour_influence(beta: float, degree: int) -> None:
    got = ising_closed_forms.ising_neighbour_influence(beta, degree)
    assert got == pytest.approx(_influence_by_enumeration(beta, degree), abs=1e-12)
    # docs/theory.md, `dobrushin`: tanh(beta) for odd degree (S = 0 possible), tanh(2 beta)/2 for
    # even degree.
    closed = math.tanh(abs(beta)) if degree % 2 == 1 else math.tanh(2 * abs(beta)) / 2
    assert got == pytest.approx(closed, abs=1e-12)
    assert got <= math.tanh(abs(beta)) + 1e-15


def test_dobrushin_hand_values() -> None:
    c = 1 - 2 * math.tanh(0.1)
    assert ising_closed_forms.dobrushin_ising_bound(10, 2, 0.1, 100) == pytest.approx(
        10 * (1 - c / 10) ** 100
    )
    assert ising_closed_forms.dobrushin_ising_tmix_bound(10, 2, 0.1, 0.25) == math.ceil(
        10 * math.log(40) / c
    )
    assert (
        ising_closed_forms.dobrushin_ising_bound(10, 4, math.atanh(0.25), 5) == math.inf
    )  # 4 tanh(beta) = 1
    assert ising_closed_forms.dobrushin_ising_tmix_bound(10, 3, 1.0) == math.inf


@SETTINGS
@given(st.integers(3, 8), st.floats(0.0, 0.5), st.integers(0, 60), st.integers(0, 2**32 - 1))
def test_dobrushin_bound_dominates_matrix_certificate(
    n: int, beta: float, t: int, seed: int
) -> None:
    # On any graph, C[i, j] <= tanh(beta) on edges; 1^T M^t 1 <= n ||M||_inf^t, which is
    # exactly the Dobrushin bound n (1 - c/n)^t with c = 1 - max_degree tanh(beta).
    rng = np.random.default_rng(seed)
    A = np.triu(rng.random((n, n)) < 0.4, 1)
    A = (A | A.T).astype(float)
    max_degree = int(A.sum(axis=1).max())
    bound = ising_closed_forms.dobrushin_ising_bound(n, max_degree, beta, t)
    if math.isfinite(bound):
        assert coupling_distance_bound(math.tanh(beta) * A, t) <= bound * (1 + 1e-9)


@SETTINGS
@given(st.integers(2, 200), st.floats(0.0, 0.99))
def test_curie_weiss_row_sums_below_alpha(n: int, alpha: float) -> None:
    # The justification of c = 1 - alpha: (n-1) x (exact neighbour influence at beta = alpha/n)
    # is at most alpha.
    assert (n - 1) * ising_closed_forms.ising_neighbour_influence(alpha / n, n - 1) <= alpha + 1e-12
    c = 1 - alpha
    assert ising_closed_forms.curie_weiss_fast_bound(n, alpha, 50) == pytest.approx(
        n * (1 - c / n) ** 50
    )
    assert ising_closed_forms.curie_weiss_tmix_bound(n, alpha) == math.ceil(n * math.log(4 * n) / c)


def test_curie_weiss_low_temperature_gives_no_bound() -> None:
    assert ising_closed_forms.curie_weiss_fast_bound(10, 1.0, 5) == math.inf
    assert ising_closed_forms.curie_weiss_tmix_bound(10, 1.3) == math.inf


def test_errors() -> None:
    with pytest.raises(InvalidParameterError):
        ising_closed_forms.ising_cycle_relaxation_time(2, 0.5)
    with pytest.raises(InvalidParameterError):
        ising_closed_forms.ising_cycle_relaxation_time(5, -0.5)
    with pytest.raises(InvalidParameterError):
        ising_closed_forms.ising_neighbour_influence(math.nan, 2)
    with pytest.raises(InvalidParameterError):
        ising_closed_forms.ising_neighbour_influence(0.5, 0)
    with pytest.raises(InvalidParameterError):
        ising_closed_forms.dobrushin_ising_bound(5, 2, 0.1, -1)
    with pytest.raises(InvalidProbabilityError):
        ising_closed_forms.dobrushin_ising_tmix_bound(5, 2, 0.1, 0.0)
    with pytest.raises(InvalidParameterError):
        ising_closed_forms.curie_weiss_fast_bound(0, 0.5, 1)
