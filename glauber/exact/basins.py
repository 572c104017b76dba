"""Exact basin quantities of a finite chain: conductance, bottleneck ratio, escape, hitting times.

Basins are boolean masks over the states (mixed-radix order). All sums of the form
``P(x, S^c)`` add the probabilities of the moves that leave ``S``; none is formed as
``1 - P(x, S)``, so escape probabilities of order ``1e-40`` keep their relative accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from glauber.core.arrays import logsumexp
from glauber.core.validation import check_nonnegative_int
from glauber.errors import BasinError, InvalidParameterError, StateSpaceTooLargeError


@dataclass(frozen=True)
class CountBasin:
    """``B = {x : #{i : x_i = token} >= threshold}`` and its Section 5.4 band.

    Attributes
    ----------
    token : int
        The counted token.
    threshold : int
        ``b``: the basin is ``X >= b``; its boundary level is ``X = b``.
    band_low : int
        ``a < b``: the corrected certificate bounds ``P(X_t <= a for some t <= horizon)``.
    horizon : int
        ``T``, the time horizon of the band certificate.
    """

    token: int
    threshold: int
    band_low: int
    horizon: int


@dataclass(frozen=True)
class NamedMask:
    """A named set of states of an exact chain (a boolean mask over its states; the basin
    predicate of the estimators is :data:`glauber.estimators.Basin`) and, for count basins, the
    count data."""

    name: str
    mask: np.ndarray
    count: CountBasin | None = None


#: :func:`bottleneck` enumerates all ``2**S - 2`` proper subsets only up to this many states.
BOTTLENECK_MAX_STATES = 16


def check_mask(mask: Any, num_states: int, *, allow_full: bool = False) -> np.ndarray:
    """Return ``mask`` as a boolean array ``[num_states]`` after checking it describes a basin.

    Raises
    ------
    InvalidParameterError
        If ``mask`` is not boolean with one entry per state.
    BasinError
        If the mask is empty, or is the whole state space (unless ``allow_full``).
    """
    arr = np.asarray(mask)
    if arr.dtype != np.bool_ or arr.shape != (num_states,):
        raise InvalidParameterError(
            f"a basin must be a boolean mask with one entry per state, shape ({num_states},); got "
            f"dtype {arr.dtype} and shape {arr.shape} (build it from chain.states(), e.g. "
            "states.sum(axis=1) >= k)"
        )
    if not arr.any():
        raise BasinError("the basin is empty; choose a mask with at least one True state")
    if arr.all() and not allow_full:
        raise BasinError(
            "the basin is the whole state space, which has no boundary; leave at least one "
            "state out"
        )
    return arr


def escape_probabilities(P: Any, mask: Any) -> np.ndarray:
    """Exact one-step escape probabilities ``P(x, B^c)`` for the states ``x`` of the basin ``B``.

    Theorem 8 (as printed, true) bounds each by ``|V| e^{-Delta_star / tau}``.

    Parameters
    ----------
    P : sparse matrix or array_like, shape (S, S)
        Transition matrix.
    mask : array of bool, shape (S,)
        The basin ``B``.

    Returns
    -------
    numpy.ndarray, shape (|B|,)
        ``P(x, B^c)`` for ``x`` in ``np.flatnonzero(mask)`` (increasing state index).

    Raises
    ------
    InvalidParameterError, BasinError
        See :func:`check_mask`.
    """
    Pc = sp.csr_matrix(P, dtype=np.float64)
    inside = check_mask(mask, Pc.shape[0])
    return np.asarray(Pc[inside][:, ~inside].sum(axis=1)).ravel()


def conductance(P: Any, pi: np.ndarray, mask: Any) -> float:
    """Conductance ``Phi(S) = sum_{x in S} pi(x) P(x, S^c) / pi(S)`` (Theorem 8's definition).

    This is the bottleneck ratio of LPW 2nd ed. Section 7.2 for the set ``S`` (edge measure of the
    boundary over ``pi(S)``), not a graph conductance.

    Raises
    ------
    InvalidParameterError, BasinError
        See :func:`check_mask`.

    Examples
    --------
    >>> P = np.array([[0.5, 0.5], [0.25, 0.75]])
    >>> conductance(P, np.array([1 / 3, 2 / 3]), np.array([True, False]))
    0.5
    """
    inside = check_mask(mask, np.shape(pi)[0])
    pi = np.asarray(pi, dtype=np.float64)
    escape = escape_probabilities(P, inside)
    return float((pi[inside] * escape).sum() / pi[inside].sum())


def log_conductance(P: Any, log_pi: np.ndarray, mask: Any) -> float:
    """``log Phi(S)`` from ``log pi``: the conductance of a set whose mass underflows float64.

    ``log Phi(S) = logsumexp_{x in S}(log pi(x) + log P(x, S^c)) - logsumexp_{x in S} log pi(x)``,
    with ``P(x, S^c)`` summed from the moves that leave ``S`` (no subtraction). Positive
    conditionals give a finite value for every proper subset; ``-inf`` only when ``S`` has no
    exit at all.

    Raises
    ------
    InvalidParameterError, BasinError
        See :func:`check_mask`.

    Examples
    --------
    >>> P = np.array([[0.5, 0.5], [0.25, 0.75]])
    >>> log_phi = log_conductance(P, np.log([1 / 3, 2 / 3]), np.array([True, False]))
    >>> round(float(np.exp(log_phi)), 12)
    0.5
    """
    log_pi = np.asarray(log_pi, dtype=np.float64)
    inside = check_mask(mask, log_pi.shape[0])
    with np.errstate(divide="ignore"):
        log_escape = np.log(escape_probabilities(P, inside))
    return logsumexp(log_pi[inside] + log_escape) - logsumexp(log_pi[inside])


@dataclass(frozen=True)
class Bottleneck:
    """The minimiser of the conductance over sets of stationary mass at most 1/2.

    Attributes
    ----------
    ratio : float
        ``Phi_* = min{Phi(S) : 0 < pi(S) <= 1/2}`` (LPW 2nd ed., Section 7.2).
    mask : numpy.ndarray of bool
        A set attaining it.
    log_ratio : float or None
        ``log Phi_*`` when computed in log space (``ratio`` may then underflow to 0).
    """

    ratio: float
    mask: np.ndarray
    log_ratio: float | None = None


def bottleneck(
    P: Any, pi: np.ndarray, log_pi: np.ndarray | None = None, log_P: np.ndarray | None = None
) -> Bottleneck:
    """Bottleneck ratio ``Phi_*`` by enumerating every subset (chains of at most 16 states).

    Sets with ``pi(S) <= 1/2`` are admitted with a relative slack of ``1e-12`` so that sets of
    mass exactly 1/2 (symmetric chains) are not lost to rounding in ``pi(S)``. With ``log_pi``
    every mass and boundary flow is formed in log space (``pi`` is then ignored), so sets whose
    mass underflows float64 keep their true ratio instead of ``0 / 0``; ``log_P`` (dense
    ``log P``, default ``log(P)``) keeps transition probabilities that are subnormal in ``P``.

    Raises
    ------
    StateSpaceTooLargeError
        If the chain has more than :data:`BOTTLENECK_MAX_STATES` states.
    """
    pi = np.asarray(pi, dtype=np.float64)
    S = pi.shape[0]
    if S > BOTTLENECK_MAX_STATES:
        raise StateSpaceTooLargeError(
            f"the bottleneck ratio enumerates 2**{S} subsets; only chains of at most "
            f"{BOTTLENECK_MAX_STATES} states are supported: use conductance(mask) on chosen sets"
        )
    dense = P.toarray() if sp.issparse(P) else np.asarray(P, dtype=np.float64)
    if log_pi is not None:
        if log_P is None:
            with np.errstate(divide="ignore"):
                log_P = np.log(dense)
        return _log_bottleneck(np.asarray(log_P, dtype=np.float64),
                               np.asarray(log_pi, dtype=np.float64))
    flow = pi[:, None] * dense  # edge measure Q(x, y)
    codes = np.arange(1, 2**S - 1, dtype=np.int64)
    masks = ((codes[:, None] >> np.arange(S)[None, :]) & 1).astype(bool)  # [2^S - 2, S]
    mass = masks @ pi
    boundary = ((masks.astype(np.float64) @ flow) * ~masks).sum(axis=1)  # Q(S, S^c)
    admitted = mass <= 0.5 * (1.0 + 1e-12)
    ratios = np.where(admitted, boundary / np.where(admitted, mass, 1.0), np.inf)
    best = int(np.argmin(ratios))
    return Bottleneck(ratio=float(ratios[best]), mask=masks[best].copy())


def _log_bottleneck(log_P: np.ndarray, log_pi: np.ndarray) -> Bottleneck:
    """:func:`bottleneck` with masses and flows in log space."""
    S = log_pi.shape[0]
    log_flow = log_pi[:, None] + log_P  # log Q(x, y)
    codes = np.arange(1, 2**S - 1, dtype=np.int64)
    masks = ((codes[:, None] >> np.arange(S)[None, :]) & 1).astype(bool)
    best_log, best_mask = np.inf, masks[0]
    for lo in range(0, len(masks), 2048):
        m = masks[lo:lo + 2048]
        log_mass = logsumexp(np.where(m, log_pi[None, :], -np.inf), axis=1)
        leaving = m[:, :, None] & ~m[:, None, :]
        log_boundary = logsumexp(
            np.where(leaving, log_flow[None, :, :], -np.inf).reshape(len(m), -1), axis=1
        )
        admitted = log_mass <= np.log(0.5) + 1e-12
        log_ratio = np.where(admitted, log_boundary - log_mass, np.inf)
        k = int(np.argmin(log_ratio))
        if log_ratio[k] < best_log:
            best_log, best_mask = float(log_ratio[k]), m[k]
    return Bottleneck(ratio=float(np.exp(best_log)), mask=best_mask.copy(), log_ratio=best_log)


def expected_hitting_times(P: Any, target_mask: Any) -> np.ndarray:
    """Expected hitting times ``h(x) = E_x[min{t >= 0 : X_t in A}]`` of the target set ``A``.

    Solves ``(I - P_{A^c, A^c}) h = 1`` on ``A^c`` (LPW 2nd ed., Section 10.2; first-step analysis),
    with the diagonal ``1 - P(x, x)`` formed as ``sum_{y != x} P(x, y)`` (no subtraction). Up to
    :data:`GTH_HITTING_STATES` transient states the solve is Gaussian elimination in the
    Grassmann–Taksar–Heyman form (each pivot is the eliminated state's flow to the target plus
    its flow to the states not yet eliminated, a sum of non-negative terms; Heyman and O'Leary,
    "Overcoming instability in computing the fundamental matrix for a Markov chain", SIAM J.
    Matrix Anal. Appl. 19, 1998), so ``h`` keeps its relative accuracy on nearly reducible
    chains, where hitting times reach ``1e27`` and a pivoted LU returns garbage (negative
    times); above it, a sparse LU.

    Returns
    -------
    numpy.ndarray, shape (S,)
        ``h``, zero on ``A``.

    Raises
    ------
    InvalidParameterError
        If the mask is not boolean with one entry per state.
    BasinError
        If the target is empty (it is never hit).
    """
    Pc = sp.csr_matrix(P, dtype=np.float64)
    S = Pc.shape[0]
    target = check_mask(target_mask, S, allow_full=True)
    h = np.zeros(S, dtype=np.float64)
    rest = ~target
    if not rest.any():
        return h
    off = Pc - sp.diags(Pc.diagonal())
    if int(rest.sum()) <= GTH_HITTING_STATES:
        h[rest] = _gth_hitting_times(off[rest][:, rest].toarray(),
                                     np.asarray(off[rest][:, target].sum(axis=1)).ravel())
        return h
    leave = np.asarray(off.sum(axis=1)).ravel()  # 1 - P(x, x), without a subtraction
    A = sp.diags(leave[rest]) - off[rest][:, rest]
    h[rest] = spla.spsolve(sp.csc_matrix(A), np.ones(int(rest.sum())))
    return h


#: Largest number of transient states whose hitting times are solved densely by GTH elimination.
GTH_HITTING_STATES = 1024


def _gth_hitting_times(W: np.ndarray, exit_rate: np.ndarray) -> np.ndarray:
    """Solve ``(diag(exit_rate + W 1) - W) h = 1`` by elimination without subtractions.

    ``W``: the transition probabilities among the transient states (zero diagonal);
    ``exit_rate``: each state's probability of stepping into the target. Eliminating state
    ``k`` reroutes the flow through it (``W[i, j] += W[i, k] W[k, j] / pivot_k``, likewise the
    exit rates and the right-hand side), and every pivot is recomputed as a sum of the
    non-negative remaining rates (Grassmann–Taksar–Heyman).
    """
    W, r = W.copy(), exit_rate.astype(np.float64).copy()
    m = W.shape[0]
    b = np.ones(m)
    pivot = np.empty(m)
    for k in range(m):
        pivot[k] = r[k] + W[k, k + 1:].sum()
        if pivot[k] <= 0.0:
            raise BasinError("the target cannot be reached from some state: its hitting time "
                             "is infinite; choose a target every state leads to")
        f = W[k + 1:, k] / pivot[k]
        W[k + 1:, k + 1:] += np.outer(f, W[k, k + 1:])
        r[k + 1:] += f * r[k]
        b[k + 1:] += f * b[k]
        idx = np.arange(k + 1, m)
        W[idx, idx] = 0.0  # a flow back to itself is a self-loop: it leaves the pivot unchanged
    h = np.empty(m)
    for k in range(m - 1, -1, -1):
        h[k] = (b[k] + W[k, k + 1:] @ h[k + 1:]) / pivot[k]
    return h


def hitting_probability_within(P: Any, target_mask: Any, horizon: int) -> np.ndarray:
    """Exact ``P_x(X_t in A for some 0 <= t <= horizon)`` for every start ``x``.

    The chain stopped on ``A`` (its rows replaced by the identity) carries the answer:
    ``u_0 = 1_A`` and ``u_{s+1} = 1_A + 1_{A^c} P u_s`` give ``u_horizon``. Computed by
    ``horizon`` sparse matrix-vector products, or by repeated squaring of the dense stopped
    matrix (``log2(horizon)`` products) when that is cheaper (long horizons on small chains).

    Parameters
    ----------
    P : sparse matrix or array_like, shape (S, S)
        Transition matrix.
    target_mask : array of bool, shape (S,)
        The target set ``A`` (non-empty).
    horizon : int
        Number of steps, >= 0.

    Returns
    -------
    numpy.ndarray, shape (S,)

    Raises
    ------
    InvalidParameterError, BasinError
        If the mask is malformed or empty, or ``horizon`` is not an integer >= 0.

    Examples
    --------
    >>> P = np.array([[0.5, 0.5], [0.0, 1.0]])  # from state 0, state 1 is hit w.p. 1 - 2^-t
    >>> hitting_probability_within(P, np.array([False, True]), 3).tolist()
    [0.875, 1.0]
    """
    Pc = sp.csr_matrix(P, dtype=np.float64)
    S = Pc.shape[0]
    target = check_mask(target_mask, S, allow_full=True)
    horizon = check_nonnegative_int(horizon, "horizon")
    if horizon * max(Pc.nnz, 1) <= S**3 * max(horizon.bit_length(), 1):
        u = target.astype(np.float64)
        for _ in range(horizon):
            u = np.where(target, 1.0, Pc @ u)
        return u
    stopped = Pc.toarray()
    stopped[target] = 0.0
    stopped[target, np.flatnonzero(target)] = 1.0
    power = np.linalg.matrix_power(stopped, horizon)
    return np.clip(power[:, target].sum(axis=1), 0.0, 1.0)


__all__ = [
    "Bottleneck",
    "bottleneck",
    "BOTTLENECK_MAX_STATES",
    "check_mask",
    "conductance",
    "CountBasin",
    "escape_probabilities",
    "GTH_HITTING_STATES",
    "expected_hitting_times",
    "hitting_probability_within",
    "log_conductance",
    "NamedMask",
]
