"""How a checker states its outcome: the claim builders, and the instance's cached values.

The conventions of a check (docs/theory.md, "How `glauber verify` checks a statement"):

* ``kind = "upper"``: ``slack = bound - exact``, ``tightness = exact / bound``;
* ``kind = "lower"``: ``slack = exact - bound``, ``tightness = bound / exact``;
* ``kind = "identity"``: ``bound`` is the tolerance, ``exact`` the largest error,
  ``slack = tolerance - error``;

so a negative slack always means the claim is violated. Slacks within the numerical tolerance
of a check are reported as 0. ``holds`` is None when the statement's hypothesis failed and its
claim was therefore not evaluated. The checkers themselves live in the ``statements_*`` modules,
one per group of results; :mod:`~glauber.verification.statements` lists them.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Literal

import numpy as np

from glauber.core.claims import Claim
from glauber.exact.basins import NamedMask
from glauber.verification.instances import Instance

Kind = Literal["upper", "lower", "identity"]
Status = Literal["verified", "corrected", "refuted"]

#: Relative and absolute tolerance of an inequality between an exact value and a bound.
RTOL = 1e-9
ATOL = 1e-13
#: Tolerance of identities between exact quantities computed two ways.
IDENTITY_TOL = 1e-8
#: Target distance of every mixing time checked here.
EPS = 0.25


def make_claim(
    label: str,
    hypothesis: bool,
    holds: bool | None,
    bound: float | None = None,
    exact: float | None = None,
    slack: float | None = None,
    tightness: float | None = None,
    details: dict[str, Any] | None = None,
) -> Claim:
    """The outcome of one statement on one instance (or one basin of an instance): a
    :class:`~glauber.core.claims.Claim` about ``label``; :func:`~glauber.verification.runner.
    run_statements` fills in the statement's key and text. Exact enumeration: rigorous."""
    return Claim(
        key="", statement="", subject=label, hypothesis_held=bool(hypothesis), holds=holds,
        bound=bound, exact=exact, slack=slack, tightness=tightness, rigorous=True,
        details=details or {},
    )


def finite_or_none(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def tolerance(bound: float, exact: float) -> float:
    return RTOL * max(abs(bound), abs(exact)) + ATOL


def snap_slack(slack: float, bound: float, exact: float) -> float:
    if not math.isfinite(slack):
        return slack
    return 0.0 if abs(slack) <= tolerance(bound, exact) else float(slack)


def upper(label: str, hypothesis: bool, bound: float, exact: float, ok: bool = True,
          **details: Any) -> Claim:
    """Check ``exact <= bound`` (tolerance :data:`RTOL`, :data:`ATOL`); ``ok``: side conditions."""
    holds = bool(exact <= bound + tolerance(bound, exact)) and ok
    slack = snap_slack(bound - exact, bound, exact)
    tight = exact / bound if math.isfinite(bound) and bound > 0 else None
    return make_claim(label, hypothesis, holds, float(bound), float(exact), slack, tight, details)


def lower(label: str, hypothesis: bool, bound: float, exact: float, ok: bool = True,
          **details: Any) -> Claim:
    """Check ``exact >= bound`` (tolerance :data:`RTOL`, :data:`ATOL`); ``ok``: side conditions."""
    holds = bool(exact >= bound - tolerance(bound, exact)) and ok
    slack = snap_slack(exact - bound, bound, exact)
    tight = bound / exact if exact > 0 and bound > 0 and math.isfinite(exact) else None
    return make_claim(label, hypothesis, holds, float(bound), float(exact), slack, tight, details)


def identity(label: str, hypothesis: bool, error: float, tol: float = IDENTITY_TOL,
             tightness: float | None = None, **details: Any) -> Claim:
    """Check ``error <= tol``; the slack is ``tol - error``."""
    holds = bool(error <= tol)
    return make_claim(label, hypothesis, holds, tol, float(error), tol - float(error), tightness,
                  details)


def not_evaluated(label: str, **details: Any) -> Claim:
    """The hypothesis failed: the claim is not evaluated."""
    return make_claim(label, False, None, details=details)


def instance_cached(inst: Instance, key: str, compute: Callable[[], Any]) -> Any:
    if key not in inst.cache:
        inst.cache[key] = compute()
    return inst.cache[key]


def mixing_time_of(inst: Instance) -> int:
    return instance_cached(inst, "tmix", lambda: int(inst.chain.mixing_time(EPS)))


def distance_points(inst: Instance) -> dict[int, float]:
    """Worst-start ``d(t)`` at ``t = 0, 1, t_mix - 1, t_mix, 8 t_mix`` (shared powers, cached)."""

    def compute() -> dict[int, float]:
        t = mixing_time_of(inst)
        times = sorted({0, 1, max(0, t - 1), t, 8 * t})
        return dict(zip(times, (float(d) for d in inst.chain.distance_curve(times))))

    return instance_cached(inst, "curve", compute)


def label_of(inst: Instance, basin: NamedMask | None = None) -> str:
    return inst.name if basin is None else f"{inst.name} [{basin.name}]"


def off_diagonal(matrix: np.ndarray) -> np.ndarray:
    return ~np.eye(matrix.shape[0], dtype=bool)
