"""The kernels section of docs/results.md: every kernel, exactly, on CDR3 windows and toys, and
the Metropolis-Hastings acceptance on full chains.

* **Exact windows** (:class:`~glauber.exact.kernel_summary.KernelSummary` per kernel and
  temperature): AntiBERTy and Sapiens on three CDR3 sites of trastuzumab (VH 98-100: ``RWG``,
  the main job's window; VL 90-92: ``QHY``, the same positions of the light chain's CDR3), and
  two toys of the same size (8,000 states): for the kernels ``random``, ``sweep``, ``shuffled``,
  ``mh:pll``, ``mh:logits`` at ``tau`` 0.5, 1 and 2, the exact ``t_mix(1/4)`` (in the kernel's
  steps; a bracket where stepping every start would take too long), the absolute gap, the
  stationary mode and its mass, and the TV from the law to the paper's kernel's law and to the
  two Metropolis-Hastings targets (how far plain Gibbs sampling is from the "energy" its users
  think they sample). One score table per window serves every kernel and temperature.
* **Acceptance on full chains**: ``mh:pll`` and ``mh:logits`` chains on the whole trastuzumab
  VH and VL (:func:`glauber.estimators.glauber_chains`), acceptance overall and its spread over
  the sites.

``glauber results --rerun kernels`` (:data:`COMMAND`, :func:`refresh`) runs both parts into
docs/data/kernels (each item saved at once, atomically; a rerun skips what is there);
:func:`render` writes the section of docs/results.md from that JSON alone (``glauber results``).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from glauber.core.io import write_json_atomic
from glauber.experiments.common import markdown_table

#: Kernels and temperatures of the exact table.
KERNELS = ("random", "sweep", "shuffled", "mh:pll", "mh:logits")
TAUS = (0.5, 1.0, 2.0)
#: Steps of every start's point mass tried before a bracket is reported, on chains that neither
#: square (more than 4,096 states) nor factor: the Metropolis-Hastings windows (8,000 states, a
#: step of every start is about 10^10 flops). 0: their t_mix is always the bracket; the other
#: kernels square their class factor and reach any t exactly.
TMIX_CAP = 0
#: The exact windows: label -> (model, shipped chain, 1-based sites).
WINDOWS: dict[str, tuple[str, str, str]] = {
    "antiberty / trastuzumab VH 98-100": ("antiberty", "trastuzumab-vh", "98-100"),
    "antiberty / trastuzumab VL 90-92": ("antiberty", "trastuzumab-vl", "90-92"),
    "sapiens-vh / trastuzumab VH 98-100": ("sapiens-vh", "trastuzumab-vh", "98-100"),
    "sapiens-vl / trastuzumab VL 90-92": ("sapiens-vl", "trastuzumab-vl", "90-92"),
}
#: Toys of the same size (as in :mod:`glauber.experiments.windows`).
TOYS = ("random-table:n=3,q=20,seed=0,scale=1.0", "potts-cycle:n=3,q=20,J=1.0")
#: Full chains of the acceptance part: label -> (model, shipped chain).
FULL_CHAINS: dict[str, tuple[str, str]] = {
    "antiberty / trastuzumab VH": ("antiberty", "trastuzumab-vh"),
    "sapiens-vh / trastuzumab VH": ("sapiens-vh", "trastuzumab-vh"),
    "sapiens-vl / trastuzumab VL": ("sapiens-vl", "trastuzumab-vl"),
}
#: Chains and steps of the acceptance runs.
ACCEPTANCE_CHAINS, ACCEPTANCE_STEPS = 4, 10
#: The command that refreshes the section's data.
COMMAND = "glauber results --rerun kernels"


def window_model(label: str) -> Any:
    """The restricted model of a window of :data:`WINDOWS`, or a toy of :data:`TOYS`."""
    from glauber.models import resolve_model, window_spec

    if label not in WINDOWS:
        return resolve_model(label)
    model, chain, sites = WINDOWS[label]
    return resolve_model(window_spec(model, chain, sites))


def exact_item(label: str, kernels: Sequence[str] = KERNELS, taus: Sequence[float] = TAUS,
               cap: int = TMIX_CAP, log: Callable[[str], Any] = print) -> dict:
    """Every kernel at every temperature on one window or toy (one score table)."""
    from glauber.exact.chain import ExactChain
    from glauber.exact.kernel_summary import kernel_summary

    model = window_model(label)
    start = time.perf_counter()
    base = ExactChain(model, 1.0)
    table = base.scores()
    build = time.perf_counter() - start
    rows = []
    for kernel in kernels:
        for tau in taus:
            t0 = time.perf_counter()
            chain = ExactChain(model, tau, kernel=kernel)
            chain._cache["scores"] = table
            summary = kernel_summary(chain, 0.25, max_steps=cap).to_dict()
            summary["seconds"] = round(time.perf_counter() - t0, 2)
            summary["mode_text"] = _text(model, summary["mode_state"])
            rows.append(summary)
            log(f"  {label}: {kernel} at tau = {tau:g}: {summary['seconds']} s")
    return {"label": label, "kind": "mlm" if label in WINDOWS else "toy",
            "spec": list(WINDOWS.get(label, (label,))), "states": int(base.num_states),
            "table_seconds": round(build, 1), "rows": rows}


def acceptance_item(label: str, chains: int = ACCEPTANCE_CHAINS,
                    steps: int = ACCEPTANCE_STEPS, seed: int = 0) -> dict:
    """``mh:pll`` and ``mh:logits`` on a whole shipped chain: acceptance overall and by site."""
    from glauber.estimators import glauber_chains
    from glauber.models import resolve_context, resolve_model

    name, chain = FULL_CHAINS[label]
    probe = resolve_model(name, 1)
    x = resolve_context(probe, chain)
    model = probe.with_length(len(x))
    out = {"label": label, "model": name, "chain": chain, "n": int(len(x)), "chains": chains,
           "steps": steps}
    for kernel in ("mh:pll", "mh:logits"):
        t0 = time.perf_counter()
        res = glauber_chains(model, 1.0, np.tile(x, (chains, 1)), steps, seed=seed,
                             kernel=kernel, batch_size=512)
        acc = res.acceptance
        rates = acc.per_site[~np.isnan(acc.per_site)]
        out[kernel] = {"overall": acc.overall, "moved": acc.moved,
                       "proposed": int(acc.proposed.sum()),
                       "site_rate_quartiles": [float(v) for v in np.quantile(rates, [0.25, 0.5,
                                                                                     0.75])],
                       "seconds": round(time.perf_counter() - t0, 1)}
    return out


def _text(model: Any, state: Sequence[int]) -> str:
    """Amino acids as letters; toy tokens as comma-separated indices."""
    labels = getattr(model, "labels", None)
    if labels and all(len(label) == 1 and not label.isdigit() for label in labels):
        return "".join(labels[int(a)] for a in state)
    return ",".join(map(str, state))


# ----------------------------------------------------------------------------------- render
def _g(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def _tmix(row: dict) -> str:
    if row["tmix"] is not None:
        return str(row["tmix"])
    upper = "?" if row["tmix_upper"] is None else f"{row['tmix_upper']}*"
    return f"[{row['tmix_lower']}, {upper}]"


def exact_markdown(items: Sequence[dict]) -> str:
    """One table per window or toy: kernels down, temperatures across the quantities."""
    out = []
    for item in items:
        head = f"**{item['label']}** ({item['states']:,} states"
        head += f"; score table {item['table_seconds']:g} s)" if item["kind"] == "mlm" else ")"
        rows = []
        for r in item["rows"]:
            mode = r["mode_text"] if item["kind"] == "mlm" else ",".join(map(str, r["mode_state"]))
            rows.append((r["kernel"], f"{r['tau']:g}", _tmix(r), _g(r["absolute_gap"]),
                         f"{mode} ({_g(r['mode_mass'])})", _g(r["tv_to_random_scan"]),
                         _g(r["tv_to_pll_target"]), _g(r["tv_to_logits_target"]),
                         _g(r["acceptance"])))
        out += [head + "\n", markdown_table(
            ("kernel", "tau", "t_mix", "gap", "mode (mass)", "TV to random scan",
             "TV to PLL target", "TV to logits target", "MH acceptance"), rows)]
    return "\n".join(out)


def clopper_pearson(accepted: int, proposed: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson 1934) two-sided interval of a binomial rate.

    Examples
    --------
    >>> lo, hi = clopper_pearson(40, 40)
    >>> round(lo, 4), hi
    (0.9119, 1.0)
    """
    from scipy.stats import binomtest

    ci = binomtest(accepted, proposed).proportion_ci(level, method="exact")
    return float(ci.low), float(ci.high)


def acceptance_markdown(items: Sequence[dict]) -> str:
    """The acceptance table: overall rate with its exact 95% interval, moves, per-site spread."""
    rows = []
    for item in items:
        for kernel in ("mh:pll", "mh:logits"):
            a = item[kernel]
            q = ", ".join(f"{v:.2f}" for v in a["site_rate_quartiles"])
            lo, hi = clopper_pearson(round(a["overall"] * a["proposed"]), a["proposed"])
            rows.append((item["label"], item["n"], kernel,
                         f"{a['overall']:.3f} [{lo:.2f}, {hi:.2f}]", f"{a['moved']:.3f}", q,
                         a["proposed"]))
    return markdown_table(("model / chain", "n", "kernel", "acceptance [95% interval]", "moved",
                           "per-site quartiles", "proposals"), rows)


def render(folder: Path) -> str:
    """The kernels section of docs/results.md (below its heading) from the JSON in ``folder``."""
    exact = _load(folder / "exact.json") or {"items": []}
    accept = _load(folder / "acceptance.json") or {"items": []}
    # the order of the tables, whatever order resumed runs appended the items in
    order = {label: k for k, label in enumerate([*WINDOWS, *TOYS, *FULL_CHAINS])}
    for data in (exact, accept):
        data["items"].sort(key=lambda item: order.get(item["label"], len(order)))
    parts = [
        f"```\n{COMMAND}\n```\n",
        "Each kernel of `glauber.core.kernel_spec` on the exact chain of three CDR3 sites in "
        "their full chain (every other residue frozen, 8,000 states) and on two toys of the "
        "same size. t_mix is the worst-start t_mix(1/4) in the kernel's own steps (a sweep or "
        "shuffled step is a pass over the 3 sites, a random-scan step one site): compare a "
        "pass with 3 random-scan steps. A Metropolis-Hastings chain on 8,000 states neither "
        "squares (dense limit 4,096) nor factors (its site laws depend on the current token), "
        "so its t_mix is a bracket [lower, upper]: the lower end is rigorous (Levin–Peres–"
        "Wilmer Theorem 12.5's spectral bound), the upper end (*) is their Theorem 12.4 from "
        "the float64 gap of a reversible chain (an estimate). gap: the absolute "
        "spectral gap of one step (a Metropolis-Hastings random scan's from Lanczos on its "
        "law, the target exp(-E/tau)/Z, checked by detailed balance move by move). TV to PLL / "
        "logits target: the distance from the kernel's stationary law, solved from its "
        "transition matrix, to exp(-E/tau)/Z with E the negative pseudo-log-likelihood or the "
        "negative sum of raw logits; the Metropolis-Hastings rows are 0 there to the solve's "
        "accuracy (their law is the target), the random-scan rows measure how far plain Gibbs "
        "sampling is from that energy. MH acceptance: the exact probability that a step from "
        "the stationary law accepts its proposal.\n",
        exact_markdown(exact["items"]),
        "### Metropolis-Hastings acceptance on full chains\n",
        f"{ACCEPTANCE_CHAINS} chains x {ACCEPTANCE_STEPS} steps from the shipped chain at "
        "tau = 1 (every site free; a step proposes at one site: `moved` counts the accepted "
        "proposals of a new token). The interval is Clopper-Pearson's exact 95% interval of "
        "the rate over the proposals (treated as independent, which consecutive steps of one "
        "chain are not quite); the quartiles are over the sites proposed at least once.\n",
        acceptance_markdown(accept["items"]) if accept["items"] else (
            f"(not run yet: `{COMMAND}` runs it; a step of a Metropolis-Hastings chain on a "
            f"full chain of n residues costs n + 1 full-length forwards, about "
            f"{2 * ACCEPTANCE_CHAINS * ACCEPTANCE_STEPS * 121:,} per model here, beyond this "
            "2-core machine's budget; the exact acceptance at stationarity on the windows is in "
            "the tables above.)\n"),
    ]
    return "\n".join(parts)


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


# ----------------------------------------------------------------------------------- driver
def run(out: Path, parts: Sequence[str], log: Callable[[str], Any] = print) -> None:
    """Run the parts (``windows``, ``toys``, ``acceptance``) into ``out``; every item is saved
    at once and a rerun skips it."""
    out.mkdir(parents=True, exist_ok=True)
    for part in parts:
        if part in ("windows", "toys"):
            labels = list(WINDOWS) if part == "windows" else list(TOYS)
            _run_items(out / "exact.json", labels, lambda label: exact_item(label, log=log), log)
        elif part == "acceptance":
            _run_items(out / "acceptance.json", list(FULL_CHAINS), acceptance_item, log)
        else:
            from glauber.errors import InvalidParameterError

            raise InvalidParameterError(f"unknown part {part!r}; use windows, toys, acceptance")


def refresh(folder: Path, work: Path, log: Callable[[str], Any] = print) -> None:
    """Run every part into ``folder`` (``work`` is not used: the JSON is the data itself, and
    the score tables are cached under ``$GLAUBER_CACHE``)."""
    run(folder, ("windows", "toys", "acceptance"), log)


def _run_items(path: Path, labels: Sequence[str], compute: Callable[[str], dict],
               log: Callable[[str], Any]) -> None:
    data = _load(path) or {"items": []}
    done = {item["label"] for item in data["items"]}
    for label in labels:
        if label in done:
            continue
        start = time.perf_counter()
        data["items"].append(compute(label))
        write_json_atomic(path, data)
        log(f"{label}: {time.perf_counter() - start:.0f} s")
        sys.stdout.flush()


__all__ = ["ACCEPTANCE_CHAINS", "ACCEPTANCE_STEPS", "COMMAND", "FULL_CHAINS", "KERNELS", "TAUS",
           "TMIX_CAP", "TOYS", "WINDOWS", "acceptance_item", "acceptance_markdown",
           "clopper_pearson", "exact_item", "exact_markdown", "refresh", "render", "run",
           "window_model"]
