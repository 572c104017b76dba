"""Floating-point constants and the rounding model used by the library's error bounds.

Standard model (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., 2002,
Section 2.2): for ``op`` in ``+ - * /`` and normal results, ``fl(a op b) = (a op b)(1 + theta)``
with ``|theta| <= u``, the *unit roundoff* of the format (half the distance from 1 to the next
number). Results in the subnormal range carry an absolute error of at most half the smallest
subnormal instead. ``gamma(k, u) = k u / (1 - k u)`` bounds the relative error of ``k``
successive roundings (Higham, Lemma 3.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from glauber.core.validation import check_nonnegative_float
from glauber.errors import InvalidParameterError

#: Unit roundoff ``u`` of each floating-point format (round to nearest).
UNIT_ROUNDOFF = {
    "float64": 2.0**-53,
    "float32": 2.0**-24,
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
}
#: Smallest positive (subnormal) number of each format: the absolute rounding error below the
#: normal range is at most half of it.
SMALLEST_SUBNORMAL = {
    "float64": 2.0**-1074,
    "float32": 2.0**-149,
    "float16": 2.0**-24,
    "bfloat16": 2.0**-133,
}

#: Accuracy assumed of the elementary functions (``exp``, ``log``, ``log1p``, ``tanh``) of numpy
#: and torch, in units in the last place of their format (glibc's and numpy's float64 loops are
#: within one ulp; four leave room for vectorised and GPU kernels). Bounds that evaluate these
#: functions state it; bounds built from ``+ - * /`` alone do not need it.
ELEMENTARY_ULPS = 4


def elementary_error(dtype: Any) -> float:
    """Relative error bound of one elementary function in ``dtype``: ``ELEMENTARY_ULPS`` ulps,
    ``2 ELEMENTARY_ULPS u``.

    Examples
    --------
    >>> elementary_error("float64") == 8 * 2.0**-53
    True
    """
    return 2.0 * ELEMENTARY_ULPS * unit_roundoff(dtype)


def round_up_array(x: Any) -> np.ndarray:
    """The next float above each entry of ``x`` (float64; ``inf`` stays ``inf``)."""
    return np.nextafter(np.asarray(x, dtype=np.float64), np.inf)


def dtype_name(dtype: Any) -> str:
    """Canonical name (``"float64"``, ``"float32"``, ``"float16"``, ``"bfloat16"``) of a dtype.

    Accepts numpy and torch dtypes, their names (``"torch.bfloat16"``, ``"half"``, ``"double"``)
    and Python ``float``.

    Raises
    ------
    InvalidParameterError
        If ``dtype`` is not one of the four floating-point formats.

    Examples
    --------
    >>> dtype_name("torch.bfloat16"), dtype_name(float)
    ('bfloat16', 'float64')
    """
    if dtype is float:
        return "float64"
    name = str(dtype).removeprefix("torch.").removeprefix("<class 'numpy.").rstrip("'>")
    name = {"double": "float64", "float": "float32", "half": "float16"}.get(name, name)
    if name not in UNIT_ROUNDOFF:
        raise InvalidParameterError(
            f"unknown floating-point format {dtype!r}; use one of {sorted(UNIT_ROUNDOFF)}"
        )
    return name


def unit_roundoff(dtype: Any) -> float:
    """Unit roundoff ``u`` of a format: 2**-53 (float64), 2**-24 (float32), 2**-11 (float16),
    2**-8 (bfloat16).

    Raises
    ------
    InvalidParameterError
        If ``dtype`` is not one of the four formats.

    Examples
    --------
    >>> unit_roundoff("float32") == 2.0**-24
    True
    """
    return UNIT_ROUNDOFF[dtype_name(dtype)]


def coarsest(*dtypes: Any) -> str:
    """The format with the largest unit roundoff among ``dtypes`` (``None`` entries ignored).

    Examples
    --------
    >>> coarsest("float32", None, "torch.bfloat16")
    'bfloat16'
    """
    names = [dtype_name(d) for d in dtypes if d is not None]
    if not names:
        raise InvalidParameterError("coarsest() needs at least one floating-point format")
    return max(names, key=lambda name: UNIT_ROUNDOFF[name])


@dataclass(frozen=True)
class RoundingFormats:
    """The floating-point formats a computed conditional went through, for the rounding bounds
    (:func:`glauber.theory.distances.tv_rounding_bound`,
    :func:`glauber.theory.rectangle.rectangle_rounding_bound`,
    :func:`glauber.theory.rectangle.log_ratio_rounding_bound`).

    The formats are checked and stored by their canonical names (:func:`dtype_name`) on
    construction.

    Parameters
    ----------
    score_dtype : dtype or str
        Format the scores are stored in: ``scores / tau`` is rounded in it (unit roundoff
        ``u_s``, smallest subnormal ``eta_s``).
    work_dtype : dtype or str
        Format of the log-softmax work and of what follows it (``u_w``, ``eta_w``).
    model_dtype : dtype or str, optional
        Format the model computed in; None: the scores' own. ``u_m`` is the unit roundoff of the
        coarser of it and ``score_dtype``.
    score_error_ulps : float
        The model's own error, in ulps of the scores: the returned scores are within
        ``score_error_ulps * u_m * max_a |s_a|`` of the exact ones; >= 0.

    Raises
    ------
    InvalidParameterError
        If a format is not one of the four floating-point formats, or ``score_error_ulps`` is
        not a finite number >= 0.

    Examples
    --------
    >>> f = RoundingFormats("torch.float32", model_dtype="bfloat16")
    >>> f.score_dtype, f.u_s == 2.0**-24, f.u_m == 2.0**-8
    ('float32', True, True)
    """

    score_dtype: Any = "float64"
    work_dtype: Any = "float64"
    model_dtype: Any = None
    score_error_ulps: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "score_dtype", dtype_name(self.score_dtype))
        object.__setattr__(self, "work_dtype", dtype_name(self.work_dtype))
        if self.model_dtype is not None:
            object.__setattr__(self, "model_dtype", dtype_name(self.model_dtype))
        ulps = check_nonnegative_float(self.score_error_ulps, "score_error_ulps")
        object.__setattr__(self, "score_error_ulps", ulps)

    @property
    def u_s(self) -> float:
        """Unit roundoff of the scores' format."""
        return UNIT_ROUNDOFF[self.score_dtype]

    @property
    def eta_s(self) -> float:
        """Smallest subnormal of the scores' format."""
        return SMALLEST_SUBNORMAL[self.score_dtype]

    @property
    def u_w(self) -> float:
        """Unit roundoff of the working format."""
        return UNIT_ROUNDOFF[self.work_dtype]

    @property
    def eta_w(self) -> float:
        """Smallest subnormal of the working format."""
        return SMALLEST_SUBNORMAL[self.work_dtype]

    @property
    def u_m(self) -> float:
        """Unit roundoff of the model's precision: the coarser of ``model_dtype`` and
        ``score_dtype``."""
        return UNIT_ROUNDOFF[coarsest(self.score_dtype, self.model_dtype)]


def gamma(k: int, u: float) -> float:
    """Higham's ``gamma_k = k u / (1 - k u)``: the relative error of ``k`` roundings.

    Raises
    ------
    InvalidParameterError
        If ``k u >= 1`` (the bound is void).

    Examples
    --------
    >>> gamma(2, 2.0**-53) > 2 * 2.0**-53
    True
    """
    ku = k * u
    if not 0.0 <= ku < 1.0:
        raise InvalidParameterError(f"gamma_k needs 0 <= k u < 1, got k = {k}, u = {u}")
    return math.nextafter(ku / (1.0 - ku), math.inf)


def round_up(x: float) -> float:
    """The next float above ``x``: a one-ulp upward nudge that absorbs the rounding of the last
    operation that produced a bound (``inf`` stays ``inf``)."""
    return math.nextafter(float(x), math.inf)


def round_down(x: float) -> float:
    """The next float below ``x`` (``-inf`` stays ``-inf``)."""
    return math.nextafter(float(x), -math.inf)


def int_times(t: int, x: float) -> float:
    """``t * x`` for an integer ``t`` of any size: the correctly rounded float, ``+-inf`` beyond
    the float range (``float(10**400)`` alone raises OverflowError).

    Examples
    --------
    >>> int_times(10**400, -1e-300), int_times(10**400, -0.5)
    (-1e+100, -inf)
    """
    if x == 0.0 or t == 0:
        return 0.0
    exact = Fraction(int(t)) * Fraction(float(x))
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


def exp_decay(log_scale: float, t: int, log_rate: float) -> float:
    """``exp(log_scale + t * log_rate)`` for ``log_rate <= 0`` and any integer ``t >= 0``.

    Underflow gives 0.0 (the correctly rounded value), never an OverflowError.

    Examples
    --------
    >>> exp_decay(math.log(2.0), 10**400, -1e-3)
    0.0
    """
    exponent = log_scale + int_times(t, log_rate)
    try:
        return math.exp(exponent)
    except OverflowError:
        return math.inf


def softmax_tv_rounding(max_abs_score: float, tau: float, q: int) -> float:
    """Bound on ``|computed - exact|`` of a TV distance between two softmaxes at ``tau``.

    For float64 scores ``s`` with ``|s_a| <= max_abs_score``, computed as ``z = s / tau``,
    ``z -= max z``, ``p = exp(z) / sum exp(z)`` and ``TV = sum |p - r| / 2`` in float64: the
    shifted exponent of each token is within ``e1 = 4 u max_abs_score / tau`` of the exact one
    (division, subtraction of the maximum), ``exp`` within ``4 u`` (a few ulps), the sum and the
    division within ``gamma_{q+2}``; so ``|log p_hat_a - log p_a| <= 2 e1 + 2 gamma_{q+6} =: e``
    and ``sum_a |p_hat_a - p_a| <= expm1(e)``; the halved sum of ``q`` absolute differences adds
    ``gamma_q`` of at most 2, underflow ``q`` subnormals. Rounded up.

    Parameters
    ----------
    max_abs_score : float
        Largest ``|s_a|`` of either law, finite and >= 0.
    tau : float
        Temperature, > 0.
    q : int
        Vocabulary size.

    Returns
    -------
    float

    Examples
    --------
    >>> 0 < softmax_tv_rounding(10.0, 1.0, 20) < 1e-13
    True
    """
    u = UNIT_ROUNDOFF["float64"]
    e1 = math.nextafter(4.0 * u * (float(max_abs_score) / float(tau)) * (1 + 4 * u), math.inf)
    e = math.nextafter(2.0 * e1 + 2.0 * gamma(int(q) + 6, u), math.inf)
    total = math.expm1(e) * (1 + 4 * u) + 2.0 * gamma(int(q), u) + q * 2.0**-1068
    return math.nextafter(total * (1 + 4 * u), math.inf)


__all__ = [
    "ELEMENTARY_ULPS",
    "RoundingFormats",
    "SMALLEST_SUBNORMAL",
    "softmax_tv_rounding",
    "UNIT_ROUNDOFF",
    "coarsest",
    "dtype_name",
    "elementary_error",
    "exp_decay",
    "gamma",
    "int_times",
    "round_down",
    "round_up",
    "round_up_array",
    "unit_roundoff",
]
