"""The toy-vs-MLM table: every certificate of the paper on every model, side by side.

Each model runs the main job's own pipeline (:func:`glauber.certify.certify`, same defaults and
drift band) once per temperature; this module only picks the columns.

Per model (at ``tau = 1`` where the quantity is tau-free or scales exactly):

* rectangle test (Proposition 4, paper §4): mean/sd of ``|delta|``, the one-sided p-value of
  ``mean |delta| > atol``, rectangles above rounding; ``delta(tau) = delta(1) / tau``;
* per-state minimum margins ``Delta*`` over the contexts (paper App. A.1): their distribution
  and the fraction of perfect traps.

Per model and temperature:

* alpha row/column/spectral, spectral radius and the best corrected Theorem 5 certificate
  (exact for enumerable toys, lower-bound estimates otherwise);
* the corrected §5.4 drift certificate on the count of the most frequent context token:
  minimum drift over band states ``a < X < b`` (the band of :func:`glauber.certify.drift_band`)
  and the escape bound over ``T = budget`` steps (rigorous only when the band is enumerated);
* median coupling time of same-site maximally coupled pairs (paper §6.1);
* for toys, the exact worst-start ``t_mix(1/4)`` beside the bounds;
* the rigorous upper bound on the spectral radius of ``C`` and the ``t_mix`` it proves
  (:func:`glauber.estimators.influence_upper_bound`, through certify's bracket stage).

Per model: the bracket ``tau_no_cert < tau_cert`` over all its certificates (the highest
temperature where no certificate can exist, the lowest where one is proved; each a claim of
one certificate).
"""

from __future__ import annotations

import math
import os
from typing import Any, Sequence

import numpy as np

from glauber.certify import certify
from glauber.core.io import atomic_write_text
from glauber.core.kernel_spec import KernelSpec, Schedule, check_kernel, parse_schedule
from glauber.core.validation import check_nonnegative_int
from glauber.errors import SequenceLengthError
from glauber.experiments.alpha_curve import CachedScores
from glauber.experiments.checkpoint import ResultsLog, dumps
from glauber.experiments.common import (
    check_sites,
    context_states,
    get_model,
    markdown_table,
    parse_floats,
    parse_names,
    positive_budget,
)
from glauber.experiments.executor import Executor, LocalExecutor, run_cells
from glauber.experiments.outdir import OutputFolder, check_out_folder
from glauber.models import CONTEXT_SEPARATOR, is_toy_spec, toy_length

#: Files written in the output folder (besides the results log).
OUTPUTS = ("compare.json", "compare.md")
#: Sequence length of a masked LM when ``length`` is not given.
MLM_LENGTH = 16


def model_length(name: str, length: int | None) -> int | None:
    """The length ``name`` runs at in the comparison (None: the model's own).

    ``length`` applies to every model whose name does not fix its length: a masked LM
    (:data:`MLM_LENGTH` when ``length`` is None) and a toy specification without ``n=``; a toy
    specification with ``n=`` keeps it.

    Raises
    ------
    SequenceLengthError
        If ``length`` is given for a window (its sites set its length).
    """
    if CONTEXT_SEPARATOR in name:
        if length is not None:
            raise SequenceLengthError(
                f"--length does not apply to the window {name}: its sites set its length; "
                "leave --length out"
            )
        return None
    if is_toy_spec(name):
        return None if toy_length(name) is not None else length
    return MLM_LENGTH if length is None else length


def compare_cell(cell: dict) -> dict:
    """Every certificate for one model over the temperature grid: one :func:`certify` run per
    temperature (and one at ``tau = 1`` for the rectangle and margin columns)."""
    base = get_model(cell["model"], cell["length"], cell["device"])
    model = CachedScores(base)
    seed = cell["seed"]
    ctx = context_states(base, cell["contexts"], seed)
    certs = {
        tau: certify(
            model, tau, ctx, seed=seed, n_rectangles=cell["rectangles"],
            n_contexts=cell["contexts"], n_pairs=cell["pairs"], budget=cell["budget"],
            horizon=cell["budget"], max_exhaustive_states=cell["max_states"],
            exact=None if cell["exact"] else False,
        )
        for tau in sorted(set(cell["taus"]) | {1.0})
    }
    per_tau = []
    for tau in cell["taus"]:
        c = certs[tau]
        inf, band = c.influence, c.drift_band
        per_tau.append({
            "tau": tau, "budget": cell["budget"], "alpha_row": inf.alpha_row,
            "alpha_col": inf.alpha_col, "alpha_spectral": inf.alpha_spectral,
            "spectral_radius": inf.spectral_radius,
            "tmix_matrix_power": inf.contraction.tmix_matrix_power, "best": inf.contraction.best,
            "best_bound": inf.contraction.best_bound, "influence_exact": inf.exhaustive,
            "drift_min": band.band_min_drift,
            "drift_bound": None if band.certificate is None else band.certificate.bound,
            "drift_vacuous": band.vacuous, "drift_rigorous": band.rigorous,
            "coupling_median": c.coupling.median,
            "coupling_censored": c.coupling.median_exceeds_budget,
            "exact_tmix": None if c.exact is None else c.exact.tmix,
            **_upper_columns(c),
            **({} if "kernel" not in cell or c.exact is None
               else {"kernel": _kernel_values(base, tau, cell)}),
        })
    at_one = certs[1.0]
    rect, marg = at_one.incompatibility, at_one.margins
    return {
        "model": cell["model"], "name": str(getattr(base, "name", cell["model"])),
        "toy": is_toy_spec(cell["model"]), "n": int(base.n), "q": int(base.q),
        "rectangle": {k: getattr(rect, k) for k in (
            "n_rectangles", "mean_abs_delta", "sd_abs_delta", "median_abs_delta",
            "max_abs_delta", "p_value_abs", "p_value_t", "n_above_atol", "atol",
            "compatible_within_atol")},
        "delta_star": {"min": float(marg.state_min.min()),
                       "median": float(np.median(marg.state_min)),
                       "max": float(marg.state_min.max()),
                       "perfect_fraction": marg.n_perfect / len(marg.state_min),
                       "n_states": int(len(marg.state_min))},
        "drift_token": at_one.labels[at_one.drift.token],
        "drift_band": list(at_one.drift_band.band),
        "drift_band_complete": at_one.drift_band.band_states_complete,
        "per_tau": per_tau,
        "bracket": model_bracket(list(certs.values())),
    }


def _upper_columns(cert: Any) -> dict:
    """The rigorous upper side of one certificate at its temperature."""
    b = cert.bracket
    if b is None:
        return {"rho_upper": None, "tmix_upper": None}
    rho = b.rho_upper[b.grid.index(b.tau)]
    return {"rho_upper": rho, "tmix_upper": b.tmix_bound}


def model_bracket(certs: Sequence[Any]) -> dict | None:
    """The bracket of one model over its certificates: the highest ``tau_no_cert`` and the
    lowest ``tau_cert`` any of them proves (each is a claim of its own certificate)."""
    brackets = [c.bracket for c in certs if c.bracket is not None]
    if not brackets:
        return None
    nos = [b for b in brackets if b.tau_no_cert is not None]
    yes = [b for b in brackets if b.tau_cert is not None]
    no = max(nos, key=lambda b: b.tau_no_cert) if nos else None
    cert = min(yes, key=lambda b: b.tau_cert) if yes else None
    return {
        "tau_no_cert": None if no is None else no.tau_no_cert,
        "lower_method": None if no is None else no.lower_method,
        "tau_cert": None if cert is None else cert.tau_cert,
        "upper_method": brackets[0].upper_method if cert is None else cert.upper_method,
        "ratio": (cert.tau_cert / no.tau_no_cert if cert is not None and no is not None
                  else None),
        "note": brackets[0].note,
    }


def _kernel_values(model: Any, tau: float, cell: dict) -> dict:
    """The exact values of the cell's kernel (:func:`glauber.exact.kernel_summary`) at ``tau``."""
    from glauber.exact.chain import ExactChain
    from glauber.exact.kernel_summary import kernel_summary

    chain = ExactChain(model, tau, kernel=cell["kernel"], epsilon=cell["epsilon"])
    return kernel_summary(chain, anneal=cell.get("anneal")).to_dict()


def compare(
    models: Sequence[str] | str,
    taus: Sequence[float] | str,
    out: str | os.PathLike[str],
    length: int | None = None,
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
    kernel: str | KernelSpec = "random",
    epsilon: float | None = None,
    anneal: Schedule | str | None = None,
) -> list[dict]:
    """Run (or resume) the comparison; write ``compare.{jsonl,json,md}`` in ``out``.

    Parameters
    ----------
    models : sequence or comma-separated string
        Model specifications.
    taus : sequence or comma-separated string
    length : int, optional
        Sequence length of every model whose name does not fix it: masked LMs (default
        :data:`MLM_LENGTH`) and toy specifications without ``n=`` (default: the family's own
        ``n``); a toy specification with ``n=`` keeps its own. Refused when a model is a window
        (``model@context[sites]``: its sites set its length) or a toy family has no ``n``
        (``ising-grid``).
    contexts, rectangles, pairs, budget : int
        Contexts (natural sequences for amino-acid models), rectangles, coupled pairs, and the
        step budget of the coupling times and horizon ``T`` of the drift certificate.
    seed : int
    kernel, epsilon, anneal : another kernel (:mod:`glauber.core.kernel_spec`) whose exact
        values (:class:`~glauber.exact.kernel_summary.KernelSummary`: ``t_mix``, gap, law, TV to
        the paper's kernel and to the MH targets, the annealed distance) stand beside the
        certificates (of the paper's kernel) of every exactly computed model and temperature.

    Returns
    -------
    list of dict
        One entry per model.

    Raises
    ------
    InvalidParameterError, InvalidTemperatureError, UnknownModelError, ResumeMismatchError
    SequenceLengthError
        ``length`` is given and a model is a window.
    OutputPathError, OutputLockedError
        ``out`` is not a writable folder, holds foreign files, or another run writes into it
        (:class:`~glauber.experiments.outdir.OutputFolder`); checked before any cell runs.
    """
    spec = check_kernel(kernel, epsilon)
    schedule = None if anneal is None else parse_schedule(anneal)
    names = parse_names(models, "models")
    tau_list = sorted(parse_floats(taus, "taus"))
    if length is not None:
        length = positive_budget(length, "length")
    for key, value in (("contexts", contexts), ("rectangles", rectangles), ("pairs", pairs),
                       ("budget", budget)):
        positive_budget(value, key)
    seed = check_nonnegative_int(seed, "--seed")
    out = check_out_folder(out)
    lengths = {name: model_length(name, length) for name in names}
    for name in names:  # fail fast on an unknown model or one certify cannot take
        check_sites(int(get_model(name, lengths[name], device).n), name)
    config = {"experiment": "compare", "models": names, "taus": tau_list, "length": length,
              "contexts": contexts, "rectangles": rectangles, "pairs": pairs, "budget": budget,
              "seed": int(seed), "max_states": int(max_states), "exact": bool(exact)}
    if not spec.is_plain or schedule is not None:  # (else the configuration of earlier versions)
        config.update(kernel=spec.name, epsilon=spec.epsilon)
        if schedule is not None:
            config["anneal"] = schedule.spec
    with OutputFolder(out, "compare", config, OUTPUTS, "compare.jsonl", command):
        log = ResultsLog(out / "compare.jsonl", config, command)
        cells = [dict(config, key=name, model=name, device=device, length=lengths[name])
                 for name in names]
        results = run_cells(log, compare_cell, cells, executor or LocalExecutor(), "compare",
                            progress)
        atomic_write_text(out / "compare.json",
                          dumps({"config": config, "models": results}) + "\n")
        atomic_write_text(out / "compare.md", compare_markdown(results))
    return results


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
    rows = []
    for r in results:
        rc = r["rectangle"]
        rows.append((r["name"], r["n"], r["q"],
                     f"{_fmt(rc['mean_abs_delta'])} ± {_fmt(rc['sd_abs_delta'])}",
                     _fmt(rc["max_abs_delta"]), _fmt(rc["p_value_abs"]), rc["n_above_atol"],
                     rc["n_rectangles"]))
    return markdown_table(("model", "n", "q", "mean \\|δ\\| ± sd", "max \\|δ\\|",
                           "p (mean \\|δ\\| > atol)", "above atol", "rectangles"), rows)


def certificate_table(results: Sequence[dict]) -> str:
    """Markdown table of the per-temperature certificates of every model."""
    rows = []
    for r in results:
        for t in r["per_tau"]:
            star = "" if t["influence_exact"] else "≥"
            best = (f"{_fmt(t['best_bound'])} ({t['best']})" if t["influence_exact"]
                    else "no bound (C sampled)")
            coupling = f">{t['budget']}" if t["coupling_censored"] else _fmt(t["coupling_median"])
            bound = _fmt(t["drift_bound"]) + (" (vacuous)" if t["drift_vacuous"] else "")
            rows.append((r["name"], f"{t['tau']:g}", star + _fmt(t["alpha_row"]),
                         star + _fmt(t["alpha_col"]), star + _fmt(t["alpha_spectral"]),
                         star + _fmt(t["spectral_radius"]), best, _fmt(t["exact_tmix"]),
                         _fmt(t.get("rho_upper")), _fmt(t.get("tmix_upper")), coupling,
                         _fmt(t["drift_min"]), bound))
    return markdown_table(("model", "tau", "α row", "α col", "α spec", "ρ(C)", "best t_mix bound",
                           "exact t_mix", "ρ(C) ≤ (proved)", "t_mix ≤ (proved)",
                           "coupling median", "drift min (band)", "drift bound (T=budget)"),
                          rows)


def bracket_table(results: Sequence[dict]) -> str:
    """Markdown table of each model's bracket ``tau_no_cert < tau_cert``."""
    rows = []
    for r in results:
        b = r.get("bracket")
        if b is None:
            continue
        no = ("—" if b["tau_no_cert"] is None
              else f"{_fmt(b['tau_no_cert'], 4)} ({b['lower_method']})")
        yes = ("— (" + b["upper_method"] + ")" if b["tau_cert"] is None
               else f"{_fmt(b['tau_cert'], 4)} ({b['upper_method']})")
        rows.append((r["name"], no, yes, _fmt(b["ratio"])))
    return markdown_table(("model", "tau_no_cert (no certificate can exist)",
                           "tau_cert (certificate proved)", "ratio"), rows)


def margin_table(results: Sequence[dict]) -> str:
    """Markdown table of the per-state minimum margins Delta* over the contexts."""
    rows = []
    for r in results:
        d = r["delta_star"]
        rows.append((r["name"], _fmt(d["min"]), _fmt(d["median"]), _fmt(d["max"]),
                     f"{round(d['perfect_fraction'] * d['n_states'])} / {d['n_states']}",
                     d["n_states"]))
    return markdown_table(("model", "Δ* min", "Δ* median", "Δ* max", "perfect traps", "states"),
                          rows)


def compare_markdown(results: Sequence[dict]) -> str:
    """The whole comparison as Markdown (rectangles, margins, certificates)."""
    return (
        "## Rectangle test (Proposition 4) at tau = 1\n\n" + rectangle_table(results)
        + "\n## Per-state minimum margins Δ* over the contexts\n\n" + margin_table(results)
        + "\n## The bracket: no certificate can exist at tau_no_cert, one is proved from tau_cert\n\n"
        + bracket_table(results)
        + "\n## Certificates by temperature\n\n"
        "α and ρ(C) marked ≥ are lower bounds from sampled contexts, so their t_mix 'bounds' "
        "bound nothing and are not shown; unmarked ones are exact (enumerated toys and "
        "tabulated windows of real models).\n\n" + certificate_table(results)
        + kernel_table(results)
    )


def kernel_table(results: Sequence[dict]) -> str:
    """The exact values of the chosen kernel beside the paper's (empty without one)."""
    cells = [(r, t) for r in results for t in r["per_tau"] if "kernel" in t]
    if not cells:
        return ""
    k = cells[0][1]["kernel"]
    rows = []
    for r, t in cells:
        v = t["kernel"]
        tmix = _fmt(v["tmix"]) if v["tmix"] is not None else \
            f"[{_fmt(v['tmix_lower'])}, {_fmt(v['tmix_upper'])}]"
        anneal = "-" if v["anneal"] is None else _fmt(v["anneal"]["tv_worst_start"])
        rows.append((r["model"], f"{t['tau']:g}", tmix, _fmt(v["absolute_gap"]),
                     _fmt(v["mode_mass"]), _fmt(v["tv_to_random_scan"]),
                     _fmt(v["tv_to_pll_target"]), _fmt(v["tv_to_logits_target"]),
                     _fmt(v["acceptance"]), anneal))
    return (f"\n## Kernel {k['kernel']} (epsilon = {k['epsilon']:g}), exact\n\n"
            + markdown_table(("model", "tau", "t_mix", "gap", "mode mass", "TV to random scan",
                              "TV to PLL target", "TV to logits target", "MH acceptance",
                              "annealed TV"), rows))


__all__ = ["MLM_LENGTH", "bracket_table", "certificate_table", "compare", "compare_cell",
           "compare_markdown", "kernel_table", "margin_table", "model_bracket", "model_length",
           "rectangle_table"]
