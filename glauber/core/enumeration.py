"""Mixed-radix enumeration of the state space ``V^n`` (site 0 most significant).

A state ``x = (x_0, ..., x_{n-1})`` with ``0 <= x_k < q`` has index
``sum_k x_k q^(n-1-k)``, so the states listed by :func:`all_states` are in lexicographic order
and ``all_states(n, q)[state_index(x, q)] == x``.
"""

from __future__ import annotations

import numpy as np

from glauber.errors import (
    InvalidParameterError,
    StateSpaceTooLargeError,
    VocabularyError,
)

#: Default ceiling of :func:`all_states` (2**24 states: 128 MiB per site column in int64).
ENUMERATION_LIMIT = 2**24


def check_state_space(n: int, q: int, max_states: int) -> int:
    """Return ``q**n`` if it is at most ``max_states``.

    Parameters
    ----------
    n, q : int
        Number of sites and vocabulary size.
    max_states : int
        The enumeration limit.

    Raises
    ------
    InvalidParameterError
        If ``max_states`` is not an integer >= 1.
    StateSpaceTooLargeError
        If ``q**n > max_states``.
    """
    if (
        isinstance(max_states, bool)
        or not isinstance(max_states, (int, np.integer))
        or max_states < 1
    ):
        raise InvalidParameterError(f"max_states must be an integer >= 1, got {max_states!r}")
    size = int(q) ** int(n)
    if size > max_states:
        raise StateSpaceTooLargeError(
            f"the state space has q**n = {q}**{n} = {size} states, over the limit "
            f"max_states = {max_states}; shorten the sequence or shrink the vocabulary, or pass "
            f"max_states={size} (or more) if the machine has the memory for it"
        )
    return size


def table_queries(n: int, q: int) -> int:
    """Distinct conditional queries that tabulate a model: ``n q^(n-1)``.

    A query is a site ``i`` and a context ``x_{-i}`` (the model masks ``x_i``), so the score
    table of every conditional holds ``q^(n-1)`` queries per site (a naive build asks
    ``n q^n``). Budgets of searches are counted against it (docs/performance.md).

    Examples
    --------
    >>> table_queries(3, 20)
    1200
    """
    return int(n) * int(q) ** (int(n) - 1)


def radix_weights(n: int, q: int) -> np.ndarray:
    """Place values ``q^(n-1-k)`` of the sites ``k = 0..n-1`` (site 0 most significant)."""
    return q ** np.arange(n - 1, -1, -1, dtype=np.int64)


def context_digit_view(values: np.ndarray, n: int, q: int, i: int, j: int) -> np.ndarray:
    """Site ``i``'s rows, one per context ``x_{-i}`` in mixed radix over the other ``n - 1``
    sites (site 0 most significant), viewed as ``[before, q, after, ...]``: axis 1 is the token
    at ``j != i``. Slices ``[:, a:a + 1]`` and ``[:, a + 1:]`` then pair every context with
    those that differ from it only at ``j`` by a larger token, each unordered pair once.

    Examples
    --------
    >>> context_digit_view(np.arange(9), 3, 3, 0, 2)[:, 1].tolist()  # x_1 any, x_2 = 1
    [[1], [4], [7]]
    """
    k = j if j < i else j - 1  # the digit of j among the other n - 1 sites
    return values.reshape((q**k, q, q ** (n - 2 - k)) + values.shape[1:])


def all_states(n: int, q: int, max_states: int = ENUMERATION_LIMIT) -> np.ndarray:
    """All ``q**n`` states as an int64 array ``[q**n, n]`` in mixed-radix (lexicographic) order.

    Parameters
    ----------
    n, q : int
        Number of sites and vocabulary size (Python or numpy integers: the count is formed in
        Python integers, so it never wraps around).
    max_states : int
        Refuse to enumerate more states than this (see :func:`check_state_space`).

    Raises
    ------
    StateSpaceTooLargeError
        If ``q**n > max_states``.

    Examples
    --------
    >>> all_states(2, 2).tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    n, q = int(n), int(q)
    check_state_space(n, q, max_states)
    return _digits(n, q)


def _digits(n: int, q: int) -> np.ndarray:
    """The digits of ``0..q**n - 1``, ``[q**n, n]`` int64, site 0 most significant.

    ``numpy.indices`` writes each digit column as a broadcast pattern (no integer division,
    which numpy does not vectorise: about 6x faster at ``2**20`` states).
    """
    if n == 0:
        return np.zeros((1, 0), dtype=np.int64)
    grid = np.indices((q,) * n, dtype=np.int64).reshape(n, -1)
    return np.ascontiguousarray(grid.T)


def state_index(states: np.ndarray, q: int) -> np.ndarray:
    """Mixed-radix index of each state: ``[B, n]`` to int64 ``[B]`` (one state ``[n]``: a scalar).

    Raises
    ------
    VocabularyError
        If an entry lies outside ``0..q-1``.
    """
    arr = np.asarray(states, dtype=np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= q):
        raise VocabularyError(
            f"state entries must be vocabulary indices in 0..{q - 1}, got values in "
            f"{int(arr.min())}..{int(arr.max())}"
        )
    return arr @ radix_weights(arr.shape[-1], q)


def neighbour_indices(n: int, q: int) -> np.ndarray:
    """Index of ``x^(i -> a)`` (``x`` with site ``i`` set to ``a``): int64 array ``[n, q**n, q]``.

    Entry ``[i, x, a]`` is the index of the state that agrees with state ``x`` off site ``i`` and
    holds ``a`` at site ``i``; ``[i, x, x_i]`` is ``x`` itself.
    """
    weights = radix_weights(n, q)
    index = np.arange(q**n, dtype=np.int64)
    digits = _digits(n, q)  # [S, n]
    base = index[None, :] - (digits * weights[None, :]).T  # [n, S]: x with site i zeroed
    tokens = np.arange(q, dtype=np.int64)
    return base[:, :, None] + weights[:, None, None] * tokens[None, None, :]


__all__ = [
    "all_states",
    "check_state_space",
    "context_digit_view",
    "ENUMERATION_LIMIT",
    "neighbour_indices",
    "radix_weights",
    "state_index",
    "table_queries",
]
