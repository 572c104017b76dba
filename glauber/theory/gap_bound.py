"""A proved lower bound on the absolute spectral gap from the influence matrix (ours).

Corrected Theorem 5's coupling (:mod:`glauber.theory.contraction`) bounds every eigenvalue of
the paper's kernel, reversible or not: ``|lambda| <= 1 - (1 - rho(C))/n`` for ``lambda != 1``.
It is the one proved statement about the spectrum of a chain whose gap cannot be computed (the
matrix-free chain of a 5-site window; docs/theory.md, "A proved gap bound for non-reversible
chains").
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from glauber.core.validation import check_nonnegative_float, check_square_matrix
from glauber.theory import verified_power
from glauber.theory.floating import round_down


def absolute_gap_lower_bound(C: ArrayLike, entry_error: float = 0.0) -> float:
    """A proved lower bound on the absolute spectral gap of the random-scan chain from ``C``.

    Every eigenvalue ``lambda != 1`` of the paper's kernel ``P`` (reversible or not) has
    ``|lambda| <= 1 - (1 - r)/n`` for any ``r >= rho(C)``, so the absolute gap
    ``gamma_* = 1 - max{|lambda| : lambda != 1}`` is at least ``(1 - r)/n`` (0 when
    ``r >= 1``: nothing is proved). This is LPW's Theorem 13.1 (a Wasserstein contraction
    bounds the eigenvalues; Levin and Peres, *Markov Chains and Mixing Times*, 2nd ed.) for
    corrected Theorem 5's coupling, with the contraction read per site, and it needs no
    reversibility. Proof: let ``P f = lambda f`` (``f`` complex, non-constant as
    ``lambda != 1``) and ``delta_i(f) = max |f(x) - f(y)|`` over pairs differing only at ``i``.
    For ``x, y`` differing only at ``j``, the same-site maximal coupling gives
    ``P(X_1(i) != Y_1(i)) <= M[i, j]`` with ``M = (1 - 1/n) I + C / n``
    (:func:`~glauber.theory.contraction.contraction_matrix`), and changing one site at a time,
    ``|f(X_1) - f(Y_1)| <= sum_i 1{X_1(i) != Y_1(i)} delta_i(f)``; so
    ``|lambda| delta_j(f) = delta_j(P f) <= sum_i M[i, j] delta_i(f)``, i.e.
    ``|lambda| delta <= M^T delta`` with ``delta >= 0`` non-zero. The Collatz–Wielandt vector
    ``v > 0`` with ``C v <= r v`` (:func:`~glauber.theory.verified_power.collatz_wielandt_upper`)
    gives ``M v <= (1 - (1 - r)/n) v``; then
    ``|lambda| v^T delta <= (M v)^T delta <= (1 - (1 - r)/n) v^T delta`` and ``v^T delta > 0``.
    The gap of the heat-bath chain is at least its absolute gap. docs/theory.md, "A proved gap
    bound for non-reversible chains".

    Parameters
    ----------
    C : array_like, shape (n, n)
        Non-negative influence matrix ``C[i, j]`` = influence of ``j`` on ``i`` (Definition 2),
        or an entrywise upper bound on it; the diagonal is ignored.
    entry_error : float, optional
        A bound on ``|C[i, j] - exact c_ij|`` (as in :func:`~glauber.theory.contraction.certify_contraction`): the bound is
        that of the enclosure ``min(1, C + entry_error)``.

    Returns
    -------
    float
        ``(1 - r)/n`` rounded down, ``r`` the rounded-up Collatz–Wielandt bound on the spectral
        radius of the enclosure; 0.0 when ``r >= 1``.

    Raises
    ------
    InvalidParameterError
        If ``C`` is not a finite non-negative square matrix or ``entry_error`` is negative.

    Examples
    --------
    >>> b = absolute_gap_lower_bound([[0.0, 0.5], [0.5, 0.0]])  # (1 - 1/2)/2, rounded down
    >>> 0.25 - 1e-15 < b <= 0.25
    True
    >>> absolute_gap_lower_bound([[0.0, 1.0], [1.0, 0.0]])  # rho(C) = 1: nothing is proved
    0.0
    """
    arr = check_square_matrix(C, "influence matrix C").copy()
    np.fill_diagonal(arr, 0.0)
    entry_error = check_nonnegative_float(entry_error, "entry_error")
    if entry_error > 0.0:
        arr = np.minimum(1.0, np.nextafter(arr + entry_error, np.inf))
        np.fill_diagonal(arr, 0.0)
    r = verified_power.rho_upper(arr)
    if r >= 1.0:
        return 0.0
    gap = 1.0 - r if r >= 0.5 else round_down(1.0 - r)  # exact for r >= 1/2 (Sterbenz)
    return max(0.0, round_down(gap / arr.shape[0]))


__all__ = ["absolute_gap_lower_bound"]
