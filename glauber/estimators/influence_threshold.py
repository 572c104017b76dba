"""Where no Theorem 5 certificate can exist: realised influence with spectral radius >= 1.

Every corrected Theorem 5 certificate from Definition 2's matrix ``c(tau)`` (row sum, column
sum, largest singular value, matrix power) needs ``rho(c(tau)) < 1``: each of the three norms is
at least the spectral radius, and ``1^T M^t 1`` with ``M = (1 - 1/n) I + c/n`` does not tend to 0
otherwise (docs/theory.md, Theorem 5 corrected). A searched matrix ``C`` holds realised values
only (each entry is the TV of an explicit pair), so ``0 <= C <= c(tau)`` entrywise, and for
non-negative matrices the spectral radius is monotone in the entries (Perron–Frobenius; Horn &
Johnson, Matrix Analysis, Theorem 8.1.18). Hence ``rho(C) >= 1`` proves that no such
certificate can hold at ``tau``. Rounding is paid for twice: every entry is first lowered by
the recheck tolerance, and the spectral radius is bounded from below by the Collatz–Wielandt
ratio ``min_i (A v)_i / v_i`` over the positive entries of a non-negative vector ``v`` (if
``A v >= r v`` then ``rho(A) >= r``; Horn & Johnson, Corollary 8.1.29), shrunk by the relative
rounding of the product, rather than read off an eigenvalue routine.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike

from glauber.core.validation import check_square_matrix
from glauber.errors import InvalidParameterError
from glauber.theory.contraction import spectral_radius


def rho_lower_bound(C: ArrayLike, tolerance: float = 0.0) -> float:
    """A lower bound on the spectral radius of ``max(C - tolerance, 0)`` (diagonal ignored).

    The Collatz–Wielandt ratio at the Perron vector, less its rounding (see the module
    docstring). If every entry of ``C`` is within ``tolerance`` of a realised TV, the value is a
    lower bound on ``rho(c(tau))`` (Perron–Frobenius monotonicity).

    Parameters
    ----------
    C : array_like, shape (n, n)
        Realised influence values (non-negative).
    tolerance : float
        Rounding allowance per entry, >= 0.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If ``C`` is not a finite non-negative square matrix or ``tolerance`` is negative.

    Examples
    --------
    >>> round(rho_lower_bound([[0.0, 1.0], [1.0, 0.0]], 0.01), 9)
    0.99
    """
    arr = check_square_matrix(C, "influence matrix C")
    if not (np.isfinite(tolerance) and tolerance >= 0):
        raise InvalidParameterError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    low = np.maximum(arr - tolerance, 0.0)
    np.fill_diagonal(low, 0.0)
    if spectral_radius(low) == 0.0:
        return 0.0
    vals, vecs = np.linalg.eig(low)
    v = np.abs(vecs[:, int(np.argmax(vals.real))].real)
    v[v < 1e-12 * v.max()] = 0.0
    pos = v > 0
    ratio = float(np.min((low @ v)[pos] / v[pos]))
    n = low.shape[0]
    return float(max(0.0, ratio * (1.0 - 4.0 * (n + 2) * np.finfo(float).eps)))


def tau_no_cert(results: Sequence[Any]) -> float | None:
    """The largest temperature of a sweep at which no Theorem 5 certificate can exist.

    Parameters
    ----------
    results : sequence of InfluenceSearchResult
        One per temperature (each with ``tau`` and ``no_certificate``).

    Returns
    -------
    float or None
        ``max{tau : no_certificate}``, or None when ``rho_lower < 1`` at every temperature.
        It says nothing about other temperatures: ``c(tau)`` need not be monotone in ``tau``.

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> tau_no_cert([R(tau=1.0, no_certificate=True), R(tau=2.0, no_certificate=False)])
    1.0
    """
    taus = [float(r.tau) for r in results if r.no_certificate]
    return max(taus) if taus else None


__all__ = ["rho_lower_bound", "tau_no_cert"]
