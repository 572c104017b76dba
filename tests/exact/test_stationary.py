"""Tests of the stationary-distribution solvers (GTH and sparse direct) on explicit matrices.

Oracles: closed forms of nearly reducible chains from QuantEcon's issue tracker, birth–death
chains (detailed balance gives pi in closed form, computed in log space), exact rational solves
with fractions.Fraction, the Gibbs law of a heat-bath Ising chain built here (log space), the
unblocked reference GTH for the blocked one, and invariants over random chains.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import ConvergenceError, InvalidParameterError
from glauber.exact import stationary
from glauber.exact.stationary import (
    gth_stationary,
    gth_stationary_reference,
    iterative_stationary,
    sparse_stationary,
    stationary_distribution,
)
from glauber.testing import rational_transition_matrices, transition_matrices

from ._support import exact_stationary


# QuantEcon.jl issue #75 (oyamad): P = [[1-(p+e), p, e], [p, 1-(p+e), e], [e, e, 1-2e]], p = 1/2,
# has pi = (1/3, 1/3, 1/3) for every e (its off-diagonal part is symmetric, so the uniform law
# balances every edge); LU and eigen-solvers lose it for e in 1e-12..1e-17.
@pytest.mark.parametrize("e", [1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17])
def test_gth_quantecon_jl_75_trap(e: float) -> None:
    p = 0.5
    P = np.array([[1 - (p + e), p, e], [p, 1 - (p + e), e], [e, e, 1 - 2 * e]])
    np.testing.assert_allclose(gth_stationary(P), np.full(3, 1 / 3), rtol=1e-14)


# QuantEcon.jl PR #23: P = [[1-a, a], [a/2, 1-a/2]] has pi = (1/3, 2/3) (balance: pi0 a = pi1 a/2);
# Julia's LU returned [0, 1] at a = 1e-17.
@pytest.mark.parametrize("a", [10.0**-k for k in range(12, 19)])
def test_gth_two_state_trap(a: float) -> None:
    P = np.array([[1 - a, a], [a / 2, 1 - a / 2]])
    np.testing.assert_allclose(gth_stationary(P), [1 / 3, 2 / 3], rtol=1e-14)


@pytest.mark.parametrize("down", [1e-3, 1e-8, 1e-13])
def test_gth_birth_death_relative_accuracy(down: float) -> None:
    # Birth–death chain on 0..11: up-rate u_k, down-rate d (LPW 2nd ed. Section 2.5): detailed
    # balance gives pi(k+1)/pi(k) = u_k / d, so log pi is a cumulative sum. With d = 1e-13 and
    # u_k = 1e-4 k-dependent, pi spans ~100 orders of magnitude.
    S = 12
    up = 1e-4 * (1 + np.arange(S - 1) / 10)
    P = np.zeros((S, S))
    for k in range(S - 1):
        P[k, k + 1] = up[k]
        P[k + 1, k] = down
    np.fill_diagonal(P, 1 - P.sum(axis=1))
    log_w = np.concatenate([[0.0], np.cumsum(np.log(up) - np.log(down))])
    log_pi = log_w - np.logaddexp.reduce(log_w)
    pi = gth_stationary(P)
    assert pi.min() > 0
    np.testing.assert_allclose(np.log(pi), log_pi, rtol=0, atol=1e-12)


@given(Pq=rational_transition_matrices())
@settings(max_examples=30, deadline=None)
def test_gth_and_sparse_match_exact_rational_solution(Pq: list[list[Fraction]]) -> None:
    exact = np.array([float(v) for v in exact_stationary(Pq)])
    P = np.array([[float(v) for v in row] for row in Pq])
    np.testing.assert_allclose(gth_stationary(P), exact, rtol=1e-13)
    sol = sparse_stationary(sp.csr_matrix(P))
    np.testing.assert_allclose(sol.pi, exact, rtol=1e-10)
    assert sol.method == "sparse" and sol.residual_l1 <= 1e-12 and sol.clipped_mass >= 0


@given(spread=st.floats(0.0, 30.0), data=st.data())
@settings(max_examples=30, deadline=None)
def test_random_sparse_chains_are_stationary(spread: float, data: st.DataObject) -> None:
    # Random sparse chains (a ring plus random chords, log-uniform weights over `spread` decades
    # of e): both solvers satisfy the balance equations and agree.
    P = data.draw(transition_matrices(max_states=60, spread=(spread, spread),
                                      patterns=("sparse",), chords_per_state=2))
    pi = gth_stationary(P)
    assert pi.min() > 0 and abs(pi.sum() - 1) < 1e-14
    assert np.abs(pi @ P - pi).sum() < 1e-14
    # The direct and Krylov solves guarantee only their residuals: their forward error can be
    # the residual times the chain's condition number, which a large `spread` makes huge.
    direct = stationary_distribution(sp.csr_matrix(P), method="sparse", tol=1e-13)
    krylov = stationary_distribution(sp.csr_matrix(P), method="iterative", tol=1e-11)
    assert (direct.method, krylov.method) == ("sparse", "iterative")
    assert 0.0 <= direct.clipped_mass <= 1e-13
    for sol, tol in ((direct, 1e-13), (krylov, 1e-11)):
        assert np.abs(sol.pi @ P - sol.pi).sum() <= tol
        if spread < 3:
            assert np.abs(sol.pi - pi).sum() < 100 * tol


def test_auto_picks_gth_then_krylov_then_the_direct_solve_as_fallback(monkeypatch) -> None:
    P = np.array([[0.5, 0.5, 0.0], [0.25, 0.5, 0.25], [0.0, 0.5, 0.5]])  # pi = (1/4, 1/2, 1/4)
    small = stationary_distribution(P)
    assert small.method == "gth" and small.clipped_mass == 0.0
    monkeypatch.setattr(stationary, "GTH_MAX_STATES", 2)
    large = stationary_distribution(sp.csr_matrix(P))
    assert large.method == "iterative"

    def fails(*args, **kwargs):
        raise ConvergenceError("Krylov solve did not converge")

    monkeypatch.setattr(stationary, "iterative_stationary", fails)
    fallback = stationary_distribution(sp.csr_matrix(P))
    assert fallback.method == "sparse"
    monkeypatch.setattr(stationary, "SPARSE_DIRECT_MAX_STATES", 2)
    with pytest.raises(ConvergenceError):
        stationary_distribution(sp.csr_matrix(P))
    for sol in (small, large, fallback):
        np.testing.assert_allclose(sol.pi, [0.25, 0.5, 0.25], rtol=1e-12)


def test_residual_checks_raise() -> None:
    rng = np.random.default_rng(1)
    P = rng.random((30, 30))
    P /= P.sum(axis=1, keepdims=True)
    with pytest.raises(ConvergenceError, match="raise tol"):
        sparse_stationary(P, tol=1e-300)
    with pytest.raises(ConvergenceError, match="iterative"):
        iterative_stationary(P, tol=1e-300)


def test_reducible_chains_raise() -> None:
    P = np.eye(3)
    with pytest.raises(ConvergenceError, match="reducible"):
        gth_stationary(P)
    with pytest.raises(ConvergenceError):
        sparse_stationary(sp.csr_matrix(np.kron(np.eye(2), np.full((2, 2), 0.5))))


@pytest.mark.parametrize(
    "P", [np.ones((2, 3)) / 3, np.array([[1.5, -0.5], [0.5, 0.5]]), np.array([[np.nan, 1], [1, 0]])]
)
def test_gth_rejects_bad_matrices(P: np.ndarray) -> None:
    with pytest.raises(InvalidParameterError):
        gth_stationary(P)


def test_unknown_method_raises() -> None:
    with pytest.raises(InvalidParameterError, match="'gth'"):
        stationary_distribution(np.eye(2), method="lu")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------- blocked GTH
@pytest.mark.parametrize("block_size", [1, 2])
@pytest.mark.parametrize("e", [1e-12, 1e-15, 1e-17])
def test_blocked_gth_quantecon_jl_75_trap(e: float, block_size: int) -> None:
    # The QuantEcon.jl #75 chain above (pi = (1/3, 1/3, 1/3)) with the delayed block update used.
    p = 0.5
    P = np.array([[1 - (p + e), p, e], [p, 1 - (p + e), e], [e, e, 1 - 2 * e]])
    np.testing.assert_allclose(gth_stationary(P, block_size), np.full(3, 1 / 3), rtol=1e-14)


@given(Pq=rational_transition_matrices(), block_size=st.integers(1, 3))
@settings(max_examples=30, deadline=None)
def test_blocked_gth_matches_exact_rational_solution(Pq: list[list[Fraction]],
                                                     block_size: int) -> None:
    exact = np.array([float(v) for v in exact_stationary(Pq)])
    P = np.array([[float(v) for v in row] for row in Pq])
    np.testing.assert_allclose(gth_stationary(P, block_size), exact, rtol=1e-13)


@given(P=transition_matrices(), block_size=st.integers(1, 48))
@settings(max_examples=25, deadline=None)
def test_blocked_gth_matches_reference_gth(P: np.ndarray, block_size: int) -> None:
    # Block sizes far below S force many blocks, and S is rarely a multiple of block_size. Both
    # algorithms add the same non-negative terms in different orders, so they agree entrywise to
    # relative rounding error however small the entries are.
    reference = gth_stationary_reference(P)
    blocked = gth_stationary(P, block_size)
    assert blocked.min() > 0
    np.testing.assert_allclose(blocked, reference, rtol=1e-12, atol=0)


def test_one_block_is_the_reference_algorithm() -> None:
    # With S <= block_size the blocked loop performs exactly the reference's operations.
    rng = np.random.default_rng(7)
    P = rng.random((40, 40)) ** 8
    P /= P.sum(axis=1, keepdims=True)
    assert np.array_equal(gth_stationary(P, block_size=40), gth_stationary_reference(P))


def heat_bath_ising_grid(rows: int, cols: int, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Heat-bath Glauber chain of the zero-field Ising model on a ``rows x cols`` grid, and the
    log of its Gibbs law ``pi(s) ∝ exp(beta sum_{uv in E} s_u s_v)``.

    One step picks a site uniformly and resamples its spin from the conditional law
    ``P(s_i = +1 | rest) = 1 / (1 + exp(-2 beta m_i))``, ``m_i`` = sum of the neighbours' spins;
    the chain is reversible with respect to the Gibbs law (Levin–Peres–Wilmer 2nd ed., Section
    3.3). States in mixed radix, site 0 most significant, token 1 = spin +1.
    """
    n = rows * cols
    sites = np.arange(n).reshape(rows, cols)
    edges = np.array(
        [(sites[r, c], sites[r, c + 1]) for r in range(rows) for c in range(cols - 1)]
        + [(sites[r, c], sites[r + 1, c]) for r in range(rows - 1) for c in range(cols)]
    )
    S = 2**n
    bits = (np.arange(S)[:, None] >> np.arange(n - 1, -1, -1)[None, :]) & 1
    spin = 2.0 * bits - 1.0
    log_w = beta * (spin[:, edges[:, 0]] * spin[:, edges[:, 1]]).sum(axis=1)
    P = np.zeros((S, S))
    for i in range(n):
        nbrs = np.concatenate([edges[edges[:, 0] == i, 1], edges[edges[:, 1] == i, 0]])
        m = spin[:, nbrs].sum(axis=1)
        # Probability of flipping s_i: the conditional law of -s_i.
        flip = 1.0 / (1.0 + np.exp(2.0 * beta * spin[:, i] * m)) / n
        P[np.arange(S), np.arange(S) ^ (1 << (n - 1 - i))] = flip
    P[np.arange(S), np.arange(S)] = 1.0 - P.sum(axis=1)
    return P, log_w - np.logaddexp.reduce(log_w)


@pytest.mark.parametrize("block_size", [1, 37, 128])
@pytest.mark.parametrize("beta", [0.25, 5.75])
def test_blocked_gth_low_temperature_ising_gibbs_law(beta: float, block_size: int) -> None:
    # 3 x 3 grid, 512 states; at beta = 5.75 the antiferromagnetic states have
    # pi ~ exp(-24 beta) / 2 ~ 1e-60, which GTH must still get to relative precision.
    P, log_pi = heat_bath_ising_grid(3, 3, beta)
    pi = gth_stationary(P, block_size)
    if beta > 5:
        assert np.exp(log_pi.min()) < 1e-59
    assert pi.min() > 0
    assert np.abs(np.expm1(np.log(pi) - log_pi)).max() < 1e-10


def test_blocked_gth_detects_reducible_chains_across_blocks() -> None:
    # Two closed classes {0..4} and {5..9}: after folding 9..6 (two blocks of 3), state 5 has no
    # way to 0..4.
    P = np.kron(np.eye(2), np.full((5, 5), 0.2))
    with pytest.raises(ConvergenceError, match="reducible"):
        gth_stationary(P, block_size=3)


@pytest.mark.parametrize("block_size", [0, 2.5, True])
def test_blocked_gth_rejects_bad_block_sizes(block_size: object) -> None:
    with pytest.raises(InvalidParameterError, match="block_size"):
        gth_stationary(np.eye(2)[::-1], block_size)  # type: ignore[arg-type]
