"""Exact verification of the paper's statements on toy chains (``glauber verify``).

:mod:`~glauber.verification.statements` holds one checker per statement of docs/theory.md,
:mod:`~glauber.verification.battery` the toy instances (fixed seeds),
:mod:`~glauber.verification.runner` runs them and :mod:`~glauber.verification.report` prints
the table and writes the JSON. Large ``n`` use the exact lumped count chain
(:mod:`glauber.exact.count_chain`). This package uses :mod:`glauber.theory` for every bound and
:mod:`glauber.toy_models` for every exact value; only the CLI sits above it.
"""

from glauber.verification.battery import build_battery
from glauber.verification.report import format_table, report_dict
from glauber.verification.runner import (
    StatementOutcome,
    run_statements,
    select_statements,
)
from glauber.verification.statements import STATEMENTS, STATEMENTS_BY_NAME, Statement

__all__ = [
    "STATEMENTS",
    "STATEMENTS_BY_NAME",
    "Statement",
    "StatementOutcome",
    "build_battery",
    "format_table",
    "report_dict",
    "run_statements",
    "select_statements",
]
