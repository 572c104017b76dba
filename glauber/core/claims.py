"""One type for a statement confronted with numbers: :class:`Claim`.

A certificate's claims (:mod:`glauber.certify`), the checks of ``glauber verify``
(:mod:`glauber.verification`) and the designed counterexamples
(:mod:`glauber.toy_models.counterexamples`) all say the same thing: a statement of the paper
(or its correction), whether its hypothesis held on some subject, the statement's number (a
bound or a statistic), the exact value it is confronted with when one is known, whether the
conclusion held, and whether that is proved. They share this one frozen dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from glauber.core.arrays import JsonResult


@dataclass(frozen=True)
class Claim(JsonResult):
    """A statement of the paper (or our correction) confronted with numbers on one subject.

    Attributes
    ----------
    key : str
        Stable identifier of the statement (e.g. ``"thm5-tmix"``); look claims up by it.
    statement : str
        The result and its hypothesis, with the paper's number.
    subject : str
        What it was confronted with (a model, an instance of the verification battery).
    hypothesis_held : bool
        Whether the hypothesis held on the numbers computed here.
    holds : bool or None
        Whether the conclusion held against an exact value (None: not decided here, e.g. the
        hypothesis failed or no exact value is known).
    bound : float or None
        The statement's number: a bound, a statistic, a tolerance.
    exact : float or None
        The exact value the bound is confronted with (an error, for identities).
    slack : float or None
        ``bound - exact`` for upper bounds, ``exact - bound`` for lower bounds,
        ``tolerance - error`` for identities: negative means violated.
    tightness : float or None
        ``exact / bound`` (upper bounds) or ``bound / exact`` (lower bounds).
    rigorous : bool
        True only when what the claim certifies is proved for the subject (exact enumeration,
        or a quantity that is exact given the states used); False for estimates.
    certifies : str
        What follows, or why nothing does.
    caveat : str
        What the numbers do not show.
    details : dict
        Further numbers (JSON-ready).
    """

    key: str
    statement: str
    subject: str = ""
    hypothesis_held: bool = False
    holds: bool | None = None
    bound: float | None = None
    exact: float | None = None
    slack: float | None = None
    tightness: float | None = None
    rigorous: bool = False
    certifies: str = ""
    caveat: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def refuted(self) -> bool:
        """The hypothesis held and the conclusion failed: a counterexample to the statement."""
        return self.hypothesis_held and self.holds is False


__all__ = ["Claim"]
