"""Lemma 6 and Corollary 7: influence bounds from score oscillations.

Lemma 6 (true as printed): ``c_ij(tau) <= Delta_ij / (4 tau)``, where ``Delta_ij`` is the
supremum, over contexts ``x, y`` differing only at site ``j``, of the Hilbert projective distance
(:func:`glauber.theory.distances.hilbert_distance`) between site ``i``'s score vectors.

Sharper and also true: ``c_ij(tau) <= tanh(Delta_ij / (4 tau))``.

Proof of the sharper form. Let ``p = softmax(u)``, ``r = softmax(v)`` and ``theta`` the
oscillation of ``u - v``. With ``S = {a : p_a > r_a}``, ``TV(p, r) = p(S) - r(S)``. Merging the
vocabulary into ``S`` and its complement gives two-point laws whose log-odds differ by at most
``theta`` (each merged log-ratio lies between the extreme ones). For two-point laws with logits
``w`` and ``w + theta'``, ``sigmoid(w + theta') - sigmoid(w)`` is largest at ``w = -theta'/2``,
where it equals ``tanh(theta'/4)``. Hence ``TV <= tanh(theta/4)``, with equality for the
symmetric two-point law, and ``tanh(x) <= x`` recovers Lemma 6 (whose constant 1/4 is the
maximal slope of the sigmoid; see :mod:`glauber.theory.symbolic`).

Corollary 7 (true as printed): if ``max_i sum_{j != i} Delta_ij < 4 tau`` then the paper's
row-sum ``alpha(tau) < 1``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from glauber.core.validation import as_real_array, check_square_matrix, check_tau
from glauber.errors import InvalidParameterError
from glauber.theory.floating import UNIT_ROUNDOFF, elementary_error, gamma, round_up_array


def _oscillations(delta: ArrayLike) -> np.ndarray:
    arr = as_real_array(delta, "score oscillations Delta")
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        raise InvalidParameterError(
            "score oscillations Delta must be >= 0 and not NaN (an oscillation is max - min of a "
            "score difference); got a negative or NaN entry"
        )
    return arr


def _scalar_or_array(value: np.ndarray) -> np.ndarray | float:
    return float(value) if value.ndim == 0 else value


def lemma6_bound(delta: ArrayLike, tau: float) -> np.ndarray | float:
    """Lemma 6 as printed: the influence bound ``Delta / (4 tau)``, elementwise.

    Parameters
    ----------
    delta : float or array_like
        Score oscillation(s) ``Delta_ij`` at ``tau = 1`` (>= 0; ``inf`` allowed).
    tau : float
        Temperature, > 0.

    Returns
    -------
    float or numpy.ndarray
        ``delta / (4 tau)``; an upper bound on the influence ``c_ij(tau)`` (true as printed).

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.
    InvalidParameterError
        If an oscillation is negative or NaN.

    Examples
    --------
    >>> lemma6_bound(2.0, tau=0.5)
    1.0
    """
    tau = check_tau(tau)
    return _scalar_or_array(_oscillations(delta) / (4.0 * tau))


def tanh_bound(delta: ArrayLike, tau: float) -> np.ndarray | float:
    """Sharper Lemma 6 (ours, proved in the module docstring): ``tanh(Delta / (4 tau))``.

    Always ``<= min(1, lemma6_bound(delta, tau))``; equal to the TV distance for a symmetric
    two-point law whose log-odds differ by ``delta / tau``.

    Parameters
    ----------
    delta : float or array_like
        Score oscillation(s) at ``tau = 1`` (>= 0; ``inf`` gives 1).
    tau : float
        Temperature, > 0.

    Returns
    -------
    float or numpy.ndarray
        ``tanh(delta / (4 tau))``, an upper bound on the influence ``c_ij(tau)``.

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.
    InvalidParameterError
        If an oscillation is negative or NaN.

    Examples
    --------
    >>> round(tanh_bound(4.0, tau=1.0), 6)
    0.761594
    """
    tau = check_tau(tau)
    return _scalar_or_array(np.tanh(_oscillations(delta) / (4.0 * tau)))


def influence_matrix_bound(Delta: ArrayLike, tau: float, sharp: bool = True) -> np.ndarray:
    """Entrywise upper bound on the influence matrix ``C`` from the oscillation matrix.

    Parameters
    ----------
    Delta : array_like, shape (n, n)
        ``Delta[i, j]`` = score oscillation of site ``i`` when site ``j`` changes (>= 0);
        the diagonal is ignored.
    tau : float
        Temperature, > 0.
    sharp : bool, optional
        Use ``tanh(Delta / (4 tau))`` (default) instead of Lemma 6's ``Delta / (4 tau)``.

    Returns
    -------
    numpy.ndarray, shape (n, n)
        A matrix ``>= C(tau)`` entrywise, with zero diagonal, fit for
        :func:`glauber.theory.contraction.certify_contraction`: every entry is rounded up (the
        quotient by one ulp, ``tanh`` by its :func:`~glauber.theory.floating.elementary_error`
        and one ulp), so the bound holds in floating point too.

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.
    InvalidParameterError
        If ``Delta`` is not a finite non-negative square matrix.
    """
    arr = check_square_matrix(Delta, "Delta")
    tau = check_tau(tau)
    x = round_up_array(_oscillations(arr) / (4.0 * tau))  # a correctly rounded quotient
    if sharp:  # tanh is increasing; its own error is elementary_error
        x = np.minimum(1.0, round_up_array(np.tanh(x) * (1.0 + elementary_error("float64"))))
    np.fill_diagonal(x, 0.0)
    return x


def corollary7_alpha_bound(Delta: ArrayLike, tau: float, sharp: bool = False) -> float:
    """Corollary 7's bound on the row-sum ``alpha(tau) = max_i sum_{j != i} c_ij(tau)``.

    Parameters
    ----------
    Delta : array_like, shape (n, n)
        Oscillation matrix (``Delta[i, j]``: site ``j``'s effect on site ``i``); diagonal ignored.
    tau : float
        Temperature, > 0.
    sharp : bool, optional
        If False (default, as printed) return ``max_i sum_{j != i} Delta_ij / (4 tau)``; if True
        return the sharper ``max_i sum_{j != i} tanh(Delta_ij / (4 tau))``.

    Returns
    -------
    float
        An upper bound on ``alpha(tau)``, in floating point too: the entries of
        :func:`influence_matrix_bound` are rounded up, and each row sum is enlarged by
        ``gamma_n`` for its own rounding, then by one ulp.

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.
    InvalidParameterError
        If ``Delta`` is not a finite non-negative square matrix.

    Examples
    --------
    >>> corollary7_alpha_bound([[0.0, 1.0], [2.0, 0.0]], tau=1.0)  # 2 / 4, rounded up
    0.5000000000000003
    """
    bound = influence_matrix_bound(Delta, tau, sharp=sharp)
    n = bound.shape[0]
    rows = bound.sum(axis=1) * (1.0 + gamma(max(n, 1), UNIT_ROUNDOFF["float64"]))
    return float(round_up_array(np.max(rows)))


def corollary7_holds(Delta: ArrayLike, tau: float) -> bool:
    """Corollary 7's hypothesis, as printed: ``max_i sum_{j != i} Delta_ij < 4 tau``.

    Decided on :func:`corollary7_alpha_bound`, rounded up: when it holds,
    ``alpha(tau) <= corollary7_alpha_bound(Delta, tau) < 1`` in floating point too. (With the
    corrected Theorem 5 the row sum still bounds ``t_mix``; see
    :mod:`glauber.theory.contraction`.)

    Parameters
    ----------
    Delta : array_like, shape (n, n)
        Oscillation matrix; diagonal ignored.
    tau : float
        Temperature, > 0.

    Returns
    -------
    bool

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.
    InvalidParameterError
        If ``Delta`` is not a finite non-negative square matrix.

    Examples
    --------
    >>> corollary7_holds([[0.0, 1.0], [3.0, 0.0]], tau=1.0)
    True
    """
    return corollary7_alpha_bound(Delta, tau) < 1.0


__all__ = [
    "corollary7_alpha_bound",
    "corollary7_holds",
    "influence_matrix_bound",
    "lemma6_bound",
    "tanh_bound",
]
