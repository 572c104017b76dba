"""The toy-vs-MLM table: every certificate of the paper on every model, side by side.

Per model (at ``tau = 1`` where the quantity is tau-free or scales exactly):

* rectangle test (Proposition 4, paper §4): mean/sd of ``|delta|``, the one-sided p-value of
  ``mean |delta| > atol``, rectangles above rounding; ``delta(tau) = delta(1) / tau``;
* per-state minimum margins ``Delta*`` over the contexts (paper App. A.1): their distribution
  and the fraction of perfect traps.

Per model and temperature:

* alpha row/column/spectral, spectral radius and the best corrected Theorem 5 certificate
  (exact for enumerable toys, lower-bound estimates otherwise);
* the corrected §5.4 drift certificate on a count basin of the most frequent context token:
  minimum drift over band states ``a < X < b`` (``b = ceil(0.9 n)``, ``a = floor(n / 2)``) and
  the escape bound over ``T = budget`` steps (rigorous only when the band is enumerated);
* median coupling time of same-site maximally coupled pairs (paper §6.1);
* for toys, the exact worst-start ``t_mix(1/4)`` beside the bounds.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from glauber.estimators.coupling import coupling_time
from glauber.estimators.drift import drift
from glauber.core.enumeration import all_states
from glauber.estimators.influence import influence
from glauber.estimators.margins import margins
from glauber.estimators.rectangle import rectangle_test
from glauber.experiments.alpha_curve import CachedScores
from glauber.core.io import atomic_write_text
from glauber.experiments.checkpoint import ResultsLog, dumps
from glauber.experiments.common import (
    context_states,
    exact_tmix,
    get_model,
    is_toy,
    parse_floats,
    parse_names,
    positive_budget,
)
from glauber.experiments.executor import Executor, LocalExecutor, run_cells


def drift_band(n: int) -> tuple[int, int]:
    """The count band ``(a, b)``: ``b = ceil(0.9 n)`` (the paper's basin), ``a = floor(n / 2)``."""
    return n // 2, math.ceil(0.9 * n)


def band_states(
    model: Any, token: int, contexts: np.ndarray, band: tuple[int, int], rng: np.random.Generator,
    max_states: int,
) -> tuple[np.ndarray, bool]:
    """States with ``a < #token < b``: all of them for small toys (complete), else one per context."""
    a, b = band
    n, q = model.n, model.q
    if is_toy(model) and q**n <= max_states:
        xs = all_states(n, q, max_states)
        counts = (xs == token).sum(axis=1)
        return xs[(counts > a) & (counts < b)], True
    out = contexts.copy()
    for row in out:
        c = int(rng.integers(a + 1, b))
        others = [v for v in range(q) if v != token]
        row[row == token] = rng.choice(others, size=int((row == token).sum()))
        row[rng.choice(n, size=c, replace=False)] = token
    return out, False


def compare_cell(cell: dict) -> dict:
    """Every certificate for one model over the temperature grid."""
    base = get_model(cell["model"], cell["length"], cell["device"])
    model = CachedScores(base)
    seed = cell["seed"]
    ctx = context_states(base, cell["contexts"], seed)
    rect = rectangle_test(model, ctx, tau=1.0, n_rectangles=cell["rectangles"],
                          replacements="topk", k=min(50, base.q - 1), seed=seed)
    marg = margins(model, ctx)
    exhaustive = is_toy(base) and base.q**base.n <= cell["max_states"]
    token = int(np.bincount(ctx.reshape(-1), minlength=base.q).argmax())
    band = drift_band(base.n)
    bstates, complete = band_states(base, token, ctx, band, np.random.default_rng(seed),
                                    cell["max_states"])
    per_tau = []
    for tau in cell["taus"]:
        inf = influence(model, tau, contexts=None if exhaustive else ctx, seed=seed,
                        exhaustive=exhaustive)
        dr = drift(model, bstates, token, tau, band=band, T=cell["budget"],
                   band_states_complete=complete)
        rng = np.random.default_rng([seed, int(round(tau * 1e6))])
        x0 = rng.integers(base.q, size=(cell["pairs"], base.n))
        y0 = rng.integers(base.q, size=(cell["pairs"], base.n))
        ct = coupling_time(model, tau, x0, y0, cell["budget"], seed=rng)
        cert = inf.contraction
        per_tau.append({
            "tau": tau, "budget": cell["budget"], "alpha_row": inf.alpha_row, "alpha_col": inf.alpha_col,
            "alpha_spectral": inf.alpha_spectral, "spectral_radius": inf.spectral_radius,
            "tmix_matrix_power": cert.tmix_matrix_power, "best": cert.best,
            "best_bound": cert.best_bound, "influence_exact": exhaustive,
            "drift_min": dr.band_min_drift,
            "drift_bound": None if dr.certificate is None else dr.certificate.bound,
            "drift_vacuous": dr.vacuous, "drift_rigorous": dr.rigorous,
            "coupling_median": ct.median, "coupling_censored": ct.median_exceeds_budget,
            "exact_tmix": exact_tmix(base, tau) if cell["exact"] else None,
        })
    return {
        "model": cell["model"], "name": str(getattr(base, "name", cell["model"])),
        "toy": is_toy(base), "n": int(base.n), "q": int(base.q),
        "rectangle": {k: getattr(rect, k) for k in (
            "n_rectangles", "mean_abs_delta", "sd_abs_delta", "median_abs_delta",
            "max_abs_delta", "p_value_abs", "p_value_t", "n_above_atol", "atol",
            "compatible_within_atol")},
        "delta_star": {"min": float(marg.state_min.min()),
                       "median": float(np.median(marg.state_min)),
                       "max": float(marg.state_min.max()),
                       "perfect_fraction": marg.n_perfect / len(marg.state_min),
                       "n_states": int(len(marg.state_min))},
        "drift_token": base.labels[token] if hasattr(base, "labels") else str(token),
        "drift_band": list(band), "drift_band_complete": complete,
        "per_tau": per_tau,
    }


def compare(
    models: Sequence[str] | str,
    taus: Sequence[float] | str,
    out: str | os.PathLike[str],
    length: int = 16,
    contexts: int = 8,
    rectangles: int = 300,
    pairs: int = 8,
    budget: int = 1000,
    seed: int = 0,
    executor: Executor | None = None,
    device: str = "cpu",
    max_states: int = 4096,
    exact: bool = True,
    progress: bool = True,
    command: str | None = None,
) -> list[dict]:
    """Run (or resume) the comparison; write ``compare.{jsonl,json,md}`` in ``out``.

    Parameters
    ----------
    models : sequence or comma-separated string
        Model specifications (toys keep their own ``n``; MLMs use ``length``).
    taus : sequence or comma-separated string
    length : int
        Sequence length of the MLMs.
    contexts, rectangles, pairs, budget : int
        Contexts (natural sequences for amino-acid models), rectangles, coupled pairs, and the
        step budget of the coupling times and horizon ``T`` of the drift certificate.
    seed : int

    Returns
    -------
    list of dict
        One entry per model.

    Raises
    ------
    InvalidParameterError, InvalidTemperatureError, UnknownModelError, ResumeMismatchError
    """
    names = parse_names(models, "models")
    tau_list = sorted(parse_floats(taus, "taus"))
    length = positive_budget(length, "length")
    for key, value in (("contexts", contexts), ("rectangles", rectangles), ("pairs", pairs),
                       ("budget", budget)):
        positive_budget(value, key)
    lengths = {name: None if _looks_toy(name) else length for name in names}
    for name in names:  # fail fast on an unknown model
        get_model(name, lengths[name], device)
    config = {"experiment": "compare", "models": names, "taus": tau_list, "length": length,
              "contexts": contexts, "rectangles": rectangles, "pairs": pairs, "budget": budget,
              "seed": int(seed), "max_states": int(max_states), "exact": bool(exact)}
    out = Path(out)
    log = ResultsLog(out / "compare.jsonl", config, command)
    cells = [dict(config, key=name, model=name, device=device, length=lengths[name])
             for name in names]
    results = run_cells(log, compare_cell, cells, executor or LocalExecutor(), "compare",
                        progress)
    atomic_write_text(out / "compare.json", dumps({"config": config, "models": results}) + "\n")
    atomic_write_text(out / "compare.md", compare_markdown(results))
    return results


def _looks_toy(name: str) -> bool:
    from glauber.toy_models.specs import TOY_FAMILIES

    return name.split(":")[0] in TOY_FAMILIES


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "—"
    if v == "inf" or (isinstance(v, float) and math.isinf(v)):
        return "∞"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def rectangle_table(results: Sequence[dict]) -> str:
    """Markdown table like the paper's Table 1 (mean |delta| ± sd, p-value, rectangles)."""
    lines = ["| model | n | q | mean \\|δ\\| ± sd | max \\|δ\\| | p (mean \\|δ\\| > atol) | "
             "above atol | rectangles |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        rc = r["rectangle"]
        lines.append(
            f"| {r['name']} | {r['n']} | {r['q']} | {_fmt(rc['mean_abs_delta'])} ± "
            f"{_fmt(rc['sd_abs_delta'])} | {_fmt(rc['max_abs_delta'])} | "
            f"{_fmt(rc['p_value_abs'])} | {rc['n_above_atol']} | {rc['n_rectangles']} |"
        )
    return "\n".join(lines) + "\n"


def certificate_table(results: Sequence[dict]) -> str:
    """Markdown table of the per-temperature certificates of every model."""
    lines = ["| model | tau | α row | α col | α spec | ρ(C) | best t_mix bound | exact t_mix | "
             "coupling median | drift min (band) | drift bound (T=budget) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for t in r["per_tau"]:
            star = "" if t["influence_exact"] else "≥"
            coupling = f">{t['budget']}" if t["coupling_censored"] else _fmt(t["coupling_median"])
            bound = _fmt(t["drift_bound"]) + (" (vacuous)" if t["drift_vacuous"] else "")
            lines.append(
                f"| {r['name']} | {t['tau']:g} | {star}{_fmt(t['alpha_row'])} | "
                f"{star}{_fmt(t['alpha_col'])} | {star}{_fmt(t['alpha_spectral'])} | "
                f"{star}{_fmt(t['spectral_radius'])} | {_fmt(t['best_bound'])} ({t['best']}) | "
                f"{_fmt(t['exact_tmix'])} | {coupling} | {_fmt(t['drift_min'])} | {bound} |"
            )
    return "\n".join(lines) + "\n"


def margin_table(results: Sequence[dict]) -> str:
    """Markdown table of the per-state minimum margins Delta* over the contexts."""
    lines = ["| model | Δ* min | Δ* median | Δ* max | perfect traps | states |",
             "|---|---|---|---|---|---|"]
    for r in results:
        d = r["delta_star"]
        lines.append(f"| {r['name']} | {_fmt(d['min'])} | {_fmt(d['median'])} | "
                     f"{_fmt(d['max'])} | {_fmt(d['perfect_fraction'])} | {d['n_states']} |")
    return "\n".join(lines) + "\n"


def compare_markdown(results: Sequence[dict]) -> str:
    """The whole comparison as Markdown (rectangles, margins, certificates)."""
    return (
        "## Rectangle test (Proposition 4) at tau = 1\n\n" + rectangle_table(results)
        + "\n## Per-state minimum margins Δ* over the contexts\n\n" + margin_table(results)
        + "\n## Certificates by temperature\n\n"
        "α and ρ(C) marked ≥ are lower bounds from sampled contexts; unmarked ones are exact "
        "(enumerated toys).\n\n" + certificate_table(results)
    )


__all__ = ["band_states", "compare", "compare_cell", "compare_markdown", "certificate_table",
           "drift_band", "margin_table", "rectangle_table"]
