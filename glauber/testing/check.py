"""Property-based check of a bound against exact values: :func:`check_bound`.

Hypothesis draws models and temperatures, the bound and the exact value are computed on each,
and a violation is shrunk to a minimal counterexample (fewest sites, smallest vocabulary,
simplest parameters) with a script that reproduces it. Runs are deterministic for a given
``seed`` and write no example database unless asked.
"""

from __future__ import annotations

import math
import numbers
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import numpy as np
from hypothesis import Phase, given, target
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.errors import Unsatisfiable

from glauber.errors import (
    BoundEvaluationError,
    ConvergenceError,
    InvalidParameterError,
    NonPositiveConditionalError,
)
from glauber.testing.reproducer import reproducer_source
from glauber.testing.runs import isolated_run, run_settings
from glauber.testing.strategies import fewer_states, temperatures
from glauber.testing.strategies import models as default_models
from glauber.toy_models.family import ModelSpec

Kind = Literal["upper", "lower"]
BoundFn = Callable[[Any, float], Any]

#: Hypothesis phases of a search (no "explain" phase: it only annotates the failure).
PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)

#: Errors of exact computations at extreme parameters (a chain that does not mix within 2**62
#: steps, a conditional that underflows): the example is counted and skipped.
NUMERICAL_LIMITS = (ConvergenceError, NonPositiveConditionalError)


@dataclass(frozen=True)
class Counterexample:
    """A shrunk violation of a bound.

    Attributes
    ----------
    spec : ModelSpec or None
        The model (``spec.build()`` rebuilds it; None if the model had no spec).
    tau : float
    bound, exact : float
        Both values there.
    slack : float
        ``bound - exact`` (upper) or ``exact - bound`` (lower): negative.
    kind : {"upper", "lower"}
    reproducer : str
        Python source; executing it rebuilds the model and raises ``AssertionError``.
    """

    spec: ModelSpec | None
    tau: float
    bound: float
    exact: float
    slack: float
    kind: str
    reproducer: str

    def model(self) -> Any:
        """The model of the counterexample, rebuilt from its spec."""
        if self.spec is None:
            raise InvalidParameterError("this counterexample's model has no spec to rebuild")
        return self.spec.build()

    def __str__(self) -> str:
        op = ">" if self.kind == "upper" else "<"
        return (f"{self.spec!r} at tau={self.tau!r}: exact {self.exact!r} {op} "
                f"{self.kind} bound {self.bound!r} (slack {self.slack:.4g})")


@dataclass(frozen=True)
class BoundReport:
    """What :func:`check_bound` found.

    Attributes
    ----------
    holds : bool
        No violation was found.
    kind : {"upper", "lower"}
    examples : int
        Distinct (model, temperature) pairs drawn, shrinking included.
    evaluated : int
        Those where both values were compared.
    not_applicable : int
        Those where the bound returned None (its hypothesis failed).
    numerical_limit : int
        Those skipped because an exact computation hit a numerical limit
        (:data:`NUMERICAL_LIMITS`).
    worst_slack : float or None
        Smallest ``bound - exact`` (upper) or ``exact - bound`` (lower); negative: violated.
    median_tightness : float or None
        Median of ``exact/bound`` (upper) or ``bound/exact`` (lower) where defined.
    counterexample : Counterexample or None
        The shrunk counterexample when the bound fails.
    seed : int
    """

    holds: bool
    kind: str
    examples: int
    evaluated: int
    not_applicable: int
    numerical_limit: int
    worst_slack: float | None
    median_tightness: float | None
    counterexample: Counterexample | None
    seed: int

    @property
    def reproducer(self) -> str | None:
        """The counterexample's reproducer (None when the bound holds)."""
        return None if self.counterexample is None else self.counterexample.reproducer

    def __str__(self) -> str:
        tight = "exact/bound" if self.kind == "upper" else "bound/exact"
        head = (f"{self.kind} bound {'holds' if self.holds else 'FAILS'}: {self.evaluated} of "
                f"{self.examples} examples evaluated ({self.not_applicable} not applicable, "
                f"{self.numerical_limit} at numerical limits), worst slack "
                f"{_short(self.worst_slack)}, median tightness {_short(self.median_tightness)} "
                f"{tight}, seed {self.seed}")
        if self.counterexample is None:
            return head
        return f"{head}\ncounterexample: {self.counterexample}\n{self.reproducer}"


def _short(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


@dataclass
class _Outcome:
    spec: Any
    tau: float
    status: str  # "ok", "violated", "not_applicable", "numerical_limit"
    bound: float | None = None
    exact: float | None = None
    slack: float | None = None
    tightness: float | None = None


class _Violation(Exception):
    def __init__(self, outcome: _Outcome) -> None:
        super().__init__(f"violated at {outcome.spec!r}, tau={outcome.tau!r}")
        self.outcome = outcome


class _BadValue(Exception):
    def __init__(self, message: str, spec: Any, tau: float,
                 cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.message, self.spec, self.tau, self.cause = message, spec, tau, cause


@dataclass
class _Record:
    outcomes: dict[tuple[Any, float], _Outcome] = field(default_factory=dict)
    first_bad: _BadValue | None = None


def _name(fn: Callable) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def _number(value: Any, role: str, fn: Callable, spec: Any, tau: float,
            allow_none: bool) -> float | None:
    """``value`` as a float, None (when allowed), or :class:`_BadValue`."""
    where = f"on model {spec!r} at tau={tau!r}"
    if value is None and allow_none:
        return None
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise _BadValue(
            f"the {role} {_name(fn)} returned {value!r} ({type(value).__name__}), not a real "
            f"number, {where}; return a float"
            + (" (or None where its hypothesis fails)" if allow_none else ""), spec, tau)
    number = float(value)
    if math.isnan(number):
        raise _BadValue(f"the {role} {_name(fn)} returned NaN {where}; return a number "
                        "(math.inf for a vacuous upper bound)"
                        + (", or None where its hypothesis fails" if allow_none else ""),
                        spec, tau)
    return number


def _call(fn: Callable, role: str, model: Any, spec: Any, tau: float) -> Any:
    try:
        return fn(model, tau)
    except NUMERICAL_LIMITS:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of user code is reported, typed
        raise _BadValue(f"the {role} {_name(fn)} raised {type(exc).__name__}: {exc} on model "
                        f"{spec!r} at tau={tau!r}; fix it, or return None where it does not "
                        "apply", spec, tau, exc) from exc


def violation_tolerance(bound: float, exact: float, rtol: float, atol: float) -> float:
    """``rtol * max(|bound|, |exact|) + atol`` over the finite values (the reproducer's rule)."""
    finite = [abs(v) for v in (bound, exact) if math.isfinite(v)]
    return rtol * max(finite, default=0.0) + atol


def _compare(kind: str, bound: float, exact: float, rtol: float,
             atol: float) -> tuple[bool, float, float | None]:
    """``(violated, slack, tightness)``."""
    tol = violation_tolerance(bound, exact, rtol, atol)
    if kind == "upper":
        violated = not exact <= bound + tol
        slack = bound - exact
        tight = exact / bound if math.isfinite(bound) and bound > 0 else None
    else:
        violated = not exact >= bound - tol
        slack = exact - bound
        tight = bound / exact if math.isfinite(exact) and exact > 0 and bound > 0 else None
    return violated, slack, tight


def _evaluate(bound: BoundFn, exact: BoundFn, model: Any, tau: float, kind: str, rtol: float,
              atol: float) -> _Outcome:
    spec = getattr(model, "spec", None)
    try:
        b = _number(_call(bound, "bound", model, spec, tau), "bound", bound, spec, tau, True)
        if b is None:
            return _Outcome(spec, tau, "not_applicable")
        e = _number(_call(exact, "exact value", model, spec, tau), "exact value", exact, spec,
                    tau, False)
    except NUMERICAL_LIMITS:
        return _Outcome(spec, tau, "numerical_limit")
    violated, slack, tight = _compare(kind, b, e, rtol, atol)
    return _Outcome(spec, tau, "violated" if violated else "ok", b, e, slack, tight)


def _database(database: str | ExampleDatabase | None) -> ExampleDatabase | None:
    if database is None or isinstance(database, ExampleDatabase):
        return database
    return DirectoryBasedExampleDatabase(str(database))


def _strategy(value: Any, name: str) -> st.SearchStrategy:
    if isinstance(value, st.SearchStrategy):
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and name == "taus":
        return st.just(float(value))
    raise InvalidParameterError(f"{name} must be a Hypothesis strategy, got {value!r}")


def check_bound(bound: BoundFn, exact: BoundFn, *, kind: Kind = "upper",
                models: st.SearchStrategy | None = None, taus: Any = None,
                max_examples: int = 100, tolerance: float = 1e-9, atol: float = 1e-12,
                seed: int = 0, refine: int = 3,
                database: str | ExampleDatabase | None = None) -> BoundReport:
    """Check ``exact(model, tau) <= bound(model, tau)`` (or ``>=``) on random small chains.

    Parameters
    ----------
    bound : callable
        ``(model, tau) -> float``, or None where the bound's hypothesis fails (the example
        then counts as not applicable). ``math.inf`` is a vacuous upper bound.
    exact : callable
        ``(model, tau) -> float``: the exact quantity, usually from
        :func:`glauber.testing.exact` (e.g. ``exact(model, tau).mixing_time()``).
    kind : {"upper", "lower"}, default "upper"
        Whether ``bound`` is an upper or a lower bound on ``exact``.
    models : SearchStrategy, optional
        Models to draw (default :func:`glauber.testing.models`; a strategy of
        :class:`ModelSpec` is built on the fly).
    taus : SearchStrategy or float, optional
        Temperatures (default :func:`glauber.testing.temperatures`).
    max_examples : int, default 100
        Examples to generate (shrinking a violation evaluates more).
    tolerance, atol : float
        A violation must exceed ``tolerance * max(|bound|, |exact|) + atol``.
    seed : int, default 0
        The same seed draws the same examples and finds the same counterexample.
    refine : int, default 3
        After a violation on a model with ``S`` states, search again (up to ``refine`` times)
        among models with fewer than ``S`` states, so the counterexample reported is as small
        as the search finds (Hypothesis's shrinking alone can stop at a local minimum).
    database : str or ExampleDatabase, optional
        Where Hypothesis may store failing examples (default: nowhere).

    Returns
    -------
    BoundReport
        ``holds``, counts, worst slack, median tightness and, on failure, the shrunk
        :class:`Counterexample` with its ``reproducer``.

    Raises
    ------
    BoundEvaluationError
        If ``bound`` or ``exact`` raises, returns NaN or returns a non-number (the message
        names the model spec and the temperature; exact computations that hit numerical limits
        are skipped instead).
    InvalidParameterError
        If an argument is malformed.

    Examples
    --------
    >>> from glauber.testing import check_bound, exact, models
    >>> report = check_bound(lambda m, tau: 1.0, lambda m, tau: exact(m, tau).stationary().sum(),
    ...                      models=models(max_states=8), max_examples=5)
    >>> report.holds, report.evaluated
    (True, 5)
    """
    for fn, name in ((bound, "bound"), (exact, "exact")):
        if not callable(fn):
            raise InvalidParameterError(f"{name} must be a callable (model, tau) -> float, "
                                        f"got {fn!r}")
    if kind not in ("upper", "lower"):
        raise InvalidParameterError(f"kind must be 'upper' or 'lower', got {kind!r}")
    if isinstance(max_examples, bool) or not isinstance(max_examples, numbers.Integral) \
            or max_examples < 1:
        raise InvalidParameterError(f"max_examples must be an integer >= 1, got {max_examples!r}")
    for value, name in ((tolerance, "tolerance"), (atol, "atol")):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                or not 0.0 <= float(value) < math.inf:
            raise InvalidParameterError(f"{name} must be a finite number >= 0, got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise InvalidParameterError(f"seed must be an integer, got {seed!r}")
    if isinstance(refine, bool) or not isinstance(refine, numbers.Integral) or refine < 0:
        raise InvalidParameterError(f"refine must be an integer >= 0, got {refine!r}")
    model_strategy = default_models() if models is None else _strategy(models, "models")
    tau_strategy = temperatures() if taus is None else _strategy(taus, "taus")
    record = _Record()
    run = _Run(bound, exact, kind, float(tolerance), float(atol), int(max_examples),
               int(seed), _database(database), tau_strategy, record)
    with isolated_run():
        failure = run(model_strategy)
        for _ in range(refine):
            if failure is None or failure.outcome.spec is None:
                break
            smaller = fewer_states(model_strategy, failure.outcome.spec.num_states)
            try:
                found = None if smaller is None else run(smaller)
            except Unsatisfiable:
                found = None
            if found is None:
                break
            failure = found
    if record.first_bad is not None:
        bad = record.first_bad
        raise BoundEvaluationError(bad.message, bad.spec, bad.tau) from bad.cause
    return _report(record, failure, bound, exact, kind, float(tolerance), float(atol),
                   int(seed))


@dataclass
class _Run:
    """One Hypothesis search for a violation over a strategy of models."""

    bound: BoundFn
    exact: BoundFn
    kind: str
    rtol: float
    atol: float
    max_examples: int
    seed: int
    database: ExampleDatabase | None
    taus: st.SearchStrategy
    record: _Record

    def __call__(self, models: st.SearchStrategy) -> _Violation | None:
        """The shrunk violation found over ``models`` (None if none); bad values are recorded."""
        models = models.map(lambda m: m.build() if isinstance(m, ModelSpec) else m)

        @run_settings(self.max_examples, PHASES, self.database, report_multiple_bugs=False)
        @hypothesis_seed(self.seed)
        @given(models, self.taus)
        def prop(model: Any, tau: float) -> None:
            self._check(model, tau)

        try:
            prop()
        except _Violation as exc:
            return exc
        except _BadValue as exc:
            self.record.first_bad = exc
        return None

    def _check(self, model: Any, tau: float) -> None:
        try:
            outcome = _evaluate(self.bound, self.exact, model, tau, self.kind, self.rtol,
                                self.atol)
        except _BadValue as bad:
            self.record.first_bad = self.record.first_bad or bad
            raise
        key = outcome.spec if outcome.spec is not None else id(model)
        self.record.outcomes[(key, float(tau))] = outcome
        if outcome.slack is not None:
            scale = violation_tolerance(outcome.bound, outcome.exact, 1.0, 1e-300)
            if math.isfinite(outcome.slack) and math.isfinite(scale):
                target(-outcome.slack / scale, label="relative violation")
        if outcome.status == "violated":
            raise _Violation(outcome)


def _report(record: _Record, failure: _Violation | None, bound: BoundFn, exact: BoundFn,
            kind: str, rtol: float, atol: float, seed: int) -> BoundReport:
    outcomes = list(record.outcomes.values())
    evaluated = [o for o in outcomes if o.slack is not None]
    counterexample = None
    if failure is not None:
        o = failure.outcome
        counterexample = Counterexample(
            o.spec, float(o.tau), o.bound, o.exact, o.slack, kind,
            reproducer_source(bound, exact, o.spec, float(o.tau), kind, rtol, atol, o.bound,
                              o.exact),
        )
    tight = [o.tightness for o in evaluated if o.tightness is not None]
    return BoundReport(
        holds=failure is None,
        kind=kind,
        examples=len(outcomes),
        evaluated=len(evaluated),
        not_applicable=sum(o.status == "not_applicable" for o in outcomes),
        numerical_limit=sum(o.status == "numerical_limit" for o in outcomes),
        worst_slack=min((o.slack for o in evaluated), default=None),
        median_tightness=statistics.median(tight) if tight else None,
        counterexample=counterexample,
        seed=seed,
    )


__all__ = ["BoundReport", "Counterexample", "NUMERICAL_LIMITS", "check_bound",
           "violation_tolerance"]
