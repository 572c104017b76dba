"""Spectral gap, relaxation time and reversibility of a finite chain (dense, exact up to rounding).

For a chain reversible with respect to ``pi`` (Theorem 3: every compatible, e.g. Gibbs, model),
``D^(1/2) P D^(-1/2)`` (``D = diag(pi)``) is symmetric with entries ``sqrt(P(x, y) P(y, x))``:
detailed balance removes ``pi`` from the formula, so tiny stationary masses cost no accuracy.
We diagonalise the symmetric Laplacian ``L = I - D^(1/2) P D^(-1/2)`` whose diagonal
``sum_{y != x} P(x, y)`` is formed without a subtraction, so holding probabilities ``1 - 1e-20``
that round to 1 lose nothing. Eigenvalues carry an absolute error of about machine precision
times ``||L|| <= 2``: a gap below that has no relative accuracy, so such gaps are recomputed in
extended precision (mpmath) on small chains, and refused with :class:`PrecisionError` on large
ones (use :func:`mixing_time`, whose squaring keeps tiny transition probabilities, there).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import scipy.linalg
import scipy.sparse as sp

from glauber.errors import (
    InvalidParameterError,
    PrecisionError,
    StateSpaceTooLargeError,
)
from glauber.exact.mixing import MAX_DENSE_STATES
from glauber.theory.floating import SMALLEST_SUBNORMAL, round_down, round_up
from glauber.theory.kernels import REVERSIBILITY_RTOL, is_reversible

#: Relative accuracy required of a spectral gap before it is returned.
GAP_RTOL = 1e-6
#: Largest chain whose unresolved gap is recomputed with mpmath.
EXTENDED_MAX_STATES = 32
#: Most significant digits tried by the mpmath recomputation.
EXTENDED_MAX_DPS = 480

_U = 2.0**-53
_TINY = np.finfo(np.float64).tiny


def _dense(P: Any) -> np.ndarray:
    if np.shape(P)[0] > MAX_DENSE_STATES:
        raise StateSpaceTooLargeError(
            f"a dense eigen-decomposition of {np.shape(P)[0]} states exceeds the limit of "
            f"{MAX_DENSE_STATES}; use a smaller model"
        )
    return P.toarray() if sp.issparse(P) else np.asarray(P, dtype=np.float64)


def _laplacian(P: np.ndarray) -> np.ndarray:
    """``I - D^(1/2) P D^(-1/2)`` of a reversible ``P``: off-diagonal ``-sqrt(P(x, y) P(y, x))``."""
    off = P.copy()
    np.fill_diagonal(off, 0.0)
    product = off * off.T
    # sqrt(a) sqrt(b) where a b underflows (a, b ~ 1e-200); the plain form elsewhere
    L = -np.where(product >= _TINY, np.sqrt(product), np.sqrt(off) * np.sqrt(off.T))
    np.fill_diagonal(L, off.sum(axis=1))
    return L


def _laplacian_eigenvalues(P: np.ndarray) -> np.ndarray:
    """Eigenvalues (ascending) of ``I - D^(1/2) P D^(-1/2)`` for a reversible ``P``."""
    return np.linalg.eigvalsh(_laplacian(P))


def _moduli_without_unit(P: np.ndarray) -> np.ndarray:
    eig = np.linalg.eigvals(P)
    return np.abs(np.delete(eig, np.argmin(np.abs(eig - 1.0))))


def _float_gaps(dense: np.ndarray, reversible: bool) -> tuple[float, float, float]:
    """``(gap, absolute gap, error bound)`` in float64.

    The error bound is the backward-error estimate ``8 S u ||A||`` of a symmetric
    eigensolver (Weyl), times the eigenvalue condition number ``1 / |y^H x|`` of the
    eigenvalue that sets the gap for a non-symmetric ``P`` (Golub and Van Loan, 4th ed.,
    Section 7.2.2).
    """
    S = dense.shape[0]
    if reversible:
        mu = _laplacian_eigenvalues(dense)
        err = 8.0 * S * _U * float(np.abs(mu).max())
        return float(mu[1]), float(min(mu[1], 2.0 - mu[-1])), err
    moduli = _moduli_without_unit(dense)
    gap = float(1.0 - moduli.max())
    values, left, right = scipy.linalg.eig(dense, left=True, right=True)
    k = np.argsort(np.abs(values - 1.0))[1:]  # all but the unit eigenvalue
    k = k[np.argmax(np.abs(values[k]))]
    cos = abs(np.vdot(left[:, k], right[:, k])) / (
        np.linalg.norm(left[:, k]) * np.linalg.norm(right[:, k])
    )
    err = 8.0 * S * _U * float(np.linalg.norm(dense)) / max(cos, _TINY)
    return gap, gap, err


def _mp_gaps(
    dense: np.ndarray, reversible: bool, dps: int, log_P: np.ndarray | None
) -> tuple[float, float]:
    """``(gap, absolute gap)`` at ``dps`` significant digits (mpmath) from the float64 ``P``
    (its off-diagonal entries from ``log_P`` when given: exact where ``P`` is subnormal)."""
    mp = mpmath.mp.clone()
    mp.dps = dps
    S = dense.shape[0]

    def entry(x: int, y: int) -> Any:
        if log_P is not None and x != y:
            return mp.exp(mp.mpf(float(log_P[x, y]))) if log_P[x, y] > -np.inf else mp.mpf(0)
        return mp.mpf(float(dense[x, y]))

    if reversible:
        A = mp.matrix(S, S)
        for x in range(S):
            for y in range(S):
                if x != y and dense[x, y] > 0 and dense[y, x] > 0:
                    A[x, y] = -mp.sqrt(entry(x, y)) * mp.sqrt(entry(y, x))
            A[x, x] = mp.fsum(entry(x, y) for y in range(S) if y != x)
        mu = sorted(mp.eigsy(A, eigvals_only=True))
        return mu[1], min(mu[1], 2 - mu[-1])
    A = mp.matrix(S, S)
    for x in range(S):
        for y in range(S):
            A[x, y] = entry(x, y)
        A[x, x] = 1 - mp.fsum(entry(x, y) for y in range(S) if y != x)
    values = mp.eig(A, left=False, right=False)
    unit = min(range(S), key=lambda k: abs(values[k] - 1))
    gap = 1 - max(abs(values[k]) for k in range(S) if k != unit)
    return gap, gap


def _extended_gaps(
    dense: np.ndarray, reversible: bool, gap_rtol: float, log_P: np.ndarray | None
) -> tuple[float, float]:
    """Gaps in mpmath, doubling the digits until two precisions agree to ``gap_rtol``."""
    dps = 30
    previous = _mp_gaps(dense, reversible, dps, log_P)
    while dps < EXTENDED_MAX_DPS:
        dps *= 2
        current = _mp_gaps(dense, reversible, dps, log_P)
        if all(abs(c - p) <= gap_rtol * abs(c) and c > 0 for c, p in zip(current, previous)):
            return float(current[0]), float(current[1])
        previous = current
    raise PrecisionError(
        f"the spectral gap is below what {EXTENDED_MAX_DPS} digits resolve "
        f"({float(previous[0]):.3g}); the chain is reducible for all practical purposes: raise "
        "the temperature"
    )


def _gaps(P: Any, pi: np.ndarray, rtol: float, reversible: bool | None, gap_rtol: float,
          log_P: Any = None) -> tuple[float, float]:
    dense = _dense(P)
    S = dense.shape[0]
    if S == 1:
        return 1.0, 1.0
    if not (np.isfinite(gap_rtol) and 0.0 < gap_rtol < 1.0):
        raise InvalidParameterError(f"gap_rtol must lie in (0, 1), got {gap_rtol!r}")
    rev = is_reversible(dense, pi, rtol) if reversible is None else bool(reversible)
    gap, abs_gap, err = _float_gaps(dense, rev)
    if min(gap, abs_gap) > err / gap_rtol:
        return gap, abs_gap
    if S <= EXTENDED_MAX_STATES:
        return _extended_gaps(dense, rev, gap_rtol, log_P() if callable(log_P) else log_P)
    raise PrecisionError(
        f"the spectral gap {min(gap, abs_gap):.3g} of this {S}-state chain is within the float64 "
        f"eigensolver's error (about {err:.2g}) times 1/gap_rtol = {1 / gap_rtol:g}: it has no "
        f"relative accuracy, and extended precision (mpmath) is limited to "
        f"{EXTENDED_MAX_STATES} states; use mixing_time() (exact, by squaring) or a smaller "
        "chain, or a larger gap_rtol"
    )


def spectral_gap(
    P: Any, pi: np.ndarray, rtol: float = 1e-8, reversible: bool | None = None,
    gap_rtol: float = GAP_RTOL, log_P: Any = None,
) -> float:
    """Spectral gap of the chain (LPW 2nd ed., Section 12.2), to relative accuracy ``gap_rtol``.

    Reversible chains (checked with :func:`is_reversible` at ``rtol``, or as given by
    ``reversible``): ``gamma = 1 - lambda_2``, ``lambda_2`` the second largest eigenvalue, from the
    symmetrised Laplacian. Non-reversible chains have complex eigenvalues and no ordering:
    ``1 - max{|lambda| : lambda != 1}``, the absolute gap (the same value
    :func:`absolute_spectral_gap` returns).

    Accuracy: float64 eigenvalues carry an absolute error of about ``8 S u ||L||`` (times the
    eigenvalue's condition number for non-reversible chains). A gap larger than that error over
    ``gap_rtol`` is returned from float64; a smaller one is recomputed with mpmath (from the
    float64 ``P``, whose entries are relatively accurate, so the gap is too) on chains of at
    most :data:`EXTENDED_MAX_STATES` states, digits doubled until two precisions agree to
    ``gap_rtol``; larger chains raise :class:`PrecisionError` rather than return rounding noise.
    ``log_P`` (a dense ``log P``, or a callable returning it, called only then) supplies the
    off-diagonal entries to the extended computation where ``P`` is subnormal.

    Raises
    ------
    StateSpaceTooLargeError
        If the chain has more than ``MAX_DENSE_STATES`` states.
    PrecisionError
        If the gap cannot be resolved (see above).

    Examples
    --------
    >>> P = np.array([[0.5, 0.5], [0.25, 0.75]])  # eigenvalues 1 and 1/4
    >>> round(spectral_gap(P, np.array([1 / 3, 2 / 3])), 12)
    0.75
    """
    return _gaps(P, pi, rtol, reversible, gap_rtol, log_P)[0]


def absolute_spectral_gap(
    P: Any, pi: np.ndarray, rtol: float = REVERSIBILITY_RTOL, reversible: bool | None = None,
    gap_rtol: float = GAP_RTOL, log_P: Any = None,
) -> float:
    """Absolute spectral gap ``gamma_* = 1 - max{|lambda| : lambda != 1}`` (LPW 2nd ed., 12.2).

    For reversible chains ``gamma_* = min(1 - lambda_2, 1 + lambda_min)``; heat-bath Glauber chains
    of Gibbs models have non-negative spectrum, so there ``gamma_* = gamma``. Accuracy as
    :func:`spectral_gap`.

    Raises
    ------
    StateSpaceTooLargeError
        If the chain has more than ``MAX_DENSE_STATES`` states.
    PrecisionError
        If the gap cannot be resolved (see :func:`spectral_gap`).
    """
    return _gaps(P, pi, rtol, reversible, gap_rtol, log_P)[1]


#: Smallest absolute gap :func:`sparse_absolute_spectral_gap` reports (ARPACK's eigenvalues of a
#: stochastic matrix carry absolute errors far above float64's 1e-16 at this size).
SPARSE_GAP_FLOOR = 1e-6


def sparse_absolute_spectral_gap(P: Any, k: int = 6) -> float:
    """``1 - max{|lambda| : lambda != 1}`` of a large sparse chain (ARPACK, ``k`` eigenvalues of
    largest modulus; for chains above the dense limit, where :func:`absolute_spectral_gap`
    refuses).

    The eigenvalue 1 (the one closest to 1) is removed and the largest remaining modulus taken.
    ARPACK's accuracy is absolute (about ``1e-10`` here), so gaps below
    :data:`SPARSE_GAP_FLOOR` are refused rather than reported.

    Raises
    ------
    PrecisionError
        If the gap is below :data:`SPARSE_GAP_FLOOR`, or ARPACK did not converge.

    Examples
    --------
    >>> shift = np.roll(np.eye(8), 1, axis=1)  # lazy walk on the 8-cycle: 1/2 + cos(2 pi k/8)/2
    >>> P = sp.csr_matrix(0.5 * np.eye(8) + 0.25 * (shift + shift.T))
    >>> round(sparse_absolute_spectral_gap(P, k=3), 9)  # 1 - (1/2 + cos(pi/4)/2)
    0.146446609
    """
    import scipy.sparse.linalg as spla

    mat = sp.csr_matrix(P, dtype=np.float64)
    k = min(int(k), mat.shape[0] - 2)
    try:
        eig = spla.eigs(mat.T, k=k, which="LM", tol=1e-12, return_eigenvectors=False,
                        maxiter=10 * mat.shape[0])
    except spla.ArpackNoConvergence as exc:
        raise PrecisionError(
            f"ARPACK did not converge on the {mat.shape[0]}-state chain ({exc}); the spectral "
            "gap is not available (use a smaller window)"
        ) from exc
    rest = np.delete(eig, np.argmin(np.abs(eig - 1.0)))
    gap = float(1.0 - np.abs(rest).max())
    if gap < SPARSE_GAP_FLOOR:
        raise PrecisionError(
            f"the spectral gap of this {mat.shape[0]}-state chain is below {SPARSE_GAP_FLOOR:g}, "
            "which the sparse eigensolver cannot resolve; exact t_mix (mixing_time) still holds"
        )
    return gap


def relaxation_time(
    P: Any, pi: np.ndarray, rtol: float = REVERSIBILITY_RTOL, reversible: bool | None = None,
    gap_rtol: float = GAP_RTOL, log_P: Any = None,
) -> float:
    """Relaxation time ``t_rel = 1 / gamma_*`` (LPW 2nd ed., 12.2; ``inf`` if ``gamma_* <= 0``).

    LPW Theorem 15.5 (heat-bath Ising on the n-cycle): ``t_rel = n / (1 - tanh(2 beta))``.
    Accuracy as :func:`spectral_gap`.
    """
    gap = absolute_spectral_gap(P, pi, rtol, reversible, gap_rtol, log_P)
    return float(np.inf) if gap <= 0.0 else 1.0 / gap


#: Gaps below which :func:`spectral_tmix_lower_bound` bounds ``-log(1 - g)`` by its series.
_SERIES_BELOW = Fraction(1, 2**26)


def spectral_tmix_lower_bound(gap: float | None, eps: float, gap_error: float | None = None) -> int:
    """A lower bound on the worst-start ``t_mix(eps)`` from the absolute spectral gap.

    For any eigenvalue ``lambda != 1`` of ``P``, reversible or not, ``d(t) >= |lambda|^t / 2``
    (LPW 2nd ed., Theorem 12.5, first part: its proof uses only an eigenfunction of mean zero),
    so ``d(t) > eps`` for every ``t < T = log(1 / (2 eps)) / -log(1 - gamma)`` (``1 - gamma``
    the largest such ``|lambda|``) and ``t_mix(eps) >= ceil(T)``.

    Rigorous for any gap the solver is within ``gap_error`` of: the true gap is at most
    ``g = gap (1 + 2^-53) + gap_error + 2^-1075`` (the solver's error, then float64's rounding of
    its answer to nearest, relative in the normal range and absolute below it), and
    ``-log(1 - g)`` is bounded above (by ``g + g^2 / (2 (1 - g))`` for tiny ``g``, else by
    ``log1p`` rounded up); ``T`` is formed from these in exact rational arithmetic with
    ``log(1 / (2 eps))`` rounded down, so a subnormal gap gives a (huge) exact integer, never
    an overflow. No gap gives 0.

    Parameters
    ----------
    gap : float or None
        The computed absolute spectral gap.
    eps : float
        Target distance, in (0, 1/2) (else 0 is returned: the bound says nothing).
    gap_error : float, optional
        Bound on ``exact gap - gap``; default ``2 GAP_RTOL gap``, twice the dense solvers'
        accuracy (a Lanczos gap states its own: ``SpectralEstimate.gap_upper``).

    Examples
    --------
    >>> spectral_tmix_lower_bound(0.5, 0.25)  # d(t) >= 2^-t / 2 > 1/4 for t < 1
    1
    >>> spectral_tmix_lower_bound(1e-3, 0.25)  # log 2 / -log(0.999) = 692.8
    693
    >>> spectral_tmix_lower_bound(5e-324, 0.25) > 10**322  # no OverflowError
    True
    """
    if gap is None or not 0.0 < gap < 1.0 or not 0.0 < eps < 0.5:
        return 0
    error = 2.0 * GAP_RTOL * gap if gap_error is None else float(gap_error)
    g = (Fraction(gap) * (1 + Fraction(1, 2**53)) + Fraction(error)
         + Fraction(SMALLEST_SUBNORMAL["float64"]) / 2)
    if g >= 1:
        return 0
    if g < _SERIES_BELOW:  # -log(1 - g) = g + g^2/2 + g^3/3 + ... <= g + g^2 / (2 (1 - g))
        log_rate = g + g * g / (2 * (1 - g))
    else:  # log1p within one ulp of a float g rounded up
        log_rate = Fraction(round_up(round_up(-math.log1p(-round_up(float(g))))))
    log_target = round_down(round_down(-math.log(2.0 * eps)))  # math.log: within one ulp
    return max(0, math.ceil(Fraction(log_target) / log_rate))


__all__ = [
    "SPARSE_GAP_FLOOR",
    "absolute_spectral_gap",
    "sparse_absolute_spectral_gap",
    "relaxation_time",
    "spectral_gap",
    "spectral_tmix_lower_bound",
]
