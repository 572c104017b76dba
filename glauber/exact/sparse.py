"""The sparse path of the exact chain: kernels of up to ``2**20`` states (more where memory allows).

Dense algebra stops at 4096 states (an ``S x S`` float64 matrix per power). A Glauber kernel has
only ``n (q - 1) + 1`` non-zeros per row, so everything that needs one product with ``P`` per
step (a stationary law, a Lanczos gap, the two trajectories of a monotone coupling) scales
linearly in ``S``. This module holds what the sparse path builds:

* :func:`glauber_csr` and :func:`symmetrised_csr`: ``P`` and its ``sqrt(pi)``-symmetrisation
  ``A(x, y) = sqrt(P(x, y) P(y, x))`` in CSR, built vectorised site by site (no ``S x S``
  index arrays: a pass of length ``S`` per site and token offset);
* :func:`fiber_defect`: detailed balance checked site by site. For a move at site ``i`` the
  balance ``pi(x) P(x, x^(i->a)) = pi(x^(i->a)) P(x^(i->a), x)`` says that
  ``log pi(x) - log p_i(x_i | x_{-i})`` is constant on each fibre ``{x' : x'_{-i} = x_{-i}}``;
  the largest spread over the fibres is the flow defect of
  :func:`glauber.theory.kernels.flow_defect` (``-expm1(-spread)``) without forming the
  ``n (q-1) S`` move arrays;
* :func:`joint_stationary`: the stationary law from the model's exact log-joint
  (``log_weight``, at ``tau = 1``; ``pi_tau ∝ exp(log_weight / tau)``), accepted only if it
  satisfies detailed balance with the kernel to :data:`~glauber.theory.kernels.REVERSIBILITY_RTOL`:
  then it *is* the stationary law (a reversible measure is stationary), exact to relative
  precision on every entry, however small;
* :func:`solve_stationary`: otherwise a sparse solve
  (:func:`glauber.exact.stationary.stationary_distribution`) whose accuracy is stated by
  :func:`stationary_tv_error_bound` from its residual.

Sizes: :func:`sparse_bytes_per_state` is the planned peak of the path per state;
:func:`check_sparse_size` refuses a chain over :data:`SPARSE_MAX_STATES` (or over the memory
available) and says what would fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from glauber.core.arrays import logsumexp
from glauber.core.enumeration import check_state_space, radix_weights
from glauber.core.memory import available_memory, human_bytes
from glauber.errors import InvalidParameterError, StateSpaceTooLargeError
from glauber.exact.stationary import (
    StationaryMethod,
    StationarySolution,
    stationary_distribution,
    stationary_residual,
)
from glauber.theory.kernels import REVERSIBILITY_RTOL

#: Default largest chain of :class:`~glauber.exact.chain.ExactChain` (the sparse path):
#: ``2**20`` states need about 3 GiB at ``n = 20, q = 2`` (docs/performance.md).
SPARSE_MAX_STATES = 2**20

#: Lanczos basis vectors the planned peak allows for (see :func:`sparse_bytes_per_state`).
_LANCZOS_VECTORS = 48


def sparse_bytes_per_state(n: int, q: int) -> int:
    """Planned peak bytes per state of the sparse path (an upper estimate, measured in
    ``benchmarks/exact_scale.py``).

    The score table, log-conditionals and conditionals (``3 x 8 n q``), the states
    (``8 n``), the two CSR matrices (``2 x 12 (n (q - 1) + 1)``), one site's temporaries while
    they are built (``6 x 8``), and the Lanczos basis (``8 x 48``).
    """
    row = n * (q - 1) + 1
    return 24 * n * q + 8 * n + 24 * row + 48 + 8 * _LANCZOS_VECTORS


def check_sparse_size(n: int, q: int, max_states: int) -> int:
    """Return ``q**n`` if the sparse path may take it; else say which limit and what would fit.

    Parameters
    ----------
    n, q : int
        Sites and vocabulary size.
    max_states : int
        The limit (``ExactChain``'s ``max_states``, by default :data:`SPARSE_MAX_STATES`).

    Raises
    ------
    StateSpaceTooLargeError
        If ``q**n > max_states`` (the message names the limit, the memory the chain would need,
        the memory available, and the largest ``n`` that fits at this ``q``).
    InvalidParameterError
        If ``max_states`` is not an integer >= 1.
    """
    try:
        return check_state_space(n, q, max_states)
    except StateSpaceTooLargeError as exc:
        size = int(q) ** int(n)
        fits = max(k for k in range(0, int(n) + 1) if int(q) ** k <= max(max_states, 1))
        need = size * sparse_bytes_per_state(n, q)
        free = available_memory()
        which = ("the sparse limit of the exact chain, SPARSE_MAX_STATES = 2**20"
                 if max_states == SPARSE_MAX_STATES else f"max_states = {max_states}")
        raise StateSpaceTooLargeError(
            f"{exc} (the limit is {which}). Within it, n <= {fits} sites fit at q = {q}. This "
            f"chain would need about {human_bytes(need)} on the sparse path"
            + (f" ({human_bytes(free)} available now)" if free is not None else "")
            + "; a larger chain fits only if that memory is there. For symmetric models, "
            "glauber.exact.symmetry.orbit_chain lumps the chain by its automorphisms."
        ) from None


# ------------------------------------------------------------------------------ the kernel
def _digit(index: np.ndarray, weights: np.ndarray, q: int, i: int) -> np.ndarray:
    """Token at site ``i`` of every state index (a shift and a mask when ``q`` is 2)."""
    if q == 2:
        return (index >> (len(weights) - 1 - i)) & 1
    return (index // weights[i]) % q


def _site_moves(digit: np.ndarray, index: np.ndarray, weight: int, q: int, offset: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Token ``a = (x_i + offset) mod q`` and the index of ``x^(i -> a)`` for every state."""
    token = digit + offset
    token -= q * (token >= q)
    return token, index + (token - digit) * weight


def _csr_rows(values: np.ndarray, n: int, q: int, symmetric: bool,
              log_values: np.ndarray | None = None
              ) -> tuple[sp.csr_matrix, sp.csr_matrix | None]:
    """CSR with ``n (q - 1) + 1`` entries per row from ``values[i, x, a]`` (probabilities, or
    log-probabilities with ``symmetric``; see :func:`glauber_csr` and :func:`symmetrised_csr`).
    With ``log_values`` the symmetrisation is built in the same pass and shares the index
    arrays (the second matrix returned; None otherwise).

    Columns are written in sorted order directly: the entry of ``x^(i -> a)`` sits at column
    ``x + (a - x_i) q^(n-1-i)``, and since ``|a - x_i| < q`` the offsets of site ``i`` dominate
    those of later sites, so a row reads: site 0's tokens below ``x_0``, ..., site ``n-1``'s
    below ``x_{n-1}``, the diagonal, site ``n-1``'s tokens above ``x_{n-1}``, ..., site 0's above.
    The slot of each entry follows from prefix sums of the digits.
    """
    S = values.shape[1]
    k = n * (q - 1) + 1
    idx_dtype = np.int32 if S * k < 2**31 else np.int64
    data = np.empty(S * k, dtype=np.float64)
    sym = None if log_values is None else np.empty(S * k, dtype=np.float64)
    cols = np.empty(S * k, dtype=idx_dtype)
    index = np.arange(S, dtype=np.int64)
    weights = radix_weights(n, q)
    digits_total = np.zeros(S, dtype=np.int64)
    for i in range(n):
        digits_total += _digit(index, weights, q, i)
    row_start = index * k
    below = np.zeros(S, dtype=np.int64)  # sum of the digits of the sites before i
    diag = np.zeros(S, dtype=np.float64)
    for i in range(n):
        digit = _digit(index, weights, q, i)
        own = np.take_along_axis(values[i], digit[:, None], axis=1)[:, 0]
        diag += np.exp(own) if symmetric else own
        log_own = (None if log_values is None else
                   np.take_along_axis(log_values[i], digit[:, None], axis=1)[:, 0])
        above = (n - 1 - i) * (q - 1) - (digits_total - below - digit)  # later sites' tokens up
        for offset in range(1, q):
            token, target = _site_moves(digit, index, int(weights[i]), q, offset)
            other = np.take_along_axis(values[i], token[:, None], axis=1)[:, 0]
            slot = np.where(token < digit, below + token,
                            digits_total + 1 + above + (token - digit - 1))
            flat = row_start + slot
            data[flat] = np.exp(0.5 * (other + own)) if symmetric else other
            cols[flat] = target
            if sym is not None:
                log_other = np.take_along_axis(log_values[i], token[:, None], axis=1)[:, 0]
                sym[flat] = np.exp(0.5 * (log_other + log_own))
        below += digit
    diagonal = row_start + digits_total
    data[diagonal] = diag
    cols[diagonal] = index
    data /= n
    indptr = np.arange(0, S * k + 1, k, dtype=idx_dtype)
    out = sp.csr_matrix((data, cols, indptr), shape=(S, S))
    out.has_sorted_indices = True
    if sym is None:
        return out, None
    sym[diagonal] = diag  # the diagonal is P(x, x)
    sym /= n
    pair = sp.csr_matrix((sym, cols, indptr), shape=(S, S))
    pair.has_sorted_indices = True
    return out, pair


def glauber_csr(conditionals: np.ndarray) -> sp.csr_matrix:
    """The Glauber kernel ``P(x, y) = (1/n) sum_i 1{x_{-i} = y_{-i}} p_i(y_i | x_{-i})`` in CSR.

    Row ``x`` holds the diagonal ``(1/n) sum_i p_i(x_i | x_{-i})`` (a sum of non-negative terms,
    never ``1 -`` the rest) and one entry per move ``x -> x^(i -> a)``, ``a != x_i``; columns
    sorted. Built site by site with ``O(S)`` temporaries.

    Parameters
    ----------
    conditionals : numpy.ndarray, shape (n, q**n, q)
        ``p_i(a | x_{-i})`` for every site and state (mixed radix, site 0 most significant).

    Returns
    -------
    scipy.sparse.csr_matrix, shape (q**n, q**n)

    Examples
    --------
    >>> p = np.full((2, 4, 2), 0.5)  # two independent fair coins
    >>> glauber_csr(p).toarray()[0].tolist()  # from (0, 0): stay 1/2, each flip 1/4
    [0.5, 0.25, 0.25, 0.0]
    """
    n, S, q = conditionals.shape
    if q ** n != S:
        raise InvalidParameterError(f"conditionals must be [n, q**n, q], got {conditionals.shape}")
    return _csr_rows(conditionals, n, q, symmetric=False)[0]


def kernel_and_symmetrisation(conditionals: np.ndarray, log_conditionals: np.ndarray
                              ) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """:func:`glauber_csr` and :func:`symmetrised_csr` in one pass, sharing their index arrays
    (the same pattern: a move and its reverse are both moves)."""
    n, S, q = conditionals.shape
    P, A = _csr_rows(conditionals, n, q, False, log_conditionals)
    return P, A


def symmetrised_csr(log_conditionals: np.ndarray) -> sp.csr_matrix:
    """``A(x, y) = sqrt(P(x, y) P(y, x))`` (off the diagonal), ``A(x, x) = P(x, x)``, in CSR.

    For a chain reversible with respect to ``pi``, ``A = D^(1/2) P D^(-1/2)`` with
    ``D = diag(pi)`` (detailed balance removes ``pi``: LPW 2nd ed., Section 12.1): a symmetric
    matrix with the spectrum of ``P`` and top eigenvector ``sqrt(pi)``. Off-diagonal entries are
    ``exp((log p_i(a | x_{-i}) + log p_i(x_i | x_{-i})) / 2) / n``, exactly symmetric in
    floating point (the same two logarithms, added in either order) and relatively accurate
    however small.

    Parameters
    ----------
    log_conditionals : numpy.ndarray, shape (n, q**n, q)

    Returns
    -------
    scipy.sparse.csr_matrix, shape (q**n, q**n)
    """
    n, S, q = log_conditionals.shape
    if q ** n != S:
        raise InvalidParameterError(
            f"log_conditionals must be [n, q**n, q], got {log_conditionals.shape}")
    return _csr_rows(log_conditionals, n, q, symmetric=True)[0]


# ------------------------------------------------------------------------- detailed balance
def fiber_defect(log_pi: np.ndarray, log_conditionals: np.ndarray) -> float:
    """Largest relative detailed-balance defect of ``pi`` against the Glauber kernel.

    For each site ``i`` and fibre ``F = {x : x_{-i} fixed}``, ``pi`` is reversible on the moves
    inside ``F`` iff ``v(x) = log pi(x) - log p_i(x_i | x_{-i})`` is constant on ``F``; the
    flow defect of a pair ``x, y`` in ``F`` is ``-expm1(-|v(x) - v(y)|)``
    (:func:`glauber.theory.kernels.flow_defect`), largest at the fibre's spread ``max v - min v``.

    Parameters
    ----------
    log_pi : numpy.ndarray, shape (q**n,)
        A log-measure (unnormalised is fine).
    log_conditionals : numpy.ndarray, shape (n, q**n, q)

    Returns
    -------
    float
        ``max`` over pairs of ``|F - F'| / max(F, F')``; 0 for a reversible measure.

    Examples
    --------
    >>> lp = np.log(np.full((2, 4, 2), 0.5))
    >>> fiber_defect(np.zeros(4), lp)  # uniform law, fair coins: reversible
    0.0
    """
    n, S, q = log_conditionals.shape
    worst = 0.0
    index = np.arange(S, dtype=np.int64)
    weights = radix_weights(n, q)
    for i in range(n):
        digit = _digit(index, weights, q, i)
        v = log_pi - np.take_along_axis(log_conditionals[i], digit[:, None], axis=1)[:, 0]
        fibres = v.reshape(q**i, q, S // q ** (i + 1))
        spread = fibres.max(axis=1) - fibres.min(axis=1)
        worst = max(worst, float(spread.max()))
    return float(-np.expm1(-worst))


# --------------------------------------------------------------------------- stationary law
@dataclass(frozen=True)
class SparseStationary:
    """A stationary law of the sparse path and how it was obtained.

    Attributes
    ----------
    log_pi : numpy.ndarray
        ``log pi`` (normalised).
    solution : StationarySolution
        ``pi`` with its method (``"joint"``, ``"sparse"`` or ``"iterative"``), residual
        ``||pi P - pi||_1`` and clipped mass.
    defect : float or None
        Detailed-balance defect of the law (:func:`fiber_defect`); ``None`` when not checked.
    accuracy : str
        What is guaranteed about ``pi``.
    """

    log_pi: np.ndarray
    solution: StationarySolution
    defect: float | None
    accuracy: str


def joint_log_stationary(model: Any, states: np.ndarray, tau: float) -> np.ndarray | None:
    """``log pi_tau = log_weight / tau - logsumexp(.)`` from the model's exact log-joint, or
    None when the model has no ``log_weight`` (see the protocol's optional attributes in
    docs/architecture.md)."""
    log_weight = getattr(model, "log_weight", None)
    if not callable(log_weight):
        return None
    w = np.asarray(log_weight(states), dtype=np.float64) / tau
    if w.shape != (states.shape[0],) or not np.isfinite(w).all():
        return None
    return w - logsumexp(w)


def joint_stationary(model: Any, states: np.ndarray, tau: float, log_conditionals: np.ndarray,
                     P: sp.csr_matrix, rtol: float = REVERSIBILITY_RTOL
                     ) -> SparseStationary | None:
    """The stationary law from the model's log-joint, if it is reversible for the kernel.

    Accepted when :func:`fiber_defect` is at most ``rtol`` (see :func:`balanced_stationary`).
    Returns None when the model has no joint or the joint is not in balance with the kernel
    (the caller then solves).
    """
    log_pi = joint_log_stationary(model, states, tau)
    if log_pi is None:
        return None
    return balanced_stationary(log_pi, fiber_defect(log_pi, log_conditionals), P,
                               "the model's log-joint", rtol)


def balanced_stationary(log_pi: np.ndarray, defect: float, P: sp.csr_matrix, source: str,
                        rtol: float = REVERSIBILITY_RTOL) -> SparseStationary | None:
    """A closed-form law as the stationary law, if it is in detailed balance with ``P``.

    A measure in detailed balance with ``P`` is stationary (``sum_x pi(x) P(x, y) =
    sum_x pi(y) P(y, x) = pi(y)``), so a normalised ``log_pi`` whose detailed-balance
    ``defect`` (a :func:`~glauber.theory.kernels.flow_defect`) is at most ``rtol`` is the
    stationary law, to the relative precision of ``log_pi`` on every entry. None above ``rtol``.
    ``source`` names the law in the accuracy statement.
    """
    if defect > rtol:
        return None
    pi = np.exp(log_pi)
    solution = StationarySolution(pi=pi, method="joint", residual_l1=stationary_residual(P, pi),
                                  clipped_mass=0.0)
    return SparseStationary(
        log_pi=log_pi, solution=solution, defect=defect,
        accuracy=(f"{source}, in detailed balance with the kernel to relative {defect:.1e}: "
                  "exact to relative precision on every entry"))


def solve_stationary(P: sp.csr_matrix, log_conditionals: np.ndarray,
                     method: StationaryMethod = "auto", tol: float = 1e-9) -> SparseStationary:
    """The stationary law by a sparse solve
    (:func:`~glauber.exact.stationary.stationary_distribution`).

    Normwise accurate only: ``||pi~ - pi||_TV <= 2 ||r||_1 t_mix(1/4)`` with ``r`` the
    residual (:func:`stationary_tv_error_bound`); small entries carry no relative accuracy.

    Raises
    ------
    ConvergenceError
        If the solve misses its residual tolerance.
    """
    solution = stationary_distribution(P, method, tol)
    with np.errstate(divide="ignore"):
        log_pi = np.log(solution.pi)
    return SparseStationary(
        log_pi=log_pi, solution=solution,
        defect=fiber_defect(log_pi, log_conditionals) if np.isfinite(log_pi).all() else None,
        accuracy=(f"a sparse {solution.method} solve with ||pi P - pi||_1 = "
                  f"{solution.residual_l1:.1e}: normwise, ||pi~ - pi||_TV <= 2 ||r||_1 "
                  "t_mix(1/4) (stationary_tv_error_bound); entries below the residual carry no "
                  "relative accuracy"))


def stationary_tv_error_bound(residual_l1: float, tmix_upper: float) -> float:
    """``||pi~ - pi||_TV <= 2 ||pi~ P - pi~||_1 t_mix(1/4)`` for a probability vector ``pi~``.

    With ``r = pi~ P - pi~`` (``r 1 = 0``) and ``e = pi~ - pi``: ``e (I - P) = -r`` and
    ``e P^m -> 0``, so ``e = -sum_{k >= 0} r P^k`` and, as ``r P^k = r (P^k - 1 pi)``,
    ``||e||_1 <= ||r||_1 sum_k 2 d(k)``. Submultiplicativity (LPW 2nd ed., Lemma 4.11 and
    (4.24)) gives ``d(k) <= dbar(t)^floor(k/t) <= 2^-floor(k/t)`` at ``t = t_mix(1/4)``, so
    ``sum_k d(k) <= 2 t`` and ``||e||_TV = ||e||_1 / 2 <= 2 ||r||_1 t``.

    Parameters
    ----------
    residual_l1 : float
        ``||pi~ P - pi~||_1``.
    tmix_upper : float
        An upper bound on ``t_mix(1/4)`` (``inf`` gives ``inf``).

    Examples
    --------
    >>> stationary_tv_error_bound(1e-12, 50)
    1e-10
    """
    if not (residual_l1 >= 0 and tmix_upper >= 0):
        raise InvalidParameterError("residual_l1 and tmix_upper must be >= 0")
    return math.inf if math.isinf(tmix_upper) else 2.0 * residual_l1 * float(tmix_upper)


__all__ = [
    "SPARSE_MAX_STATES",
    "SparseStationary",
    "balanced_stationary",
    "check_sparse_size",
    "fiber_defect",
    "glauber_csr",
    "joint_log_stationary",
    "joint_stationary",
    "kernel_and_symmetrisation",
    "solve_stationary",
    "sparse_bytes_per_state",
    "stationary_tv_error_bound",
    "symmetrised_csr",
]
