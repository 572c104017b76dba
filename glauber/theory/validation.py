"""Validation of the scalar parameters shared by every statement (temperature, eps, counts).

Each check returns the value, converted, or raises a typed error from :mod:`glauber.errors`
whose message says what to change.
"""

from __future__ import annotations

import math
import numbers

from glauber.errors import (
    InvalidParameterError,
    InvalidProbabilityError,
    InvalidTemperatureError,
)


def check_tau(tau: float) -> float:
    """Return ``tau`` as a float if it is a finite positive temperature.

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not a real number, is NaN, infinite, zero or negative.
    """
    if isinstance(tau, bool) or not isinstance(tau, numbers.Real):
        raise InvalidTemperatureError(
            f"temperature tau must be a real number, got {tau!r} ({type(tau).__name__}); "
            "pass a finite float > 0, e.g. tau=1.0"
        )
    value = float(tau)
    if not math.isfinite(value) or value <= 0.0:
        raise InvalidTemperatureError(
            f"temperature tau must be finite and > 0, got {tau!r}; "
            "pass e.g. tau=1.0 (tau -> 0 is argmax decoding, which is not a Markov chain with "
            "positive conditionals)"
        )
    return value


def check_eps(eps: float, name: str = "eps") -> float:
    """Return ``eps`` as a float if it lies in the open interval (0, 1).

    Raises
    ------
    InvalidProbabilityError
        If ``eps`` is not a real number in (0, 1).
    """
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not (0.0 < float(eps) < 1.0):
        raise InvalidProbabilityError(
            f"{name} must lie strictly between 0 and 1, got {eps!r}; e.g. {name}=0.25"
        )
    return float(eps)


def check_positive_int(value: int, name: str) -> int:
    """Return ``value`` if it is an integer >= 1.

    Raises
    ------
    InvalidParameterError
        If ``value`` is not an integer or is < 1.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 1:
        raise InvalidParameterError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def check_positive_float(value: float, name: str) -> float:
    """Return ``value`` as a float if it is finite and > 0.

    Raises
    ------
    InvalidParameterError
        If ``value`` is not a finite real number > 0.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
        math.isfinite(float(value)) and float(value) > 0.0
    ):
        raise InvalidParameterError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)
