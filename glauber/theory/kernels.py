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

from glauber.core.validation import as_real_array
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


#: Relative tolerance of :func:`is_reversible`: each detailed-balance pair is compared to its own
#: size, so this bounds the relative rounding error that flows of any magnitude may carry.
REVERSIBILITY_RTOL = 1e-8


def flow_defect(log_forward: ArrayLike, log_backward: ArrayLike) -> float:
    """The one detailed-balance formula: ``max |F - F'| / max(F, F')`` over pairs of log flows.

    For each pair, ``|F - F'| / max(F, F') = 1 - exp(-|log F - log F'|)``, computed as
    ``-expm1(-|log F - log F'|)`` from the logs, so flows of order ``1e-300`` (or below the
    float64 range, given in log space) are compared at full relative precision. A one-way pair
    (a flow with no reverse) counts 1, a pair with no flow either way counts 0.

    Examples
    --------
    >>> round(flow_defect(np.log([0.25, 0.1]), np.log([0.25, 0.2])), 12)  # 1 - 0.1 / 0.2
    0.5
    >>> flow_defect([-np.inf], [-np.inf])
    0.0
    """
    lf = np.asarray(log_forward, dtype=np.float64)
    lb = np.asarray(log_backward, dtype=np.float64)
    if lf.size == 0:
        return 0.0
    none = (lf == -np.inf) & (lb == -np.inf)
    with np.errstate(invalid="ignore"):
        defect = -np.expm1(-np.abs(np.where(none, 0.0, lf - lb)))
    return float(defect.max())


def log_reversibility_defect(P: Any, log_pi: ArrayLike) -> float:
    """:func:`reversibility_defect` from ``log pi``: flows compared as ``log pi(x) + log P(x, y)``.

    Every move ``x -> y`` (``x != y``, ``P(x, y) > 0``) is paired with its reverse and the pair
    judged by :func:`flow_defect`; a ``pi`` given in log space may underflow float64.

    Examples
    --------
    >>> P = np.array([[0.5, 0.5], [0.25, 0.75]])
    >>> log_reversibility_defect(P, np.log([1 / 3, 2 / 3])) < 1e-15
    True
    """
    csr = _as_csr(P)
    coo = sps.coo_array(csr)
    off = (coo.row != coo.col) & (coo.data > 0)
    x, y, p = coo.row[off], coo.col[off], coo.data[off]
    reverse = np.asarray(csr[y, x]).ravel()  # P(y, x)
    log_pi = np.asarray(log_pi, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return flow_defect(log_pi[x] + np.log(p), log_pi[y] + np.log(reverse))


def reversibility_defect(P: Any, pi: ArrayLike) -> float:
    """Largest relative violation of detailed balance, ``max |F - F^T| / max(F, F^T)``.

    ``F(x, y) = pi(x) P(x, y)`` is the edge flow (``pi`` normalised first); pairs with no flow
    either way count as 0. Each pair is compared relative to its own size (:func:`flow_defect`),
    so flows of order ``1e-40`` are checked as strictly as flows of order 1 (this needs ``pi``
    accurate entrywise, as GTH gives it).

    Raises
    ------
    InvalidParameterError
        If ``P`` is not square or ``pi`` is not a non-negative vector of matching length.

    Examples
    --------
    >>> reversibility_defect([[0.5, 0.5], [0.25, 0.75]], [1 / 3, 2 / 3])
    0.0
    """
    mat = _as_csr(P)
    law = _as_law(pi, mat.shape[0])
    with np.errstate(divide="ignore"):
        return log_reversibility_defect(mat, np.log(law))


def is_reversible(P: Any, pi: ArrayLike, rtol: float = REVERSIBILITY_RTOL) -> bool:
    """Theorem 3: detailed balance ``pi(x) P(x, y) = pi(y) P(y, x)`` for all ``x, y``.

    True when :func:`reversibility_defect` is at most ``rtol``: every pair of flows agrees to
    relative precision ``rtol`` (:data:`REVERSIBILITY_RTOL` by default).

    Parameters
    ----------
    P : array_like or scipy.sparse matrix, shape (N, N)
    pi : array_like, shape (N,)
        Non-negative weights (normalised here).
    rtol : float, optional
        Relative tolerance, finite and >= 0.

    Returns
    -------
    bool

    Raises
    ------
    InvalidParameterError
        If ``P`` is not square, ``pi`` is not a non-negative vector of matching length, or
        ``rtol`` is not a finite number >= 0.

    Examples
    --------
    >>> is_reversible([[0.5, 0.5], [0.25, 0.75]], [1 / 3, 2 / 3])
    True
    """
    if not np.isfinite(rtol) or rtol < 0:
        raise InvalidParameterError(f"rtol must be a finite number >= 0, got {rtol!r}")
    return reversibility_defect(P, pi) <= rtol


__all__ = [
    "is_aperiodic",
    "is_irreducible",
    "is_markov_kernel",
    "is_reversible",
    "is_stationary",
    "flow_defect",
    "log_reversibility_defect",
    "reversibility_defect",
    "REVERSIBILITY_RTOL",
]
