"""Stationary distributions of finite Markov chains: GTH (dense) and a sparse direct solve.

The Grassmann–Taksar–Heyman (GTH) algorithm is Gaussian elimination on ``I - P`` that never
subtracts: each pivot ``1 - P(k, k)`` of the reduced chain is replaced by the sum of the
off-diagonal entries of its row, so every intermediate is a sum of products of non-negative
numbers and the result has small *componentwise relative* error, even for stationary entries
of order ``1e-40`` (low-temperature Gibbs chains) and for nearly reducible chains where LU and
eigen-solvers fail (QuantEcon.jl issue #75). Reference: Grassmann, Taksar and Heyman,
"Regenerative analysis and steady state distributions for Markov chains", Oper. Res. 33 (1985);
O'Cinneide, "Entrywise perturbation theory and error analysis for Markov chains", Numer. Math.
65 (1993) proves the entrywise relative accuracy. :func:`gth_stationary_reference` follows
QuantEcon.py's ``gth_solve`` with the inner update vectorised (``S`` memory-bound rank-1 updates:
about 40 s at ``2**12`` states on two cores); :func:`gth_stationary` performs the same
eliminations with delayed, blocked Schur-complement updates (one matrix product per block of
states, as in block LU, Golub and Van Loan, *Matrix Computations*, 4th ed., Section 3.2), a few
seconds at ``2**12`` states. Both are free of subtractions, so the blocked form keeps the
entrywise relative accuracy.

The sparse direct and Krylov solves are for chains too large for a dense ``O(S^3)`` method: they
are only *normwise* accurate (residual ``||pi P - pi||_1`` checked), not accurate to relative
precision on tiny entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from glauber.core.arrays import logsumexp
from glauber.core.validation import check_positive_int
from glauber.errors import ConvergenceError, InvalidParameterError, UnderflowError

#: Above this many states ``method="auto"`` uses the sparse direct solve instead of dense GTH
#: (blocked GTH needs ``8 S^2`` bytes and about ``S^3 / 3`` multiply-adds: a few seconds and
#: 128 MiB at 4096 states).
GTH_MAX_STATES = 4096
#: States eliminated per block by :func:`gth_stationary` before the delayed matrix-product update.
GTH_BLOCK_SIZE = 128
#: Above this many states ``method="auto"`` uses the Krylov solve instead of the direct one.
SPARSE_DIRECT_MAX_STATES = 8192
#: Largest chain for :func:`log_gth_stationary` (``S^3 / 3`` ``logaddexp`` calls, unblocked).
LOG_GTH_MAX_STATES = 1024
#: A float64 GTH law whose entries are all at least this is trusted entrywise: an underflowed
#: intermediate (below 2.2e-308) can only move an entry by a relative ``S^2 1e-308 / 1e-200``.
#: Smaller entries are recomputed in log space (:func:`log_gth_stationary`).
TRUSTED_MIN_PROBABILITY = 1e-200

StationaryMethod = Literal["auto", "gth", "sparse", "iterative"]


@dataclass(frozen=True)
class StationarySolution:
    """A stationary distribution with its diagnostics.

    Attributes
    ----------
    pi : numpy.ndarray
        The stationary distribution (non-negative, sums to 1).
    method : str
        ``"gth"``, ``"sparse"`` or ``"iterative"``.
    residual_l1 : float
        ``||pi P - pi||_1`` of the returned ``pi``.
    clipped_mass : float
        Total negative mass set to 0 before renormalising (always 0 for GTH, whose arithmetic
        has no subtractions).
    """

    pi: np.ndarray
    method: str
    residual_l1: float
    clipped_mass: float


def _check_square(P: np.ndarray) -> None:
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] < 1:
        raise InvalidParameterError(
            f"a transition matrix must be square [S, S] with S >= 1, got shape {P.shape}"
        )


def _checked_dense(P: np.ndarray) -> np.ndarray:
    """A float64 copy of ``P`` (the elimination works in place), checked square, finite, >= 0."""
    A = np.array(P, dtype=np.float64)
    _check_square(A)
    if not np.isfinite(A).all() or (A < 0).any():
        raise InvalidParameterError(
            "a transition matrix must have finite non-negative entries; check the conditionals"
        )
    return A


def _gth_pivot(A: np.ndarray, k: int) -> float:
    """``1 - A[k, k]`` of the censored chain on ``{0..k}``: row ``k``'s sum over ``0..k-1``."""
    scale = float(A[k, :k].sum())  # no subtraction: the diagonal is never read
    if scale <= 0.0:
        raise ConvergenceError(
            f"GTH: state {k} cannot reach states 0..{k - 1}; the chain is reducible and has no "
            "unique stationary distribution (are all conditionals positive? Proposition 1)"
        )
    return scale


#: What the eliminations and the back substitution say when ``pi`` leaves the float64 range.
_OVERFLOW = ("GTH: the ratios pi(x) / pi(0) overflow float64 (stationary probabilities span more "
             "than 1e308); use log_gth_stationary (ExactChain.log_stationary) instead")


def _divide_by_pivot(A: np.ndarray, k: int) -> None:
    """``A[:k, k] /= s_k`` (the ratios ``P(j, k) / s_k`` of the censored chain), checked.

    An entry that overflows makes ``x_k = sum_j x_j A[j, k]`` infinite in the back substitution
    (every ``x_j > 0`` in an irreducible chain), so it is raised here, before the rank-1 update
    turns ``inf * 0`` into NaN. The updates themselves cannot overflow: ``A[j, k] A[k, i] / s_k
    <= A[j, k]`` because ``A[k, i] <= s_k``.

    Raises
    ------
    UnderflowError
        If a ratio overflows float64.
    """
    with np.errstate(over="ignore"):
        A[:k, k] /= _gth_pivot(A, k)
    if not np.isfinite(A[:k, k]).all():
        raise UnderflowError(_OVERFLOW)


def _gth_back_substitution(A: np.ndarray) -> np.ndarray:
    """``pi`` from the eliminated matrix: ``x_0 = 1``, ``x_k = sum_{j<k} x_j A[j, k]``, normed."""
    S = A.shape[0]
    columns = np.ascontiguousarray(A.T)  # row k of this holds column k of A
    x = np.zeros(S, dtype=np.float64)
    x[0] = 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(1, S):
            x[k] = columns[k, :k] @ x[:k]
        total = x.sum()
    if not np.isfinite(total):
        raise UnderflowError(_OVERFLOW)
    return x / total


def gth_stationary_reference(P: np.ndarray) -> np.ndarray:
    """Stationary distribution by the plain (unblocked) GTH algorithm: the reference.

    State ``k = S-1, ..., 1`` is folded into states ``0..k-1`` by one rank-1 update of the
    leading ``k x k`` block (the censored chain), then ``pi`` is back-substituted (Grassmann,
    Taksar and Heyman 1985). ``O(S^3)`` memory-bound work: use :func:`gth_stationary`, which
    performs the same eliminations blocked, except as an oracle for it.

    Parameters, Returns and Raises as in :func:`gth_stationary`.

    Examples
    --------
    >>> a = 1e-17  # LU gives [0, 1] here (QuantEcon.jl PR #23); the exact answer is [1/3, 2/3]
    >>> gth_stationary_reference([[1 - a, a], [a / 2, 1 - a / 2]]).round(12).tolist()
    [0.333333333333, 0.666666666667]
    """
    A = _checked_dense(P)
    for k in range(A.shape[0] - 1, 0, -1):
        _divide_by_pivot(A, k)
        A[:k, :k] += np.outer(A[:k, k], A[k, :k])
    return _gth_back_substitution(A)


def gth_stationary(P: np.ndarray, block_size: int = GTH_BLOCK_SIZE) -> np.ndarray:
    """Stationary distribution of an irreducible stochastic matrix by blocked GTH.

    The eliminations of :func:`gth_stationary_reference` (fold state ``k`` into ``0..k-1``:
    ``A[:k, k] /= s_k``, ``A[:k, :k] += A[:k, k] A[k, :k]`` with ``s_k = sum_{j<k} A[k, j]``) are
    grouped into blocks ``K = [j0, j1)`` of ``block_size`` states, last block first. Inside a
    block they run one by one but touch only the block's rows (all columns ``< k``) and the
    remaining states' entries in the block's columns; the remaining leading block
    ``R = [0, j0)`` then receives all of them at once,
    ``A[R, R] += A[R, K] @ A[K, R]``, because row ``k`` and column ``k`` are final once state
    ``k`` is eliminated (the update of ``A[R, R]`` by state ``k`` is their outer product, and no
    elimination inside the block reads ``A[R, R]``). In exact arithmetic this equals the
    sequential algorithm; in floating point only the order of the sums of non-negative terms
    differs, so there is still no cancellation and the componentwise relative accuracy of GTH
    (O'Cinneide 1993) is kept. The block product is one BLAS-3 call, so ``2**12`` states take a
    few seconds instead of about 40.

    Only the off-diagonal entries of ``P`` are used (the diagonal is implied by the row sums),
    so a diagonal entry ``1 - 1e-17`` that rounds to ``1.0`` loses nothing.

    Parameters
    ----------
    P : array_like, shape (S, S)
        Dense row-stochastic matrix of an irreducible chain; entries must be non-negative.
    block_size : int
        States eliminated before each delayed update (``S <= block_size`` is the plain
        algorithm). Changes the speed and the rounding, not the accuracy.

    Returns
    -------
    numpy.ndarray, shape (S,)
        ``pi`` with ``pi P = pi`` and ``sum(pi) = 1``, accurate to a small multiple of machine
        precision *relative to each entry*.

    Raises
    ------
    InvalidParameterError
        If ``P`` is not square or has negative or non-finite entries, or ``block_size`` is not a
        positive integer.
    ConvergenceError
        If the chain is reducible (a reduced state has no way back to the states eliminated
        after it), so the stationary distribution is not unique.
    UnderflowError
        If the stationary probabilities span more than the float64 range (use
        :func:`log_gth_stationary`).

    Examples
    --------
    >>> a = 1e-17  # LU gives [0, 1] here (QuantEcon.jl PR #23); the exact answer is [1/3, 2/3]
    >>> gth_stationary([[1 - a, a], [a / 2, 1 - a / 2]]).round(12).tolist()
    [0.333333333333, 0.666666666667]
    """
    check_positive_int(block_size, "block_size")
    A = _checked_dense(P)
    S = A.shape[0]
    for j1 in range(S, 1, -block_size):
        j0 = max(j1 - block_size, 0)
        for k in range(j1 - 1, max(j0, 1) - 1, -1):
            _divide_by_pivot(A, k)
            A[j0:k, :k] += np.outer(A[j0:k, k], A[k, :k])  # the block's rows
            A[:j0, j0:k] += np.outer(A[:j0, k], A[k, j0:k])  # R's entries in the block's columns
        A[:j0, :j0] += A[:j0, j0:j1] @ A[j0:j1, :j0]  # all of the block's updates of R x R
    return _gth_back_substitution(A)


def log_gth_stationary(P: sp.spmatrix | np.ndarray, log_input: bool = False) -> np.ndarray:
    """``log pi`` of an irreducible chain by GTH carried out in log space (no entry underflows).

    The eliminations of :func:`gth_stationary_reference` on ``A = log P``: the pivot
    ``s_k = sum_{j<k} P[k, j]`` becomes a log-sum-exp, the column division a subtraction and the
    rank-1 update ``A[:k, :k] += A[:k, k] A[k, :k]`` a ``logaddexp`` with the outer sum. Every
    linear-space operation is a sum of products of non-negative numbers, so every log-space
    operation is a ``logaddexp`` or an addition of logarithms: no cancellation, and no
    underflow however small ``pi`` gets (``1e-392`` is ``-901.6``). Back substitution
    ``log x_k = logsumexp_{j<k}(log x_j + A[j, k])`` and ``log pi = log x - logsumexp(log x)``.
    Each log-space operation has an absolute error of a few ``u`` (a relative error of a few
    ``u`` on ``pi``), as in linear GTH (O'Cinneide 1993). ``O(S^3)`` ``logaddexp`` calls, unblocked:
    about a second at 512 states, so :data:`LOG_GTH_MAX_STATES` bounds its use.

    Parameters
    ----------
    P : sparse matrix or array_like, shape (S, S)
        Row-stochastic matrix of an irreducible chain (only off-diagonal entries are used), or
        its entrywise logarithm with ``log_input=True`` (``-inf`` for zeros).
    log_input : bool
        ``P`` holds ``log P``.

    Returns
    -------
    numpy.ndarray, shape (S,)
        ``log pi``, finite for an irreducible chain.

    Raises
    ------
    InvalidParameterError
        If ``P`` is not square, or holds negative or NaN entries (or ``+inf`` logarithms).
    ConvergenceError
        If the chain is reducible.

    Examples
    --------
    A birth-death chain ``0 <-> 1 <-> 2`` with ``pi_2 = pi_0 a^2 / (1 - a)``, about ``1e-600``:

    >>> a = 1e-300
    >>> lp = log_gth_stationary([[1 - a, a, 0], [1 - a, 0, a], [0, 1, 0]])
    >>> round(float(lp[2] / np.log(10)), 6)
    -600.0
    """
    dense = P.toarray() if sp.issparse(P) else np.array(P, dtype=np.float64)
    _check_square(dense)
    if log_input:
        if np.isnan(dense).any() or (dense == np.inf).any():
            raise InvalidParameterError("log P must hold finite logarithms or -inf for zeros")
        A = dense.astype(np.float64, copy=True)
    else:
        if not np.isfinite(dense).all() or (dense < 0).any():
            raise InvalidParameterError(
                "a transition matrix must have finite non-negative entries; check the "
                "conditionals"
            )
        with np.errstate(divide="ignore"):
            A = np.log(dense)
    S = A.shape[0]
    np.fill_diagonal(A, -np.inf)  # never read: the pivot is the off-diagonal row sum
    for k in range(S - 1, 0, -1):
        log_s = logsumexp(A[k, :k])
        if log_s == -np.inf:
            raise ConvergenceError(
                f"GTH: state {k} cannot reach states 0..{k - 1}; the chain is reducible and has "
                "no unique stationary distribution (are all conditionals positive? "
                "Proposition 1)"
            )
        A[:k, k] -= log_s
        np.logaddexp(A[:k, :k], A[:k, k][:, None] + A[k, :k][None, :], out=A[:k, :k])
    log_x = np.full(S, -np.inf)
    log_x[0] = 0.0
    for k in range(1, S):
        log_x[k] = logsumexp(log_x[:k] + A[:k, k])
    return log_x - logsumexp(log_x)


def log_stationary_distribution(
    P: sp.spmatrix | np.ndarray, method: StationaryMethod = "auto", tol: float = 1e-9
) -> np.ndarray:
    """``log pi``: log-space GTH up to :data:`LOG_GTH_MAX_STATES`, else ``log`` of a float64 law.

    ``"auto"`` and ``"gth"`` run :func:`log_gth_stationary` up to :data:`LOG_GTH_MAX_STATES`
    states. Above, or for ``"sparse"``/``"iterative"``, the float64 law of
    :func:`stationary_distribution` is taken, and refused if it has entries below
    :data:`TRUSTED_MIN_PROBABILITY` (where a float64 solve can lose them to underflow).

    Raises
    ------
    UnderflowError
        If the chain is too large for log-space GTH and its float64 law has entries below
        :data:`TRUSTED_MIN_PROBABILITY`.
    InvalidParameterError, ConvergenceError
        As :func:`stationary_distribution`.
    """
    S = np.shape(P)[0]
    if method in ("auto", "gth") and S <= LOG_GTH_MAX_STATES:
        return log_gth_stationary(P)
    pi = stationary_distribution(P, method, tol).pi
    if not (pi >= TRUSTED_MIN_PROBABILITY).all():
        raise UnderflowError(
            f"the stationary law of this {S}-state chain has entries below "
            f"{TRUSTED_MIN_PROBABILITY:g} (smallest {pi.min():.3g}), which float64 solves can "
            f"lose to underflow, and log-space GTH is limited to {LOG_GTH_MAX_STATES} states; "
            "use a smaller chain or a higher temperature"
        )
    return np.log(pi)


def stationary_residual(P: sp.spmatrix | np.ndarray, pi: np.ndarray) -> float:
    """``||pi P - pi||_1``, the L1 residual of the balance equations."""
    return float(np.abs(np.asarray(pi @ P).ravel() - pi).sum())


def _bordered_system(P: sp.csr_matrix) -> tuple[sp.csc_matrix, np.ndarray]:
    """``(P^T - I) pi = 0`` with the last equation replaced by ``sum(pi) = 1``."""
    S = P.shape[0]
    A = (P.T - sp.identity(S, format="csr")).tolil()
    A[S - 1, :] = np.ones(S)
    b = np.zeros(S)
    b[-1] = 1.0
    return A.tocsc(), b


def _checked_solution(
    x: np.ndarray, P: sp.csr_matrix, tol: float, method: str
) -> StationarySolution:
    """Clip rounding negatives, renormalise, and check residual and clipped mass against ``tol``."""
    if not np.isfinite(x).all() or x.sum() <= 0:
        raise ConvergenceError(
            f"{method} stationary solve returned no usable vector; the chain is probably "
            "reducible or too ill-conditioned: use method='gth' (dense) if it fits in memory"
        )
    clipped = float(np.clip(-x, 0.0, None).sum())
    x = np.clip(x, 0.0, None)
    x /= x.sum()
    residual = stationary_residual(P, x)
    if residual > tol or clipped > tol:
        raise ConvergenceError(
            f"{method} stationary solve is inaccurate: ||pi P - pi||_1 = {residual:.3g}, clipped "
            f"negative mass = {clipped:.3g}, tolerance {tol:.3g}; use method='gth' (dense, "
            "exact to relative precision) or 'sparse' (direct), or raise tol"
        )
    return StationarySolution(pi=x, method=method, residual_l1=residual, clipped_mass=clipped)


def sparse_stationary(P: sp.spmatrix | np.ndarray, tol: float = 1e-9) -> StationarySolution:
    """Stationary distribution by a sparse direct solve of the balance equations.

    Solves ``(P^T - I) pi = 0`` with the last equation replaced by ``sum(pi) = 1`` (SuperLU with a
    minimum-degree ordering on ``A^T + A``), clips rounding negatives to 0, renormalises and checks
    the residual. Normwise accurate only: entries far below ``tol`` carry no relative accuracy
    (use :func:`gth_stationary` for those). Fill-in grows fast on Glauber chains (a binary chain
    of ``2**13`` states factors in seconds, ``2**14`` in about half a minute).

    Parameters
    ----------
    P : sparse matrix or array_like, shape (S, S)
        Row-stochastic matrix of an irreducible chain.
    tol : float
        Largest acceptable ``||pi P - pi||_1`` and clipped negative mass.

    Returns
    -------
    StationarySolution

    Raises
    ------
    ConvergenceError
        If the system is singular (reducible chain), the residual exceeds ``tol``, or more than
        ``tol`` of negative mass had to be clipped.
    """
    Pc = sp.csr_matrix(P, dtype=np.float64)
    _check_square(Pc)
    A, b = _bordered_system(Pc)
    try:
        x = spla.splu(A, permc_spec="MMD_AT_PLUS_A").solve(b)
    except RuntimeError as exc:  # SuperLU reports an exactly singular factor this way
        raise ConvergenceError(
            f"sparse stationary solve failed ({exc}); the chain is probably reducible: check that "
            "all conditionals are positive (Proposition 1)"
        ) from exc
    return _checked_solution(x, Pc, tol, "sparse")


def iterative_stationary(P: sp.spmatrix | np.ndarray, tol: float = 1e-9) -> StationarySolution:
    """Stationary distribution by a Krylov solve of the bordered balance equations.

    Matrix-free BiCGSTAB on ``(P^T - I) pi = 0`` with the last equation replaced by
    ``sum(pi) = 1`` (LGMRES if BiCGSTAB stalls), then the same clipping and residual check as
    :func:`sparse_stationary`. Memory ``O(nnz(P))``, so it reaches ``2**16`` states where the
    direct factorisation fills in. Only the residual is guaranteed: the error in ``pi`` can be
    the residual times the chain's condition number (of the order of its relaxation time), and
    a reducible chain is not detected (it returns one of its stationary laws).

    Raises
    ------
    ConvergenceError
        If neither solver meets ``tol`` (try ``method="sparse"``).
    """
    Pc = sp.csr_matrix(P, dtype=np.float64)
    _check_square(Pc)
    S = Pc.shape[0]
    Pt = sp.csr_matrix(Pc.T)

    def bordered(v: np.ndarray) -> np.ndarray:
        out = v - Pt @ v
        out[-1] = v.sum()
        return out

    A = spla.LinearOperator((S, S), matvec=bordered, dtype=np.float64)
    b = np.zeros(S)
    b[-1] = 1.0
    start = np.full(S, 1.0 / S)
    failure: ConvergenceError | None = None
    # Iterate to near machine precision (a few more steps than tol needs, and far better relative
    # accuracy on small entries); only the residual check below decides success.
    for solver, maxiter in ((spla.bicgstab, 2000), (spla.lgmres, 300)):
        x, _ = solver(A, b, x0=start, rtol=1e-14, atol=0.0, maxiter=maxiter)
        try:
            return _checked_solution(x, Pc, tol, "iterative")
        except ConvergenceError as exc:
            failure = exc
    raise failure  # type: ignore[misc]


def stationary_distribution(
    P: sp.spmatrix | np.ndarray, method: StationaryMethod = "auto", tol: float = 1e-9
) -> StationarySolution:
    """Stationary distribution of an irreducible chain, by GTH, a sparse direct or a Krylov solve.

    Parameters
    ----------
    P : sparse matrix or array_like, shape (S, S)
        Row-stochastic matrix.
    method : {"auto", "gth", "sparse", "iterative"}
        ``"gth"``: :func:`gth_stationary` (dense blocked GTH, ``O(S^3)``, relative accuracy on
        every entry; a few seconds at 4096 states);
        ``"sparse"``: :func:`sparse_stationary`; ``"iterative"``: :func:`iterative_stationary`;
        ``"auto"``: GTH up to :data:`GTH_MAX_STATES` (4096) states; above, the Krylov solve
        (milliseconds on a well-conditioned chain, checked by its residual), falling back to the
        direct solve up to :data:`SPARSE_DIRECT_MAX_STATES` when the Krylov solve fails its
        check (the direct solve's fill-in costs minutes on dense-ish chains such as a window of
        three sites over 20 tokens).
    tol : float
        Residual tolerance of the sparse and iterative solves.

    Returns
    -------
    StationarySolution

    Raises
    ------
    InvalidParameterError
        If ``method`` is unknown.
    ConvergenceError
        See :func:`gth_stationary`, :func:`sparse_stationary` and :func:`iterative_stationary`.
    """
    if method not in ("auto", "gth", "sparse", "iterative"):
        raise InvalidParameterError(
            f"unknown stationary method {method!r}; use 'auto', 'gth', 'sparse' or 'iterative'"
        )
    S = np.shape(P)[0]
    if method == "auto":
        if S <= GTH_MAX_STATES:
            method = "gth"
        elif S > SPARSE_DIRECT_MAX_STATES:
            method = "iterative"
        else:
            try:
                return iterative_stationary(P, tol=tol)
            except ConvergenceError:
                method = "sparse"
    if method == "sparse":
        return sparse_stationary(P, tol=tol)
    if method == "iterative":
        return iterative_stationary(P, tol=tol)
    dense = P.toarray() if sp.issparse(P) else np.asarray(P, dtype=np.float64)
    pi = gth_stationary(dense)
    return StationarySolution(
        pi=pi, method="gth", residual_l1=stationary_residual(dense, pi), clipped_mass=0.0
    )


__all__ = [
    "GTH_BLOCK_SIZE",
    "GTH_MAX_STATES",
    "gth_stationary",
    "gth_stationary_reference",
    "iterative_stationary",
    "log_gth_stationary",
    "log_stationary_distribution",
    "SPARSE_DIRECT_MAX_STATES",
    "sparse_stationary",
    "stationary_distribution",
    "stationary_residual",
    "StationaryMethod",
    "StationarySolution",
]
