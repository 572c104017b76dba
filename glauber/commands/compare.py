"""``glauber compare``: the toy-vs-MLM table of every certificate (Markdown + JSON)."""

from __future__ import annotations

import argparse
from typing import Any

#: The line of ``glauber --help``.
HELP = "rectangle test, alphas, margins, drift, coupling and exact t_mix, model by model"


def register(subparsers: Any) -> None:
    """Add the ``compare`` parser."""
    from glauber.commands.arguments import add_experiment_parser

    p = add_experiment_parser(
        subparsers, "compare",
        "Run certify's pipeline on every model at every temperature and print the "
        "comparison as Markdown (also compare.md and compare.json in --out): the "
        "rectangle test at tau = 1, per-state margins and the share of perfect "
        "traps, and per temperature the Theorem 5 certificates (exact for "
        "enumerable toys, lower bounds otherwise), the drift bound and the median "
        "coupling time. Rerunning the same command in the same --out resumes. "
        "--context and --sites apply to every masked LM of --models (toys keep their "
        "own chain).",
        model=False,
    )
    p.add_argument("--models", required=True,
                   help="comma-separated models, e.g. ising-cycle:n=8,asym-ising:n=8,antiberty")
    p.add_argument("--taus", required=True, help="temperatures, e.g. 0.5,1,2")
    p.add_argument("--length", type=int, default=None,
                   help="sequence length of every model whose name does not fix it: masked LMs "
                   "(default 16) and toy specifications without n= (default: the family's n); "
                   "a toy with n= keeps its own; not with --context (a window's sites set it)"),
    p.add_argument("--contexts", type=int, default=8, help="contexts per model (default 8)")
    p.add_argument("--rectangles", type=int, default=300, help="rectangles (default 300)")
    p.add_argument("--pairs", type=int, default=8, help="coupled pairs (default 8)")
    p.add_argument("--budget", type=int, default=1000,
                   help="coupling budget and drift horizon T (default 1000)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the comparison and print the Markdown."""
    from glauber.commands.arguments import command_line, executor_from, kernel_from
    from glauber.experiments.common import parse_names
    from glauber.experiments.compare import compare, compare_markdown
    from glauber.models import is_toy_spec, window_spec

    spec, schedule = kernel_from(args)
    names = [name if is_toy_spec(name) or args.context is None
             else window_spec(name, args.context, args.sites)
             for name in parse_names(args.models, "--models")]
    results = compare(names, args.taus, args.out, args.length, args.contexts,
                      args.rectangles, args.pairs, args.budget, args.seed, executor_from(args),
                      args.device, progress=not args.no_progress, command=command_line(),
                      kernel=spec, anneal=schedule)
    print(compare_markdown(results))
    return 0


__all__ = [
    "HELP",
    "register",
    "run",
]
