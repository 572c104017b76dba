"""Assumption 1 / Theorem 8 (low-temperature escape), true as printed, and the bottleneck bound.

Theorem 8: if every exit-causing site of every ``x`` in a basin ``B`` holds the argmax token with
score margin ``>= Delta_star`` over every exit-causing token, then
``P_tau(x, B^c) <= |V| e^{-Delta_star/tau}``, the conductance
``Phi(B) = sum_{x in B} mu(x) P(x, B^c) / mu(B)`` obeys the same bound, and if ``mu(B) <= 1/2``,
``t_mix(1/4) >= e^{Delta_star/tau} / (4 |V|)``.

The last step is Levin–Peres–Wilmer (2nd ed.) Theorem 7.4, whose proof needs no reversibility:
with ``mu_A = pi(. | A)``, stationarity alone gives ``||mu_A P - mu_A||_TV = Phi(A)``, so
``||mu_A P^t - mu_A||_TV <= t Phi(A)`` and ``d(t) >= ||mu_A P^t - pi||_TV >= 1 - pi(A) - t Phi(A)``.
"""

from __future__ import annotations

import math
import numbers
import sys
from dataclasses import dataclass

import numpy as np

from glauber.core.arrays import JsonResult
from glauber.core.validation import (
    check_eps,
    check_nonnegative_int,
    check_positive_float,
    check_positive_int,
    check_tau,
    check_vocab_size,
)
from glauber.errors import BasinError, InvalidParameterError, InvalidProbabilityError
from glauber.theory.floating import int_times, round_up


@dataclass(frozen=True)
class BasinMargins(JsonResult):
    """Assumption 1 on a basin ``B`` (scores at ``tau = 1``) and, at ``tau``, Theorem 8's bounds.

    For ``x`` in ``B``, a site ``i`` is *exit-causing* if some token ``a != x_i`` has
    ``x^(i -> a)`` outside ``B``; such ``a`` are the exit-causing tokens. Assumption 1 asks, at
    every exit-causing ``(x, i)``: ``x_i`` maximises ``s_i(.; x_{-i})`` and
    ``s_i(x_i) - s_i(a) >= Delta_star > 0`` for every exit-causing ``a``. Built by
    :func:`basin_margins` from per-(state, site) margins, over every basin state
    (``complete``: exact, as :meth:`glauber.toy_models.ExactChain.margins` does) or over sampled
    basin states (:func:`glauber.estimators.margins`: the data of those states only).

    Attributes
    ----------
    exit_margin : numpy.ndarray, shape (m, n)
        ``s_i(x_i) - max over exit-causing a of s_i(a)`` for each examined state and site;
        ``inf`` (``"inf"`` in JSON) where the site is not exit-causing.
    delta_star : float
        Smallest exit margin: the largest ``Delta_star`` for which the margin inequality holds
        (negative if it fails; ``inf`` if no examined state has an exit-causing site).
    site_gap_min : float
        Smallest per-position gap ``Delta_i(x) = s_i(x_i) - max_{a != x_i} s_i(a)`` (paper
        Appendix A.1) over exit-causing ``(x, i)``; ``>= 0`` iff ``argmax_holds``.
    argmax_holds : bool
        ``x_i`` attains ``max_a s_i(a; x_{-i})`` at every exit-causing ``(x, i)`` (ties allowed).
    holds : bool
        Assumption 1 on the examined states: ``argmax_holds`` and ``delta_star > 0``.
    k : int
        Largest number of exit-causing sites of one examined state.
    max_exit_tokens : int
        Largest number of exit-causing tokens at one exit-causing ``(x, i)`` (at most ``q - 1``).
    n, q : int
        Sites and vocabulary size.
    basin_size : int
        Number of basin states examined (``|B|`` when ``complete``).
    complete : bool
        Every state of the basin was examined, so Assumption 1 is decided exactly.
    boundary_states : int
        Examined states with at least one exit-causing site.
    worst_state, worst_site : int
        The state (its id: the chain's state index for an exact chain, the row of the given
        states otherwise) and site attaining ``delta_star`` (``-1`` if there is none).
    delta_star_lower : float
        ``delta_star`` less the rounding error of the margins (equal to it for exact margins):
        the margin Theorem 8 is evaluated at.
    tau : float or None
        Temperature of the three bounds below.
    escape_bound, sharper_escape_bound, tmix_lower_bound : float or None
        Theorem 8 at ``tau`` and ``Delta_star = delta_star_lower``: ``|V| e^{-Delta_star/tau}``,
        ``(k/n)(|V| - 1) e^{-Delta_star/tau}`` and ``e^{Delta_star/tau} / (4|V|)`` (the last
        needs ``mu_tau(B) <= 1/2``); ``None`` without ``tau`` or when Assumption 1 fails. When
        no examined state has an exit-causing site the escape bounds are 0 (exact: those states
        cannot leave in one step) and ``tmix_lower_bound`` is None (nothing bounds ``t_mix``).
    """

    exit_margin: np.ndarray
    delta_star: float
    site_gap_min: float
    argmax_holds: bool
    holds: bool
    k: int
    max_exit_tokens: int
    n: int
    q: int
    basin_size: int
    complete: bool
    boundary_states: int
    worst_state: int
    worst_site: int
    delta_star_lower: float
    tau: float | None
    escape_bound: float | None
    sharper_escape_bound: float | None
    tmix_lower_bound: float | None

    @property
    def exit_sites(self) -> np.ndarray:
        """``[m, n]`` bool: the exit-causing sites of each examined state."""
        return np.isfinite(self.exit_margin)


def basin_margins(
    exit_margin: np.ndarray,
    site_gap: np.ndarray,
    exit_tokens: np.ndarray,
    q: int,
    *,
    state_ids: np.ndarray | None = None,
    tau: float | None = None,
    complete: bool = False,
    exit_margin_error: np.ndarray | None = None,
    site_gap_error: np.ndarray | None = None,
) -> BasinMargins:
    """Assumption 1 data and Theorem 8's bounds from per-(state, site) margins.

    Parameters
    ----------
    exit_margin : array, shape (m, n)
        ``s_i(x_i) - max over exit-causing a of s_i(a)`` (``inf`` where no token is
        exit-causing), scores at ``tau = 1``.
    site_gap : array, shape (m, n)
        ``s_i(x_i) - max_{a != x_i} s_i(a)`` (only exit-causing sites are used).
    exit_tokens : array of int, shape (m, n)
        Number of exit-causing tokens at each state and site.
    q : int
        Vocabulary size.
    state_ids : array of int, shape (m,), optional
        The id reported as ``worst_state`` for each row (default: the row number).
    tau : float, optional
        Temperature of Theorem 8's bounds.
    complete : bool
        The rows are every state of the basin.
    exit_margin_error, site_gap_error : array, shape (m, n), optional
        Bounds on the rounding errors of ``exit_margin`` and ``site_gap`` (default 0: exact).
        Assumption 1 is decided, and Theorem 8 evaluated, at the margins less their errors, so
        rounding can only make the conclusion weaker.

    Returns
    -------
    BasinMargins

    Examples
    --------
    Two sites that both prefer token 0 by a margin of 3; the basin is the single state (0, 0):

    >>> m = basin_margins(np.full((1, 2), 3.0), np.full((1, 2), 3.0), np.ones((1, 2), int), 2)
    >>> (m.delta_star, m.holds, m.k)
    (3.0, True, 2)
    """
    exit_margin = np.asarray(exit_margin, dtype=np.float64)
    causing = np.asarray(exit_tokens) > 0
    m, n = exit_margin.shape
    gap_err = 0.0 if site_gap_error is None else np.asarray(site_gap_error, dtype=np.float64)
    exit_err = 0.0 if exit_margin_error is None else np.asarray(exit_margin_error, np.float64)
    gaps = np.where(causing, np.asarray(site_gap, dtype=np.float64), np.inf)
    gaps_lower = np.where(causing, gaps - gap_err, np.inf)
    delta_star = float(exit_margin.min()) if exit_margin.size else math.inf
    lower = np.where(np.isfinite(exit_margin), exit_margin - exit_err, np.inf)
    delta_star_lower = float(lower.min()) if lower.size else math.inf
    site_gap_min = float(gaps.min()) if gaps.size else math.inf
    argmax_holds = bool((gaps_lower.min() if gaps.size else math.inf) >= 0.0)
    holds = argmax_holds and delta_star_lower > 0.0
    k = int(causing.sum(axis=1).max()) if m else 0
    ids = np.arange(m) if state_ids is None else np.asarray(state_ids)
    worst_state = worst_site = -1
    if causing.any():
        row, site = np.unravel_index(int(np.argmin(exit_margin)), exit_margin.shape)
        worst_state, worst_site = int(ids[row]), int(site)
    esc = sharp = tmix = None
    if tau is not None:
        tau = check_tau(tau)
        if holds and math.isinf(delta_star):  # no exit-causing move from any examined state
            esc, sharp, tmix = 0.0, 0.0, None
        elif holds:
            esc = theorem8_escape_bound(q, delta_star_lower, tau)
            sharp = sharper_escape_bound(n, k, q, delta_star_lower, tau)
            tmix = theorem8_tmix_lower_bound(q, delta_star_lower, tau)
    return BasinMargins(
        exit_margin=exit_margin,
        delta_star=delta_star,
        site_gap_min=site_gap_min,
        argmax_holds=argmax_holds,
        holds=holds,
        k=k,
        max_exit_tokens=int(np.asarray(exit_tokens).max()) if m else 0,
        n=int(n),
        q=int(q),
        basin_size=int(m),
        complete=bool(complete),
        boundary_states=int(causing.any(axis=1).sum()),
        worst_state=worst_state,
        worst_site=worst_site,
        delta_star_lower=delta_star_lower,
        tau=tau,
        escape_bound=esc,
        sharper_escape_bound=sharp,
        tmix_lower_bound=tmix,
    )


_TINY = sys.float_info.min  # smallest normal float64
_MAX = sys.float_info.max


def _upper(value: float) -> float:
    """An upper bound on a positive quantity computed by one ``exp`` (within one ulp), never 0:
    below the normal range it is nudged up two subnormal steps, so an underflow reads
    ``<= 1e-323`` instead of the false ``<= 0``."""
    return round_up(round_up(value)) if value < _TINY else value


def _lower_exp(x: float) -> float:
    """A lower bound on ``e^x``: the largest float64 when ``e^x`` overflows (never ``inf``, which
    would claim an infinite lower bound for a finite quantity)."""
    try:
        return math.exp(x)
    except OverflowError:
        return _MAX


def _check_margin_args(q: int, delta_star: float, tau: float) -> tuple[int, float, float]:
    """Checked ``(q, delta_star, tau)`` of the Theorem 8 bounds (Assumption 1's margin)."""
    return check_vocab_size(q), check_positive_float(delta_star, "delta_star"), check_tau(tau)


def theorem8_escape_bound(q: int, delta_star: float, tau: float) -> float:
    """Theorem 8 as printed: ``P_tau(x, B^c) <= |V| e^{-Delta_star/tau}``, and so is ``Phi(B)``.

    Parameters
    ----------
    q : int
        Vocabulary size ``|V|``, >= 2.
    delta_star : float
        Uniform local margin of Assumption 1, finite and > 0.
    tau : float
        Temperature, > 0.

    Returns
    -------
    float
        The bound on the one-step escape probability of every basin state and on the
        conductance ``Phi(B)``; it can exceed 1 (then it is vacuous). Never 0: where it
        underflows float64 a subnormal upper bound is returned (use
        :func:`log_theorem8_escape_bound` for its value).

    Raises
    ------
    VocabularyError
        If ``q`` is not an integer >= 2.
    InvalidParameterError
        If ``delta_star`` is not finite and > 0.
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.

    Examples
    --------
    >>> round(theorem8_escape_bound(2, 1.0, 1.0), 6)
    0.735759
    """
    q, delta_star, tau = _check_margin_args(q, delta_star, tau)
    value = q * math.exp(-delta_star / tau)
    if value >= _TINY:
        return value
    # Below the normal range the product would multiply exp's subnormal rounding by q (an
    # upper bound 0.1% below the exact value was found by tests/test_adversarial.py at
    # q = 468, Delta*/tau = 749.9): one exp of the whole exponent, then nudged up.
    return _upper(math.exp(math.log(q) - delta_star / tau))


def log_theorem8_escape_bound(q: int, delta_star: float, tau: float) -> float:
    """``log(|V| e^{-Delta_star/tau}) = log |V| - Delta_star / tau``: Theorem 8's escape and
    conductance bound in log space, finite however small the bound is.

    Raises
    ------
    VocabularyError, InvalidParameterError, InvalidTemperatureError
        As :func:`theorem8_escape_bound`.

    Examples
    --------
    >>> round(log_theorem8_escape_bound(2, 1000.0, 1e-3) / math.log(10), 3)
    -434294.181
    """
    q, delta_star, tau = _check_margin_args(q, delta_star, tau)
    return math.log(q) - delta_star / tau


def sharper_escape_bound(n: int, k: int, q: int, delta_star: float, tau: float) -> float:
    """Sharper Theorem 8 bound ``(k/n)(|V| - 1) e^{-Delta_star/tau}`` with ``k`` exit-causing sites.

    The proof of Theorem 8 already gives it: an exit needs one of the ``k`` exit-causing sites
    to be picked (probability ``k/n``) and then one of at most ``|V| - 1`` exit-causing tokens,
    each of conditional probability ``<= e^{-Delta_star/tau}``.

    Parameters
    ----------
    n : int
        Number of sites, >= 1.
    k : int
        Number of exit-causing sites, ``0 <= k <= n``.
    q : int
        Vocabulary size ``|V|``, >= 2.
    delta_star : float
        Uniform local margin, finite and > 0.
    tau : float
        Temperature, > 0.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If ``n`` is not a positive integer, ``k`` is not in ``0..n`` or ``delta_star`` is not
        finite and > 0.
    VocabularyError
        If ``q`` is not an integer >= 2.
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.

    Examples
    --------
    >>> round(sharper_escape_bound(10, 2, 3, 1.0, 1.0), 6)
    0.147152
    """
    n = check_positive_int(n, "n")
    k = check_nonnegative_int(k, "k (number of exit-causing sites)")
    if k > n:
        raise InvalidParameterError(f"k (exit-causing sites) must be <= n = {n}, got {k}")
    q, delta_star, tau = _check_margin_args(q, delta_star, tau)
    if not k:
        return 0.0
    value = (k / n) * (q - 1) * math.exp(-delta_star / tau)
    if value >= _TINY:
        return value
    return _upper(math.exp(math.log((k / n) * (q - 1)) - delta_star / tau))  # see above


def theorem8_tmix_lower_bound(q: int, delta_star: float, tau: float) -> float:
    """Theorem 8 as printed: ``t_mix(1/4) >= e^{Delta_star/tau} / (4 |V|)`` when ``mu(B) <= 1/2``.

    The caller must check ``mu_tau(B) <= 1/2`` (it depends on the stationary law).

    Parameters
    ----------
    q : int
        Vocabulary size ``|V|``, >= 2.
    delta_star : float
        Uniform local margin, finite and > 0.
    tau : float
        Temperature, > 0.

    Returns
    -------
    float
        The lower bound; the largest float64 when it exceeds it (the true bound is larger, so
        that is still a lower bound; the exact value is in
        :func:`log_theorem8_tmix_lower_bound`).

    Raises
    ------
    VocabularyError
        If ``q`` is not an integer >= 2.
    InvalidParameterError
        If ``delta_star`` is not finite and > 0.
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.

    Examples
    --------
    >>> round(theorem8_tmix_lower_bound(2, 1.0, 1.0), 6)
    0.339785
    """
    q, delta_star, tau = _check_margin_args(q, delta_star, tau)
    try:
        return math.exp(delta_star / tau) / (4.0 * q)
    except OverflowError:
        return _lower_exp(delta_star / tau - math.log(4.0 * q))


def log_theorem8_tmix_lower_bound(q: int, delta_star: float, tau: float) -> float:
    """``log(e^{Delta_star/tau} / (4 |V|)) = Delta_star / tau - log(4 |V|)``: Theorem 8's
    ``t_mix`` lower bound in log space (finite where the bound itself exceeds float64).

    Raises
    ------
    VocabularyError, InvalidParameterError, InvalidTemperatureError
        As :func:`theorem8_tmix_lower_bound`.

    Examples
    --------
    >>> round(log_theorem8_tmix_lower_bound(2, 1.0, 1e-3), 4)
    997.9206
    """
    q, delta_star, tau = _check_margin_args(q, delta_star, tau)
    return delta_star / tau - math.log(4.0 * q)


def _check_basin_mass(pi_A: float) -> float:
    if isinstance(pi_A, bool) or not isinstance(pi_A, numbers.Real) or not (
        0.0 <= float(pi_A) <= 1.0
    ):
        raise InvalidProbabilityError(f"pi_A must be a probability in [0, 1], got {pi_A!r}")
    value = float(pi_A)
    if value in (0.0, 1.0):
        raise BasinError(
            f"pi_A = {value}: the basin has stationary mass 0 or 1 (empty or the whole space); "
            "pick a basin A with 0 < pi(A) < 1"
        )
    return value


def _check_conductance(phi_A: float) -> float:
    if isinstance(phi_A, bool) or not isinstance(phi_A, numbers.Real) or not (
        0.0 <= float(phi_A) <= 1.0
    ):
        raise InvalidProbabilityError(
            f"phi_A (the conductance Q(A, A^c) / pi(A)) must lie in [0, 1], got {phi_A!r}"
        )
    return float(phi_A)


def bottleneck_distance_lower_bound(t: int, pi_A: float, phi_A: float) -> float:
    """Levin–Peres–Wilmer Theorem 7.4, non-reversible form: ``d(t) >= 1 - pi(A) - t Phi(A)``.

    Parameters
    ----------
    t : int
        Number of steps, >= 0.
    pi_A : float
        Stationary mass of the set ``A``, strictly between 0 and 1.
    phi_A : float
        Its conductance ``Phi(A) = sum_{x in A} pi(x) P(x, A^c) / pi(A)``, in [0, 1].

    Returns
    -------
    float
        ``1 - pi_A - t phi_A`` (may be negative, when it says nothing beyond ``d(t) >= 0``).

    Raises
    ------
    InvalidParameterError
        If ``t`` is not an integer >= 0.
    InvalidProbabilityError
        If ``pi_A`` or ``phi_A`` is outside [0, 1].
    BasinError
        If ``pi_A`` is 0 or 1.

    Examples
    --------
    >>> bottleneck_distance_lower_bound(10, 0.5, 0.01)
    0.4
    """
    t = check_nonnegative_int(t, "t")
    pi_A = _check_basin_mass(pi_A)
    phi_A = _check_conductance(phi_A)
    if t < 2**1023:  # float(t) exists
        return 1.0 - pi_A - t * phi_A
    return 1.0 - pi_A - int_times(t, phi_A)  # -inf beyond the float range: still a lower bound


def bottleneck_tmix_lower_bound(pi_A: float, phi_A: float, eps: float = 0.25) -> float:
    """``t_mix(eps) >= (1 - pi(A) - eps) / Phi(A)``, from :func:`bottleneck_distance_lower_bound`.

    ``d(t_mix) <= eps`` forces ``1 - pi_A - t_mix phi_A <= eps``. With ``pi_A <= 1/2`` and
    ``eps = 1/4`` this is LPW's ``t_mix >= 1 / (4 Phi)``, the last step of Theorem 8. The value
    is real; ``t_mix`` is also at least its ceiling.

    Parameters
    ----------
    pi_A : float
        Stationary mass of ``A``, strictly between 0 and 1.
    phi_A : float
        Conductance of ``A``, in [0, 1].
    eps : float, optional
        Target distance in (0, 1).

    Returns
    -------
    float
        The lower bound, >= 0 (``0.0`` when ``pi_A + eps >= 1``; ``math.inf`` when ``phi_A = 0``
        and ``pi_A + eps < 1``: the chain never leaves ``A``).

    Raises
    ------
    InvalidProbabilityError
        If ``pi_A`` or ``phi_A`` is outside [0, 1] or ``eps`` outside (0, 1).
    BasinError
        If ``pi_A`` is 0 or 1.

    Examples
    --------
    >>> bottleneck_tmix_lower_bound(0.5, 0.01, 0.25)
    25.0
    """
    pi_A = _check_basin_mass(pi_A)
    phi_A = _check_conductance(phi_A)
    eps = check_eps(eps)
    gap = 1.0 - pi_A - eps
    if gap <= 0.0:
        return 0.0
    if phi_A == 0.0:
        return math.inf
    return min(gap / phi_A, _MAX)  # gap / (subnormal phi) overflows: the true value is finite


def log_bottleneck_tmix_lower_bound(pi_A: float, log_phi_A: float, eps: float = 0.25) -> float:
    """``log((1 - pi(A) - eps) / Phi(A))`` from ``log Phi(A)``: :func:`bottleneck_tmix_lower_bound`
    for conductances that underflow float64 (e.g. ``ExactChain.log_conductance``).

    Returns
    -------
    float
        The log of the lower bound (``-inf`` when ``pi_A + eps >= 1``: no bound).

    Raises
    ------
    InvalidProbabilityError
        If ``pi_A`` is outside [0, 1], ``log_phi_A > 0`` or NaN, or ``eps`` outside (0, 1).
    BasinError
        If ``pi_A`` is 0 or 1.

    Examples
    --------
    >>> round(log_bottleneck_tmix_lower_bound(0.5, -1000.0), 4)
    998.6137
    """
    pi_A = _check_basin_mass(pi_A)
    eps = check_eps(eps)
    if isinstance(log_phi_A, bool) or not isinstance(log_phi_A, numbers.Real) or not (
        float(log_phi_A) <= 0.0
    ):
        raise InvalidProbabilityError(
            f"log_phi_A must be the log of a conductance in (0, 1], i.e. <= 0; got {log_phi_A!r}"
        )
    gap = 1.0 - pi_A - eps
    if gap <= 0.0:
        return -math.inf
    return math.log(gap) - float(log_phi_A)


__all__ = [
    "basin_margins",
    "BasinMargins",
    "bottleneck_distance_lower_bound",
    "bottleneck_tmix_lower_bound",
    "log_bottleneck_tmix_lower_bound",
    "log_theorem8_escape_bound",
    "log_theorem8_tmix_lower_bound",
    "sharper_escape_bound",
    "theorem8_escape_bound",
    "theorem8_tmix_lower_bound",
]
