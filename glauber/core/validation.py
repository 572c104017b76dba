"""Validation of the scalar parameters shared by every statement (temperature, eps, counts).

Each check returns the value, converted, or raises a typed error from :mod:`glauber.errors`
whose message says what to change.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from glauber.errors import (
    InvalidParameterError,
    InvalidProbabilityError,
    InvalidTemperatureError,
    VocabularyError,
)


class Temperature(float):
    """A temperature :func:`check_tau` has accepted: a finite float ``> 0``.

    :func:`check_tau` returns one, and returns one it is given as it is, so a temperature passed
    down a call chain (``certify`` -> an estimator -> a theory function) is validated once, at
    the public entry point, and every function below only reads it. Arithmetic on it gives a
    plain float (a derived value is not a checked temperature).
    """

    __slots__ = ()


def check_tau(tau: float) -> Temperature:
    """Return ``tau`` as a :class:`Temperature` if it is a finite positive temperature.

    A :class:`Temperature` (already checked) is returned as it is.

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not a real number, is NaN, infinite, zero or negative.
    """
    if type(tau) is Temperature:
        return tau
    return Temperature(_checked_temperature(tau))


def _checked_temperature(tau: float) -> float:
    """The validation of :func:`check_tau`, run once per temperature that enters the library."""
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


def check_nonnegative_int(value: int, name: str) -> int:
    """Return ``value`` if it is an integer >= 0.

    Raises
    ------
    InvalidParameterError
        If ``value`` is not an integer or is negative.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise InvalidParameterError(f"{name} must be an integer >= 0, got {value!r}")
    return int(value)


def check_nonnegative_float(value: float, name: str) -> float:
    """Return ``value`` as a float if it is finite and >= 0.

    Raises
    ------
    InvalidParameterError
        If ``value`` is not a finite real number >= 0.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
        math.isfinite(float(value)) and float(value) >= 0.0
    ):
        raise InvalidParameterError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def check_finite_float(value: float, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number.

    Raises
    ------
    InvalidParameterError
        If ``value`` is not a finite real number.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(
        float(value)
    ):
        raise InvalidParameterError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def check_vocab_size(q: int) -> int:
    """Return the vocabulary size ``q`` if it is an integer >= 2.

    Raises
    ------
    VocabularyError
        If ``q`` is not an integer >= 2 (a chain on one token never moves).
    """
    if isinstance(q, bool) or not isinstance(q, numbers.Integral) or int(q) < 2:
        raise VocabularyError(
            f"vocabulary size q = |V| must be an integer >= 2, got {q!r}; a chain on one token "
            "never moves"
        )
    return int(q)


def as_real_array(value: object, name: str) -> np.ndarray:
    """Return ``value`` as a float64 array if it holds real numbers (bools and ints included).

    Strings (even numeric ones such as ``"1.0"``), complex numbers and other objects are
    refused instead of being parsed or cast with a warning.

    Raises
    ------
    InvalidParameterError
        If an entry is not a real number, or the array is ragged.

    Examples
    --------
    >>> as_real_array([1, 2.5], "x").tolist()
    [1.0, 2.5]
    """
    try:
        raw = np.asarray(value)
    except ValueError as exc:  # ragged nested sequences
        raise InvalidParameterError(f"{name} must be a rectangular array of reals: {exc}") from exc
    kind = raw.dtype.kind
    if kind == "O":
        flat = raw.ravel().tolist()
        if not all(isinstance(v, numbers.Real) for v in flat):
            bad = next(v for v in flat if not isinstance(v, numbers.Real))
            raise InvalidParameterError(
                f"{name} must hold real numbers, got {bad!r} ({type(bad).__name__})"
            )
    elif kind not in "fiub":
        raise InvalidParameterError(
            f"{name} must hold real numbers, got dtype {raw.dtype} (strings, complex numbers "
            "and objects are not converted); pass a float array"
        )
    return raw.astype(np.float64)


def check_square_matrix(matrix: object, name: str, nonnegative: bool = True) -> np.ndarray:
    """Return ``matrix`` as a finite float64 ``[n, n]`` array with ``n >= 1``.

    Parameters
    ----------
    matrix : array_like
        The candidate matrix (dense; convert a sparse matrix with ``.toarray()`` first).
    name : str
        Its name in error messages.
    nonnegative : bool, optional
        Also require every entry to be >= 0 (influence and oscillation matrices).

    Raises
    ------
    InvalidParameterError
        If the array is not square and two-dimensional, is empty, holds NaN or infinite entries,
        or (with ``nonnegative``) holds a negative entry.
    """
    arr = as_real_array(matrix, name)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        raise InvalidParameterError(
            f"{name} must be a non-empty square [n, n] array, got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise InvalidParameterError(f"{name} holds NaN or infinite entries; pass finite values")
    if nonnegative and np.any(arr < 0):
        raise InvalidParameterError(
            f"{name} must be entrywise >= 0 (smallest entry {arr.min()!r}); influences and "
            "oscillations are non-negative"
        )
    return arr


__all__ = [
    "as_real_array",
    "check_eps",
    "check_finite_float",
    "check_nonnegative_float",
    "check_nonnegative_int",
    "check_positive_float",
    "check_positive_int",
    "check_square_matrix",
    "check_tau",
    "Temperature",
    "check_vocab_size",
]
