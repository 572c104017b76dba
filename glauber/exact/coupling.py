"""Exact one-step Hamming distance under the same-site maximal coupling (Theorem 5's coupling).

Both chains pick the same uniform site ``i``; the two conditionals at ``i`` are maximally coupled,
so the new tokens agree with probability ``1 - TV_i(x, y)`` where
``TV_i(x, y) = ||p(. | x_{-i}) - p(. | y_{-i})||_TV``. Hence, exactly,

``E[d_H(X_1, Y_1)] = (1/n) sum_i [d_H(x, y) - 1{x_i != y_i} + TV_i(x, y)]``.

For an adjacent pair (differing only at ``j``; ``TV_j = 0`` since a site's conditional ignores
its own token) this is ``(n - 1 + sum_{i != j} TV_i) / n``; path coupling (Bubley–Dyer;
LPW 2nd ed. Theorem 14.6) needs its maximum over adjacent pairs to be below 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from glauber.core.enumeration import all_states
from glauber.errors import InvalidParameterError
from glauber.exact.influence import site_pairs


def _check_index(index: int, num_states: int, name: str) -> int:
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not (
        0 <= int(index) < num_states
    ):
        raise InvalidParameterError(
            f"{name} must be a state index in 0..{num_states - 1}, got {index!r}; use "
            "chain.index_of(state) to convert a state"
        )
    return int(index)


def one_step_hamming(conditionals: np.ndarray, x_index: int, y_index: int) -> float:
    """Exact ``E[d_H(X_1, Y_1) | X_0 = x, Y_0 = y]`` under the same-site maximal coupling.

    Parameters
    ----------
    conditionals : numpy.ndarray, shape (n, q**n, q)
        ``p_tau(a | x_{-i})`` at every site and state (mixed-radix order).
    x_index, y_index : int
        Indices of the two starting states.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If an index is out of range.

    Examples
    --------
    >>> p = np.full((2, 4, 2), 0.5)  # independent uniform sites: a chosen site is coupled
    >>> one_step_hamming(p, 0, 3)  # d_H = 2 -> (1 + 1) / 2
    1.0
    """
    n, num_states, q = conditionals.shape
    x = _check_index(x_index, num_states, "x_index")
    y = _check_index(y_index, num_states, "y_index")
    states = all_states(n, q)
    differ = states[x] != states[y]
    tv = 0.5 * np.abs(conditionals[:, x, :] - conditionals[:, y, :]).sum(axis=-1)  # [n]
    return float((differ.sum() - differ + tv).sum() / n)


@dataclass(frozen=True)
class WorstAdjacentPair:
    """The adjacent pair with the largest one-step expected Hamming distance.

    Attributes
    ----------
    expected_distance : float
        ``max`` over pairs differing at one site of ``E[d_H(X_1, Y_1)]``; path coupling contracts
        with rate ``1 - expected_distance`` when this is below 1.
    x_index, y_index : int
        A pair attaining it.
    site : int
        The site at which they differ.
    """

    expected_distance: float
    x_index: int
    y_index: int
    site: int


def worst_adjacent_pair(conditionals: np.ndarray) -> WorstAdjacentPair:
    """Maximum of the exact one-step ``E[d_H]`` over all adjacent pairs (path-coupling check).

    Parameters
    ----------
    conditionals : numpy.ndarray, shape (n, q**n, q)

    Returns
    -------
    WorstAdjacentPair
    """
    n, num_states, q = conditionals.shape
    index = np.arange(num_states)[None, :]
    best = WorstAdjacentPair(-np.inf, -1, -1, -1)
    for j in range(n):
        pairs = zip(site_pairs(conditionals, n, q, j), site_pairs(index, n, q, j))
        for (_, _, pa, pb), (_, _, xa, xb) in pairs:
            total_tv = 0.5 * np.abs(pa - pb).sum(axis=(0, 2))  # sum over sites i of TV_i
            r = int(np.argmax(total_tv))
            value = (n - 1 + float(total_tv[r])) / n
            if value > best.expected_distance:
                best = WorstAdjacentPair(value, int(xa[0, r]), int(xb[0, r]), j)
    return best


@dataclass(frozen=True)
class WorstPair:
    """The pair of distinct states with the largest one-step ``E[d_H(X_1, Y_1)] / d_H(x, y)``.

    Attributes
    ----------
    ratio : float
        The largest ratio: the smallest ``kappa`` with ``E[d_H(X_1, Y_1)] <= kappa d_H(x, y)``
        for all pairs (Theorem 5's one-step contraction factor, exactly).
    x_index, y_index : int
        A pair attaining it.
    """

    ratio: float
    x_index: int
    y_index: int


def worst_pair(conditionals: np.ndarray) -> WorstPair:
    """Largest ``E[d_H(X_1, Y_1)] / d_H(x, y)`` over all pairs of distinct states, exactly.

    Uses ``E[d_H(X_1, Y_1)] = (1/n) sum_i [d_H - 1{x_i != y_i} + TV_i(x, y)]`` for every pair at
    once (memory ``O(q^{2n} (n + q))``; meant for at most a few hundred states).

    Parameters
    ----------
    conditionals : numpy.ndarray, shape (n, q**n, q)

    Returns
    -------
    WorstPair

    Examples
    --------
    >>> p = np.full((2, 4, 2), 0.5)  # independent sites: every pair contracts by 1 - 1/n
    >>> worst_pair(p).ratio
    0.5
    """
    n, num_states, q = conditionals.shape
    states = all_states(n, q)
    differ = states[:, None, :] != states[None, :, :]
    d = differ.sum(axis=-1)
    total = np.zeros(d.shape)
    for i in range(n):
        tv = 0.5 * np.abs(conditionals[i][:, None, :] - conditionals[i][None, :, :]).sum(axis=-1)
        total += d - differ[..., i] + tv
    ratio = np.where(d > 0, total / n / np.maximum(d, 1), -np.inf)
    x, y = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    return WorstPair(float(ratio[x, y]), int(x), int(y))


__all__ = [
    "one_step_hamming",
    "worst_pair",
    "WorstPair",
    "worst_adjacent_pair",
    "WorstAdjacentPair",
]
