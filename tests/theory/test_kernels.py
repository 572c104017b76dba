"""Tests of Proposition 1 / Corollary 2 / Theorem 3 checks on matrices (glauber.theory.kernels)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sps
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError
from glauber.theory.kernels import (
    is_aperiodic,
    is_irreducible,
    is_markov_kernel,
    is_reversible,
    is_stationary,
)

SETTINGS = settings(max_examples=60, deadline=None)


def _cycle(n: int) -> np.ndarray:
    return np.roll(np.eye(n), 1, axis=1)


def _period_by_powers(A: np.ndarray, x: int) -> int:
    """Slow reference: gcd{t <= 2 N^2 : (A^t)[x, x] > 0} on the 0/1 support (0 if empty)."""
    N = A.shape[0]
    B = (A > 0).astype(np.int64)
    power = np.eye(N, dtype=np.int64)
    g = 0
    for t in range(1, 2 * N * N + 1):
        power = np.minimum(power @ B, 1)
        if power[x, x]:
            g = math.gcd(g, t)
    return g


def test_markov_kernel_checks() -> None:
    assert is_markov_kernel([[0.5, 0.5], [0.0, 1.0]])
    assert is_markov_kernel(sps.csr_array(np.array([[0.5, 0.5], [0.0, 1.0]])))
    assert not is_markov_kernel([[0.6, 0.5], [0.0, 1.0]])  # row sum 1.1
    assert not is_markov_kernel([[1.5, -0.5], [0.0, 1.0]])  # negative entry
    assert not is_markov_kernel([[math.nan, 1.0], [0.0, 1.0]])
    assert is_markov_kernel([[0.5 + 1e-13, 0.5], [0.0, 1.0]])  # within atol
    assert not is_markov_kernel([[0.5 + 1e-9, 0.5], [0.0, 1.0]])


def test_irreducibility() -> None:
    assert is_irreducible(_cycle(5))
    assert not is_irreducible([[0.5, 0.5], [0.0, 1.0]])  # state 1 is absorbing
    block = sps.block_diag([_cycle(3), _cycle(2)]).tocsr()
    assert not is_irreducible(block)
    # explicit stored zeros are not edges
    # row 0: 0 -> 1; row 1: a stored 0.0 at 1 -> 0 and 1 -> 1
    stored_zero = sps.csr_array(
        (np.array([1.0, 0.0, 1.0]), np.array([1, 0, 1]), np.array([0, 1, 3])), shape=(2, 2)
    )
    assert not is_irreducible(stored_zero)


def test_aperiodicity_hand_cases() -> None:
    assert not is_aperiodic(_cycle(2))
    assert not is_aperiodic(_cycle(3))
    lazy = 0.5 * np.eye(4) + 0.5 * _cycle(4)
    assert is_aperiodic(lazy)  # positive diagonal suffices
    one_loop = _cycle(4).copy()
    one_loop[0] = [0.5, 0.5, 0.0, 0.0]
    assert is_aperiodic(one_loop)
    # cycles of length 2 and 3 through state 0: gcd 1, no self-loops
    mixed = np.zeros((4, 4))
    mixed[0, 1] = mixed[0, 2] = 0.5
    mixed[1, 0] = 1.0
    mixed[2, 3] = 1.0
    mixed[3, 0] = 1.0
    assert is_aperiodic(mixed)
    # reducible: an aperiodic class plus a periodic one
    assert not is_aperiodic(sps.block_diag([lazy, _cycle(2)]).tocsr())


@SETTINGS
@given(st.integers(1, 6), st.floats(0.1, 0.6), st.integers(0, 2**32 - 1))
def test_aperiodicity_matches_period_by_powers(n: int, density: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    A = (rng.random((n, n)) < density).astype(float)
    if rng.random() < 0.7:
        np.fill_diagonal(A, 0.0)
    periods = [_period_by_powers(A, x) for x in range(n)]
    expected = all(p in (0, 1) for p in periods)
    assert is_aperiodic(A) == expected


def _birth_death(n: int, rng: np.random.Generator) -> np.ndarray:
    P = np.zeros((n, n))
    for x in range(n):
        up = rng.random() * 0.5 if x < n - 1 else 0.0
        down = rng.random() * 0.5 if x > 0 else 0.0
        if x < n - 1:
            P[x, x + 1] = up
        if x > 0:
            P[x, x - 1] = down
        P[x, x] = 1 - up - down
    return P


def _stationary(P: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1))])
    return pi / pi.sum()


@SETTINGS
@given(st.integers(2, 7), st.integers(0, 2**32 - 1))
def test_symmetric_weights_give_reversible_chains(n: int, seed: int) -> None:
    # Random walk on a weighted graph: P = W / rowsum, pi ∝ rowsum, detailed balance exact.
    rng = np.random.default_rng(seed)
    W = rng.random((n, n)) + 0.01
    W = W + W.T
    P = W / W.sum(axis=1, keepdims=True)
    pi = W.sum(axis=1)
    assert is_reversible(P, pi)
    assert is_reversible(sps.csr_array(P), pi)
    assert is_stationary(P, pi)
    assert is_markov_kernel(P) and is_irreducible(P) and is_aperiodic(P)


@SETTINGS
@given(st.integers(2, 7), st.integers(0, 2**32 - 1))
def test_birth_death_chains_are_reversible(n: int, seed: int) -> None:
    P = _birth_death(n, np.random.default_rng(seed))
    if is_irreducible(P):
        assert is_reversible(P, _stationary(P), rtol=1e-8)


def test_rotating_chain_is_stationary_but_not_reversible() -> None:
    # Lazy walk with a bias around a 3-cycle: uniform is stationary (doubly stochastic) but
    # the flow 0->1 is 0.4/3 while 1->0 is 0.1/3.
    P = np.array([[0.5, 0.4, 0.1], [0.1, 0.5, 0.4], [0.4, 0.1, 0.5]])
    uniform = np.ones(3) / 3
    assert is_stationary(P, uniform)
    assert not is_reversible(P, uniform)
    assert not is_stationary(P, [0.5, 0.25, 0.25])


def test_sparse_input_is_not_mutated() -> None:
    P = sps.csr_array(
        (np.array([0.5, 0.5, 0.0, 1.0]), np.array([0, 1, 0, 1]), np.array([0, 2, 4])), shape=(2, 2)
    )
    before = P.data.copy()
    is_irreducible(P)
    is_aperiodic(P)
    np.testing.assert_array_equal(P.data, before)


def test_errors() -> None:
    with pytest.raises(InvalidParameterError):
        is_markov_kernel(np.ones((2, 3)) / 3)
    with pytest.raises(InvalidParameterError):
        is_irreducible(np.ones(3))
    with pytest.raises(InvalidParameterError):
        is_reversible(np.eye(2), [1.0, 0.0, 0.0])
    with pytest.raises(InvalidParameterError):
        is_stationary(np.eye(2), [-1.0, 2.0])
