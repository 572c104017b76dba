"""Hypothesis strategies over matrices: influence matrices, Markov chains, exact rational chains.

For properties of the algebra alone (certificates from an influence matrix, stationary
solvers), without a model behind them.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import numpy as np
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError
from glauber.testing.arguments import check_choice, check_range, check_sizes
from glauber.toy_models.draws import floats_in

#: Fill patterns of :func:`transition_matrices`.
PATTERNS = ("dense", "sparse")


def _seed() -> st.SearchStrategy[int]:
    return st.integers(0, 2**32 - 1)


def influence_matrices(min_sites: int = 1, max_sites: int = 6, max_rho: float = 0.9,
                       density: tuple[float, float] = (0.2, 1.0)) -> st.SearchStrategy[np.ndarray]:
    """Non-negative ``n x n`` matrices with zero diagonal and spectral radius in ``[0, max_rho]``.

    Entries are exponential (so may exceed 1) times a Bernoulli(``density``) mask, then rescaled
    to a drawn spectral radius (Theorem 5's certificates are finite iff it is below 1).

    Raises
    ------
    InvalidParameterError
        If the sizes, ``max_rho`` or ``density`` are out of range.
    """
    check_sizes(min_sites, max_sites, 1, "min_sites, max_sites")
    check_range((0.0, max_rho), "(0, max_rho)", lowest=0.0)
    if check_range(density, "density", lowest=0.0)[1] > 1.0:
        raise InvalidParameterError(f"density must lie in [0, 1], got {density!r}")

    @st.composite
    def draw(draw: st.DrawFn) -> np.ndarray:
        n = draw(st.integers(min_sites, max_sites))
        rng = np.random.default_rng(draw(_seed()))
        C = rng.exponential(size=(n, n)) * (rng.random((n, n)) < draw(floats_in(density)))
        np.fill_diagonal(C, 0.0)
        rho = float(np.max(np.abs(np.linalg.eigvals(C)))) if n > 1 else 0.0
        target = draw(floats_in((0.0, max_rho)))
        return C * (target / rho) if rho > 0 else C

    return draw()


def transition_matrices(min_states: int = 2, max_states: int = 300,
                        spread: tuple[float, float] = (0.0, 40.0),
                        patterns: Sequence[str] = PATTERNS,
                        chords_per_state: int = 3) -> st.SearchStrategy[np.ndarray]:
    """Irreducible row-stochastic matrices with weights over up to ``spread`` decades of ``e``.

    ``dense``: every entry positive; ``sparse``: a ring (both directions) plus
    ``chords_per_state * S`` random chords. Weights are ``exp(-spread * U)``, ``U`` uniform, so
    a large spread gives the nearly reducible chains where plain LU loses the stationary law.

    Raises
    ------
    InvalidParameterError
        If the sizes, ``spread`` or ``patterns`` are out of range.
    """
    check_sizes(min_states, max_states, 2, "min_states, max_states")
    check_range(spread, "spread", lowest=0.0)
    patterns = check_choice(patterns, PATTERNS, "patterns")

    @st.composite
    def draw(draw: st.DrawFn) -> np.ndarray:
        S = draw(st.integers(min_states, max_states))
        rng = np.random.default_rng(draw(_seed()))
        decades = draw(floats_in(spread))
        if draw(st.sampled_from(patterns)) == "dense":
            W = np.ones((S, S))
        else:
            W = np.zeros((S, S))
            W[np.arange(S), (np.arange(S) + 1) % S] = 1.0
            W[np.arange(S), (np.arange(S) - 1) % S] = 1.0
            chords = chords_per_state * S
            W[rng.integers(0, S, chords), rng.integers(0, S, chords)] = 1.0
        W *= np.exp(-decades * rng.random((S, S)))
        return W / W.sum(axis=1, keepdims=True)

    return draw()


def integer_weights(shape: Sequence[int], low: int = 1,
                    high: int = 9) -> st.SearchStrategy[list]:
    """Nested lists of integers in ``[low, high]`` of the given shape (exact-arithmetic inputs)."""
    if any(int(s) < 1 for s in shape) or not 0 <= low <= high:
        raise InvalidParameterError(f"need a shape of sizes >= 1 and 0 <= low <= high, got "
                                    f"{tuple(shape)}, {low}, {high}")
    strategy: st.SearchStrategy = st.integers(low, high)
    for size in reversed(tuple(shape)):
        strategy = st.lists(strategy, min_size=int(size), max_size=int(size))
    return strategy


def rational_transition_matrices(min_states: int = 1, max_states: int = 7,
                                 max_weight: int = 8) -> st.SearchStrategy[list]:
    """Positive row-stochastic matrices of :class:`fractions.Fraction` from integer weights.

    A row is ``w / sum(w)`` with ``w`` in ``1..max_weight``: an exact reference for solvers.
    """
    check_sizes(min_states, max_states, 1, "min_states, max_states")
    check_sizes(1, max_weight, 1, "1, max_weight")

    @st.composite
    def draw(draw: st.DrawFn) -> list[list[Fraction]]:
        S = draw(st.integers(min_states, max_states))
        w = draw(integer_weights((S, S), 1, max_weight))
        return [[Fraction(v, sum(row)) for v in row] for row in w]

    return draw()


__all__ = [
    "PATTERNS",
    "influence_matrices",
    "integer_weights",
    "rational_transition_matrices",
    "transition_matrices",
]
