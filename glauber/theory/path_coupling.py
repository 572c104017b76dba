"""Path coupling (Bubley–Dyer; Levin–Peres–Wilmer 2nd ed. Theorem 14.6, Corollary 14.8).

If a path metric ``rho`` with integer edge lengths has, for every edge ``{x, y}`` of its graph,
a one-step coupling with ``E[rho(X_1, Y_1)] <= e^{-rate} rho(x, y)``, then
``d(t) <= e^{-rate t} diam`` (Theorem 14.6) and
``t_mix(eps) <= ceil((log diam - log eps) / rate)`` (Corollary 14.8). For Glauber dynamics with the
Hamming metric, ``diam = n`` and an adjacent-pair factor ``kappa`` gives ``rate = -log kappa``
(:func:`rate_from_contraction_factor`).
"""

from __future__ import annotations

import math
import numbers

from glauber.core.validation import (
    check_eps,
    check_nonnegative_int,
    check_positive_float,
)
from glauber.errors import InvalidParameterError
from glauber.theory.floating import exp_decay, round_up


def rate_from_contraction_factor(kappa: float) -> float:
    """The rate ``-log(kappa)`` of a one-step contraction factor ``0 < kappa < 1``.

    Parameters
    ----------
    kappa : float
        One-step factor, e.g. :func:`glauber.theory.contraction.theorem5_contraction_factor`.

    Returns
    -------
    float
        ``-log(kappa) > 0`` (``math.inf`` when ``kappa == 0``).

    Raises
    ------
    InvalidParameterError
        If ``kappa`` is not in ``[0, 1)`` (a factor >= 1 is no contraction).

    Examples
    --------
    >>> round(rate_from_contraction_factor(0.5), 6)
    0.693147
    """
    if isinstance(kappa, bool) or not isinstance(kappa, numbers.Real) or not (0.0 <= kappa < 1.0):
        raise InvalidParameterError(
            f"a contraction factor must lie in [0, 1), got {kappa!r}; a factor >= 1 certifies "
            "nothing"
        )
    return math.inf if kappa == 0.0 else -math.log(float(kappa))


def path_coupling_distance_bound(t: int, rate: float, diameter: float) -> float:
    """LPW Theorem 14.6: ``d(t) <= diameter * e^{-rate t}``.

    Parameters
    ----------
    t : int
        Number of steps, >= 0.
    rate : float
        Contraction rate ``alpha > 0`` on adjacent pairs.
    diameter : float
        Diameter of the path metric (``n`` for Hamming on ``n`` sites), > 0.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If ``t`` is not an integer >= 0 or ``rate``/``diameter`` is not finite and > 0.

    Examples
    --------
    >>> round(path_coupling_distance_bound(10, 0.1, 5.0), 6)
    1.839397
    """
    t = check_nonnegative_int(t, "t")
    rate = check_positive_float(rate, "rate")
    diameter = check_positive_float(diameter, "diameter")
    if t < 2**1023:  # float(t) exists
        return diameter * math.exp(-rate * t)
    return exp_decay(math.log(diameter), t, -rate)  # t = 10**400: 0.0


def path_coupling_tmix_bound(rate: float, diameter: float, eps: float = 0.25) -> int:
    """LPW Corollary 14.8: ``t_mix(eps) <= ceil(log(diameter / eps) / rate)`` (at least 0).

    Parameters
    ----------
    rate : float
        Contraction rate ``alpha > 0``.
    diameter : float
        Diameter of the path metric, > 0.
    eps : float, optional
        Target distance in (0, 1).

    Returns
    -------
    int

    Raises
    ------
    InvalidParameterError
        If ``rate`` or ``diameter`` is not finite and > 0.
    InvalidProbabilityError
        If ``eps`` is not in (0, 1).

    Examples
    --------
    >>> path_coupling_tmix_bound(0.1, 5.0, 0.25)
    30
    """
    rate = check_positive_float(rate, "rate")
    diameter = check_positive_float(diameter, "diameter")
    eps = check_eps(eps)
    # Every operation rounded upward (math.log is within one ulp: two nudges cover it), so the
    # integer is never below the exact ceiling: a plain float ceiling undershot by one at
    # rate 1e-12, diameter 4999998, eps 1e-300 (found by tests/test_adversarial.py).
    log_ratio = round_up(round_up(round_up(math.log(diameter)))
                         + round_up(round_up(-math.log(eps))))
    if log_ratio <= 0.0:
        return 0
    value = round_up(round_up(log_ratio / rate))
    if not math.isfinite(value):
        raise InvalidParameterError(f"rate {rate!r} is too small: log(diameter/eps)/rate overflows")
    return max(0, math.ceil(value))


__all__ = [
    "path_coupling_distance_bound",
    "path_coupling_tmix_bound",
    "rate_from_contraction_factor",
]
