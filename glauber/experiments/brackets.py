"""The bracket ``tau_no_cert < tau_cert`` on the real models: full chains and exact CDR3 windows.

For AntiBERTy and Sapiens (``sapiens-vh`` on trastuzumab VH, ``sapiens-vl`` on VL) on each full
chain in its own context (every residue resampled), SCEPTR on its whole example TCR (57
residues) and the reaction models on their reaction:

* the lower side: :func:`~glauber.estimators.search_influence_sweep` over a grid of temperatures
  with a budget of model rows, through a query memo, so that the witnesses of every temperature
  are re-evaluated at any other (:class:`~glauber.estimators.WitnessCurve`) and
  ``tau_no_cert`` is refined by bisection at no further model row;
* the upper side: :func:`~glauber.estimators.influence_upper_bound`'s ``UpperBoundSource``
  from the weights of the LayerNorm head (no model row), ``tau_cert`` by grid and bisection.

On the exact CDR3 windows (3 sites in their full chain, ``20^3`` states; VH positions 98–100 as
in the main job, VL 91–93, the ``HYT`` window of the windows section; and AntiBERTy's 4-site VH
window 97–100, ``20^4`` states from a 32,000-row table; SCEPTR's CDR3B windows of 3, 4 and 5
sites, the last ``20^5`` states from an 800,000-row table, matrix-free), side by side: the weight
bound, the exact value (the score table) and the searched value, at each temperature of a grid,
with the bracket of each.

A section of docs/results.md (:data:`glauber.experiments.results.SECTIONS`): :func:`render`
writes its Markdown from the JSON committed under ``docs/data/bracket/``, and
``glauber results --rerun bracket`` (:func:`refresh`) computes every entry not yet there (one
JSON file each, written atomically: a rerun resumes; the full chains' searches take tens of
minutes each).
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from glauber.core.arrays import jsonable
from glauber.core.io import write_json_atomic
from glauber.errors import InvalidParameterError
from glauber.estimators.influence_bracket import (
    UPPER_GRID,
    WitnessCurve,
    exact_lower,
    influence_bracket,
)
from glauber.estimators.influence_search import search_influence_sweep
from glauber.estimators.influence_upper import UpperBoundSource
from glauber.estimators.score_cache import MemoisedModel
from glauber.estimators.witnesses import reduced_precision
from glauber.experiments import domains
from glauber.experiments.common import markdown_table
from glauber.experiments.compare import _fmt as _f

#: Full chains: entry -> (model, shipped context).
FULL_CHAINS: dict[str, tuple[str, str]] = {
    "antiberty-vh": ("antiberty", "trastuzumab-vh"),
    "antiberty-vl": ("antiberty", "trastuzumab-vl"),
    "sapiens-vh": ("sapiens-vh", "trastuzumab-vh"),
    "sapiens-vl": ("sapiens-vl", "trastuzumab-vl"),
    "sceptr": ("sceptr", "sceptr-example"),
    "rxnmapper": ("rxnmapper", "reaction"),
    "rxnfp": ("rxnfp", "reaction"),
}
#: Exact CDR3 windows: entry -> (model, context, 1-based sites). SCEPTR's are in the CDR3B of
#: its example TCR (positions 44-57): 3, 4 and 5 sites from position 50 (``QGD``, ``QGDN``,
#: ``QGDNE``); the 5-site one, 3,200,000 states, is the matrix-free chain
#: (:class:`~glauber.exact.window_chain.WindowChain`) from an 800,000-row table.
WINDOWS: dict[str, tuple[str, str, str]] = {
    "antiberty-vh-cdr3": ("antiberty", "trastuzumab-vh", "98-100"),
    "antiberty-vl-cdr3": ("antiberty", "trastuzumab-vl", "91-93"),
    "sapiens-vh-cdr3": ("sapiens-vh", "trastuzumab-vh", "98-100"),
    "sapiens-vl-cdr3": ("sapiens-vl", "trastuzumab-vl", "91-93"),
    "antiberty-vh-cdr3-4": ("antiberty", "trastuzumab-vh", "97-100"),
    "sapiens-vh-cdr3-4": ("sapiens-vh", "trastuzumab-vh", "97-100"),
    "sapiens-vl-cdr3-4": ("sapiens-vl", "trastuzumab-vl", "90-93"),
    "sceptr-cdr3b": ("sceptr", "sceptr-example", "50-52"),
    "sceptr-cdr3b-4": ("sceptr", "sceptr-example", "50-53"),
    "sceptr-cdr3b-5": ("sceptr", "sceptr-example", "50-54"),
}
#: Exact windows of the reaction models over their alphabet of :data:`domains.FREQUENT`
#: frequent tokens and the reaction's own (:func:`domains.reaction_window`): entry -> model.
REACTION_WINDOWS: dict[str, str] = {
    "rxnmapper-reaction": "rxnmapper",
    "rxnfp-reaction": "rxnfp",
}
#: Temperatures of the windows' search and side-by-side tables.
TAUS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
#: Temperatures of a full chain's search: from tau = 1, as certify searches (the block of
#: high-entropy sites is chosen at the first temperature; below 1 the chain is far from any
#: certificate and a budget spent there is lost to the threshold).
FULL_TAUS = (1.0, 2.0, 4.0, 8.0)
#: Model rows of a full chain's search over the grid (the whole sweep), and of the entries
#: that spend fewer (the reaction models: 54 sites, but 576 tokens a site).
FULL_BUDGET = 4000
BUDGETS: dict[str, int] = {"rxnmapper": 1000, "rxnfp": 1000}
#: Rows of a window's search on its table (a quarter of the 1,200-row table).
WINDOW_BUDGET = 300
#: The command that refreshes the section's data.
COMMAND = "glauber results --rerun bracket"


def _grid(taus: Sequence[float]) -> list[float]:
    return sorted(set(UPPER_GRID) | set(taus))


def _lower_of(curve: WitnessCurve, sweep: Sequence[Any]) -> Callable[[float], float]:
    at = {float(r.tau): float(r.rho_lower) for r in sweep}

    def lower(t: float) -> float:
        return max(curve(t), at.get(t, -math.inf))
    return lower


def full_chain(model_name: str, context: str, taus: Sequence[float] = FULL_TAUS,
               budget: int = FULL_BUDGET, seed: int = 0) -> dict:
    """The bracket of one model on one full chain (module docstring)."""
    from glauber.models import resolve_model

    model = resolve_model(f"{model_name}@{context}")
    started = time.perf_counter()
    memo = MemoisedModel(model)
    sweep = search_influence_sweep(memo, list(taus), budget=budget,
                                   starts=model.default_states(), seed=seed)
    curve = WitnessCurve(memo.cache, [w for r in sweep for w in r.witnesses],
                         reduced_precision(model))
    search_seconds = time.perf_counter() - started
    source = UpperBoundSource(model)
    brk = influence_bracket(source, 1.0, lower=_lower_of(curve, sweep),
                            lower_method=f"search witnesses ({memo.cache.queries} rows, "
                            f"taus {', '.join(f'{t:g}' for t in taus)})",
                            grid=_grid(taus), lower_rows=memo.cache.queries,
                            lower_seconds=search_seconds)
    rows = []
    for r in sweep:
        ub = source.at(r.tau)
        rows.append({"tau": r.tau, "rho_lower": r.rho_lower, "rho_search": r.spectral_radius,
                     "rho_upper": ub.spectral_radius, "tmix_upper": ub.tmix_bound})
    return {"kind": "full", "model": model_name, "context": context, "n": int(model.n),
            "q": int(model.q), "budget": budget, "rows": rows,
            "bracket": _compact(brk.to_dict())}


def window(model_name: str, context: str, sites: str, taus: Sequence[float] = TAUS,
           budget: int = WINDOW_BUDGET, seed: int = 0, frequent: int | None = None) -> dict:
    """Weight bound, exact value and searched value on one exact window, side by side.

    ``frequent``: the reaction window of :func:`domains.reaction_window` (``context`` must
    be ``"reaction"``), over its alphabet of ``frequent`` frequent tokens and the reaction's.
    """
    from glauber.exact.chain import ExactChain
    from glauber.models import resolve_model

    if frequent is not None and context != "reaction":
        raise InvalidParameterError(
            f"an alphabet of frequent tokens is the reaction models' window; got context "
            f"{context!r}, use 'reaction' or frequent=None")
    model = (resolve_model(f"{model_name}@{context}[{sites}]") if frequent is None
             else domains.reaction_window(model_name, sites, frequent))
    started = time.perf_counter()
    table = ExactChain(model, 1.0).tabulated()
    table_seconds = time.perf_counter() - started
    exact = UpperBoundSource(table, tabulate=True)  # tabulated, the weight bound entrywise
    weights = UpperBoundSource(table, tabulate=False)  # the weights alone
    memo = MemoisedModel(table)
    t0 = time.perf_counter()
    sweep = search_influence_sweep(memo, list(taus), budget=budget, seed=seed)
    curve = WitnessCurve(memo.cache, [w for r in sweep for w in r.witnesses])
    search_seconds = time.perf_counter() - t0
    exact_low = exact_lower(exact)
    brackets = {
        "weights": influence_bracket(weights, 1.0, lower=exact_low, lower_method="exact (table)",
                                     grid=_grid(taus)),
        "exact": influence_bracket(exact, 1.0, lower=exact_low, lower_method="exact (table)",
                                   grid=_grid(taus)),
        "search": influence_bracket(exact, 1.0, lower=_lower_of(curve, sweep),
                                    lower_method=f"search ({budget} rows of the table)",
                                    grid=_grid(taus), lower_seconds=search_seconds),
    }
    rows = []
    for r in sweep:
        w, e = weights.at(r.tau), exact.at(r.tau)
        C_exact, tol = exact.tabulated_C(r.tau)
        off = ~np.eye(model.n, dtype=bool)
        rows.append({
            "tau": r.tau, "rho_weights": w.spectral_radius, "rho_exact": e.spectral_radius,
            "rho_exact_lower": exact_low(r.tau), "rho_search": r.spectral_radius,
            "rho_search_lower": r.rho_lower,
            "C_weights_max": float(w.C[off].max()), "C_exact_max": float(C_exact[off].max()),
            "C_search_max": float(r.C[off].max()),
            "tmix_weights": w.tmix_bound, "tmix_exact_bound": e.tmix_bound,
        })
    alphabet = {} if frequent is None else {"alphabet": list(model.labels)}
    return {"kind": "window", "model": model_name, "context": context, "sites": sites,
            "n": int(model.n), "q": int(model.q), "budget": budget, **alphabet,
            "table_rows": int(exact.rows), "table_seconds": table_seconds, "rows": rows,
            "brackets": {k: _compact(v.to_dict()) for k, v in brackets.items()}}


def _compact(b: dict) -> dict:
    """The bracket's JSON without the matrices of every entry (kept: the first row of
    ``upper_C``, every entry of which is equal for the weight bound, and its largest entry)."""
    out = dict(b)
    for key in ("upper_C", "upper_Delta"):
        m = out.pop(key, None)
        if m is not None:
            arr = np.asarray(m, dtype=float)
            out[f"{key}_max"] = float(arr.max())
            out[f"{key}_min_offdiag"] = float(arr[~np.eye(len(arr), dtype=bool)].min())
    return out


def run(out: Path, entries: Sequence[str], log: Callable[[str], None] = print,
        budget: int = FULL_BUDGET, window_budget: int = WINDOW_BUDGET) -> None:
    """Compute every entry of ``entries`` not yet in ``out`` (one JSON file each)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in entries:
        path = out / f"{name}.json"
        if path.exists():
            log(f"{name}: done")
            continue
        log(f"{name}: running")
        started = time.perf_counter()
        if name in FULL_CHAINS:
            data = full_chain(*FULL_CHAINS[name], budget=BUDGETS.get(name, budget))
        elif name in WINDOWS:
            data = window(*WINDOWS[name], budget=window_budget)
        elif name in REACTION_WINDOWS:
            data = window(REACTION_WINDOWS[name], "reaction", domains.REACTION_SITES,
                          budget=window_budget, frequent=domains.FREQUENT)
        else:
            known = ", ".join([*FULL_CHAINS, *WINDOWS, *REACTION_WINDOWS])
            raise InvalidParameterError(f"unknown bracket entry {name!r}; choose from {known}")
        data["seconds"] = time.perf_counter() - started
        data["date"] = time.strftime("%Y-%m-%d")
        data["load_average"] = f"{os.getloadavg()[0]:.0f} at the end, on {os.cpu_count()} cores"
        write_json_atomic(path, jsonable(data))
        log(f"{name}: {data['seconds']:.0f} s")


def _cert(b: dict) -> str:
    """``tau_cert``, marked ``<=`` when it is the bottom of the grid (certified everywhere)."""
    t = b["tau_cert"]
    if t is not None and b.get("grid") and t <= min(b["grid"]):
        return f"≤ {_f(t, 4)} (every tau tried)"
    return _f(t, 4)


def refresh(folder: Path, work: Path, log: Callable[[str], Any]) -> None:
    """Compute every entry (the windows first) not yet in ``folder`` (``work`` is not used: the
    entries' JSON is the data itself, and the windows' score tables are cached under
    ``$GLAUBER_CACHE``)."""
    run(folder, [*WINDOWS, *REACTION_WINDOWS, *FULL_CHAINS], log)


def render(folder: Path) -> str:
    """The section's Markdown (below its heading) from the JSON files in ``folder``."""
    data = {p.stem: json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))}
    full = [data[k] for k in FULL_CHAINS if k in data]
    wins = [data[k] for k in [*WINDOWS, *REACTION_WINDOWS] if k in data]
    lines = [
        "```",
        COMMAND,
        "```",
        "",
        "tau_no_cert: the highest temperature at which realised influences (a search's witnesses, "
        "or the exact table) have a rounding-safe spectral radius >= 1, so that no corrected "
        "Theorem 5 certificate can exist there; tau_cert: the lowest temperature at which a "
        "rigorous upper bound on the influence matrix over every context has a proved spectral "
        "radius < 1 (Collatz–Wielandt), so that the matrix-power certificate exists and bounds "
        "t_mix. Both found on a grid of powers of 2 and refined by bisection to a relative 1e-3. "
        "Neither side is monotone in tau in general; each is a claim at its temperature (the "
        "weight bound's tau_cert holds at every larger temperature).",
        "",
    ]
    if full:
        lines += [
            "**Full chains in context** (every residue resampled; upper bound: the LayerNorm "
            "head's weights, `layernorm-head`; lower bound: the search over the grid with the "
            "budget shown, witnesses re-evaluated at every temperature):",
            "",
        ]
        loads = sorted({d.get("load_average", "") for d in full} - {""})
        if loads:
            lines += [f"Times: wall-clock on a shared machine, load average {'; '.join(loads)}.",
                      ""]
        rows = []
        for d in full:
            b = d["bracket"]
            rows.append((f"{d['model']} / {d['context']}", d["n"], _f(b["tau_no_cert"], 4),
                         _cert(b), _f(b["ratio"]), _f(b["upper_Delta_max"], 4),
                         f"{b['lower_rows']}, {_f(b['lower_seconds'])}",
                         _f(b["upper_seconds"]),
                         _f(math.sqrt(d["n"]) * b["upper_Delta_max"] / 4, 3)))
        lines.append(markdown_table(
            ("model / chain", "n", "tau_no_cert", "tau_cert", "ratio", "Delta bound (every pair)",
             "lower side: rows, s", "upper side: s",
             "sqrt(n) Delta / 4 (below: no weight-only argument, heuristic)"),
            rows).rstrip("\n"))
        lines += ["", "Spectral radius of c(tau) by temperature (full chains): searched (realised, "
                  "rounding-safe lower bound) and the proved upper bound:", ""]
        lines.append(markdown_table(
            ("model / chain", *(f"tau = {r['tau']:g}" for r in full[0]["rows"])),
            [(f"{d['model']} / {d['context']}",
              *(f"{_f(r['rho_lower'])} – {_f(r['rho_upper'])}" for r in d["rows"]))
             for d in full]).rstrip("\n"))
        lines.append("")
    if wins:
        q = next((len(d["alphabet"]) for d in wins if "alphabet" in d), None)
        chem = "" if q is None else (
            f"; the reaction windows, marked |A| = {q}, resample 3 sites of the reaction SMILES "
            f"over an alphabet A of {q} tokens, {q ** 3:,} states, {3 * q * q:,} rows: the "
            "windows section says what that chain is")
        five = "" if not any(d["n"] == 5 for d in wins) else (
            "; 5 sites: 3,200,000 states, 800,000 rows, the matrix-free chain "
            "(`WindowChain`: the exact C from the table, never the transition matrix); no "
            "5-site window of AntiBERTy or Sapiens is here: its 800,000-row table is planned by "
            "`glauber certify --sites 96-100 --dry-run` at about 9.7 h on these 2 cores, 72 min "
            "over 16 Ray CPUs, about 7 min on a GPU (uncalibrated), and no GPU was lent")
        lines += [
            "**Exact CDR3 windows** (3 sites, every other residue frozen, 8,000 states, one "
            f"score table of 1,200 model rows; 4 sites: 160,000 states, 32,000 rows{five}{chem}): "
            "the "
            "weight bound, the exact value and the searched value side by side. Columns: "
            "spectral radius of C (weights: upper bound "
            "from the head alone; exact: the table, rounding-safe; searched: realised, on "
            f"the table, {wins[0]['budget']} rows over the grid) and the largest entry of C.",
            "",
        ]
        lines.append(markdown_table(
            ("window", "tau", "ρ weights", "ρ exact", "ρ searched", "max C weights",
             "max C exact", "max C searched", "proved t_mix (weights / exact)"),
            [(_window_name(d), f"{r['tau']:g}",
              _f(r["rho_weights"]), _f(r["rho_exact"]), _f(r["rho_search"]),
              _f(r["C_weights_max"]), _f(r["C_exact_max"]), _f(r["C_search_max"]),
              f"{_f(r['tmix_weights'])} / {_f(r['tmix_exact_bound'])}")
             for d in wins for r in d["rows"]]).rstrip("\n"))
        lines += ["", "Brackets of the windows (lower side exact unless marked):", ""]
        rows = []
        for d in wins:
            b = d["brackets"]
            rows.append((_window_name(d), _f(b["exact"]["tau_no_cert"], 4),
                         _f(b["search"]["tau_no_cert"], 4),
                         _cert(b["exact"]), _cert(b["weights"]), _f(b["exact"]["ratio"]),
                         _f(b["weights"]["ratio"])))
        lines.append(markdown_table(
            ("window", "tau_no_cert (exact)", "tau_no_cert (searched)", "tau_cert (exact)",
             "tau_cert (weights)", "ratio (exact)", "ratio (weights / exact lower)"),
            rows).rstrip("\n"))
        lines.append("")
    lines.append(tcr_paragraph(data))
    lines.append(_narrowing(full))
    return "\n".join(lines).rstrip("\n") + "\n"


#: The SCEPTR entries that :func:`tcr_paragraph` sets beside the others: the whole TCR and its
#: CDR3B windows by size.
TCR_FULL = "sceptr"
TCR_WINDOWS: dict[int, str] = {3: "sceptr-cdr3b", 4: "sceptr-cdr3b-4", 5: "sceptr-cdr3b-5"}
#: The antibody windows grown from 3 to 4 sites: (label, 3-site entry, 4-site entry).
GROWN: tuple[tuple[str, str, str], ...] = (
    ("AntiBERTy VH", "antiberty-vh-cdr3", "antiberty-vh-cdr3-4"),
    ("Sapiens VH", "sapiens-vh-cdr3", "sapiens-vh-cdr3-4"),
    ("Sapiens VL", "sapiens-vl-cdr3", "sapiens-vl-cdr3-4"),
)


def tcr_paragraph(data: dict[str, dict]) -> str:
    """SCEPTR's brackets beside the antibody and reaction models' (empty without them):
    ``data`` maps entry names (:data:`FULL_CHAINS`, :data:`WINDOWS`, :data:`REACTION_WINDOWS`)
    to their JSON. Every number and every comparison (:func:`domains.place`) is read from
    ``data``."""
    full = data.get(TCR_FULL)
    wins = {k: data[name] for k, name in TCR_WINDOWS.items() if name in data}
    if full is None and not wins:
        return ""
    parts = ["**SCEPTR beside the antibody and reaction models.**"]
    if full is not None:
        b = full["bracket"]
        others = {f"{d['model']} / {d['context']}": d["bracket"] for k, d in data.items()
                  if k in FULL_CHAINS and k != TCR_FULL}
        ratios = {k: v["ratio"] for k, v in others.items() if v.get("ratio") is not None}
        deltas = {k: v["upper_Delta_max"] for k, v in others.items()}
        lows = {k: v["tau_no_cert"] for k, v in others.items() if v["tau_no_cert"] is not None}
        parts.append(
            f"On the whole TCR (n = {full['n']}) the search proves no certificate up to "
            f"tau_no_cert = {_f(b['tau_no_cert'], 4)}"
            + (f", {domains.place(b['tau_no_cert'], lows)} of the other full sequences"
               if lows and b["tau_no_cert"] is not None else "")
            + f"; the head's weight bound (Delta = {_f(b['upper_Delta_max'], 4)}, "
            + (f"{domains.place(b['upper_Delta_max'], deltas)}" if deltas else "")
            + f") certifies from tau_cert = {_cert(b)} (about (n − 1) Delta / 4 = "
            + f"{_f((full['n'] - 1) * b['upper_Delta_max'] / 4, 4)}: the same bound for every "
            + f"pair of sites, as on every full sequence): ratio {_f(b['ratio'])}"
            + (f", {domains.place(b['ratio'], ratios)}" if ratios else "")
            + ".")
    if wins:
        exact = {k: d["brackets"]["exact"] for k, d in wins.items()}
        lows = ", ".join(f"{_f(e['tau_no_cert'], 4)} ({k} sites)" for k, e in exact.items())
        widest = max((e["ratio"] for e in exact.values() if e["ratio"] is not None),
                     default=None)
        parts.append(
            f"On its exact CDR3B windows the table closes the bracket"
            + ("" if widest is None else f" (ratio at most {_f(widest, 4)})")
            + f" as on every exact window here: tau_no_cert = {lows}")
        values = [exact[k]["tau_no_cert"] for k in sorted(exact)]
        if len(values) > 1 and None not in values:
            rising = all(a < b for a, b in zip(values, values[1:]))
            grown = [(label, data[a]["brackets"]["exact"]["tau_no_cert"],
                      data[b]["brackets"]["exact"]["tau_no_cert"]) for label, a, b in GROWN
                     if a in data and b in data]
            parts[-1] += (", rising with the window" if rising else
                          ", not monotone in the window's size")
            if grown:
                same = all((y > x) == rising for _, x, y in grown)
                parts[-1] += (
                    (" as the antibody windows' do" if same else
                     ", unlike the antibody windows'")
                    + " from 3 to 4 sites ("
                    + ", ".join(f"{label} {_f(x, 4)} → {_f(y, 4)}" for label, x, y in grown)
                    + ")")
        parts[-1] += "."
        if 3 in wins and exact[3]["tau_no_cert"] is not None:
            three = {_window_name(d): d["brackets"]["exact"]["tau_no_cert"]
                     for k, d in data.items()
                     if (k in WINDOWS or k in REACTION_WINDOWS) and d["n"] == 3
                     and not d["model"].startswith("sceptr")
                     and d["brackets"]["exact"]["tau_no_cert"] is not None}
            w = wins[3]["brackets"]
            overshoot = {_window_name(d): d["brackets"]["weights"]["ratio"]
                         for k, d in data.items()
                         if (k in WINDOWS or k in REACTION_WINDOWS) and d["n"] == 3
                         and not d["model"].startswith("sceptr")
                         and d["brackets"]["weights"]["ratio"] is not None}
            if three:
                parts.append(
                    f"The 3-site window's tau_no_cert lies "
                    f"{domains.place(exact[3]['tau_no_cert'], three)} of the other 3-site "
                    "windows" + (
                        f"; its weight bound alone certifies {_f(w['weights']['ratio'], 3)} "
                        f"times above it ({domains.place(w['weights']['ratio'], overshoot)})"
                        if w["weights"]["ratio"] is not None and overshoot else "")
                    + ".")
    return " ".join(parts) + "\n"


def _window_name(d: dict) -> str:
    """A window's row label; a reaction window names its alphabet's size."""
    alphabet = f" (|A| = {len(d['alphabet'])})" if "alphabet" in d else ""
    return f"{d['model']} / {d['context']} {d['sites']}{alphabet}"


def _narrowing(full: Sequence[dict]) -> str:
    if not full:
        return ""
    return (
        "**What would narrow the full-chain bracket.** The weight bound is the exact supremum "
        "of the oscillation over every input of the head (the normalised vector can point "
        "anywhere on its sphere), the same for every pair of sites and even for every pair of "
        "contexts, so C_up = t (J - I) with t = tanh(Delta / 4 tau) and tau_cert is where "
        "(n - 1) t = 1, about (n - 1) Delta / 4. Two things stand between that and "
        "tau_no_cert. (1) The criterion: rho(C) < 1 is the best any certificate from a "
        "uniform C can do, yet a model that meets the same head-level constraint (every "
        "conditional within TV t of every other) can be slow only once n t^2 is large: a "
        "plurality-copying model (the logits of a group of tokens raised by Delta/4 when "
        "that group holds the plurality of the other sites) is metastable, by the usual "
        "mean-field estimate, when n t^2 >> 1, i.e. below tau ~ sqrt(n) Delta / 4 (about "
        "400 for AntiBERTy's full chain, where (n - 1) Delta / 4 = 4,274): a theorem that "
        "certifies from a uniform bound up to t ~ 1/sqrt(n) would narrow the bracket by up "
        "to sqrt(n) ~ 11, and no argument from the weights alone can do better than that. "
        "(2) Per-pair information: bounds through the network for each site pair, which "
        "need a lower bound on every LayerNorm's input variance over every context (its "
        "Lipschitz constant is 1/sqrt(var + eps), up to 1e6 at AntiBERTy's eps = 1e-12). A "
        "window small enough to tabulate gets the exact value instead (the windows above: "
        "ratio 1). On the lower side a larger search moves tau_no_cert up by at most the "
        "factor between the realised and the true spectral radius.\n"
    )


__all__ = ["BUDGETS", "COMMAND", "FULL_BUDGET", "FULL_CHAINS", "FULL_TAUS", "GROWN",
           "REACTION_WINDOWS", "TAUS", "TCR_FULL", "TCR_WINDOWS", "WINDOWS", "WINDOW_BUDGET",
           "full_chain", "refresh", "render", "run", "tcr_paragraph", "window"]
