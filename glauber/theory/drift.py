"""Section 5.4's drift certificate: NOT rigorous as printed; the corrected band certificate.

As printed, Section 5.4 checks that the expected one-step change of a count statistic ``X`` (the
number of '!' tokens) is positive for sampled states AT the basin boundary, and concludes that
escape takes exponentially long. Positive drift at one level does not imply that: the chain can
step past the boundary level, where nothing was checked, and the conclusion also needs a margin
``b - a`` over which the drift acts (:func:`boundary_drift_as_printed` merely reports the printed
criterion).

Corrected (:func:`band_drift_escape_bound`). Suppose every step changes ``X`` by at most ``c``,
and ``E[X_{t+1} - X_t | current state] >= eps > 0`` for every state with ``a < X < b``. Then for
``X_0 >= b``,

    P(X_t <= a for some t <= T) <= T exp(-(2 eps / c^2) (b - a - c)).

Proof. Put ``lambda = 2 eps / c^2``. While ``a < X_t < b`` the increment ``D`` lies in
``[-c, c]`` with mean ``>= eps``, so Hoeffding's lemma gives
``E[e^{-lambda D} | F_t] <= exp(-lambda eps + lambda^2 (2c)^2 / 8) = 1``: ``e^{-lambda X_t}`` is a
supermartingale inside the band. An escape must end with an excursion that starts at some time
``s <= T`` with ``X_{s-1} >= b`` and ``X_s in [b - c, b)``, and stays in ``(a, b)`` until it hits
``{X <= a}`` (when ``b - c <= a`` the bound is ``>= T`` and vacuous). By optional stopping (at
the exit from the band, capped at ``T``), from ``X_s = x`` the probability that the excursion
leaves the band downwards is at most ``e^{-lambda (x - a)} <= e^{-lambda (b - c - a)}``. A union
bound over the ``T`` possible starts gives the claim. Glauber dynamics changes a count by at most
``c = 1`` per step.
"""

from __future__ import annotations

import math
import sys
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from glauber.core.validation import (
    as_real_array,
    check_finite_float,
    check_nonnegative_int,
    check_positive_float,
)
from glauber.errors import InvalidParameterError
from glauber.theory.floating import round_up


@dataclass(frozen=True)
class BandDriftBound:
    """Result of :func:`band_drift_escape_bound`.

    Attributes
    ----------
    bound : float
        ``min(1, T exp(-exponent))``: the bound on ``P(escape below a within T steps)``.
    vacuous : bool
        True when ``T exp(-exponent) >= 1`` (the bound says nothing).
    exponent : float
        ``(2 eps / c^2)(b - a - c)``.
    eps, a, b, c : float
        The drift lower bound, the band ``(a, b)`` and the largest one-step change.
    T : int
        The time horizon.
    """

    bound: float
    vacuous: bool
    exponent: float
    eps: float
    a: float
    b: float
    T: int
    c: float

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a plain dict (all finite numbers, JSON-safe)."""
        return asdict(self)


def band_drift_escape_bound(
    eps: float, a: float, b: float, T: int, c: float = 1.0
) -> BandDriftBound:
    """Corrected Section 5.4 certificate: ``P(escape) <= min(1, T exp(-(2 eps/c^2)(b - a - c)))``.

    Hypotheses (the caller checks them, e.g. exactly on a toy chain): every step changes the
    statistic ``X`` by at most ``c``; the one-step drift is ``>= eps`` at EVERY state with
    ``a < X < b`` (not only at the boundary level); the chain starts with ``X_0 >= b``. The
    event bounded is ``{X_t <= a for some t <= T}``. Proof in the module docstring (Hoeffding's
    lemma + optional stopping + a union bound).

    Parameters
    ----------
    eps : float
        Lower bound on the drift inside the band, ``0 < eps <= c``.
    a, b : float
        The band ``(a, b)``, finite, ``a < b``.
    T : int
        Time horizon (steps), >= 0.
    c : float, optional
        Largest change of ``X`` in one step, > 0 (1 for a count under Glauber dynamics).

    Returns
    -------
    BandDriftBound
        The bound, whether it is vacuous, and its exponent.

    Raises
    ------
    InvalidParameterError
        If ``eps`` or ``c`` is not finite and > 0, ``eps > c`` (no chain has such a drift),
        ``a`` or ``b`` is not finite, ``a >= b``, or ``T`` is not an integer >= 0.

    Examples
    --------
    >>> r = band_drift_escape_bound(eps=0.5, a=80, b=90, T=100)
    >>> round(r.bound, 6), r.vacuous
    (0.012341, False)
    """
    eps = check_positive_float(eps, "eps (drift lower bound)")
    c = check_positive_float(c, "c (largest one-step change)")
    if eps > c:
        raise InvalidParameterError(
            f"drift eps = {eps} exceeds the largest step c = {c}; no chain has such a drift, "
            "check eps and c"
        )
    a = check_finite_float(a, "a (lower end of the band)")
    b = check_finite_float(b, "b (upper end of the band)")
    if not a < b:
        raise InvalidParameterError(f"the band needs a < b, got a = {a}, b = {b}")
    T = check_nonnegative_int(T, "T (time horizon)")
    exponent = (2.0 * eps / c**2) * (b - a - c)
    if T == 0:
        bound = 0.0
    else:
        log_bound = math.log(T) - exponent
        bound = 1.0 if log_bound >= 0.0 else math.exp(log_bound)
        if 0.0 < bound < sys.float_info.min or (bound == 0.0 and log_bound > -math.inf):
            bound = round_up(round_up(bound))  # subnormal: exp loses its relative accuracy
    return BandDriftBound(
        bound=bound,
        vacuous=bound >= 1.0,
        exponent=exponent,
        eps=eps,
        a=a,
        b=b,
        T=T,
        c=c,
    )


def boundary_drift_as_printed(drift_at_boundary: ArrayLike) -> bool:
    """Section 5.4's criterion as printed: is the smallest sampled boundary drift > 0?

    This only REPORTS the paper's check. It proves nothing by itself: positive drift at the
    boundary level says nothing about the levels just inside the boundary, and a drift that
    holds on a band of width ``b - a`` comparable to the step size gives no exponential bound.
    Use :func:`band_drift_escape_bound` with a drift verified on a whole band for a certificate.

    Parameters
    ----------
    drift_at_boundary : array_like
        One-step drifts ``delta_tau(x)`` at sampled boundary states (at least one, finite).

    Returns
    -------
    bool
        ``min(drift_at_boundary) > 0``.

    Raises
    ------
    InvalidParameterError
        If no drift is given or a drift is NaN or infinite.

    Examples
    --------
    >>> boundary_drift_as_printed([0.02, 0.05])
    True
    """
    arr = as_real_array(drift_at_boundary, "drift_at_boundary").ravel()
    if arr.size == 0:
        raise InvalidParameterError("pass at least one boundary drift value")
    if not np.all(np.isfinite(arr)):
        raise InvalidParameterError("boundary drifts must be finite; got NaN or infinity")
    return bool(arr.min() > 0.0)


__all__ = [
    "band_drift_escape_bound",
    "BandDriftBound",
    "boundary_drift_as_printed",
]
