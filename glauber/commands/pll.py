"""``glauber pll``: the pseudo-log-likelihood of a sequence (``sum_k log p_tau(x_k | x_{-k})``).

Argument parsing and printing only: :func:`glauber.estimators.pseudo_log_likelihood` does the
work (one masked query per site, batched). With ``--sites`` the sum runs over the chosen
positions of the context, each term still conditioned on the whole sequence.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

#: The line of ``glauber --help``.
HELP = "pseudo-log-likelihood of a sequence: sum_k log p_tau(x_k | x_-k), and per site"


def register(subparsers: Any) -> None:
    """Add the ``pll`` parser."""
    from glauber.commands.arguments import add_window_arguments

    p = subparsers.add_parser(
        "pll",
        description="One masked query per position (batched): the PLL the paper says is used "
                    "as if the conditionals defined a joint, and its mean per position (the "
                    "normalised PLL). Its negative at tau = 1 is the energy of --kernel mh:pll.",
    )
    p.add_argument("--model", default="antiberty",
                   help="MLM name (antiberty, sapiens-vh, ...) or toy specification "
                        "(default antiberty)")
    add_window_arguments(p)
    p.add_argument("--tau", type=float, default=1.0, help="temperature (default 1)")
    p.add_argument("--batch-size", type=int, default=512,
                   help="most masked queries per model call (default 512)")
    p.add_argument("--device", default="cpu", help="torch device of MLMs (default cpu)")
    p.add_argument("--json", metavar="FILE", help="also write the values as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compute and print the PLL of the context (or of the sites chosen in it)."""
    from glauber.core.io import atomic_write_text, check_output_path
    from glauber.core.validation import check_positive_int, check_tau
    from glauber.errors import InvalidParameterError
    from glauber.estimators import pseudo_log_likelihood
    from glauber.models import resolve_model, window_spec

    tau = check_tau(args.tau)
    batch = check_positive_int(args.batch_size, "--batch-size")
    if args.context is None:
        raise InvalidParameterError(
            "give the sequence: --context NAME|SEQUENCE|FILE (e.g. --context trastuzumab-vh)"
        )
    if args.json is not None:
        check_output_path(args.json)
    spec = window_spec(args.model, args.context, args.sites)
    start = time.perf_counter()
    model = resolve_model(spec, None, args.device)
    state = model.context[model.sites]
    pll = float(pseudo_log_likelihood(model, state, tau=tau, batch_size=batch)[0])
    seconds = time.perf_counter() - start
    values = {"model": spec, "tau": tau, "sites": int(model.n), "pll": pll,
              "normalised_pll": pll / model.n, "seconds": round(seconds, 3)}
    print(f"{spec} at tau = {tau:g}: PLL = {pll:.6f} over {model.n} sites, normalised PLL = "
          f"{pll / model.n:.6f} ({seconds:.1f} s with loading)")
    if args.json is not None:
        atomic_write_text(args.json, json.dumps(values, indent=2) + "\n")
    return 0


__all__ = [
    "HELP",
    "register",
    "run",
]
