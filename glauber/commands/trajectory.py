"""``glauber trajectory``: long checkpointed chains, traps, margins, semantic drift, and
convergence diagnostics (R-hat, bulk and tail ESS through ArviZ)."""

from __future__ import annotations

import argparse
from typing import Any

#: The line of ``glauber --help``.
HELP = ("long chains with checkpoints; traps (perfect/approximate), drift, PCA plot; "
        "R-hat and ESS across chains")


def register(subparsers: Any) -> None:
    """Add the ``trajectory`` parser."""
    from glauber.commands.arguments import add_experiment_parser
    from glauber.experiments.trajectory_diagnostics import ENERGY_KINDS

    p = add_experiment_parser(
        subparsers, "trajectory",
        "Kill it and rerun the same command: it resumes from the last checkpoint "
        "and writes the same bytes as an uninterrupted run.",
    )
    p.add_argument("--tau", type=float, default=1.0, help="temperature (default 1)")
    p.add_argument("--steps", type=int, default=10_000, help="steps per chain (default 10000)")
    p.add_argument("--chains", type=int, default=8,
                   help="number of chains, started from dispersed states (the context, trap "
                        "modes of --starts-from, random states); at least 4 for a convergence "
                        "verdict (default 8)")
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
    p.add_argument("--energy", default="auto", choices=ENERGY_KINDS,
                   help="energy observable of the diagnostics: -PLL, the negative raw-logit "
                        "sum, or none; auto: -PLL where its n forwards per recorded state cost "
                        "at most 1%% of the sampling (toys, short windows), else none")
    p.add_argument("--starts-from", metavar="DIR", default=None,
                   help="an earlier trajectory run (its --out folder): its trap modes start "
                        "up to half of the chains")
    p.add_argument("--lag-coupling", type=int, default=None, metavar="L",
                   help="also estimate an upper bound on TV to stationarity at the last step "
                        "from the chains' start law with L-lag couplings (Biswas, Jacob and "
                        "Vanetti 2019; an estimate with a 95%% CI, never rigorous) -> "
                        "lag_coupling.json")
    p.add_argument("--lag-pairs", type=int, default=100,
                   help="coupled pairs of --lag-coupling (default 100)")
    p.add_argument("--no-diagnostics", action="store_true",
                   help="skip the convergence diagnostics (they need the 'diagnostics' extra: "
                        "pip install 'glauber[diagnostics]')")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the chains and print a summary."""
    from glauber.commands.arguments import command_line, kernel_from
    from glauber.experiments.trajectory import trajectory
    from glauber.models import window_spec

    spec, schedule = kernel_from(args)
    if args.lag_coupling is not None:  # refused before the run, not after it
        from glauber.estimators.lag_coupling import check_lag

        check_lag(args.lag_coupling, args.lag_pairs)
    if args.ray is not None:
        print("trajectory: --ray ignored (one sequential run per command)")
    s = trajectory(window_spec(args.model, args.context, args.sites), args.tau, args.steps,
                   args.chains, args.checkpoint_every, args.out, args.seed, args.record_every,
                   args.length, args.window, args.threshold, args.levels, args.device,
                   not args.no_progress, command_line(), kernel=spec, anneal=schedule,
                   diagnostics=not args.no_diagnostics, energy=args.energy,
                   starts_from=args.starts_from)
    acceptance = s.get("acceptance")
    if acceptance is not None:
        print(f"Metropolis-Hastings acceptance {acceptance['overall']:.3f} over "
              f"{acceptance['proposed']} proposals (per site in the summary)")
    print(f"{s['n_traps']} traps ({s['n_perfect']} perfect) -> {args.out}/trajectory_summary.json")
    if "diagnostics" in s:
        print(f"diagnostics: {s['diagnostics']['verdict']} -> {args.out}/diagnostics.json")
    elif not args.no_diagnostics:
        print("diagnostics: none (R-hat compares chains: use --chains 4 or more)")
    if args.lag_coupling is not None:
        from pathlib import Path

        from glauber.experiments.trajectory_diagnostics import lag_coupling_report
        from glauber.models import resolve_model

        model = resolve_model(window_spec(args.model, args.context, args.sites), args.length,
                              args.device)
        lag = lag_coupling_report(model, s["config"], Path(args.out), args.lag_coupling,
                                  args.lag_pairs, args.seed)
        print(f"lag coupling: {lag['text']} -> {args.out}/lag_coupling.json")
    return 0


__all__ = [
    "HELP",
    "register",
    "run",
]
