"""Spectral gap, relaxation time and reversibility of a finite chain (dense, exact up to rounding).

For a chain reversible with respect to ``pi`` (Theorem 3: every compatible, e.g. Gibbs, model),
``D^(1/2) P D^(-1/2)`` (``D = diag(pi)``) is symmetric with entries ``sqrt(P(x, y) P(y, x))``:
detailed balance removes ``pi`` from the formula, so tiny stationary masses cost no accuracy.
We diagonalise the symmetric Laplacian ``L = I - D^(1/2) P D^(-1/2)`` whose diagonal
``sum_{y != x} P(x, y)`` is formed without a subtraction, so holding probabilities ``1 - 1e-20``
that round to 1 lose nothing. Eigenvalues carry an absolute error of about machine precision
times ``||L|| <= 2``: a gap below ~1e-14 has no relative accuracy (use :func:`mixing_time`,
whose squaring keeps tiny transition probabilities, for such slow chains).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from glauber.errors import StateSpaceTooLargeError
from glauber.theory.kernels import REVERSIBILITY_RTOL, is_reversible
from glauber.toy_models.mixing import MAX_DENSE_STATES


def _dense(P: Any) -> np.ndarray:
    if np.shape(P)[0] > MAX_DENSE_STATES:
        raise StateSpaceTooLargeError(
            f"a dense eigen-decomposition of {np.shape(P)[0]} states exceeds the limit of "
            f"{MAX_DENSE_STATES}; use a smaller model"
        )
    return P.toarray() if sp.issparse(P) else np.asarray(P, dtype=np.float64)


def _laplacian_eigenvalues(P: np.ndarray) -> np.ndarray:
    """Eigenvalues (ascending) of ``I - D^(1/2) P D^(-1/2)`` for a reversible ``P``."""
    off = P.copy()
    np.fill_diagonal(off, 0.0)
    L = -np.sqrt(off * off.T)
    np.fill_diagonal(L, off.sum(axis=1))
    return np.linalg.eigvalsh(L)


def _moduli_without_unit(P: np.ndarray) -> np.ndarray:
    eig = np.linalg.eigvals(P)
    return np.abs(np.delete(eig, np.argmin(np.abs(eig - 1.0))))


def spectral_gap(P: Any, pi: np.ndarray, rtol: float = REVERSIBILITY_RTOL) -> float:
    """Spectral gap of the chain (LPW 2nd ed., Section 12.2).

    Reversible chains (checked with :func:`is_reversible` at ``rtol``): ``gamma = 1 - lambda_2``,
    ``lambda_2`` the second largest eigenvalue, from the symmetrised Laplacian. Non-reversible
    chains have complex eigenvalues and no ordering: ``1 - max{|lambda| : lambda != 1}``, the
    absolute gap (the same value :func:`absolute_spectral_gap` returns).

    Raises
    ------
    StateSpaceTooLargeError
        If the chain has more than ``MAX_DENSE_STATES`` states.

    Examples
    --------
    >>> P = np.array([[0.5, 0.5], [0.25, 0.75]])  # eigenvalues 1 and 1/4
    >>> round(spectral_gap(P, np.array([1 / 3, 2 / 3])), 12)
    0.75
    """
    dense = _dense(P)
    if dense.shape[0] == 1:
        return 1.0
    if is_reversible(dense, pi, rtol):
        return float(_laplacian_eigenvalues(dense)[1])
    return float(1.0 - _moduli_without_unit(dense).max())


def absolute_spectral_gap(P: Any, pi: np.ndarray, rtol: float = REVERSIBILITY_RTOL) -> float:
    """Absolute spectral gap ``gamma_* = 1 - max{|lambda| : lambda != 1}`` (LPW 2nd ed., 12.2).

    For reversible chains ``gamma_* = min(1 - lambda_2, 1 + lambda_min)``; heat-bath Glauber chains
    of Gibbs models have non-negative spectrum, so there ``gamma_* = gamma``.

    Raises
    ------
    StateSpaceTooLargeError
        If the chain has more than ``MAX_DENSE_STATES`` states.
    """
    dense = _dense(P)
    if dense.shape[0] == 1:
        return 1.0
    if is_reversible(dense, pi, rtol):
        mu = _laplacian_eigenvalues(dense)
        return float(min(mu[1], 2.0 - mu[-1]))
    return float(1.0 - _moduli_without_unit(dense).max())


def relaxation_time(P: Any, pi: np.ndarray, rtol: float = REVERSIBILITY_RTOL) -> float:
    """Relaxation time ``t_rel = 1 / gamma_*`` (LPW 2nd ed., 12.2; ``inf`` if ``gamma_* <= 0``).

    LPW Theorem 15.5 (heat-bath Ising on the n-cycle): ``t_rel = n / (1 - tanh(2 beta))``.
    """
    gap = absolute_spectral_gap(P, pi, rtol)
    return float(np.inf) if gap <= 0.0 else 1.0 / gap


__all__ = [
    "absolute_spectral_gap",
    "relaxation_time",
    "spectral_gap",
]
