"""``glauber phase-diagram``: median coupling times over a tau x n grid (paper §6.1, Fig. 2)."""

from __future__ import annotations

import argparse
from typing import Any

#: The line of ``glauber --help``.
HELP = "coupling-time phase diagram over temperatures x lengths (CSV + heatmap)"


def register(subparsers: Any) -> None:
    """Add the ``phase-diagram`` parser."""
    from glauber.commands.arguments import add_experiment_parser

    p = add_experiment_parser(
        subparsers, "phase-diagram",
        "Pairs of chains from independent starts, same-site maximal coupling, "
        "median steps to agreement within the budget; exact t_mix beside toy cells.",
    )
    p.add_argument("--taus", required=True, help="temperatures, e.g. 0.5,1,2")
    p.add_argument("--lengths", default=None,
                   help="sequence lengths, e.g. 8,16 (required unless --context gives a window)")
    p.add_argument("--pairs", type=int, default=16, help="coupled pairs per cell (default 16)")
    p.add_argument("--budget", type=int, default=10_000, help="steps per cell (default 10000)")
    p.add_argument("--no-exact", action="store_true", help="skip exact t_mix of toy cells")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the experiment and print where the outputs are."""
    from glauber.commands.arguments import command_line, executor_from, kernel_from
    from glauber.experiments.phase_diagram import phase_diagram
    from glauber.models import window_spec

    spec, _ = kernel_from(args, command="phase-diagram")
    rows = phase_diagram(window_spec(args.model, args.context, args.sites), args.taus,
                         args.lengths, args.pairs, args.budget, args.seed,
                         args.out, executor_from(args), args.device, not args.no_exact,
                         not args.no_progress, command_line(), kernel=spec)
    censored = sum(bool(r["censored"]) for r in rows)
    print(f"{len(rows)} cells ({censored} censored) -> {args.out}/phase_diagram.csv, "
          f"phase_diagram.png")
    return 0


__all__ = [
    "HELP",
    "register",
    "run",
]
