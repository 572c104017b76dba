"""The paper's protocols run on real models and toys: the "Findings" and "Runs" sections of
docs/results.md.

:data:`RUNS` lists the experiment commands (the paper's §4 rectangles, §5.2 alpha curves, §6.1
phase diagrams and the trajectories' traps, on toys and masked LMs, with modest budgets).
:func:`refresh` runs them (resuming) and keeps their JSON outputs under
``docs/data/protocols/<name>/`` and their figures in ``docs/figures/``; :func:`render_runs`
renders one block per run (the command, the rectangle, margin and certificate tables, the
figures) and :func:`render_findings` a paragraph comparing the findings with the paper's, from
that data alone.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from glauber.core.io import write_json_atomic
from glauber.experiments.compare import certificate_table, margin_table, rectangle_table
from glauber.models import is_toy_spec

#: The paper's Table 1 range of mean |delta| over five MLMs (§4).
PAPER_DELTA_RANGE = (0.64, 0.80)
#: The runs' index in their data folder: the commands, figures and regeneration time.
INDEX = "index.json"
#: The outputs of a run that the page reads (kept in the data folder).
OUTPUTS = ("compare.json", "alpha_curve.json", "phase_diagram.json", "trajectory_summary.json")
#: name -> ``glauber`` arguments of every run (``--out`` added), in the page's order (about
#: 15-25 minutes on 2 idle cores; a rerun resumes finished cells).
RUNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("compare", ("compare", "--models", "ising-cycle:n=8,asym-ising:n=8,planted:n=8,antiberty,"
                 "sapiens-vh,sapiens-vl,tiny-gpt2-control", "--taus", "0.5,1,2", "--length",
                 "12", "--contexts", "8", "--rectangles", "300", "--pairs", "8", "--budget",
                 "300")),
    ("phase-ising", ("phase-diagram", "--model", "ising-cycle:n=8", "--taus", "0.5,1,1.5,2,4",
                     "--lengths", "6,8,10", "--pairs", "16", "--budget", "5000")),
    ("phase-sapiens-vh", ("phase-diagram", "--model", "sapiens-vh", "--taus", "0.5,1,2",
                          "--lengths", "8,16", "--pairs", "8", "--budget", "600")),
    ("alpha-ising", ("alpha-curve", "--model", "ising-cycle:n=8", "--taus",
                     "0.25,0.5,1,2,4,8")),
    ("alpha-asym-ising", ("alpha-curve", "--model", "asym-ising:n=8", "--taus",
                          "0.5,1,2,4,8,16,32")),
    ("alpha-antiberty", ("alpha-curve", "--model", "antiberty", "--length", "12", "--contexts",
                         "4", "--taus", "0.5,1,2,4,8,16,32,64")),
    ("trajectory-sapiens-vh", ("trajectory", "--model", "sapiens-vh", "--length", "16", "--tau",
                               "1", "--steps", "2000", "--chains", "4", "--checkpoint-every",
                               "500", "--record-every", "10", "--window", "300")),
    ("trajectory-ising", ("trajectory", "--model", "ising-cycle:n=8", "--tau", "0.5", "--steps",
                          "10000", "--chains", "4", "--checkpoint-every", "500",
                          "--record-every", "10", "--window", "300", "--threshold", "0.05")),
)


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _median(row: dict) -> str:
    return f">{row['budget']}" if row["censored"] else f"{row['median']:.0f}"


def _grid(tau: float | None) -> str:
    return "beyond the grid" if tau is None else f"{tau:g}"


def findings(compare: dict | None, alphas: dict[str, dict], phases: dict[str, dict],
             trajectories: dict[str, dict]) -> str:
    """A paragraph on where these runs agree or disagree with the paper (from the data)."""
    parts = []
    if compare:
        mlm = [m for m in compare["models"]  # a toy's flag once meant "enumerated": read the spec
               if not is_toy_spec(m["model"]) and "gpt2" not in m["model"]]
        ar = [m for m in compare["models"] if "gpt2" in m["model"]]
        if mlm:
            deltas = ", ".join(f"{m['name']} {m['rectangle']['mean_abs_delta']:.2f}" for m in mlm)
            inside = all(PAPER_DELTA_RANGE[0] <= m["rectangle"]["mean_abs_delta"]
                         <= PAPER_DELTA_RANGE[1] for m in mlm)
            refuted = all(m["rectangle"]["n_above_atol"] > 0 for m in mlm)
            parts.append(
                f"**Incompatibility of framed {mlm[0]['n']}-residue fragments.** Every masked "
                "LM fails the rectangle test "
                f"({'as in' if refuted else 'unlike'} the paper's §4): mean |δ| = {deltas} at "
                f"tau = 1, {'inside' if inside else 'outside'} the paper's 0.64–0.80 for five "
                "English MLMs (different models, vocabularies and contexts, so only the sign of "
                "the finding transfers). These are fragments framed as whole sequences; the "
                "section above gives the models on windows of real chains in context."
            )
        if ar:
            a = ar[0]["rectangle"]
            parts.append(
                f"The autoregressive control gives mean |δ| = {a['mean_abs_delta']:.1e} "
                f"({a['n_above_atol']} of {a['n_rectangles']} rectangles above the float32 "
                "rounding tolerance), as the paper reports for GPT-2."
            )
    for name, res in alphas.items():
        th = res["thresholds"]
        kind = "exactly" if res["exhaustive"] else "as a lower-bound estimate"
        row = th["row"]
        best = min((v for v in th.values() if v is not None), default=None)
        if res["exhaustive"]:
            parts.append(
                f"**alpha(tau), {name}** ({kind}): the paper's row-sum certificate holds from "
                f"tau = {_grid(row)}; the best corrected certificate from tau = {_grid(best)}; "
                f"Corollary 7 needs tau > {res['corollary7_tau']:.3g}."
            )
        else:  # lower bounds of C: where they drop below 1 is no certificate
            parts.append(
                f"**alpha(tau), {name}** ({kind}, NOT a certificate): the sampled row sum "
                f"drops below 1 from tau = {_grid(row)}, the best corrected summary from tau = "
                f"{_grid(best)}; these lower bounds certify nothing (the suprema may be larger), "
                f"and Corollary 7 would need tau > {res['corollary7_tau']:.3g}. The paper finds "
                "the row sum crossing 1 between tau = 10 and 11 for BERT on 14 tokens."
            )
    for name, res in phases.items():
        rows = res["rows"]
        taus = sorted({r["tau"] for r in rows})
        censored = [r for r in rows if r["censored"]]
        low = [r for r in rows if r["tau"] == taus[0]]
        high = [r for r in rows if r["tau"] == taus[-1]]
        parts.append(
            f"**Phase diagram, {name}:** {len(censored)} of {len(rows)} cells censored; at "
            f"tau = {taus[0]:g} the median coupling time is "
            f"{', '.join(_median(r) for r in low)} "
            f"(n = {', '.join(str(r['n']) for r in low)}), at tau = {taus[-1]:g} "
            f"{', '.join(_median(r) for r in high)}. "
            "The paper sees the crossover near tau 1.5–2, moving up with n."
        )
    for name, s in trajectories.items():
        parts.append(
            f"**Traps, {name}:** {s['n_traps']} trap windows in {len(s['chains'])} chains, "
            f"{s['n_perfect']} of them perfect (every token the strict argmax). The paper finds "
            "17 traps in 30 BERT chains, 4 perfect; its 0.12 threshold is calibrated for Jina "
            "embeddings, so counts in other embedding spaces are not comparable."
        )
    return "\n\n".join(parts) + "\n"


def _runs(folder: Path) -> list[dict]:
    return json.loads((folder / INDEX).read_text(encoding="utf-8"))["runs"]


def _outputs(folder: Path) -> tuple[dict | None, dict[str, dict], dict[str, dict],
                                     dict[str, dict]]:
    """The compare result and the alpha curves, phase diagrams and trajectories, by run."""
    compare = None
    alphas: dict[str, dict] = {}
    phases: dict[str, dict] = {}
    trajectories: dict[str, dict] = {}
    for run in _runs(folder):
        name = run["name"]
        compare = _load(folder / name / "compare.json") or compare
        for stem, store in (("alpha_curve", alphas), ("phase_diagram", phases),
                            ("trajectory_summary", trajectories)):
            data = _load(folder / name / f"{stem}.json")
            if data is not None:
                store[name] = data
    return compare, alphas, phases, trajectories


def render_findings(folder: Path) -> str:
    """The findings against the paper, from the runs' outputs in ``folder``."""
    return findings(*_outputs(folder))


def render_runs(folder: Path) -> str:
    """One block per run of ``folder/index.json``: its command, tables and figures."""
    blocks = []
    for run in _runs(folder):
        name = run["name"]
        block = [f"### {name}\n", f"```\n{run['command']}\n```\n"]
        compare = _load(folder / name / "compare.json")
        if compare is not None:
            block += ["Rectangle test (Proposition 4) at tau = 1, like the paper's Table 1 "
                      "(p: one-sided t-test of mean |δ| > rounding tolerance):\n",
                      rectangle_table(compare["models"]),
                      "\nPer-state minimum margins Δ* over the contexts:\n",
                      margin_table(compare["models"]),
                      "\nCertificates by temperature (≥: lower bounds from sampled contexts):\n",
                      certificate_table(compare["models"])]
        s = _load(folder / name / "trajectory_summary.json")
        if s is not None:
            block.append(f"{s['n_traps']} traps, {s['n_perfect']} perfect; hitting times of "
                         "the drift levels per chain: "
                         + "; ".join(str(c["hitting_times"]) for c in s["chains"]) + "\n")
        for figure in run["figures"]:
            block.append(f"![{name}]({figure})\n")
        blocks.append("\n".join(block))
    return "\n".join(blocks)


def regeneration_time(folder: Path) -> float | None:
    """Seconds the last refresh of the runs took (None if not recorded)."""
    return json.loads((folder / INDEX).read_text(encoding="utf-8")).get("seconds")


def refresh(folder: Path, work: Path, log: Callable[[str], Any]) -> None:
    """Run (or resume) every command of :data:`RUNS` into ``work/<name>``, then :func:`keep`
    what the page reads in ``folder`` (``docs/data/protocols``)."""
    started = time.perf_counter()
    for name, argv in RUNS:
        full = [*argv, "--out", str(work / name)]
        log("glauber " + " ".join(full))
        subprocess.run([sys.executable, "-m", "glauber.cli", *full, "--no-progress"],
                       check=True)
    keep(folder, work, time.perf_counter() - started)


def keep(folder: Path, work: Path, seconds: float) -> None:
    """Keep what the page reads of the runs in ``work``: their JSON outputs in
    ``folder/<name>/``, their figures in ``docs/figures/`` (``folder`` is ``docs/data/protocols``),
    their commands and the time they took (``seconds``) in ``folder/index.json``."""
    figures = folder.parent.parent / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    runs = []
    for name, argv in RUNS:
        out = work / name
        (folder / name).mkdir(parents=True, exist_ok=True)
        for stem in OUTPUTS:
            if (out / stem).exists():
                shutil.copyfile(out / stem, folder / name / stem)
        shown = []
        for png in sorted(out.glob("*.png")):
            target = figures / f"{name}-{png.name}"
            shutil.copyfile(png, target)
            shown.append(f"figures/{target.name}")
        runs.append({"name": name, "command": shlex.join(["glauber", *argv, "--out", str(out)]),
                     "figures": shown})
    write_json_atomic(folder / INDEX, {"seconds": seconds, "runs": runs})


__all__ = [
    "INDEX",
    "OUTPUTS",
    "PAPER_DELTA_RANGE",
    "RUNS",
    "findings",
    "keep",
    "refresh",
    "regeneration_time",
    "render_findings",
    "render_runs",
]
