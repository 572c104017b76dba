"""The theorem table of ``glauber verify`` (text) and its JSON form (written atomically)."""

from __future__ import annotations

import math
from typing import Any, Sequence

from glauber.core.arrays import jsonable
from glauber.core.claims import Claim
from glauber.verification.runner import StatementOutcome

#: Table columns: (header, alignment).
COLUMNS = (
    ("statement", "<"), ("result", "<"), ("hypothesis", "<"), ("checked", ">"),
    ("hyp. held", ">"), ("fails", ">"), ("worst slack", ">"), ("median tightness", ">"),
    ("status", "<"),
)


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.3g}"


def _tightness(outcome: StatementOutcome) -> str:
    value = outcome.median_tightness
    return "-" if value is None else f"{value:.3g} {outcome.statement.tightness_kind}"


def _status(outcome: StatementOutcome) -> str:
    return outcome.statement.status if outcome.ok else f"{outcome.statement.status} FAILED"


def table_rows(outcomes: Sequence[StatementOutcome]) -> list[tuple[str, ...]]:
    """One tuple of cell texts per statement, in :data:`COLUMNS` order."""
    return [
        (
            o.statement.name, o.statement.result, o.statement.hypothesis, str(o.checked),
            str(o.hypothesis_held), str(o.failures), _number(o.worst_slack), _tightness(o),
            _status(o),
        )
        for o in outcomes
    ]


def format_table(outcomes: Sequence[StatementOutcome]) -> str:
    """The theorem table as printed by ``glauber verify``, with a verdict line per problem.

    Slack is ``bound - exact`` for upper bounds, ``exact - bound`` for lower bounds and
    ``tolerance - error`` for identities: negative means violated. Refuted rows are the
    as-printed forms; their failures are the counterexamples and are expected.
    """
    rows = table_rows(outcomes)
    widths = [max(len(h), *(len(r[k]) for r in rows)) if rows else len(h)
              for k, (h, _) in enumerate(COLUMNS)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            f"{c:{align}{w}}" for c, (_, align), w in zip(cells, COLUMNS, widths)
        ).rstrip()

    out = [line([h for h, _ in COLUMNS]), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    out.append("")
    out.append(
        "slack: bound - exact (upper bounds), exact - bound (lower bounds), tol - error "
        "(identities); < 0 means violated."
    )
    for o in outcomes:
        if o.statement.status == "refuted" and o.counterexamples:
            first = o.counterexamples[0]
            out.append(
                f"{o.statement.name}: refuted as printed on {o.failures} instance(s), e.g. "
                f"{first.subject} (bound {_number(first.bound)}, exact {_number(first.exact)});"
                f" corrected form: {o.statement.corrected_by}"
            )
    for o in outcomes:
        certificates = [c for c in o.checks if "vacuous" in c.details]
        if certificates:
            useful = sum(not c.details["vacuous"] for c in certificates)
            out.append(
                f"{o.statement.name}: {useful} of {len(certificates)} certificates are "
                "non-vacuous (bound < 1); the vacuous ones hold trivially"
            )
    problems = [o for o in outcomes if not o.ok]
    for o in problems:
        out.append(f"FAILED {o.statement.name}: {o.problem}")
    out.append(
        "verify: FAILED" if problems else
        f"verify: ok ({len(outcomes)} statements; verified and corrected forms hold on every "
        "instance, refuted forms show their counterexamples)"
    )
    return "\n".join(out)


def _check_dict(check: Claim) -> dict[str, Any]:
    return {
        "instance": check.subject,
        "hypothesis": check.hypothesis_held,
        "holds": check.holds,
        "bound": check.bound,
        "exact": check.exact,
        "slack": check.slack,
        "tightness": check.tightness,
        "details": check.details,
    }


def report_dict(outcomes: Sequence[StatementOutcome], **meta: Any) -> dict[str, Any]:
    """The JSON form: the table's rows plus every per-instance check (strict-JSON safe).

    Infinite numbers become the strings ``"inf"``/``"-inf"`` (see
    :func:`glauber.core.arrays.jsonable`).
    """
    rows = []
    for o in outcomes:
        s = o.statement
        rows.append({
            "name": s.name,
            "result": s.result,
            "hypothesis": s.hypothesis,
            "claim": s.claim,
            "status": s.status,
            "kind": s.kind,
            "tightness_kind": s.tightness_kind,
            "corrected_by": s.corrected_by,
            "theory": [f"glauber.theory.{f}" for f in s.theory],
            "instances_checked": o.checked,
            "hypothesis_held": o.hypothesis_held,
            "failures": o.failures,
            "errors": len(o.errors),
            "worst_slack": o.worst_slack,
            "median_tightness": o.median_tightness,
            "ok": o.ok,
            "problem": o.problem,
            "counterexamples": [c.subject for c in o.counterexamples],
            "instances": [_check_dict(c) for c in o.checks],
        })
    return jsonable({**meta, "ok": all(o.ok for o in outcomes), "rows": rows})


__all__ = ["COLUMNS", "format_table", "report_dict", "table_rows"]
