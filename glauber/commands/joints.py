"""``glauber joints``: the joints an exact window's conditionals almost define, side by side.

Argument parsing and printing only: :func:`glauber.experiments.joints.joints_table` does the
work (:mod:`glauber.exact.joints`), :func:`glauber.experiments.joints.format_joints` the table.
The JSON is written atomically. Exit code 0 on success, 2 on bad input (a window over the exact
limit among them).
"""

from __future__ import annotations

import argparse
from typing import Any

#: The line of ``glauber --help``.
HELP = "Glauber law, MRF, MH/PLL target, HCB and Arnold-Gokhale joints of an exact window"


def register(subparsers: Any) -> None:
    """Add the ``joints`` parser."""
    from glauber.commands.arguments import add_window_arguments
    from glauber.models import EXACT_SWEEP_MAX_STATES

    p = subparsers.add_parser(
        "joints",
        description="Builds, from the exact conditionals of a window (q**n <= "
                    f"{EXACT_SWEEP_MAX_STATES:,} states; one score table, cached) or a toy, "
                    "the joints of Torroba Hennigen and Kim (2023) beside the law Gibbs "
                    "sampling samples; prints KL both ways and TV for every pair, and each "
                    "joint's conditional mismatch against the model.",
    )
    p.add_argument("--model", required=True,
                   help="MLM name (antiberty, sapiens-vh, ...) with --context/--sites, or a toy "
                        "specification (e.g. ising-path:n=3)")
    add_window_arguments(p)
    p.add_argument("--taus", default="1", help="temperatures, e.g. 0.5,1,2 (default 1)")
    p.add_argument("--pivot", default="mode", choices=("mode", "context"),
                   help="pivot of the HCB joint: the Glauber law's mode (default) or the "
                        "context's own tokens")
    p.add_argument("--json", metavar="FILE", default="joints.json",
                   help="write the table as JSON (default joints.json)")
    p.add_argument("--device", default="cpu", help="torch device of MLMs (default cpu)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compute the joints, print the table and write the JSON."""
    from glauber.core.io import check_output_path, write_json_atomic
    from glauber.experiments.joints import format_joints, joints_table
    from glauber.models import window_spec

    check_output_path(args.json)
    data = joints_table(window_spec(args.model, args.context, args.sites), args.taus,
                        args.pivot, args.device)
    write_json_atomic(args.json, data)
    print(format_joints(data))
    print(f"-> {args.json}")
    return 0


__all__ = [
    "HELP",
    "register",
    "run",
]
