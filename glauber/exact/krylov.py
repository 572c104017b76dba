"""Spectral gaps of large chains by Krylov methods, each value beside what makes it trustworthy.

**Reversible chains: Lanczos.** For a chain reversible with respect to ``pi`` the matrix
``A = D^(1/2) P D^(-1/2)`` (``D = diag(pi)``) is symmetric with the spectrum of ``P``
(LPW 2nd ed., Section 12.1; built by :func:`glauber.exact.sparse.symmetrised_csr`), and its top
eigenvector is ``u = sqrt(pi)`` with eigenvalue 1. We deflate it,
``A' = A - u u^T``, so the largest eigenvalue of ``A'`` is ``lambda_2`` (for a heat-bath chain
every eigenvalue is ``>= 0``, see below), and run Lanczos (ARPACK's implicitly restarted
Lanczos, :func:`scipy.sparse.linalg.eigsh`, ``which="LA"``) from a seeded random start
orthogonal to ``u``. From the top Ritz vector we form ``w`` (made orthogonal to ``u`` again,
unit norm), its Rayleigh quotient ``R = w^T A w`` and residual ``r = A' w - R w``. Then:

* **rigorous (up to rounding)**: ``lambda_2 >= R`` by Courant–Fischer
  (``lambda_2 = max_{w perp u} w^T A w``), so ``gap <= 1 - R`` (:attr:`SpectralEstimate.gap_upper`:
  the Dirichlet form of ``w / sqrt(pi)`` over its variance, LPW Remark 13.8);
* **residual bound**: for a symmetric matrix some eigenvalue lies within ``||r||`` of ``R``
  (Parlett, *The Symmetric Eigenvalue Problem*, Theorem 4.5.1), within ``||r||^2 / delta`` if
  the rest of the spectrum is ``delta`` away (Kato–Temple, Parlett Theorem 10.6.1);
* **identification (an estimate)**: that this eigenvalue is ``lambda_2`` and not an eigenvalue
  below it, i.e. that no eigenvalue of ``A'`` lies above ``R + ||r||``. Deflating the exact top
  eigenvector removes the eigenvalue 1; Lanczos from a random start converges to the extreme
  eigenvalues first and misses an eigenvector only if the start is orthogonal to it (probability
  0); the next Ritz value ``theta_2`` (reported as :attr:`SpectralEstimate.separation`) says how
  far the rest of the computed spectrum is. None of this is a proof, so the two-sided interval
  ``[gap_lower, gap_upper]`` is labelled an estimate, and only ``gap_upper`` is rigorous. The
  tests compare it with the dense eigensolver wherever both run.

Rounding: ``|fl(w^T A w) - w^T A w| <= gamma_S ||w|| ||A w||`` (``gamma_m = m u / (1 - m u)``),
each entry of ``A`` carries a relative error of at most ``8 u (1 + max |log p|)`` from the
conditionals (Weyl's inequality turns it into an eigenvalue shift at most that, as
``||A||_2 = 1``), and the residual's own rounding is at most ``gamma_(k+3) (||A |w| || + 1)``
with ``k`` non-zeros per row. All three are added to the bounds.

Heat-bath chains are positive semidefinite when reversible: ``P = (1/n) sum_i Pi_i`` with
``Pi_i f(x) = E_pi[f | x_{-i}]`` an orthogonal projection in ``L^2(pi)`` (Dyer, Greenhill and
Ullrich, "Structure and eigenvalues of heat-bath Markov chains", Linear Algebra Appl. 454
(2014)). Hence ``lambda_min >= 0`` and the absolute gap equals the gap.

**Non-reversible chains: Arnoldi, an estimate.** Their eigenvalues are complex and no
variational principle holds; :func:`arnoldi_gap_estimate` returns ``1 - max |lambda|`` over
the non-unit eigenvalues that ARPACK's Arnoldi iteration finds (the unit eigenvalue deflated
with ``pi`` when it is known), with the residuals, labelled an estimate (the eigenvalue
condition numbers of a non-normal ``P`` are unknown, so a residual bounds nothing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from threadpoolctl import threadpool_limits

from glauber.core.arrays import JsonResult
from glauber.errors import ConvergenceError, GapBelowFloorError, PrecisionError
from glauber.exact.spectral import GAP_RTOL

_U = 2.0**-53

#: Ritz pairs asked of Lanczos (``k >= 2`` also reports the separation of the top one and uses
#: it in a Kato-Temple bound; one pair converges in about half the products).
LANCZOS_K = 1
#: Lanczos basis size (ARPACK's ``ncv``).
LANCZOS_NCV = 20
#: ARPACK's relative tolerance: the residual is then far below the rounding allowance.
LANCZOS_TOL = 1e-13
#: Basis size for the smallest eigenvalue (:func:`smallest_eigenvalue`). A Metropolis-Hastings
#: kernel's can be highly degenerate: on the Potts 3-cycle over 20 colours (mh:pll, tau = 2,
#: 8,000 states) it is 0 many times over, and a 20-vector basis did not converge in 80,000
#: restarts (324 s), where 40 vectors converge in 0.1 s.
SMALLEST_NCV = 40
#: Gaps below this are refused: Lanczos on ``A`` (eigenvalues near 1) resolves ``lambda_2`` to
#: an absolute ``~1e-15``, so a smaller gap would have fewer than 6 correct digits.
LANCZOS_GAP_FLOOR = 1e-9


@dataclass(frozen=True)
class SpectralEstimate(JsonResult):
    """A spectral gap with its accuracy and what of it is proved.

    Attributes
    ----------
    gap : float
        ``1 - lambda_2`` (reversible) or the absolute gap estimate (Arnoldi).
    absolute_gap : float
        ``1 - max{|lambda| : lambda != 1}``; equal to ``gap`` for reversible heat-bath chains.
    relaxation_time : float
        ``1 / absolute_gap``.
    method : str
        ``"dense"`` (full eigen-decomposition), ``"lanczos"`` or ``"arnoldi"``.
    reversible : bool
        Whether the chain was treated as reversible.
    error_bound : float or None
        ``|gap - true gap| <= error_bound`` (dense: rigorous; Lanczos: the residual bound, given
        the identification of ``lambda_2``; Arnoldi: None).
    gap_upper : float or None
        A rigorous upper bound on the true gap (None for Arnoldi).
    gap_lower : float or None
        ``gap - error_bound``: a lower bound, rigorous only when :attr:`rigorous` is True.
    residual : float or None
        ``||A' w - R w||_2`` of the reported Ritz pair (Lanczos), or the largest residual of
        the Arnoldi Ritz pairs.
    separation : float or None
        ``R - theta_2``: distance of the next Ritz value (Lanczos).
    matvecs : int
        Products with the matrix.
    rigorous : bool
        Whether ``[gap_lower, gap_upper]`` is proved (dense: yes; Lanczos: only ``gap_upper``;
        Arnoldi: nothing).
    label : str
        In words: what is rigorous and what is an estimate.
    """

    gap: float
    absolute_gap: float
    relaxation_time: float
    method: str
    reversible: bool
    error_bound: float | None
    gap_upper: float | None
    gap_lower: float | None
    residual: float | None
    separation: float | None
    matvecs: int
    rigorous: bool
    label: str


def dense_estimate(gap: float, absolute_gap: float, reversible: bool) -> SpectralEstimate:
    """A :class:`SpectralEstimate` for gaps from the dense eigensolver
    (:func:`glauber.exact.spectral.spectral_gap`, which returns a gap only once its error bound
    is below ``GAP_RTOL`` times the gap: Weyl's inequality and the backward stability of the
    symmetric eigensolver for a reversible chain; first-order perturbation with the eigenvalue's
    condition number for a non-reversible one, an estimate)."""
    error = GAP_RTOL * gap
    what = ("symmetric eigensolver on the sqrt(pi)-symmetrised kernel: rigorous to relative "
            f"{GAP_RTOL:g} (Weyl, backward stability)" if reversible else
            f"non-symmetric eigensolver: relative accuracy {GAP_RTOL:g} by first-order "
            "perturbation theory, an estimate")
    return SpectralEstimate(
        gap=gap, absolute_gap=absolute_gap,
        relaxation_time=math.inf if absolute_gap <= 0 else 1.0 / absolute_gap, method="dense",
        reversible=reversible, error_bound=error, gap_upper=gap + error if reversible else None,
        gap_lower=max(gap - error, 0.0) if reversible else None, residual=None, separation=None,
        matvecs=0, rigorous=reversible, label=f"dense eigen-decomposition ({what})")


def _gamma(m: float) -> float:
    return m * _U / (1.0 - m * _U)


def lanczos_gap(A: sp.csr_matrix, log_pi: np.ndarray, max_abs_log_p: float = 0.0,
                seed: int = 0, tol: float = LANCZOS_TOL, k: int = LANCZOS_K,
                ncv: int = LANCZOS_NCV,
                maxiter: int | None = None) -> SpectralEstimate:
    """``1 - lambda_2`` of a reversible chain from its symmetrisation ``A`` (see the module).

    Parameters
    ----------
    A : scipy.sparse.csr_matrix
        ``sqrt(P(x, y) P(y, x))`` (:func:`glauber.exact.sparse.symmetrised_csr`).
    log_pi : numpy.ndarray
        ``log pi`` of the chain (normalised): ``u = sqrt(pi)`` is deflated.
    max_abs_log_p : float
        ``max |log p_i(a | x_{-i})|``: sets the entries' rounding allowance.
    seed : int
        Seed of the random start (same seed, same result).
    tol : float
        ARPACK's relative tolerance (0: machine precision); the reported bounds use the actual
        residual, whatever ``tol``.
    k, ncv : int
        Ritz pairs and basis size.
    maxiter : int, optional
        ARPACK restarts (default ``10 S``).

    Returns
    -------
    SpectralEstimate
        ``method="lanczos"``; ``gap_upper`` rigorous, ``error_bound`` and ``gap_lower`` given the
        identification of ``lambda_2``.

    Raises
    ------
    ConvergenceError
        If ARPACK does not converge.
    GapBelowFloorError
        If the gap is below :data:`LANCZOS_GAP_FLOOR` (its rigorous ``gap_upper`` is an
        attribute).
    PrecisionError
        If the chain has fewer than 3 states.

    Examples
    --------
    >>> P = np.array([[0.5, 0.5, 0.0], [0.25, 0.5, 0.25], [0.0, 0.5, 0.5]])  # lazy path walk
    >>> pi = np.array([0.25, 0.5, 0.25]); d = np.sqrt(pi)
    >>> est = lanczos_gap(sp.csr_matrix(d[:, None] * P / d[None, :]), np.log(pi), k=1, ncv=2)
    >>> round(est.gap, 12), est.method   # eigenvalues 1, 1/2, 0
    (0.5, 'lanczos')
    """
    S = A.shape[0]
    if S < 3:
        raise PrecisionError("Lanczos needs at least 3 states; use the dense eigensolver")
    u = np.exp(0.5 * np.asarray(log_pi, dtype=np.float64))
    u /= np.linalg.norm(u)
    counter = [0]

    def deflated(v: np.ndarray) -> np.ndarray:
        counter[0] += 1
        v = np.ravel(v)
        return A @ v - u * (u @ v)

    op = spla.LinearOperator((S, S), matvec=deflated, dtype=np.float64)
    start = np.random.default_rng(seed).standard_normal(S)
    start -= u * (u @ start)
    k = max(1, min(int(k), S - 2))
    ncv = min(max(int(ncv), 2 * k + 1), S - 1)
    try:
        # ARPACK's vector operations are memory-bound level-1/2 BLAS calls: a multithreaded
        # BLAS gains nothing on them and, on a loaded machine, its spinning threads made each
        # 20-50x slower (29 s instead of 1.5 s for 27,012 states at load 16 on 2 cores)
        with threadpool_limits(1, user_api="blas"):
            theta, vectors = spla.eigsh(op, k=k, which="LA", ncv=ncv, tol=tol, v0=start,
                                        maxiter=maxiter or 10 * S)
    except spla.ArpackNoConvergence as exc:
        raise ConvergenceError(
            f"Lanczos did not converge on the {S}-state chain ({exc}); use mixing_bracket() for "
            "bounds that need no eigenvalue, or a smaller chain"
        ) from exc
    order = np.argsort(theta)[::-1]
    theta, vectors = theta[order], vectors[:, order]
    w = vectors[:, 0] - u * (u @ vectors[:, 0])
    w /= np.linalg.norm(w)
    Aw = A @ w
    R = float(w @ Aw)
    residual = float(np.linalg.norm(Aw - u * (u @ Aw) - R * w))
    row = int(np.diff(A.indptr).max()) if A.nnz else 1
    rounding = (_gamma(S) * float(np.linalg.norm(Aw))
                + _gamma(row + 3) * (float(np.linalg.norm(A @ np.abs(w))) + 1.0 + abs(R))
                + 8.0 * _U * (1.0 + float(max_abs_log_p)))
    counter[0] += 2
    separation, error = None, residual
    if len(theta) > 1:  # Kato-Temple with the rest of the spectrum below theta_2 + ||r_2||
        v2 = vectors[:, 1]
        r2 = float(np.linalg.norm(deflated(v2) - theta[1] * v2))
        separation = float(R - theta[1])
        if separation > r2:
            error = min(error, residual**2 / (separation - r2))
    error += rounding
    gap = 1.0 - R
    gap_upper = gap + rounding
    if gap_upper < LANCZOS_GAP_FLOOR:
        raise GapBelowFloorError(
            f"the spectral gap of this {S}-state chain is at most {gap_upper:.3g}, below "
            f"LANCZOS_GAP_FLOOR = {LANCZOS_GAP_FLOOR:g}, which Lanczos on the symmetrised kernel "
            "cannot resolve to 6 digits; use mixing_bracket() (t_mix bounds) instead", gap_upper
        )
    label = (f"Lanczos on the sqrt(pi)-symmetrised kernel with sqrt(pi) deflated: "
             f"gap <= {gap_upper:.10g} is rigorous (Courant-Fischer, up to rounding); "
             f"|gap - {gap:.10g}| <= {error:.2g} from the residual {residual:.2g} is an estimate "
             "(it assumes Lanczos found the largest eigenvalue of the deflated kernel)")
    return SpectralEstimate(
        gap=gap, absolute_gap=gap, relaxation_time=1.0 / gap, method="lanczos",
        reversible=True, error_bound=error, gap_upper=gap_upper, gap_lower=max(gap - error, 0.0),
        residual=residual, separation=separation, matvecs=counter[0], rigorous=False,
        label=label)


def smallest_eigenvalue(A: sp.csr_matrix, seed: int = 0) -> float:
    """``lambda_min`` of a symmetric sparse matrix by ARPACK (``which="SA"``): with the Lanczos
    gap, the absolute gap ``min(gap, 1 + lambda_min)`` of a reversible chain whose kernel need
    not be positive semi-definite (a Metropolis-Hastings random scan). An estimate, as the
    Lanczos gap.

    Raises
    ------
    ConvergenceError
        If ARPACK does not converge.
    """
    S = A.shape[0]
    start = np.random.default_rng(seed).standard_normal(S)
    try:
        with threadpool_limits(1, user_api="blas"):
            theta = spla.eigsh(A, k=1, which="SA", v0=start, ncv=min(SMALLEST_NCV, S - 1),
                               tol=LANCZOS_TOL, maxiter=10 * S, return_eigenvectors=False)
    except spla.ArpackNoConvergence as exc:
        raise ConvergenceError(
            f"ARPACK did not find the smallest eigenvalue of the {S}-state chain ({exc})"
        ) from exc
    return float(theta[0])


def arnoldi_gap_estimate(P: sp.csr_matrix | spla.LinearOperator, pi: np.ndarray | None = None,
                         seed: int = 0, k: int = 6, tol: float = 1e-12) -> SpectralEstimate:
    """``1 - max{|lambda| : lambda != 1}`` of a (non-reversible) chain by Arnoldi: an ESTIMATE.

    ARPACK's ``eigs`` on ``P^T`` for the ``k`` eigenvalues of largest modulus; with ``pi`` the
    unit eigenvalue is deflated (``P^T - pi 1^T``), else the Ritz value closest to 1 is dropped.
    ``P`` is a matrix, or a :class:`scipy.sparse.linalg.LinearOperator` that applies
    ``v -> P^T v`` (matrix-free: the factor ``M = B A`` of a window,
    :meth:`glauber.exact.window_chain.WindowChain.spectral_estimate`).
    No bound is attached: for a non-normal matrix a small residual does not make a Ritz value
    close to an eigenvalue (the distance scales with the eigenvalue's condition number).

    Raises
    ------
    ConvergenceError
        If ARPACK does not converge.

    Examples
    --------
    >>> P = sp.csr_matrix([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5]])  # a lazy 3-cycle
    >>> est = arnoldi_gap_estimate(P, np.full(3, 1 / 3), k=1)
    >>> round(est.absolute_gap, 9), est.rigorous   # |1/2 + e^(2 pi i/3)/2| = 1/2
    (0.5, False)
    """
    if isinstance(P, spla.LinearOperator):  # matrix-free: it applies v -> P^T v
        Pt, S = P, P.shape[0]
    else:
        mat = sp.csr_matrix(P, dtype=np.float64)
        S = mat.shape[0]
        Pt = mat.T.tocsr()
    counter = [0]
    if pi is not None:
        pi = np.asarray(pi, dtype=np.float64)

        def matvec(v: np.ndarray) -> np.ndarray:
            counter[0] += 1
            v = np.ravel(v)
            return Pt @ v - pi * v.sum()
    else:
        def matvec(v: np.ndarray) -> np.ndarray:
            counter[0] += 1
            return Pt @ np.ravel(v)

    op = spla.LinearOperator((S, S), matvec=matvec, dtype=np.float64)
    k = max(1, min(int(k), S - 2))
    start = np.random.default_rng(seed).standard_normal(S)
    try:
        with threadpool_limits(1, user_api="blas"):  # as in lanczos_gap
            values, vectors = spla.eigs(op, k=k, which="LM", tol=tol, v0=start, maxiter=10 * S)
    except spla.ArpackNoConvergence as exc:
        raise ConvergenceError(
            f"Arnoldi did not converge on the {S}-state chain ({exc}); the spectral gap estimate "
            "is not available (use mixing_bracket() or a smaller chain)"
        ) from exc
    if pi is None:
        keep = np.ones(len(values), dtype=bool)
        keep[np.argmin(np.abs(values - 1.0))] = False
        values, vectors = values[keep], vectors[:, keep]
    def apply(v: np.ndarray) -> np.ndarray:  # a real operator on a complex vector
        return (Pt @ v.real) + 1j * (Pt @ v.imag)

    residual = max(float(np.linalg.norm(apply(vectors[:, j]) - values[j] * vectors[:, j]))
                   for j in range(len(values)))
    largest = float(np.abs(values).max())
    gap = 1.0 - largest
    label = (f"Arnoldi estimate of the absolute gap of a non-reversible chain "
             f"({1.0 - largest:.6g}; Ritz residuals up to {residual:.1g}): no bound is proved, "
             "the chain's eigenvalues may be ill-conditioned")
    return SpectralEstimate(
        gap=gap, absolute_gap=gap, relaxation_time=math.inf if gap <= 0 else 1.0 / gap,
        method="arnoldi", reversible=False, error_bound=None, gap_upper=None, gap_lower=None,
        residual=residual, separation=None, matvecs=counter[0], rigorous=False, label=label)


__all__ = [
    "dense_estimate",
    "LANCZOS_GAP_FLOOR",
    "LANCZOS_K",
    "LANCZOS_NCV",
    "SMALLEST_NCV",
    "SpectralEstimate",
    "arnoldi_gap_estimate",
    "lanczos_gap",
    "smallest_eigenvalue",
]
