"""``glauber verify``: the theorem table from exact toy chains.

Runs every statement of docs/theory.md (or those named with ``--statement``) on a battery of toy
instances with fixed seeds (plus, with ``--examples N``, ``N`` random models per family drawn by
:mod:`glauber.testing`), prints the table and optionally writes it as JSON. Exit code 0 when
every verified or corrected statement holds on every instance and every refuted (as-printed)
statement shows its counterexample; 1 otherwise; 2 on bad input.
"""

from __future__ import annotations

import argparse

#: The line of ``glauber --help``.
HELP = "check the paper's statements exactly on toy chains (theorem table)"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``verify`` parser to the ``glauber`` command."""
    from glauber.verification import STATEMENTS_BY_NAME

    parser = subparsers.add_parser(
        "verify",
        description=(
            "Check every statement of the paper (and its corrections) exactly on a battery of "
            "toy chains (random function models, Ising/Potts on graphs, asymmetric Ising, "
            "Curie-Weiss, planted "
            "basins; fixed seeds) and print the theorem table. Exit code 1 if a verified or "
            "corrected statement fails anywhere or a refuted one shows no counterexample."
        ),
    )
    parser.add_argument("--json", metavar="FILE",
                        help="also write the rows and every per-instance check as JSON")
    parser.add_argument("--quick", action="store_true",
                        help="a smaller battery (a few seconds; used by the tests)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the random model families (default 0)")
    parser.add_argument("--examples", type=int, metavar="N", default=None,
                        help="also check every statement on N random models per family drawn "
                             "by glauber.testing, each at two temperatures (needs the test "
                             "extra; default: the fixed battery only)")
    parser.add_argument("--jobs", type=int, metavar="J", default=1,
                        help="worker processes (default 1; the table is the same for any J)")
    parser.add_argument("--statement", metavar="NAME", nargs="+", action="extend",
                        choices=list(STATEMENTS_BY_NAME),
                        help="check only these statements (default: all): "
                             + ", ".join(STATEMENTS_BY_NAME))
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the verification; return the exit code."""
    from glauber.core.io import check_output_path, write_json_atomic
    from glauber.core.validation import check_nonnegative_int
    from glauber.errors import InvalidParameterError
    from glauber.verification import (
        build_battery,
        format_table,
        report_dict,
        run_statements,
        select_statements,
    )

    check_nonnegative_int(args.seed, "--seed")
    if args.json:  # before the battery: a bad target fails in a second, not after the run
        check_output_path(args.json)
    if args.examples is not None and args.examples < 1:
        raise InvalidParameterError(f"--examples must be >= 1, got {args.examples}")
    if args.jobs < 1:
        raise InvalidParameterError(f"--jobs must be >= 1, got {args.jobs}")
    statements = select_statements(args.statement)
    battery = build_battery(seed=args.seed, quick=args.quick)
    if args.examples is not None:
        import glauber.testing  # noqa: F401  (without the test extra: MissingDependencyError)
        from glauber.verification.random_battery import build_random_battery

        battery += build_random_battery(args.examples, seed=args.seed)
    outcomes = run_statements(statements, battery, progress=True, jobs=args.jobs)
    print(format_table(outcomes))
    if args.json:
        meta = dict(command="glauber verify", seed=args.seed, quick=args.quick,
                    instances=len(battery))
        if args.examples is not None:
            meta["examples"] = args.examples
        write_json_atomic(args.json, report_dict(outcomes, **meta))
    return 0 if all(o.ok for o in outcomes) else 1


__all__ = [
    "HELP",
    "register",
    "run",
]
