"""``glauber trajectory``: long checkpointed chains, traps, margins and semantic drift."""

from __future__ import annotations

import argparse
from typing import Any

#: The line of ``glauber --help``.
HELP = "long chains with checkpoints; traps (perfect/approximate), drift, PCA plot"


def register(subparsers: Any) -> None:
    """Add the ``trajectory`` parser."""
    from glauber.commands.arguments import add_common_arguments, add_kernel_arguments

    p = subparsers.add_parser(
        "trajectory",
        description="Kill it and rerun the same command: it resumes from the last checkpoint "
                    "and writes the same bytes as an uninterrupted run.",
    )
    add_common_arguments(p)
    add_kernel_arguments(p)
    p.add_argument("--tau", type=float, default=1.0, help="temperature (default 1)")
    p.add_argument("--steps", type=int, default=10_000, help="steps per chain (default 10000)")
    p.add_argument("--chains", type=int, default=4, help="number of chains (default 4)")
    p.add_argument("--checkpoint-every", type=int, default=500,
                   help="steps between checkpoints (default 500)")
    p.add_argument("--record-every", type=int, default=10,
                   help="record states every this many steps (default 10)")
    p.add_argument("--length", type=int, default=None,
                   help="sequence length (default: the toy's n; 20 for MLMs; a window's "
                        "--sites set it)")
    p.add_argument("--window", type=int, default=300, help="trap window in steps (default 300)")
    p.add_argument("--threshold", type=float, default=0.12,
                   help="trap threshold on the windowed mean cosine drift (default 0.12)")
    p.add_argument("--levels", default="0.1,0.2,0.4",
                   help="semantic-drift levels for hitting times (default 0.1,0.2,0.4)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the chains and print a summary."""
    from glauber.commands.arguments import command_line, kernel_from
    from glauber.experiments.trajectory import trajectory
    from glauber.models import window_spec

    spec, schedule = kernel_from(args)
    if args.ray is not None:
        print("trajectory: --ray ignored (one sequential run per command)")
    s = trajectory(window_spec(args.model, args.context, args.sites), args.tau, args.steps,
                   args.chains, args.checkpoint_every, args.out, args.seed, args.record_every,
                   args.length, args.window, args.threshold, args.levels, args.device,
                   not args.no_progress, command_line(), kernel=spec, anneal=schedule)
    acceptance = s.get("acceptance")
    if acceptance is not None:
        print(f"Metropolis-Hastings acceptance {acceptance['overall']:.3f} over "
              f"{acceptance['proposed']} proposals (per site in the summary)")
    print(f"{s['n_traps']} traps ({s['n_perfect']} perfect) -> {args.out}/trajectory_summary.json")
    return 0


__all__ = [
    "HELP",
    "register",
    "run",
]
