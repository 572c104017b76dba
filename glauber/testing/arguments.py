"""Checks of the arguments of the strategies (typed errors that say what to change)."""

from __future__ import annotations

import math
from typing import Any, Iterable

from glauber.errors import InvalidParameterError


def check_sizes(lo: int, hi: int, lowest: int, names: str) -> None:
    """``lowest <= lo <= hi``, or :class:`InvalidParameterError` naming ``names`` (``"a, b"``)."""
    if not lowest <= lo <= hi:
        raise InvalidParameterError(f"need {lowest} <= {names.replace(', ', ' <= ')}, got "
                                    f"{lo}, {hi}")


def check_range(value: Any, name: str, lowest: float = -math.inf) -> tuple[float, float]:
    """``value`` as a finite pair ``(lo, hi)`` with ``lowest <= lo <= hi``."""
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"{name} must be a pair (lo, hi) of numbers, got {value!r}") \
            from exc
    if not (math.isfinite(lo) and math.isfinite(hi) and lowest <= lo <= hi):
        raise InvalidParameterError(f"{name} must be finite with {lowest} <= lo <= hi, got "
                                    f"{value!r}")
    return lo, hi


def check_choice(values: Iterable[str] | str, allowed: tuple[str, ...],
                 name: str) -> tuple[str, ...]:
    """``values`` as a non-empty tuple drawn from ``allowed``."""
    chosen = (values,) if isinstance(values, str) else tuple(values)
    if not chosen or set(chosen) - set(allowed):
        raise InvalidParameterError(f"{name} must be a non-empty subset of {allowed}, got "
                                    f"{chosen!r}")
    return chosen


__all__ = ["check_choice", "check_range", "check_sizes"]
