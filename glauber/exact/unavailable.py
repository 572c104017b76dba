"""Quantities that may not be computable on a given chain, collected with the reason.

An exact report (a certificate's exact values, a kernel's summary) computes several quantities
of one chain; a chain too slow for ``t_mix``, a gap below the eigensolver's resolution or a
conditional that underflows makes one of them unavailable without spoiling the others.
:class:`Attempts` runs each computation, returns None for an unavailable one and keeps the
reason.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from glauber.errors import (
    ConvergenceError,
    NonPositiveConditionalError,
    PrecisionError,
    StateSpaceTooLargeError,
)

T = TypeVar("T")

#: What a quantity that cannot be computed raises (``UnderflowError`` is a ``PrecisionError``).
UNAVAILABLE = (ConvergenceError, NonPositiveConditionalError, PrecisionError,
               StateSpaceTooLargeError)


class Attempts:
    """Run computations that may be unavailable; :attr:`notes` says which were, and why.

    Examples
    --------
    >>> from glauber.errors import PrecisionError
    >>> attempts = Attempts()
    >>> def too_small():
    ...     raise PrecisionError("below resolution")
    >>> attempts("gap", too_small) is None, attempts.notes
    (True, ['gap: below resolution'])
    """

    def __init__(self) -> None:
        #: ``"what: reason"`` of every computation that was unavailable, in order.
        self.notes: list[str] = []

    def __call__(self, what: str, compute: Callable[[], T]) -> T | None:
        """``compute()``, or None (and a note) if it raises one of :data:`UNAVAILABLE`."""
        try:
            return compute()
        except UNAVAILABLE as exc:
            self.notes.append(f"{what}: {exc}")
            return None


__all__ = [
    "Attempts",
    "UNAVAILABLE",
]
