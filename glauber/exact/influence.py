"""Exact influence coefficients (Definition 2) and score oscillations (Lemma 6) by enumeration.

Both take per-site arrays ``values[i, x, a]`` over all states ``x`` in mixed-radix order
(conditionals ``p_tau(a | x_{-i})`` or scores ``s_i(a; x_{-i})``) and compare every pair of
states that differ only at one site ``j``: the pairs are ``(x^(j -> a), x^(j -> b))`` for each
context of the other sites, enumerated by :func:`site_pairs` as two aligned views.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from glauber.errors import NonFiniteScoresError


def site_pairs(
    values: np.ndarray, n: int, q: int, j: int
) -> Iterator[tuple[int, int, np.ndarray, np.ndarray]]:
    """Yield ``(a, b, values_a, values_b)`` for every pair of tokens ``a < b`` at site ``j``.

    Parameters
    ----------
    values : numpy.ndarray, shape (m, q**n, ...)
        Any per-state array whose second axis runs over the states in mixed-radix order.
    n, q : int
        Number of sites and vocabulary size.
    j : int
        The site at which the two states of a pair differ.

    Yields
    ------
    a, b : int
        The tokens at site ``j``.
    values_a, values_b : numpy.ndarray, shape (m, q**(n-1), ...)
        ``values`` at the states with ``x_j = a`` and ``x_j = b``; row ``r`` of both belongs to
        the same context of the sites other than ``j``.
    """
    shaped = values.reshape(
        (values.shape[0], q**j, q, q ** (n - 1 - j)) + values.shape[2:]
    )
    for a in range(q):
        for b in range(a + 1, q):
            yield (
                a,
                b,
                shaped[:, :, a].reshape((values.shape[0], -1) + values.shape[2:]),
                shaped[:, :, b].reshape((values.shape[0], -1) + values.shape[2:]),
            )


def influence_matrix(conditionals: np.ndarray) -> np.ndarray:
    """Exact influence coefficients ``C[i, j] = c_ij(tau)`` (Definition 2; as printed).

    ``c_ij = sup ||p(. | x_{-i}) - p(. | y_{-i})||_TV`` over ``x, y`` that differ only at ``j``: the
    influence OF site ``j`` ON site ``i``. Row sums are the paper's ``alpha`` (Theorem 5), column
    sums the ``alpha_out`` of the corrected contraction (docs/theory.md, `thm5-corrected`). The
    diagonal is 0 (a site's conditional does not see its own token).

    Parameters
    ----------
    conditionals : numpy.ndarray, shape (n, q**n, q)
        ``p_tau(a | x_{-i})`` at every site ``i`` and state ``x``.

    Returns
    -------
    numpy.ndarray, shape (n, n)

    Examples
    --------
    >>> p = np.full((2, 4, 2), 0.5)  # independent uniform sites
    >>> influence_matrix(p).tolist()
    [[0.0, 0.0], [0.0, 0.0]]
    """
    n = conditionals.shape[0]
    C = np.zeros((n, n), dtype=np.float64)
    for j in range(n):
        for _, _, pa, pb in site_pairs(conditionals, n, conditionals.shape[2], j):
            tv = 0.5 * np.abs(pa - pb).sum(axis=-1)  # [n, contexts]
            C[:, j] = np.maximum(C[:, j], tv.max(axis=1))
    np.fill_diagonal(C, 0.0)
    return C


def oscillation_matrix(scores: np.ndarray) -> np.ndarray:
    """Exact score oscillations ``Delta[i, j]`` of Lemma 6 (scores at ``tau = 1``).

    ``Delta_ij = sup over x, y differing only at j of
    [max_a (s_i(a; x) - s_i(a; y)) - min_a (s_i(a; x) - s_i(a; y))]``. Lemma 6 (true):
    ``c_ij(tau) <= Delta_ij / (4 tau)``; sharper and also true:
    ``c_ij <= tanh(Delta_ij / (4 tau))``.
    The value is invariant to adding a context-dependent constant to the scores.

    Parameters
    ----------
    scores : numpy.ndarray, shape (n, q**n, q)
        ``s_i(a; x_{-i})`` at every site and state.

    Returns
    -------
    numpy.ndarray, shape (n, n), zero diagonal.

    Raises
    ------
    NonFiniteScoresError
        If a score difference exceeds the largest float64 (scores near 1e308): the oscillation
        is not representable; scale the scores down.
    """
    n = scores.shape[0]
    D = np.zeros((n, n), dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        for j in range(n):
            for _, _, sa, sb in site_pairs(scores, n, scores.shape[2], j):
                diff = sa - sb  # [n, contexts, q]
                spread = diff.max(axis=-1) - diff.min(axis=-1)
                D[:, j] = np.maximum(D[:, j], spread.max(axis=1))
    np.fill_diagonal(D, 0.0)
    if not np.isfinite(D).all():
        raise NonFiniteScoresError(
            "a score oscillation Delta_ij exceeds the largest float64 (scores differ by more "
            f"than 1.8e308; largest |score| {np.abs(scores).max():.3g}); scale the scores down"
        )
    return D


__all__ = [
    "influence_matrix",
    "oscillation_matrix",
    "site_pairs",
]
