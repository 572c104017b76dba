"""``glauber certify``: every estimator on one model at one temperature, as a table and JSON.

Loads a masked LM (``antiberty``, ``sapiens-vh``, ``hf:<name>``, a directory, ...) or a toy model
(``ising-cycle:n=8``), runs :func:`glauber.estimators.certify.certify` with a progress bar on
stderr, prints a readable table (model, incompatibility, influence & Theorem 5, margins &
Theorem 8, drift, coupling, claims, timings) and optionally writes the certificate as JSON
(atomically: a temporary file in the same folder, then ``os.replace``). For toy models small
enough to enumerate (``q**n <= EXACT_MAX_STATES``) the exact values from the full transition
matrix (exact influence matrix and its certificates, exact worst-start ``t_mix``) are computed
and printed beside the estimates. Exit code 0 on success, 2 on bad input.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from glauber.errors import (
    ConvergenceError,
    InvalidParameterError,
    NonPositiveConditionalError,
    StateSpaceTooLargeError,
)
from glauber.core.io import atomic_write_text
from glauber.estimators.certify import Certificate, ExactValues, certify
from glauber.models import DEFAULT_MLM_LENGTH, default_states, is_toy_spec, read_states
from glauber.models import resolve_model
from glauber.theory.contraction import certify_contraction
from glauber.core.validation import (
    check_eps,
    check_nonnegative_int,
    check_positive_int,
    check_tau,
)

#: Largest toy state space for which exact values are computed (dense matrix powers).
EXACT_MAX_STATES = 1024
#: The defaults of :func:`certify`, shared by the options below.
DEFAULTS = {name: p.default for name, p in inspect.signature(certify).parameters.items()}
_WIDTH = 34


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``certify`` parser to the ``glauber`` command."""
    parser = subparsers.add_parser(
        "certify",
        help="certify a masked LM or a toy model at a temperature (table + JSON)",
        description=(
            "Run the rectangle test, influence and oscillation estimates (corrected Theorem 5, "
            "Corollary 7), margins (Theorem 8), the Section 5.4 drift and coupling times on one "
            "model at temperature tau, and say which claims are certified. Sampled influences "
            "are lower bounds: fast mixing is certified only for toy models small enough to "
            "enumerate."
        ),
    )
    parser.add_argument("--model", default="antiberty",
                        help="registered MLM (antiberty, sapiens-vh, sapiens-vl, "
                        "tiny-gpt2-control), hf:<hub name>, a checkpoint directory, or a toy "
                        "specification such as ising-cycle:n=8 (default: antiberty)")
    parser.add_argument("--tau", type=float, default=1.0, help="temperature > 0 (default 1.0)")
    parser.add_argument("--length", type=int, default=None,
                        help=f"sequence length of an MLM (default {DEFAULT_MLM_LENGTH}; toy "
                        "models take n from their specification)")
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
    parser.add_argument("--rectangles", type=int, default=DEFAULTS["n_rectangles"],
                        help="rectangles of the incompatibility test (default %(default)s)")
    parser.add_argument("--contexts", type=int, default=DEFAULTS["n_contexts"],
                        help="contexts of the sampled influence matrix (default %(default)s)")
    parser.add_argument("--budget", type=int, default=DEFAULTS["budget"],
                        help="step budget of the coupled pairs (default %(default)s; the paper "
                        "uses 10,000)")
    parser.add_argument("--pairs", type=int, default=DEFAULTS["n_pairs"],
                        help="coupled pairs (default %(default)s)")
    parser.add_argument("--eps", type=float, default=DEFAULTS["eps"],
                        help="target distance of the mixing-time certificates (default "
                        "%(default)s)")
    parser.add_argument("--batch-size", type=int, default=DEFAULTS["batch_size"],
                        help="most conditionals per model call (default %(default)s)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Certify the model; print the table; write the JSON. Returns the exit code."""
    tau = check_tau(args.tau)
    eps = check_eps(args.eps)
    seed = check_nonnegative_int(args.seed, "--seed")
    sizes = {
        flag: check_positive_int(getattr(args, flag.replace("-", "_")), f"--{flag}")
        for flag in ("rectangles", "contexts", "budget", "pairs", "batch-size")
    }
    if args.length is not None:
        check_positive_int(args.length, "--length")
    if args.states is not None and not Path(args.states).is_file():
        raise InvalidParameterError(f"--states {args.states}: no such file")
    if args.json is not None:
        _check_writable(Path(args.json))

    start = time.perf_counter()
    model = resolve_model(args.model, args.length, args.device, args.dtype, args.autocast)
    states = read_states(args.states, model) if args.states else default_states(model)
    load = time.perf_counter() - start
    with tqdm(file=sys.stderr, unit="row", desc="certify", leave=False) as bar:
        cert = certify(
            model, tau, states, seed=seed, n_rectangles=sizes["rectangles"],
            n_contexts=sizes["contexts"], n_pairs=sizes["pairs"], budget=sizes["budget"],
            eps=eps, progress=bar, batch_size=sizes["batch-size"],
        )
    exact, note, exact_seconds = None, None, None
    if is_toy_spec(args.model):
        t0 = time.perf_counter()
        exact, note = exact_values(model, cert, args.device)
        exact_seconds = time.perf_counter() - t0
    cert = dataclasses.replace(
        cert, exact=exact,
        timings=dataclasses.replace(cert.timings, load=load, exact=exact_seconds),
    )
    source = args.states or ("default states" if states is not None else "random states")
    print(format_certificate(cert, states_source=source, exact_note=note))
    if args.json is not None:
        atomic_write_text(args.json, cert.to_json() + "\n")
    return 0


def exact_values(model: Any, cert: Certificate, device: str) -> tuple[ExactValues | None, str]:
    """Exact counterparts of the certificate from the toy model's full transition matrix.

    Returns ``(values, note)``; ``values`` is None (and ``note`` says why) when the state space
    is over :data:`EXACT_MAX_STATES` or the chain is numerically degenerate at this ``tau``.
    """
    from glauber.toy_models.exact_chain import ExactChain

    num_states = model.q**model.n
    if num_states > EXACT_MAX_STATES:
        return None, f"skipped: q**n = {num_states} > {EXACT_MAX_STATES} states"
    chain = ExactChain(model, cert.tau)
    backend, dev = ("numpy", None) if device == "cpu" else ("torch", device)
    try:
        contraction = certify_contraction(chain.influence_matrix(), cert.eps)
        tmix = chain.mixing_time(cert.eps, backend=backend, device=dev)
        trap = cert.margins.trap
        mass = None
        if trap is not None:
            index = chain.index_of(np.asarray(cert.states[trap.state]))
            mass = float(chain.stationary()[int(index)])
        values = ExactValues(
            num_states=num_states, contraction=contraction, tmix=int(tmix),
            relaxation_time=float(chain.relaxation_time()), reversible=chain.is_reversible(),
            trap_mass=mass,
        )
    except (ConvergenceError, NonPositiveConditionalError, StateSpaceTooLargeError) as exc:
        return None, f"unavailable at tau = {cert.tau:g}: {exc}"
    return values, f"exact chain over all {num_states} states"


def _check_writable(path: Path) -> None:
    folder = path.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK) or path.is_dir():
        raise InvalidParameterError(
            f"--json {path}: cannot write there (the folder must exist and be writable)"
        )


# ------------------------------------------------------------------------------- the table
def format_certificate(
    cert: Certificate, states_source: str = "given", exact_note: str | None = None
) -> str:
    """The human-readable table of a certificate (sections as in the module docstring)."""
    lines: list[str] = [
        f"glauber certify: {cert.model} at tau = {cert.tau:g} (n = {cert.n}, q = {cert.q}, "
        f"eps = {cert.eps:g}, seed = {cert.seed}, device = {cert.device})"
    ]
    for title, body in (
        ("model", _model_section(cert, states_source, exact_note)),
        ("incompatibility (Proposition 4, rectangle test)", _incompatibility_section(cert)),
        ("influence & Theorem 5", _influence_section(cert)),
        ("margins & Theorem 8", _margins_section(cert)),
        ("drift (Section 5.4)", _drift_section(cert)),
        ("coupling (Section 6.1)", _coupling_section(cert)),
        ("claims", _claims_section(cert)),
        ("timings", _timings_section(cert)),
    ):
        lines += ["", f"== {title} =="] + body
    return "\n".join(lines)


def _row(label: str, *values: Any) -> str:
    return f"  {label:<{_WIDTH}} " + "  ".join(_num(v) for v in values)


def _num(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.4g}"
    return str(value)


def _first(values: tuple[Any, ...], limit: int = 8) -> tuple[Any, ...]:
    """At most ``limit`` values, then how many more."""
    if len(values) <= limit:
        return values
    return (*values[:limit], f"... ({len(values) - limit} more)")


def _model_section(cert: Certificate, source: str, exact_note: str | None) -> list[str]:
    s = cert.settings
    out = [
        _row("model", cert.model),
        _row("sites n, vocabulary q", cert.n, cert.q),
        _row("states examined", f"{len(cert.states)} ({source})"),
        _row("influence", "exhaustive (every state: exact)" if s.exhaustive else
             f"sampled: {s.n_contexts} context(s) x {s.n_replacements} replacement(s)"),
    ]
    if exact_note is not None:
        out.append(_row("exact values", exact_note))
    return out


def _incompatibility_section(cert: Certificate) -> list[str]:
    r = cert.incompatibility
    return [
        _row("rectangles", f"{r.n_rectangles} (replacements: top-{r.k} of the model)"),
        _row("mean |delta|  (sd, median, max)", r.mean_abs_delta,
             f"({_num(r.sd_abs_delta)}, {_num(r.median_abs_delta)}, {_num(r.max_abs_delta)})"),
        _row("mean signed delta  (sd)", r.mean_delta, f"({_num(r.sd_delta)})"),
        _row("p-value: mean |delta| > atol", r.p_value_abs),
        _row("p-value: signed t / Wilcoxon", r.p_value_t, r.p_value_wilcoxon),
        _row("rectangles with |delta| > atol", f"{r.n_above_atol} / {r.n_rectangles}",
             f"(atol {r.atol:g})"),
    ]


def _influence_section(cert: Certificate) -> list[str]:
    r, e = cert.influence, cert.exact
    c, x = r.contraction, (e.contraction if e is not None else None)
    kind = "exact" if r.exhaustive else "sampled (LOWER bound)"
    out = [(f"  {'':<{_WIDTH}} {kind:<22}" + ("exact chain" if e is not None else "")).rstrip()]

    def pair(label: str, name: str) -> str:
        line = f"  {label:<{_WIDTH}} {_num(getattr(c, name)):<22}"
        return (line + (_num(getattr(x, name)) if x is not None else "")).rstrip()

    out += [
        pair("alpha_row (paper's alpha)", "alpha_row"),
        pair("alpha_col", "alpha_col"),
        pair("alpha_spectral (top sing. value)", "alpha_spectral"),
        pair("spectral radius of C", "spectral_radius"),
        pair("t_mix bound: row sums", "tmix_row"),
        pair("t_mix bound: column sums", "tmix_col"),
        pair("t_mix bound: spectral norm", "tmix_spectral"),
        pair("t_mix bound: matrix power", "tmix_matrix_power"),
        pair("best certificate", "best"),
        pair("best bound on t_mix(eps)", "best_bound"),
    ]
    if e is not None:
        out.append(f"  {'exact t_mix(eps), worst start':<{_WIDTH}} {'':<22}{e.tmix}")
        out.append(f"  {'exact relaxation time':<{_WIDTH}} {'':<22}{_num(e.relaxation_time)}")
    out += [
        _row("Lemma 6: max_i sum_j Delta/(4 tau)", r.lemma6_alpha,
             "(Corollary 7 holds)" if r.corollary7 else "(Corollary 7 fails)"),
        _row("tanh form: max_i sum_j tanh(.)", r.tanh_alpha),
        _row("certificate from tanh(Delta/4tau)",
             f"{r.oscillation_contraction.best}: {_num(r.oscillation_contraction.best_bound)}"),
        _row("comparisons", r.n_comparisons),
    ]
    return out


def _margins_section(cert: Certificate) -> list[str]:
    r = cert.margins
    out = [
        _row("perfect traps among the states", f"{r.n_perfect} / {len(r.perfect)}"),
        _row("Delta* (smallest margin)", r.delta_star),
        _row("per state: min margin", *_first(r.state_min)),
        _row("per state: mean margin", *_first(r.state_mean)),
    ]
    t = r.trap
    if t is None:
        out.append(_row("Theorem 8 on a trap {x}", "no perfect trap: nothing to bound"))
    else:
        out += [
            _row("trap state (best margin)", t.state, f"Delta* = {_num(t.delta_star)}"),
            _row("escape: |V| e^(-D/tau), sharper", t.escape_bound, t.sharper_escape_bound),
            _row("escape: exact P(x, {x}^c)", t.exact_escape),
            _row("t_mix(1/4) >= e^(D/tau)/(4|V|)", t.tmix_lower_bound,
                 "(needs mu({x}) <= 1/2)"),
        ]
        if cert.exact is not None and cert.exact.trap_mass is not None:
            out.append(_row("exact mu({x})", cert.exact.trap_mass))
    if r.basin is not None:
        b = r.basin
        out += [
            _row("basin states (complete?)", b.n_states, b.complete),
            _row("Assumption 1 / Delta* / k", b.assumption1, b.delta_star, b.k),
            _row("escape bound, sharper", b.escape_bound, b.sharper_escape_bound),
            _row("exact escape: max, mean", b.max_exact_escape, b.mean_exact_escape),
            _row("t_mix(1/4) lower bound", b.tmix_lower_bound),
        ]
    return out


def _drift_section(cert: Certificate) -> list[str]:
    r = cert.drift
    return [
        _row("counted token", f"{r.token_label!r} (index {r.token})"),
        _row("counts at the states", *_first(r.counts)),
        _row("drift at the states", *_first(r.per_state)),
        _row("as printed: all drifts > 0", r.all_positive, "(proves nothing by itself)"),
        _row("band a < count < b", f"({r.band_a:g}, {r.band_b:g})",
             f"{r.n_in_band} states" + (" (every band state)" if r.band_states_complete
                                        else " (sampled)")),
        _row("smallest drift in the band", r.band_min_drift),
        _row(f"P(escape within {r.horizon} steps) <=", r.escape_bound,
             "(vacuous)" if r.vacuous else "", "(rigorous)" if r.rigorous else "(not rigorous)"),
    ]


def _coupling_section(cert: Certificate) -> list[str]:
    r = cert.coupling
    return [
        _row("pairs, step budget", r.n_pairs, r.budget),
        _row("coupling times (censored at budget)", *_first(r.times)),
        _row("censored pairs", r.n_censored),
        _row("median coupling time", "> budget" if r.median_exceeds_budget else r.median),
    ]


def _claims_section(cert: Certificate) -> list[str]:
    out = []
    for c in cert.claims:
        held = "held" if c.hypothesis_held else "not held"
        proof = "RIGOROUS" if c.rigorous else "not rigorous"
        out += [
            f"  [{held}; {proof}] {c.statement}",
            f"      -> {c.certifies}",
            f"      value: {_num(c.value)}; caveat: {c.caveat}",
        ]
    return out


def _timings_section(cert: Certificate) -> list[str]:
    t = cert.timings
    rate = t.rows / t.total if t.total > 0 else math.inf
    return [
        _row("load model and states (s)", t.load),
        *(_row(f"{name} (s)", getattr(t, name))
          for name in ("rectangles", "influence", "margins", "drift", "coupling")),
        _row("exact chain (s)", t.exact),
        _row("certify total (s)", t.total),
        _row("conditionals asked (rows/s)", t.rows, f"({rate:.1f}/s)"),
    ]
