"""Proposition 1 / Corollary 2 and Theorem 3 as checks on a transition matrix (dense or sparse).

* Proposition 1 (true as printed): the Glauber kernel is a Markov kernel
  (:func:`is_markov_kernel`); with positive conditionals it is irreducible
  (:func:`is_irreducible`) and aperiodic (:func:`is_aperiodic`; a positive diagonal, which
  Glauber dynamics with positive conditionals has, suffices).
* Corollary 2: then the stationary law is unique and ``P^t(x, .) -> mu``.
* Theorem 3 (true as printed): a compatible ``pi`` is stationary (:func:`is_stationary`) and
  ``P`` is reversible with respect to it (:func:`is_reversible`).
"""

from __future__ import annotations

import math
from functools import reduce
from typing import Any

import numpy as np
import scipy.sparse as sps
from numpy.typing import ArrayLike
from scipy.sparse.csgraph import connected_components, shortest_path

from glauber.theory.validation import as_real_array
from glauber.errors import InvalidParameterError


def _as_csr(P: Any) -> sps.csr_array:
    """Return ``P`` as a float64 CSR array after checking that it is square and 2-D."""
    if sps.issparse(P):
        mat = sps.csr_array(P, dtype=np.float64, copy=True)
    else:
        dense = as_real_array(P, "P")
        if dense.ndim != 2:
            raise InvalidParameterError(f"P must be two-dimensional, got shape {dense.shape}")
        mat = sps.csr_array(dense)
    if mat.shape[0] != mat.shape[1] or mat.shape[0] < 1:
        raise InvalidParameterError(f"P must be a non-empty square matrix, got shape {mat.shape}")
    mat.eliminate_zeros()
    return mat


def _as_law(pi: ArrayLike, size: int) -> np.ndarray:
    arr = as_real_array(pi, "pi").ravel()
    if arr.shape != (size,):
        raise InvalidParameterError(f"pi must have {size} entries (one per state), got {arr.size}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or arr.sum() <= 0:
        raise InvalidParameterError(
            "pi must be finite, >= 0 and not all zero (it is normalised here)"
        )
    return arr / arr.sum()


def is_markov_kernel(P: Any, atol: float = 1e-12) -> bool:
    """Proposition 1: are all entries ``>= -atol`` and every row sum within ``atol`` of 1?

    Parameters
    ----------
    P : array_like or scipy.sparse matrix, shape (N, N)
        Candidate transition matrix.
    atol : float, optional
        Absolute tolerance.

    Returns
    -------
    bool
        False also when an entry is NaN or infinite.

    Raises
    ------
    InvalidParameterError
        If ``P`` is not a square two-dimensional matrix.

    Examples
    --------
    >>> is_markov_kernel([[0.5, 0.5], [0.0, 1.0]])
    True
    """
    mat = _as_csr(P)
    data = mat.data
    if not np.all(np.isfinite(data)) or (data.size and data.min() < -atol):
        return False
    rows = np.asarray(mat.sum(axis=1)).ravel()
    return bool(np.all(np.abs(rows - 1.0) <= atol))


def _support_graph(P: Any) -> sps.csr_array:
    mat = _as_csr(P)
    mat.data = (mat.data > 0).astype(np.float64)
    mat.eliminate_zeros()
    return mat


def is_irreducible(P: Any) -> bool:
    """Proposition 1: is the directed graph of positive entries strongly connected?

    Uses ``scipy.sparse.csgraph.connected_components(..., connection="strong")``.

    Parameters
    ----------
    P : array_like or scipy.sparse matrix, shape (N, N)

    Returns
    -------
    bool

    Raises
    ------
    InvalidParameterError
        If ``P`` is not a square two-dimensional matrix.

    Examples
    --------
    >>> is_irreducible([[0.5, 0.5], [0.0, 1.0]])
    False
    """
    graph = _support_graph(P)
    count, _ = connected_components(graph, directed=True, connection="strong")
    return bool(count == 1)


def _class_period(graph: sps.csr_array, members: np.ndarray) -> int:
    """Period of one strongly connected class (0 if it has no internal edge, i.e. no cycle)."""
    sub = graph[members][:, members].tocoo()
    if sub.nnz == 0:
        return 0
    level = shortest_path(sub.tocsr(), method="D", unweighted=True, indices=0)
    gaps = np.abs(level[sub.row] + 1 - level[sub.col]).astype(np.int64)
    return int(reduce(math.gcd, gaps.tolist(), 0))


def is_aperiodic(P: Any) -> bool:
    """Proposition 1: does every state that can return to itself have period 1?

    A positive diagonal (a self-loop at every state) suffices, and is what Glauber dynamics with
    positive conditionals has: ``P(x, x) = (1/n) sum_i p(x_i | x_{-i}) > 0``. This check is
    exact, though: for each strongly connected class it computes the period
    ``gcd{level(u) + 1 - level(v) : u -> v}`` from breadth-first levels. States on no cycle
    (transient singletons without a self-loop) have no period and are ignored.

    Parameters
    ----------
    P : array_like or scipy.sparse matrix, shape (N, N)

    Returns
    -------
    bool

    Raises
    ------
    InvalidParameterError
        If ``P`` is not a square two-dimensional matrix.

    Examples
    --------
    >>> is_aperiodic([[0.0, 1.0], [1.0, 0.0]])
    False
    """
    graph = _support_graph(P)
    if np.all(graph.diagonal() > 0):
        return True
    count, labels = connected_components(graph, directed=True, connection="strong")
    for c in range(count):
        if _class_period(graph, np.flatnonzero(labels == c)) > 1:
            return False
    return True


def is_stationary(P: Any, pi: ArrayLike, atol: float = 1e-12) -> bool:
    """Theorem 3 / Corollary 2: is ``||pi P - pi||_1 <= atol`` (``pi`` normalised first)?

    Parameters
    ----------
    P : array_like or scipy.sparse matrix, shape (N, N)
    pi : array_like, shape (N,)
        Non-negative weights (normalised here).
    atol : float, optional

    Returns
    -------
    bool

    Raises
    ------
    InvalidParameterError
        If ``P`` is not square or ``pi`` is not a non-negative vector of matching length.
    """
    mat = _as_csr(P)
    law = _as_law(pi, mat.shape[0])
    return bool(np.abs(mat.T @ law - law).sum() <= atol)


def is_reversible(P: Any, pi: ArrayLike, rtol: float = 1e-10, atol: float = 1e-15) -> bool:
    """Theorem 3: detailed balance ``pi(x) P(x, y) = pi(y) P(y, x)`` for all ``x, y``.

    The flows ``F = diag(pi) P`` (``pi`` normalised first) must satisfy
    ``|F - F^T| <= atol + rtol * max(|F|, |F^T|)`` entrywise.

    Parameters
    ----------
    P : array_like or scipy.sparse matrix, shape (N, N)
    pi : array_like, shape (N,)
        Non-negative weights (normalised here).
    rtol, atol : float, optional

    Returns
    -------
    bool

    Raises
    ------
    InvalidParameterError
        If ``P`` is not square or ``pi`` is not a non-negative vector of matching length.

    Examples
    --------
    >>> is_reversible([[0.5, 0.5], [0.25, 0.75]], [1 / 3, 2 / 3])
    True
    """
    mat = _as_csr(P)
    law = _as_law(pi, mat.shape[0])
    flows = sps.csr_array(sps.diags_array(law) @ mat)
    diff = abs(flows - flows.T)
    scale = flows.maximum(flows.T)
    excess = diff - rtol * abs(scale)
    excess.data = np.maximum(excess.data, 0.0)
    return bool(excess.nnz == 0 or excess.max() <= atol)
