"""``glauber alpha-curve``: alpha(tau) and Theorem 5 certificates over temperatures (§5.2)."""

from __future__ import annotations

import argparse
from typing import Any

#: The line of ``glauber --help``.
HELP = "alpha(tau) row/col/spectral and the matrix-power certificate (CSV + plot)"


def register(subparsers: Any) -> None:
    """Add the ``alpha-curve`` parser."""
    from glauber.commands.arguments import add_experiment_parser
    from glauber.models import EXACT_SWEEP_MAX_STATES

    p = add_experiment_parser(
        subparsers, "alpha-curve",
        "One influence estimation reused across temperatures; prints the "
        "temperature from which each certificate holds on the grid (exact chains), "
        "or, for sampled or searched lower bounds, the largest temperature at which "
        "no Theorem 5 certificate can exist (tau_no_cert).",
        kernel=False,
    )
    p.add_argument("--taus", required=True, help="temperatures, e.g. 0.5,1,2,4,8,16")
    p.add_argument("--length", type=int, default=None,
                   help="sequence length (default: the toy's n, the context's length, or 20 "
                   "for MLMs)")
    p.add_argument("--contexts", type=int, default=8, help="sampled contexts (MLMs; default 8)")
    p.add_argument("--replacements", type=int, default=1,
                   help="replacements per (context, site) (default 1)")
    p.add_argument("--eps", type=float, default=0.25, help="target distance (default 0.25)")
    p.add_argument("--exact", action=argparse.BooleanOptionalAction, default=None,
                   help="exact C, Delta and t_mix from one score table for every temperature; "
                   f"default: when q**n <= {EXACT_SWEEP_MAX_STATES:,} (e.g. --context "
                   "trastuzumab-vh --sites 98-100); --exact above that limit is an error")
    p.add_argument("--search-budget", type=int, default=0,
                   help="distinct conditional queries of a search for the suprema of C over "
                   "the grid (0: none; capped at the n q^(n-1) that tabulate the model); reports "
                   "tau_no_cert by search beside sampling")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the experiment and print the thresholds."""
    from glauber.commands.arguments import command_line, executor_from
    from glauber.core.validation import check_nonnegative_int
    from glauber.errors import StateSpaceTooLargeError
    from glauber.experiments.alpha_curve import alpha_curve
    from glauber.experiments.common import get_model
    from glauber.models import EXACT_SWEEP_MAX_STATES, window_spec

    spec = window_spec(args.model, args.context, args.sites)
    budget = check_nonnegative_int(args.search_budget, "--search-budget")
    if args.exact:
        model = get_model(spec, args.length, args.device)
        if int(model.q) ** int(model.n) > EXACT_SWEEP_MAX_STATES:
            raise StateSpaceTooLargeError(
                f"--exact needs q**n = {model.q}**{model.n} states, over the limit of "
                f"{EXACT_SWEEP_MAX_STATES:,}; choose at most 3 sites of a 20-token vocabulary "
                "(--context ... --sites 98-100) or drop --exact"
            )
    res = alpha_curve(spec, args.taus, args.out, args.length, args.contexts,
                      args.replacements, args.seed, args.eps, executor_from(args), args.device,
                      exact=args.exact is not False, progress=not args.no_progress,
                      command=command_line(), search_budget=budget)
    if res["exhaustive"]:
        print(f"{res['model']} (n={res['n']}, exact C over all {res['q']}**{res['n']} states); "
              "certificate holds from tau =")
        for name, tau in res["thresholds"].items():
            print(f"  {name:>12}: {'not on this grid' if tau is None else f'{tau:g}'}")
        print(f"  Corollary 7: tau > {res['corollary7_tau']:.4g}")
    else:
        print(f"{res['model']} (n={res['n']}): C is a LOWER bound (sampled"
              f"{', searched' if budget else ''}); no certificate is proved from it (the "
              "bracket below gives the proved side, from an upper bound).")
        print(f"  Corollary 7 would need tau > {res['corollary7_tau']:.4g} (Delta is a lower "
              "bound too)")
    no_cert = res.get("tau_no_cert")
    if no_cert:
        print("tau_no_cert (largest grid tau with rho(C) >= 1: no Theorem 5 certificate can "
              "exist there):")
        for how in ("exact", "search", "sampled"):
            if how in no_cert and (how != "exact" or res["exhaustive"]):
                tau = no_cert[how]
                print(f"  {how:>12}: {'none on this grid' if tau is None else f'{tau:g}'}")
    b = res.get("bracket")
    if b:
        def fmt(v: float | None) -> str:
            return "none found" if v is None else f"{v:.4g}"
        print(f"bracket (grid and bisection): no certificate can exist at tau = "
              f"{fmt(b['tau_no_cert'])} ({b['lower_method']}); one is proved from tau = "
              f"{fmt(b['tau_cert'])} ({b['upper_method']} upper bound); ratio "
              f"{fmt(b['ratio'])}")
    return 0


__all__ = [
    "HELP",
    "register",
    "run",
]
