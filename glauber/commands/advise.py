"""``glauber advise``: which temperature? Certificates at a few temperatures, read as advice.

Argument parsing and printing only: :func:`glauber.certify.advice.advise` does the work. The
JSON is written atomically (:mod:`glauber.core.io`).
"""

from __future__ import annotations

import argparse
import json

from glauber.commands.arguments import add_window_arguments

#: The line of ``glauber --help``.
HELP = "which temperature? the bracket, exact t_mix, estimates and traps at a few temperatures"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``advise`` parser to the ``glauber`` command."""
    from glauber.commands.certify import certify_defaults

    defaults = certify_defaults()
    parser = subparsers.add_parser(
        "advise",
        description=(
            "Certify a model at a few temperatures and say which to sample at, in one screen: "
            "the bracket tau_no_cert < tau_cert (rigorous), the exact t_mix where the chain is "
            "enumerated (a window or a toy), the coupled pairs' meeting times (estimates), the "
            "perfect traps (Theorem 8), and the lowest temperature proved to mix within --steps. "
            "Each line says whether it is proved or estimated."
        ),
    )
    parser.add_argument("--model", default="antiberty",
                        help="registered MLM, hf:<hub name>, a checkpoint directory or a toy "
                        "specification (default: antiberty)")
    add_window_arguments(parser)
    parser.add_argument("--taus", default="0.5,1,2,4",
                        help="temperatures, comma-separated (default %(default)s)")
    parser.add_argument("--steps", type=int, default=10_000,
                        help="chain length you can afford (default %(default)s)")
    parser.add_argument("--pairs", type=int, default=8, help="coupled pairs (default 8)")
    parser.add_argument("--budget", type=int, default=500,
                        help="step budget of the coupled pairs (default 500)")
    parser.add_argument("--search-budget", type=int, default=defaults["search_budget"],
                        help="distinct conditional queries of the influence search at each "
                        "temperature (default %(default)s; fewer for a large vocabulary, e.g. "
                        "the 576 SMILES tokens of rxnmapper)")
    parser.add_argument("--rectangles", type=int, default=defaults["n_rectangles"],
                        help="rectangles of the incompatibility test (default %(default)s)")
    parser.add_argument("--eps", type=float, default=0.25, help="target distance (default 0.25)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda, ...")
    parser.add_argument("--json", metavar="FILE", help="also write the advice as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Advise; print the screen; write the JSON. Returns the exit code."""
    from glauber.certify.advice import advise, format_advice
    from glauber.core.io import atomic_write_text, check_output_path
    from glauber.core.validation import check_eps
    from glauber.errors import InvalidParameterError
    from glauber.models import resolve_model, window_spec

    try:
        taus = [float(t) for t in args.taus.split(",") if t.strip()]
    except ValueError:
        raise InvalidParameterError(f"--taus {args.taus!r}: give numbers, e.g. 0.5,1,2") from None
    eps = check_eps(args.eps)
    if args.json is not None:
        check_output_path(args.json)
    model = resolve_model(window_spec(args.model, args.context, args.sites), None, args.device)
    advice = advise(model, taus, eps=eps, seed=args.seed, pairs=args.pairs, budget=args.budget,
                    steps=args.steps, search_budget=args.search_budget,
                    n_rectangles=args.rectangles)
    if args.json is not None:
        atomic_write_text(args.json, json.dumps(advice.to_dict(), indent=2, allow_nan=False) + "\n")
    print(format_advice(advice))
    return 0


__all__ = ["HELP", "register", "run"]
