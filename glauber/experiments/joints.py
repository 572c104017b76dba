"""Which joint does Gibbs sampling sample? The joints of an exact window, side by side.

:func:`joints_table` builds, for a toy or a window of a real model in its context (``q**n`` at
most :data:`glauber.models.EXACT_SWEEP_MAX_STATES` states), the joints of
:mod:`glauber.exact.joints` at each temperature from one score table (on disk under
``$GLAUBER_CACHE`` for a masked LM's window): the Glauber stationary law, the raw-score MRF, the
MH/PLL target, the Hammersley-Clifford-Besag and the Arnold-Gokhale joints of Torroba Hennigen
and Kim (2023). :func:`format_joints` prints them (``glauber joints``); :func:`joints_markdown`
renders the docs/results.md section from the JSON committed under ``docs/data/joints/``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from glauber.core.io import write_json_atomic
from glauber.errors import InvalidParameterError, StateSpaceTooLargeError
from glauber.exact.chain import ExactChain
from glauber.exact.joints import JOINTS, joints
from glauber.experiments.common import get_model, markdown_table, parse_floats, state_text

#: What each joint is, for the tables' legend.
LEGEND = {
    "glauber": "stationary law of random-scan Glauber (what Gibbs sampling samples)",
    "mrf": "MRF of the raw scores, exp(sum_i s_i(x_i; x_-i) / tau) (mh:logits target)",
    "pll": "exp(-E_PLL / tau), E_PLL = -sum_i log p_1(x_i | x_-i) (mh:pll target)",
    "hcb": "Hammersley-Clifford-Besag joint at the pivot",
    "ag": "Arnold-Gokhale joint (fixed point of their iteration)",
}
#: Pivot choices of the HCB joint.
PIVOTS = ("mode", "context")
#: The committed data of the docs/results.md section.
DATA = Path("docs/data/joints")
#: The command that refreshes the section's data.
COMMAND = "glauber results --rerun joints"
#: What the section shows: window or toy name -> model specification.
SECTION_MODELS: dict[str, str] = {
    "AntiBERTy, trastuzumab VH CDR3 100-102 (GGD)": "antiberty@trastuzumab-vh[100-102]",
    "AntiBERTy, trastuzumab VH CDR3 101-102 (GD), 2 sites": "antiberty@trastuzumab-vh[101-102]",
    "Sapiens VH, trastuzumab VH CDR3 100-102 (GGD)": "sapiens-vh@trastuzumab-vh[100-102]",
    "Sapiens VL, trastuzumab VL CDR3 91-93 (HYT)": "sapiens-vl@trastuzumab-vl[91-93]",
    "Ising path, 3 sites (compatible)": "ising-path:n=3",
    "asymmetric Ising, 4 sites (incompatible)": "asym-ising:n=4",
    "Potts cycle, 3 sites, q = 20 (compatible)": "potts-cycle:n=3,q=20,J=1.0",
}
#: Temperatures of the section.
SECTION_TAUS = (0.5, 1.0, 2.0)


def joints_table(spec: str, taus: float | Sequence[float] | str = (1.0,), pivot: str = "mode",
                 device: str = "cpu", progress: Callable[[str], Any] | None = None) -> dict:
    """The joints of the exact chain of ``spec`` at each temperature, as a JSON-ready dict.

    Parameters
    ----------
    spec : str
        A toy specification or a window ``model@context[sites]`` (:func:`glauber.models.
        resolve_model`) with at most :data:`~glauber.models.EXACT_SWEEP_MAX_STATES` states.
    taus : float, sequence of float or str
        Temperatures (``"0.5,1,2"``).
    pivot : {"mode", "context"}
        The HCB pivot: the Glauber law's mode at each temperature, or the context's own tokens
        (a window's; a toy has none).

    Raises
    ------
    StateSpaceTooLargeError
        If ``q**n`` exceeds the exact limit (before any forward of the model).
    InvalidParameterError
        An unknown pivot, or ``context`` for a model without a context.
    """
    from glauber.models import EXACT_SWEEP_MAX_STATES

    tau_list = parse_floats([taus] if isinstance(taus, (int, float)) else taus, "taus")
    if pivot not in PIVOTS:
        raise InvalidParameterError(f"--pivot must be one of {', '.join(PIVOTS)}, got {pivot!r}")
    model = get_model(spec, None, device)
    n, q = int(model.n), int(model.q)
    if q**n > EXACT_SWEEP_MAX_STATES:
        raise StateSpaceTooLargeError(
            f"{spec} has q**n = {q}**{n} = {q**n:,} states, over the exact limit of "
            f"{EXACT_SWEEP_MAX_STATES:,}: the joints need every state; choose at most 3 sites "
            "of a 20-token vocabulary (--context trastuzumab-vh --sites 100-102) or a smaller toy"
        )
    fixed = None
    if pivot == "context":
        if not hasattr(model, "context"):
            raise InvalidParameterError(
                f"--pivot context needs a window with a context (--context ... --sites ...); "
                f"{spec} has none: use --pivot mode")
        fixed = np.asarray(model.default_states()[0], dtype=np.int64)
    base = ExactChain(model, tau_list[0], max_states=EXACT_SWEEP_MAX_STATES)
    base.scores()
    rows = []
    for tau in tau_list:
        if progress is not None:
            progress(f"{spec}: tau = {tau:g}")
        res = joints(base.at(tau), fixed)
        states = base.states()
        row = res.summary()
        row["modes"] = [state_text(model, states[k]) for k in res.mode]
        row["pivot_text"] = state_text(model, np.asarray(res.pivot))
        rows.append(row)
    sites = getattr(model, "sites", None)
    return {
        "model": spec, "n": n, "q": q, "states": q**n,
        "sites": None if sites is None else [int(s) + 1 for s in sites],
        "context_window": (state_text(model, model.default_states()[0])
                           if hasattr(model, "context") else None),
        "pivot": pivot, "joints": list(JOINTS), "legend": LEGEND, "rows": rows,
    }


def _g(v: Any, digits: int = 3) -> str:
    """A number for a table: ``n/a`` for a missing one, 0 for rounding noise below 1e-12."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if isinstance(v, str):
        return v
    return "0" if abs(v) < 1e-12 else f"{v:.{digits}g}"


def format_joints(data: dict) -> str:
    """The tables ``glauber joints`` prints: per temperature, the joints and their pairs."""
    lines = [f"joints of {data['model']}: n = {data['n']}, q = {data['q']}, "
             f"{data['states']:,} states"
             + (f"; context window {data['context_window']}" if data["context_window"] else "")]
    lines += [f"  {name:8s} {text}" for name, text in data["legend"].items()]
    for row in data["rows"]:
        lines.append("")
        lines.append(f"tau = {row['tau']:g}  (HCB pivot {row['pivot_text']}; Arnold-Gokhale "
                     f"residual {_g(row['ag_change'], 2)} after {row['ag_iterations']} maps; "
                     f"every joint has max|delta| >= {_g(row['rectangle_bound'])})")
        lines.append(f"  {'joint':8s} {'mean|delta|':>11s} {'max|delta|':>10s} "
                     f"{'KL(p_i||q_i)':>12s} {'KL(q_i||p_i)':>12s} {'mode mass':>9s}  mode")
        for k, name in enumerate(row["names"]):
            lines.append(
                f"  {name:8s} {_g(row['mean_abs_delta'][k]):>11s} "
                f"{_g(row['max_abs_delta'][k]):>10s} {_g(row['kl_model_joint'][k]):>12s} "
                f"{_g(row['kl_joint_model'][k]):>12s} {_g(row['mode_mass'][k]):>9s}  "
                f"{row['modes'][k]}")
        lines.append(f"  {'pair':16s} {'KL(a||b)':>9s} {'KL(b||a)':>9s} {'TV':>7s}")
        for k, (a, b) in enumerate(row["pairs"]):
            lines.append(f"  {a + ' / ' + b:16s} {_g(row['kl_ab'][k]):>9s} "
                         f"{_g(row['kl_ba'][k]):>9s} {_g(row['tv'][k]):>7s}")
        for note in row["notes"]:
            lines.append(f"  note: {note}")
    return "\n".join(lines)


# ------------------------------------------------------------------- docs/results.md section
def section_data(out: Path = DATA, taus: Sequence[float] = SECTION_TAUS,
                 log: Callable[[str], Any] = print) -> None:
    """Compute every model of :data:`SECTION_MODELS` into ``out/<n>.json`` (skipping those
    already there)."""
    out.mkdir(parents=True, exist_ok=True)
    for k, (label, spec) in enumerate(SECTION_MODELS.items()):
        path = out / f"{k:02d}.json"
        if path.exists():
            continue
        log(f"== joints: {label}")
        write_json_atomic(path, {"label": label, **joints_table(spec, taus, progress=log)})


def joints_markdown(folder: Path = DATA) -> str:
    """The docs/results.md section on joints, from the JSON in ``folder``."""
    files = sorted(folder.glob("*.json"))
    if not files:
        return ""
    data = [json.loads(p.read_text(encoding="utf-8")) for p in files]
    out = [
        "Masked-LM conditionals are incompatible (the rectangle test), so no joint has them all. "
        "On an exact window the joints built from them sit beside the law Glauber (Gibbs) "
        "sampling converges to: the Glauber stationary law; the MRF of the raw scores (the "
        "target of Metropolis-Hastings on the raw-logit energy); `exp(-E_PLL/tau)/Z` (the target "
        "of MH on the pseudo-log-likelihood energy; at tau = 1 Torroba Hennigen and Kim's "
        "locally normalised MRF); and their Hammersley-Clifford-Besag (pivot: the Glauber "
        "law's mode) and Arnold-Gokhale joints (`glauber.exact.joints`). "
        "**mean |δ|** is the mean over every single-site move `x -> x^(i->a)` of the joint's "
        "log-odds minus the model's, `|[log q(y) - log q(x)] - [log p_i(a|x) - "
        "log p_i(x_i|x)]|`: 0 exactly when the joint's conditionals are the model's. Around a "
        "rectangle the joint's log-ratios telescope, so no joint can have max |δ| below the "
        "model's largest rectangle |δ| / 4 (the **bound** column). **KL(p‖q)** is the mean over "
        "the contexts `(i, x_-i)` of KL(model conditional ‖ joint conditional), the measure of "
        "Torroba Hennigen and Kim (their `all_kls_fwd`). **TV to Glauber** is the total "
        "variation distance of each joint from the law Gibbs sampling samples.",
        "",
    ]
    table = []
    for d in data:
        for row in d["rows"]:
            tv = {tuple(p): row["tv"][k] for k, p in enumerate(row["pairs"])}
            to_g = [tv[("glauber", j)] for j in JOINTS[1:]]
            close = JOINTS[1 + int(np.argmin(to_g))]
            table.append((d["label"], f"{row['tau']:g}", _g(row["rectangle_bound"]),
                          " / ".join(_g(v) for v in row["mean_abs_delta"]),
                          " / ".join(_g(v) for v in row["kl_model_joint"]),
                          " / ".join(_g(v) for v in to_g), close))
    out.append(markdown_table(
        ("window or toy", "tau", "bound", "mean \\|δ\\|: glauber / mrf / pll / hcb / ag",
         "KL(p‖q): glauber / mrf / pll / hcb / ag", "TV to Glauber: mrf / pll / hcb / ag",
         "closest to Glauber"),
        table).rstrip("\n"))
    notes = [f"{d['label']} at tau = {row['tau']:g}: {note}" for d in data for row in d["rows"]
             for note in row["notes"]]
    if notes:
        out += ["", "Notes: " + "; ".join(notes) + "."]
    out += ["", _joints_findings(data), "",
            f"Data: `docs/data/joints/` (`glauber.experiments.joints.section_data`); refresh: "
            f"`{COMMAND}` (a model already there is skipped); one window: `glauber joints "
            "--model antiberty --context trastuzumab-vh --sites 100-102 --taus 0.5,1,2`."]
    return "\n".join(out) + "\n"


def refresh(folder: Path, work: Path, log: Callable[[str], Any]) -> None:
    """Compute the models of :data:`SECTION_MODELS` missing from ``folder`` (``work`` is not
    used: a model's table is all it keeps)."""
    section_data(folder, log=log)


def _joints_findings(data: list[dict]) -> str:
    """A paragraph on what the table shows (from the data)."""
    rows = [(d, r) for d in data for r in d["rows"]]
    incompatible = [(d, r) for d, r in rows if (r["rectangle_bound"] or 0) > 1e-9
                    and None not in r["mean_abs_delta"]]
    compatible = [(d, r) for d, r in rows if (r["rectangle_bound"] or 0) <= 1e-9]

    def best(values: list, pick: Callable = min) -> str:
        return JOINTS[values.index(pick(values))]

    def to_glauber(r: dict) -> list[float]:
        tv = {tuple(p): r["tv"][k] for k, p in enumerate(r["pairs"])}
        return [tv[("glauber", j)] for j in JOINTS[1:]]

    least_delta = sum(best(r["mean_abs_delta"]) == "glauber" for _, r in incompatible)
    least_kl = sum(best(r["kl_model_joint"]) == "ag" for _, r in incompatible)
    worst_kl = sum(best(r["kl_model_joint"], max) in ("mrf", "pll") for _, r in incompatible)
    closest = sum(JOINTS[1 + int(np.argmin(to_glauber(r)))] == "ag" for _, r in incompatible)
    ag_tv = [to_glauber(r)[-1] for _, r in incompatible]
    energy_tv = [v for _, r in incompatible for v in to_glauber(r)[:2]]
    exact = [max(to_glauber(r)[2:]) for _, r in compatible]
    off = [min(to_glauber(r)[:2]) for _, r in compatible]
    parts = [
        f"On the {len(incompatible)} incompatible rows (windows of real models, the "
        f"asymmetric Ising toy) the Arnold-Gokhale joint has the conditionals closest to the "
        f"model's in KL in {least_kl}, and the MRF or the PLL target the furthest in "
        f"{worst_kl}, as Torroba Hennigen and Kim find for pairs of BERT tokens of English "
        "sentences (the Arnold-Gokhale joint stays closest to the MLM's conditionals and "
        "outperforms the MRFs). The Glauber stationary law, which no one constructs, has the "
        f"smallest mean |δ| of all in {least_delta}, and the Arnold-Gokhale joint is the joint "
        f"closest to it in {closest} (TV {min(ag_tv):.2g} to {max(ag_tv):.2g}): Gibbs sampling "
        "samples, nearly, the Arnold-Gokhale joint, not the MRF or PLL energies that "
        f"Metropolis-Hastings corrections target (TV {min(energy_tv):.2g} to "
        f"{max(energy_tv):.2g} from them)."]
    if compatible:
        parts.append(
            f"On the {len(compatible)} compatible rows the Glauber law, HCB and Arnold-Gokhale "
            f"are the joint (TV at most {max(exact):.1g}), while the MRF and PLL targets are "
            f"not (TV at least {min(off):.2g}): a pseudo-likelihood energy is not the "
            "likelihood even when a joint exists.")
    parts.append(
        "Torroba Hennigen and Kim's tables (perplexities and conditional KLs of BERT over a "
        "28,996-word-piece vocabulary on SNLI and XSum) were not available offline, and their "
        "sizes are not comparable with 20 amino acids; only the order of the constructions is "
        "compared here.")
    return " ".join(parts)


__all__ = [
    "COMMAND",
    "DATA",
    "LEGEND",
    "PIVOTS",
    "SECTION_MODELS",
    "SECTION_TAUS",
    "format_joints",
    "joints_markdown",
    "joints_table",
    "refresh",
    "section_data",
]
