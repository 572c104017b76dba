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

from glauber.errors import BasinError, InvalidParameterError, InvalidProbabilityError
from glauber.theory.floating import int_times, round_up
from glauber.theory.validation import (
    check_eps,
    check_nonnegative_int,
    check_positive_float,
    check_positive_int,
    check_tau,
    check_vocab_size,
)


_TINY = sys.float_info.min  # smallest normal float64
_MAX = sys.float_info.max


def _upper(value: float) -> float:
    """An upper bound on a positive quantity, never 0: below the normal range the product of
    ``exp`` (1 ulp) and one multiplication (half an ulp) is nudged up two subnormal steps, so
    an underflow reads ``<= 1e-323`` instead of the false ``<= 0``."""
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
    return _upper(q * math.exp(-delta_star / tau))


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
    return _upper((k / n) * (q - 1) * math.exp(-delta_star / tau)) if k else 0.0


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
