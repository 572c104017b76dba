"""Run statements over a battery and summarise each statement's checks."""

from __future__ import annotations

import multiprocessing
import statistics
import sys
from dataclasses import dataclass, replace
from typing import Iterable, Iterator, Sequence

from tqdm import tqdm

from glauber.core.claims import Claim
from glauber.errors import GlauberError, InvalidParameterError
from glauber.verification.instances import Instance
from glauber.verification.statements import STATEMENTS, STATEMENTS_BY_NAME, Statement


@dataclass
class StatementOutcome:
    """All checks of one statement and the verdict on them.

    A verified or corrected statement is ``ok`` when it held on every instance where it was
    evaluated and its hypothesis held at least once. A refuted (as-printed) statement is ``ok``
    when at least one instance shows the counterexample (its claim fails there). A checker
    that raised a :class:`~glauber.errors.GlauberError` is never ok.
    """

    statement: Statement
    checks: list[Claim]

    @property
    def checked(self) -> int:
        """Number of instances (or instance-basin pairs) the statement was run on."""
        return len(self.checks)

    @property
    def hypothesis_held(self) -> int:
        """Number where the hypothesis held."""
        return sum(c.hypothesis_held for c in self.checks)

    @property
    def failures(self) -> int:
        """Number where the claim was evaluated and failed."""
        return sum(c.holds is False for c in self.checks)

    @property
    def errors(self) -> list[Claim]:
        """Checks whose computation raised an error."""
        return [c for c in self.checks if "error" in c.details]

    @property
    def worst_slack(self) -> float | None:
        """Smallest slack over evaluated checks (negative: violated)."""
        values = [c.slack for c in self.checks if c.holds is not None and c.slack is not None]
        return min(values) if values else None

    @property
    def median_tightness(self) -> float | None:
        """Median tightness over evaluated checks that have one."""
        values = [c.tightness for c in self.checks
                  if c.holds is not None and c.tightness is not None]
        return statistics.median(values) if values else None

    @property
    def counterexamples(self) -> list[Claim]:
        """Checks where the claim failed."""
        return [c for c in self.checks if c.holds is False]

    @property
    def ok(self) -> bool:
        """See the class docstring."""
        if self.errors:
            return False
        if self.statement.status == "refuted":
            return self.failures > 0
        return self.failures == 0 and any(c.hypothesis_held and c.holds for c in self.checks)

    @property
    def problem(self) -> str | None:
        """Why the statement is not ok (None when it is)."""
        if self.ok:
            return None
        if self.errors:
            return f"{len(self.errors)} check(s) raised: {self.errors[0].details['error']}"
        if self.statement.status == "refuted":
            return "no instance reproduces the counterexample to the printed claim"
        if self.failures:
            first = self.counterexamples[0]
            return f"fails on {self.failures} instance(s), first: {first.subject}"
        return "no instance of the battery meets the hypothesis"


def select_statements(names: Sequence[str] | None) -> tuple[Statement, ...]:
    """The statements named (all when ``names`` is empty or None), in table order.

    Raises
    ------
    InvalidParameterError
        If a name is unknown (the message lists the names).
    """
    if not names:
        return STATEMENTS
    unknown = sorted(set(names) - set(STATEMENTS_BY_NAME))
    if unknown:
        raise InvalidParameterError(
            f"unknown statement(s) {', '.join(unknown)}; choose from: "
            f"{', '.join(STATEMENTS_BY_NAME)}"
        )
    return tuple(s for s in STATEMENTS if s.name in set(names))


def _run_one(statement: Statement, instance: Instance) -> list[Claim]:
    """The statement's checks on one instance, each keyed by the statement's name."""
    try:
        checks = statement.check(instance)
    except GlauberError as exc:
        error = f"{type(exc).__name__}: {exc}"
        checks = [Claim(key="", statement="", subject=instance.name, details={"error": error})]
    return [replace(c, key=statement.name, statement=statement.claim) for c in checks]


#: What forked workers read: the statements and the battery (inherited, never pickled).
_WORK: tuple[tuple[Statement, ...], Sequence[Instance]] | None = None


def _checks(statements: tuple[Statement, ...], instance: Instance) -> list[list[Claim]]:
    """Every statement's checks on one instance; its caches are dropped afterwards."""
    out = [_run_one(statement, instance) for statement in statements]
    instance.release()
    return out


def _checks_of(index: int) -> list[list[Claim]]:
    """:func:`_checks` on instance ``index`` of :data:`_WORK` (in a worker)."""
    statements, battery = _WORK
    return _checks(statements, battery[index])


def _in_workers(statements: tuple[Statement, ...], battery: Sequence[Instance],
                jobs: int) -> Iterator[list[list[Claim]]]:
    """:func:`_checks_of` for every instance, in order, over ``jobs`` forked processes."""
    global _WORK
    if "fork" not in multiprocessing.get_all_start_methods():
        raise InvalidParameterError(
            f"jobs={jobs} needs the 'fork' start method, which this platform lacks; use jobs=1"
        )
    _WORK = (statements, battery)
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            yield from pool.imap(_checks_of, range(len(battery)), chunksize=4)
    finally:
        _WORK = None


def run_statements(
    statements: Iterable[Statement], battery: Sequence[Instance], progress: bool = True,
    jobs: int = 1,
) -> list[StatementOutcome]:
    """Run every statement on every instance (one instance at a time, so caches are shared).

    Parameters
    ----------
    statements : iterable of Statement
    battery : sequence of Instance
    progress : bool, optional
        Show a tqdm progress bar on stderr.
    jobs : int, optional
        Worker processes (forked; the result is the same for any number).

    Returns
    -------
    list of StatementOutcome
        In the order of ``statements``.

    Raises
    ------
    InvalidParameterError
        If ``jobs`` is not a positive integer, or is above 1 where processes cannot fork.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InvalidParameterError(f"jobs must be an integer >= 1, got {jobs!r}")
    statements = tuple(statements)
    checks: dict[str, list[Claim]] = {s.name: [] for s in statements}
    if jobs == 1:
        results: Iterable[list[list[Claim]]] = (_checks(statements, i) for i in battery)
    else:
        results = _in_workers(statements, battery, jobs)
    bar = tqdm(results, total=len(battery), desc="glauber verify", unit="instance",
               file=sys.stderr, disable=not progress, leave=False)
    for per_statement in bar:
        for statement, found in zip(statements, per_statement):
            checks[statement.name].extend(found)
    return [StatementOutcome(s, checks[s.name]) for s in statements]


__all__ = ["StatementOutcome", "run_statements", "select_statements"]
