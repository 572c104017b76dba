"""``glauber certify``: every estimator on one model at one temperature, as a table and JSON.

Argument parsing and printing only: :func:`glauber.certify.certify` does the work (and computes
the exact values of small chains), :func:`glauber.certify.format_certificate` the table. The JSON
is written atomically (:mod:`glauber.core.io`). Exit code 0 on success, 2 on bad input.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import os
import sys
import time
from pathlib import Path
from typing import Any

from glauber.commands.arguments import add_kernel_arguments, add_window_arguments, kernel_from

#: The line of ``glauber --help``.
HELP = "certify a masked LM or a toy model at a temperature (table + JSON)"


def certify_defaults() -> dict[str, Any]:
    """The defaults of :func:`glauber.certify.certify` and its :class:`~glauber.certify.Settings`,
    which the options below share."""
    from glauber.certify import Settings, certify

    return {**{name: p.default for name, p in inspect.signature(certify).parameters.items()},
            **dataclasses.asdict(Settings())}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``certify`` parser to the ``glauber`` command."""
    from glauber.models import DEFAULT_MLM_LENGTH, EXACT_WINDOW_MAX_STATES

    defaults = certify_defaults()
    parser = subparsers.add_parser(
        "certify",
        description=(
            "Run the rectangle test, influence and oscillation estimates (corrected Theorem 5, "
            "Corollary 7), margins (Theorem 8), the Section 5.4 drift and coupling times on one "
            "model at temperature tau, and say which claims are certified. Sampled and searched "
            "influences are lower bounds (they can prove that no certificate exists); fast "
            "mixing is proved from a rigorous upper bound on the influences (exact for small "
            "chains and windows, closed forms for pairwise toys, the head's weights for masked "
            "LMs): the bracket tau_no_cert < tau_cert."
        ),
    )
    parser.add_argument("--model", default="antiberty",
                        help="registered MLM (antiberty, sapiens-vh, sapiens-vl, sceptr, "
                        "sceptr-cdr3, tiny-gpt2-control, ...), hf:<hub name>, a checkpoint directory, or a toy "
                        "specification such as ising-cycle:n=8 (default: antiberty)")
    parser.add_argument("--tau", type=float, default=1.0, help="temperature > 0 (default 1.0)")
    parser.add_argument("--length", type=int, default=None,
                        help=f"sequence length of an MLM (default {DEFAULT_MLM_LENGTH}, or the "
                        "context's length; toy models take n from their specification)")
    add_window_arguments(parser)
    parser.add_argument("--exact", action=argparse.BooleanOptionalAction, default=None,
                        help="compute the exact chain (transition matrix, stationary law, "
                        f"t_mix, gap, exact C and Delta) and run every stage on it; default: "
                        f"for a window (--sites) when q**n <= {EXACT_WINDOW_MAX_STATES:,} (5 "
                        "sites of 20 amino acids, matrix-free when it fits in memory; t_mix is "
                        "then bracketed), for another model "
                        "when q**n <= 8,192; --exact above the window limit is an error, "
                        "--no-exact samples")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the exact chain's score-table plan (rows, shards, sizes, "
                        "those already on disk, estimated time on this CPU, a Ray cluster and "
                        "a GPU) and stop before any forward pass")
    parser.add_argument("--ray", nargs="?", const=True, default=None, metavar="ADDRESS",
                        help="build the score table's shards as Ray tasks (needs `pip install "
                        "ray`): alone, a Ray started in this process; with ADDRESS (auto, "
                        "ray://HOST:10001), that cluster")
    parser.add_argument("--search-budget", type=int, default=defaults["search_budget"],
                        help="distinct conditional queries (rows sent to the model) of the "
                        "influence search for the suprema of Definition 2 (default %(default)s, "
                        "capped at the n q^(n-1) that tabulate the model; 0 samples --contexts "
                        "contexts instead)")
    parser.add_argument("--states", metavar="FILE",
                        help="states to examine, one per line: text for MLMs, comma-separated "
                        "token indices for toy models (default: the shipped antibody chains for "
                        "protein models, random states otherwise)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--json", metavar="FILE", help="also write the certificate as JSON")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:1, ...")
    parser.add_argument(
        "--dtype",
        default=None,
        choices=("float32", "bfloat16", "float16"),
        help="MLM compute precision (default float32; bfloat16 on CPU or CUDA, float16 on CUDA); "
        "scores are log-softmaxed in float32",
    )
    parser.add_argument(
        "--autocast",
        default=None,
        choices=("bfloat16", "float16"),
        help="run an MLM's forward pass under torch.autocast in this precision with float32 "
        "weights (leave --dtype at float32; bfloat16 on CPU or CUDA, float16 on CUDA)",
    )
    parser.add_argument("--rectangles", type=int, default=defaults["n_rectangles"],
                        help="rectangles of the incompatibility test (default %(default)s)")
    parser.add_argument("--contexts", type=int, default=defaults["n_contexts"],
                        help="contexts of the sampled influence matrix (default %(default)s)")
    parser.add_argument("--budget", type=int, default=defaults["budget"],
                        help="step budget of the coupled pairs (default %(default)s; the paper "
                        "uses 10,000)")
    parser.add_argument("--pairs", type=int, default=defaults["n_pairs"],
                        help="coupled pairs (default %(default)s; 0 skips the coupling stage)")
    parser.add_argument("--lag-coupling", type=int, default=0, metavar="L",
                        help="estimate an upper bound on TV to stationarity from the start "
                        "states with L-lag couplings (Biswas, Jacob and Vanetti 2019): the first "
                        "step t at which TV <= --eps at 95%% confidence, an estimate, never "
                        "rigorous; beside the exact TV on an exact chain (default 0: skipped)")
    parser.add_argument("--lag-pairs", type=int, default=defaults["lag_pairs"],
                        help="coupled pairs of --lag-coupling (default %(default)s)")
    parser.add_argument("--eps", type=float, default=defaults["eps"],
                        help="target distance of the mixing-time certificates (default "
                        "%(default)s)")
    parser.add_argument("--batch-size", type=int, default=defaults["batch_size"],
                        help="most conditionals per model call (default %(default)s)")
    parser.add_argument("--bracket", action=argparse.BooleanOptionalAction,
                        default=defaults["bracket"],
                        help="report the bracket tau_no_cert < tau_cert: where no Theorem 5 "
                        "certificate can exist (the influences found) and where one is proved "
                        "(a rigorous upper bound on them); no model row of its own (default: "
                        "on)")
    add_kernel_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Certify the model; print the table; write the JSON. Returns the exit code."""
    from tqdm import tqdm

    from glauber.certify import Settings, Source, certify, format_certificate
    from glauber.core.io import atomic_write_text, check_output_path
    from glauber.core.validation import (
        check_eps,
        check_nonnegative_int,
        check_positive_int,
        check_tau,
    )
    from glauber.errors import InvalidParameterError
    from glauber.experiments.executor import make_executor
    from glauber.models import read_states, resolve_model, window_spec

    tau = check_tau(args.tau)
    eps = check_eps(args.eps)
    kernel, schedule = kernel_from(args)
    seed = check_nonnegative_int(args.seed, "--seed")
    sizes = {
        flag: check_positive_int(getattr(args, flag.replace("-", "_")), f"--{flag}")
        for flag in ("rectangles", "contexts", "budget", "batch-size")
    }
    for flag in ("pairs", "search-budget"):
        sizes[flag] = check_nonnegative_int(getattr(args, flag.replace("-", "_")), f"--{flag}")
    if args.length is not None:
        check_positive_int(args.length, "--length")
    if args.lag_coupling:  # refused before the model loads
        from glauber.estimators.lag_coupling import check_lag

        check_nonnegative_int(args.lag_coupling, "--lag-coupling")
        check_lag(args.lag_coupling, args.lag_pairs)
    spec = window_spec(args.model, args.context, args.sites)
    if args.states is not None and not Path(args.states).is_file():
        raise InvalidParameterError(f"--states {args.states}: no such file")
    if args.json is not None:
        check_output_path(args.json)

    start = time.perf_counter()
    model = resolve_model(spec, args.length, args.device, args.dtype, args.autocast)
    if args.dry_run:
        print(table_plan_text(model, args.device))
        return 0
    executor = None if args.ray is None else make_executor(args.ray)
    states = read_states(args.states, model) if args.states else None
    load = time.perf_counter() - start
    with tqdm(file=sys.stderr, unit="row", desc="certify", leave=False) as bar:
        settings = Settings(
            n_rectangles=sizes["rectangles"], n_contexts=sizes["contexts"],
            n_pairs=sizes["pairs"], budget=sizes["budget"], batch_size=sizes["batch-size"],
            search_budget=sizes["search-budget"], kernel=kernel.name, epsilon=kernel.epsilon,
            anneal=None if schedule is None else schedule.spec, bracket=args.bracket,
            lag=args.lag_coupling, lag_pairs=args.lag_pairs,
        )
        cert = certify(model, tau, states, settings, eps=eps, seed=seed, exact=args.exact,
                       progress=bar, device=args.device, executor=executor)
    cert = dataclasses.replace(
        cert, states_source=args.states or cert.states_source,
        timings=dataclasses.replace(cert.timings, load=load),
        source=Source(spec=spec, length=args.length, dtype=args.dtype, autocast=args.autocast,
                      command=getattr(args, "command_line", None)),
        positions=(None if getattr(model, "sites", None) is None
                   else tuple(int(k) + 1 for k in model.sites)),
    )
    outputs = {}
    if args.json is not None:  # written first, so that the verdict can say where it is
        atomic_write_text(args.json, cert.to_json() + "\n")
        outputs["certificate (JSON)"] = args.json
    print(format_certificate(cert, outputs))
    return 0


def table_plan_text(model: Any, device: str = "cpu") -> str:
    """What ``--dry-run`` prints: the exact chain's score-table plan for ``model``
    (:func:`glauber.exact.table_shards.table_plan`) and whether ``certify`` builds it by
    default, with ``--exact``, or not at all."""
    from glauber.certify import EXACT_MAX_STATES, EXACT_WINDOW_MAX_STATES
    from glauber.core.memory import available_memory, human_bytes
    from glauber.exact.score_table import table_folder
    from glauber.exact.sparse import SPARSE_MAX_STATES
    from glauber.exact.table_shards import plan_rates, table_plan
    from glauber.exact.window import WINDOW_MAX_STATES, matrix_free, window_bytes

    rates, notes = plan_rates(os.cpu_count() or 1)
    plan = table_plan(model, table_folder(model), rates=rates, rate_notes=notes)
    states = int(model.q) ** int(model.n)
    limit = EXACT_WINDOW_MAX_STATES if getattr(model, "sites", None) is not None else (
        EXACT_MAX_STATES)
    free = available_memory()
    free_path = matrix_free(model.n, model.q) and states <= WINDOW_MAX_STATES
    fits = free is None or window_bytes(model.n, model.q) <= free
    matrix_note = (f"; above the sparse limit of {SPARSE_MAX_STATES:,} the exact chain is "
                   f"matrix-free (about {human_bytes(window_bytes(model.n, model.q))} planned"
                   + ("" if free is None else f", {human_bytes(free)} available") + ")"
                   if free_path else "")
    if states <= limit and (states <= SPARSE_MAX_STATES or (free_path and fits)):
        when = f"certify builds it by default ({states:,} states <= {limit:,}{matrix_note})"
    elif free_path and not fits:
        when = (f"{states:,} states: certify samples, the matrix-free exact chain does not fit "
                f"in the memory available now{matrix_note}")
    elif states <= SPARSE_MAX_STATES or free_path:
        when = f"certify builds it with --exact ({states:,} states{matrix_note})"
    else:
        when = (f"{states:,} states: beyond the exact chain's sparse limit of "
                f"{SPARSE_MAX_STATES:,} and its matrix-free limit of {WINDOW_MAX_STATES:,} "
                "(fewer sites than tokens: 5 of 20); the table alone can be built")
    where = "" if device == "cpu" else f" (this run would use {device}: see the gpu line)"
    return "\n".join([plan.summary(), f"  {when}{where}", "  nothing computed (--dry-run)"])


__all__ = [
    "HELP",
    "certify_defaults",
    "register",
    "run",
    "table_plan_text",
]
