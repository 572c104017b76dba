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

Rigorous upper bounds (docs/theory.md, "Upper bounds on influence"): an
:class:`OscillationBound` is a tau-free matrix ``>= Delta`` entrywise together with the argument
that gives it; :func:`influence_matrix_bound` turns it into ``C(tau)`` with every rounding
upward, and :func:`pairwise_oscillation` is the exact oscillation of pairwise (Ising, Potts)
scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

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
    # Delta / tau, then / 4, each rounded up (4 tau would overflow above tau ~ 4.5e307, giving
    # a quotient of 0 where the exact one is large); Delta = 0 gives exactly 0
    D = _oscillations(arr)
    x = np.where(D > 0, round_up_array(round_up_array(D / tau) * 0.25), 0.0)
    if sharp:  # tanh is increasing; its own error is elementary_error
        up = np.minimum(1.0, round_up_array(np.tanh(x) * (1.0 + elementary_error("float64"))))
        x = np.where(D > 0, up, 0.0)
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
    0.5000000000000004
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


@dataclass(frozen=True)
class OscillationBound:
    """A tau-free upper bound ``Delta[i, j] >= Delta_ij`` on Lemma 6's oscillation, and its argument.

    Models that can bound their own oscillation return one from ``oscillation_upper_bound()``
    (pairwise toys in closed form, masked LMs from the weights of their head);
    :func:`glauber.estimators.influence_upper_bound` turns it into ``C(tau)``.

    Attributes
    ----------
    Delta : numpy.ndarray, shape (n, n)
        Finite, ``>= 0``, zero diagonal; an upper bound on the oscillation of the scores the
        model returns (floating point included), entry by entry.
    method : str
        The argument: ``"closed-form"`` (pairwise couplings), ``"layernorm-head"`` (the weights
        of a LayerNorm -> linear head), ...
    details : dict
        What the argument used (JSON-safe values), for the certificate.
    """

    Delta: np.ndarray
    method: str
    details: dict[str, Any] = field(default_factory=dict)

    def restricted(self, sites: Any) -> "OscillationBound":
        """The bound of the chain on ``sites`` only (a window: every window context is a
        context of the full chain, so the full chain's bound holds on it)."""
        idx = np.asarray(sites, dtype=np.int64)
        return OscillationBound(self.Delta[np.ix_(idx, idx)].copy(), self.method,
                                dict(self.details))


def pairwise_oscillation(K: ArrayLike, score_error: ArrayLike | None = None) -> np.ndarray:
    """Exact oscillation (Lemma 6) of pairwise scores, plus their rounding.

    For scores ``s_i(a; x) = h_i(a) + sum_{k != i} K[i, k, a, x_k]`` (Ising, Potts, asymmetric
    Ising, Curie–Weiss), changing ``x_j`` from ``b`` to ``b'`` changes ``s_i(a)`` by
    ``K[i, j, a, b] - K[i, j, a, b']`` whatever the other sites hold, so

    ``Delta_ij = max_{b, b'} [max_a (K[i,j,a,b] - K[i,j,a,b']) - min_a (K[i,j,a,b] - K[i,j,a,b'])]``

    exactly (Ising with spins ``+-1``: ``4 |J_ij|``; Potts: ``2 |J_ij|``). A model computes its
    scores in floating point: if each computed score at site ``i`` is within
    ``score_error[i]`` of the exact one, the computed oscillation is within
    ``4 score_error[i]`` of the exact one, which is added where site ``j`` enters at all (a
    zero coupling adds ``+-0`` to the computed scores, which are then bitwise independent of
    ``x_j``). Every step is rounded upward.

    Parameters
    ----------
    K : array_like, shape (n, n, q, q)
        ``K[i, k, a, b]``: the contribution of ``x_k = b`` to ``s_i(a)`` (finite).
    score_error : array_like, shape (n,), optional
        Bound on ``|computed - exact|`` of site ``i``'s scores (default 0).

    Returns
    -------
    numpy.ndarray, shape (n, n)
        ``>= Delta_ij`` of the computed scores; zero diagonal.

    Raises
    ------
    InvalidParameterError
        If ``K`` is not a finite ``(n, n, q, q)`` array or ``score_error`` is malformed.

    Examples
    --------
    >>> s = np.array([-1.0, 1.0])
    >>> K = np.zeros((2, 2, 2, 2)); K[0, 1] = K[1, 0] = 0.5 * np.outer(s, s)
    >>> pairwise_oscillation(K).round(12).tolist()  # 4 |J| = 2, rounded up by a few ulps
    [[0.0, 2.0], [2.0, 0.0]]
    """
    arr = as_real_array(K, "pairwise couplings K")
    if arr.ndim != 4 or arr.shape[0] != arr.shape[1] or arr.shape[2] != arr.shape[3]:
        raise InvalidParameterError(f"K must have shape (n, n, q, q), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise InvalidParameterError("K holds NaN or infinite couplings; pass finite values")
    n = arr.shape[0]
    err = np.zeros(n) if score_error is None else as_real_array(score_error, "score_error")
    if err.shape != (n,) or not np.isfinite(err).all() or np.any(err < 0):
        raise InvalidParameterError(f"score_error must be n = {n} finite values >= 0")
    spread = np.empty((n, n))
    for i in range(n):  # one site at a time: n q^3 values
        diff = arr[i][:, :, :, None] - arr[i][:, :, None, :]  # [k, a, b, b']
        spread[i] = (diff.max(axis=1) - diff.min(axis=1)).max(axis=(1, 2))
    u = UNIT_ROUNDOFF["float64"]
    # two subtractions in float64 (each within u relative), then the rounding of the scores;
    # a site that does not enter (K[i, j] = 0) adds terms +-0 whatever x_j is: bitwise the same
    # computed scores, no rounding to pay
    coupled = np.any(arr != 0.0, axis=(2, 3))
    out = np.where(coupled, np.nextafter(spread * (1.0 + gamma(3, u)) + 4.0 * err[:, None],
                                         np.inf), 0.0)
    np.fill_diagonal(out, 0.0)
    return out


def dot_rounding(magnitude: float, terms: int, unit: float = UNIT_ROUNDOFF["float64"]) -> float:
    """Bound on ``|fl(sum of terms products) - exact|`` for a sum whose absolute terms add up to
    ``magnitude`` (Higham 2002, eq. 3.5: ``gamma_terms`` relative to the absolute sum), rounded
    up; any summation order, with or without fused multiply-adds.

    Examples
    --------
    >>> dot_rounding(1.0, 3) > 3 * 2.0**-53
    True
    """
    return math.nextafter(gamma(int(terms), unit) * float(magnitude), math.inf)


__all__ = [
    "OscillationBound",
    "dot_rounding",
    "pairwise_oscillation",
    "corollary7_alpha_bound",
    "corollary7_holds",
    "influence_matrix_bound",
    "lemma6_bound",
    "tanh_bound",
]
