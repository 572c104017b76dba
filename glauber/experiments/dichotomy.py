"""The paper's dichotomy on exact toy chains: ``t_mix`` and the gap against ``n``, on both sides of
the corrected Theorem 5 threshold and in the Theorem 8 regime, beside both theorems' bounds.

For each family (Ising on cycles and grids, Potts with ``q = 3`` on cycles), temperature and
size ``n`` (4 to 20 sites), one *cell* records:

* ``t_mix(1/4)``: exact (dense squaring, ``ExactChain.mixing_time``) up to
  :data:`EXACT_STATES` states; above, the rigorous bracket of ``ExactChain.mixing_bracket``
  (monotone grand coupling for ferromagnetic Ising, LPW 12.5/12.4 spectral bounds for all;
  the spectral upper end is labelled an estimate with a Lanczos gap), or, for Ising cycles
  above :data:`FULL_STATES`, of ``OrbitChain.mixing_bracket`` on the site-symmetry orbit chain
  (rigorous for the full chain: :mod:`glauber.exact.symmetry`);
* the spectral gap (dense, Lanczos, or the orbit chain's for cycles: equal to the full gap there
  by LPW Theorem 15.5, whose closed form is recorded beside it);
* the corrected Theorem 5 bound (the best certificate of
  :func:`glauber.theory.contraction.certify_contraction` on the exact influence matrix;
  ``inf`` where no certificate exists);
* Theorem 8's lower bound ``e^{Delta*/tau} / (4 q)`` on the basin ``{all top token}`` (its
  margins are exact, ``ExactChain.margins``; Assumption 1 holds there for ferromagnets, and
  ``mu(B) <= 1/2`` is checked).

Fits: ``t_mix ~ a n log n`` (least squares through the origin) and ``log t_mix ~ b + c n``, on
the exact values and bracket midpoints of each series, with their relative residuals, so a
reader sees which law each regime follows.

``glauber results --rerun dichotomy`` runs the missing cells into ``docs/data/dichotomy``
(:func:`refresh`: every finished cell is saved at once; a rerun resumes) and draws
``docs/figures/dichotomy.png``; :func:`render` writes the section of ``docs/results.md`` from the
cells.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from glauber.core.arrays import jsonable
from glauber.core.io import write_json_atomic
from glauber.errors import GlauberError
from glauber.exact.chain import ExactChain
from glauber.exact.symmetry import OrbitChain
from glauber.experiments.common import markdown_table
from glauber.theory.contraction import certify_contraction
from glauber.theory.escape import theorem8_tmix_lower_bound

EPS = 0.25
#: Exact ``t_mix`` (dense squaring) up to this many states.
EXACT_STATES = 1024
#: Ising cycles above this many states go through their orbit chain (2n-fold smaller).
FULL_STATES = 2**11
#: Step budget of a coupling bracket by chain size (a step of a 2^20-state chain costs ~0.1 s);
#: where the budget ends first, LPW 12.5 and the budget itself bound t_mix from below.
BRACKET_STEPS = ((4096, 20_000), (2**16, 3_000), (2**20, 600))
#: The command that refreshes the section (its cells under ``docs/data/dichotomy``).
COMMAND = "glauber results --rerun dichotomy"
#: The section's figure, relative to the page.
FIGURE = "figures/dichotomy.png"

GRIDS = {4: (2, 2), 6: (2, 3), 8: (2, 4), 9: (3, 3), 12: (3, 4), 16: (4, 4), 20: (4, 5)}
#: family -> (sizes, temperatures, the role of each temperature).
FAMILIES: dict[str, tuple[tuple[int, ...], tuple[float, ...], tuple[str, ...]]] = {
    "ising-cycle": ((4, 6, 8, 10, 12, 14, 16, 18, 20), (5.0, 2.0, 0.5),
                    ("high temperature", "intermediate", "low temperature")),
    "ising-grid": ((4, 6, 8, 9, 12, 16, 20), (5.0, 2.5, 1.0),
                   ("high temperature", "past the row-sum threshold", "low temperature")),
    "potts-cycle": ((4, 6, 8, 10, 12), (4.0, 1.0, 0.4),
                    ("high temperature", "intermediate", "low temperature")),
}


def build_model(family: str, n: int) -> Any:
    """The model of a cell (unit couplings, no field), by its toy preset."""
    from glauber.models import resolve_model

    if family == "ising-cycle":
        return resolve_model(f"ising-cycle:n={n},J=1.0,h=0.0")
    if family == "ising-grid":
        rows, cols = GRIDS[n]
        return resolve_model(f"ising-grid:rows={rows},cols={cols},J=1.0,h=0.0")
    if family == "potts-cycle":
        return resolve_model(f"potts-cycle:n={n},q=3,J=1.0")
    raise GlauberError(f"unknown family {family!r}")


def _theorem5(chain: ExactChain) -> dict:
    cert = certify_contraction(chain.influence_matrix(), EPS)
    return {"alpha_row": cert.alpha_row, "spectral_radius": cert.spectral_radius,
            "thm5_bound": cert.best_bound, "thm5_certificate": cert.best}


def _theorem8(chain: ExactChain) -> float | None:
    """``e^{Delta*/tau} / (4 q)`` on ``B = {all top token}`` when Assumption 1 holds there and
    ``mu(B) <= 1/2``; None otherwise."""
    mask = np.zeros(chain.num_states, dtype=bool)
    mask[-1] = True
    if float(chain.log_stationary()[-1]) > math.log(0.5):
        return None
    margins = chain.margins(mask)
    if not margins.holds:
        return None
    return float(theorem8_tmix_lower_bound(chain.q, margins.delta_star_lower, chain.tau))


def run_cell(family: str, n: int, tau: float) -> dict:
    """One cell (see the module docstring)."""
    start = time.perf_counter()
    model = build_model(family, n)
    states = model.q**n
    cell: dict = {"family": family, "n": n, "tau": tau, "states": states}
    if family == "ising-cycle" and states > FULL_STATES:
        small = ExactChain(build_model(family, 8), tau)  # alpha of the n-cycle: the same n >= 4
        cell.update(_theorem5_scaled(small, n))
        cell["thm8_lower"] = _theorem8(small)
        oc = OrbitChain(model, tau, tokens=False)
        bracket = oc.mixing_bracket(EPS, BRACKET_STEPS[0][1])
        est = oc.spectral_estimate()
        cell.update(method="orbit-bracket", orbits=oc.num_orbits, gap=est.gap,
                    gap_method=f"orbit chain ({est.method})")
    else:
        chain = ExactChain(model, tau)
        cell.update(_theorem5(chain))
        cell["thm8_lower"] = _theorem8(chain)
        sparse = states > EXACT_STATES  # the sparse path's law and gap (no dense O(S^3) work)
        try:
            est = chain.spectral_estimate("lanczos" if sparse and chain.is_reversible()
                                          else "auto")
            cell.update(gap=est.gap, gap_method=est.method)
        except GlauberError as exc:
            cell.update(gap=None, gap_method=f"unavailable: {type(exc).__name__}")
        if states <= EXACT_STATES:
            cell.update(method="exact", tmix=chain.mixing_time(EPS))
            bracket = None
        else:
            bracket = chain.mixing_bracket(EPS, _steps(states), "sparse")
            cell["method"] = "bracket"
    if family == "ising-cycle":
        cell["closed_form_gap"] = (1 - math.tanh(2 / tau)) / n  # LPW Theorem 15.5
    if bracket is not None:
        cell.update(tmix=bracket.exact, lower=bracket.lower, upper=bracket.upper,
                    upper_estimate=bracket.upper_estimate, monotone=bracket.monotone)
    cell["seconds"] = time.perf_counter() - start
    return cell


def _steps(states: int) -> int:
    return next(steps for size, steps in BRACKET_STEPS if states <= size)


def _theorem5_scaled(small: ExactChain, n: int) -> dict:
    """Theorem 5 for the n-cycle from the 8-cycle's exact influence: each conditional sees its
    two neighbours only, so ``C`` is the same circulant band for every ``n >= 4``."""
    from glauber.theory.contraction import theorem5_tmix_bound

    C = small.influence_matrix()
    alpha = float(C.sum(axis=1).max())
    return {"alpha_row": alpha, "spectral_radius": alpha,
            "thm5_bound": theorem5_tmix_bound(n, alpha, EPS) if alpha < 1 else math.inf,
            "thm5_certificate": "row (circulant: row = col = spectral)"}


# ---------------------------------------------------------------------------------- fits
def _value(cell: dict) -> float | None:
    """Exact ``t_mix``, else the coupling's lower bound: the first ``t`` at which both extreme
    starts are within ``eps`` of ``pi`` (an exact property of those two starts, and a rigorous
    lower bound on ``t_mix``); None for spectral-only brackets."""
    if cell.get("tmix") is not None:
        return float(cell["tmix"])
    if cell.get("monotone") and cell.get("lower"):
        return float(cell["lower"])
    return None


def fits(cells: Sequence[dict]) -> dict:
    """``a`` of ``t ~ a n log n`` and ``(b, c)`` of ``log t ~ b + c n``, with RMS relative
    residuals (``{"points": k}`` alone with fewer than 3 points), over :func:`_value`."""
    pts = [(c["n"], _value(c)) for c in cells if _value(c) is not None]
    if len(pts) < 3:
        return {"points": len(pts)}
    n = np.array([p[0] for p in pts], dtype=float)
    t = np.array([p[1] for p in pts], dtype=float)
    x = n * np.log(n)
    a = float(x @ t / (x @ x))
    rel_nlogn = float(np.sqrt(np.mean((a * x / t - 1) ** 2)))
    c, b = np.polyfit(n, np.log(t), 1)
    rel_exp = float(np.sqrt(np.mean((np.exp(b + c * n) / t - 1) ** 2)))
    return {"points": len(pts), "a": a, "rel_nlogn": rel_nlogn, "b": float(b), "c": float(c),
            "rel_exp": rel_exp, "better": "n log n" if rel_nlogn <= rel_exp else "exp(c n)"}


# ------------------------------------------------------------------------------- output
def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, float) and math.isinf(v):
        return "∞"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def _tmix_text(c: dict) -> str:
    if c.get("tmix") is not None:
        return f"**{c['tmix']}**" + ("" if c["method"] == "exact" else " (bracket met)")
    up = (str(c["upper"]) if c.get("upper") is not None else
          f"{c['upper_estimate']}*" if c.get("upper_estimate") is not None else "?")
    return f"[{c['lower']}, {up}]"


def dichotomy_markdown(cells: Sequence[dict], figure: str | None, command: str) -> str:
    """The section of docs/results.md (below its heading) from ``cells``."""
    out = [f"Generated by `{command}` (do not edit by hand; data in `docs/data/dichotomy/`).",
           "Worst-start `t_mix(1/4)`: **bold** is exact (dense squaring); `[lo, hi]` is the "
           "rigorous bracket of `ExactChain.mixing_bracket` / `OrbitChain.mixing_bracket` "
           "(grand-coupling sandwich for ferromagnetic Ising, LPW 12.5 for all); `hi*` is the "
           "spectral upper bound with a Lanczos gap, an estimate. Thm 5: the corrected bound "
           "(best certificate on the exact influence matrix; ∞: no certificate). Thm 8: "
           "`e^{Δ*/τ}/(4q)` on the basin {all top token} (–: Assumption 1 fails or "
           "μ(B) > 1/2). Exact t_mix up to 1024 states; gaps above 1024 states are Lanczos "
           "values (error bound ~1e-10; the orbit chain's for "
           "Ising cycles, equal to LPW 15.5's closed form `(1 - tanh 2β)/n`).\n"]
    for family, (sizes, taus, roles) in FAMILIES.items():
        rows = [c for c in cells if c["family"] == family]
        if not rows:
            continue
        out.append(f"### {family}\n")
        table = []
        for n in sizes:
            line = [str(n), str(build_states(family, n))]
            for tau in taus:
                c = next((c for c in rows if c["n"] == n and c["tau"] == tau), None)
                line.append("–" if c is None else
                            f"{_tmix_text(c)} · {_fmt(c.get('gap'))} · "
                            f"{_fmt(c.get('thm5_bound'))} · {_fmt(c.get('thm8_lower'))}")
            table.append(line)
        out.append(markdown_table(
            ("n", "states", *(f"τ = {tau:g} ({role}): t_mix · gap · Thm 5 · Thm 8"
                              for tau, role in zip(taus, roles))),
            table).rstrip("\n"))
        fit_lines = []
        for tau in taus:
            f = fits([c for c in rows if c["tau"] == tau])
            if f["points"] >= 3:
                fit_lines.append(
                    f"τ = {tau:g} ({f['points']} points): t ≈ {f['a']:.3g} n log n (rms rel. "
                    f"residual {f['rel_nlogn']:.2f}); log t ≈ {f['b']:.2f} + {f['c']:.3f} n "
                    f"({f['rel_exp']:.2f}): **{f['better']}** fits better")
            else:
                fit_lines.append(f"τ = {tau:g}: too few exact or coupling values to fit")
        out.append("\nFits over n, on exact values and, where only a bracket exists, the "
                   "coupling's lower end (the extreme starts' exact crossing time; spectral-only "
                   "brackets are not fitted): " + "; ".join(fit_lines) + ".\n")
    have = {(c["family"], c["n"], c["tau"]) for c in cells}
    missing = [f"{f} n={n} τ={tau:g}" for f, (sizes, taus, _) in FAMILIES.items()
               for n in sizes for tau in taus if (f, n, tau) not in have]
    if missing:
        out.append(f"Not computed yet ({len(missing)} cells, –): {', '.join(missing)}; rerun "
                   "the command above to add them (it resumes).\n")
    if figure:
        out.append(f"![t_mix against n, with the Theorem 5 and Theorem 8 bounds]({figure})\n")
    out.append(_reading(cells))
    return "\n".join(out)


def _reading(cells: Sequence[dict]) -> str:
    slow = [c for c in cells if c["family"] == "ising-grid" and c["tau"] == 1.0]
    text = ("How to read it. On the cycle the corrected Theorem 5 certifies every temperature "
            "(α = tanh 2β < 1: one-dimensional Ising has no phase transition), and its bound "
            "stays within a small factor of t_mix at high temperature while the factor grows "
            "as the temperature falls. On the grid, past the threshold, no certificate exists, "
            "and at low temperature t_mix grows fastest with n (see the fits). Theorem 8's "
            "bound depends on n only through the "
            "margin Δ*, which is bounded on these graphs (2 deg J), so it stays flat while "
            "t_mix grows: it is far from tight here; it is the tool for margins that grow "
            "with n (the paper's MLM traps).")
    if slow:
        text += (" The grid's low-temperature brackets are wide: the coupling bound needs "
                 "the two extreme chains to meet, far beyond the step budget there, so the "
                 "upper end is the spectral estimate.")
    return text + "\n"


def build_states(family: str, n: int) -> int:
    """``q**n`` of a family."""
    return (3 if family == "potts-cycle" else 2) ** n


def draw(cells: Sequence[dict], path: Path) -> None:
    """``t_mix`` against ``n``, per family and temperature: exact values (filled circles), lower
    ends of brackets (open triangles) with a solid bar to a rigorous upper end or a thin bar to
    an estimated one; the Theorem 5 bound (dashed) and the Theorem 8 bound (dotted)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(FAMILIES), figsize=(5 * len(FAMILIES), 4.2))
    for ax, (family, (sizes, taus, _)) in zip(axes, FAMILIES.items()):
        for k, tau in enumerate(taus):
            colour = f"C{k}"
            rows = sorted((c for c in cells if c["family"] == family and c["tau"] == tau),
                          key=lambda c: c["n"])
            if not rows:
                continue
            ns = [c["n"] for c in rows]
            exact = [c.get("tmix") for c in rows]
            ax.plot(ns, [v if v is not None else np.nan for v in exact], "o-", color=colour,
                    label=f"τ = {tau:g}")
            for c in rows:
                if c.get("tmix") is not None:
                    continue
                ax.plot([c["n"]], [max(c["lower"], 1)], "^", color=colour, mfc="none")
                if c.get("upper") is not None:  # rigorous bracket: a solid bar
                    ax.plot([c["n"]] * 2, [max(c["lower"], 1), c["upper"]], "-", color=colour,
                            alpha=0.6, lw=3)
                elif c.get("upper_estimate") is not None:  # estimated upper end: a thin bar
                    ax.plot([c["n"]] * 2, [max(c["lower"], 1), c["upper_estimate"]], "-",
                            color=colour, alpha=0.4, lw=1)
            t5 = [c.get("thm5_bound") for c in rows]
            ax.plot(ns, [v if v is not None and math.isfinite(v) else np.nan for v in t5], "--",
                    color=colour, alpha=0.7)
            t8 = [c.get("thm8_lower") for c in rows]
            ax.plot(ns, [v if v else np.nan for v in t8], ":", color=colour, alpha=0.9)
        ax.set_yscale("log")
        ax.set_xlabel("n (sites)")
        ax.set_title(family)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("t_mix(1/4): o exact, ^ lower end | bracket; -- Thm 5, : Thm 8")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(out: Path, families: Sequence[str], log: Callable[[str], Any],
        max_states: int | None = None) -> list[dict]:
    """Run the missing cells of ``families`` into ``out/cells.json`` (each saved at once)."""
    path = out / "cells.json"
    cells = load_cells(path) if path.exists() else []
    done = {(c["family"], c["n"], c["tau"]) for c in cells}
    todo = sorted(((build_states(f, n), f, n, tau) for f in families
                   for n in FAMILIES[f][0] for tau in FAMILIES[f][1]
                   if (f, n, tau) not in done), key=lambda item: item[0])  # small chains first
    for states, family, n, tau in todo:
        if max_states is not None and states > max_states:
            continue
        cell = run_cell(family, n, tau)
        cells.append(cell)
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, jsonable({"cells": cells}))
        log(f"{family} n={n} tau={tau:g}: t_mix {_tmix_text(cell)}, gap "
            f"{_fmt(cell.get('gap'))} ({cell['seconds']:.0f} s)")
    return cells


def load_cells(path: Path) -> list[dict]:
    """The cells of a ``cells.json`` (``"inf"`` read back as infinity)."""
    import json

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [{k: float(v) if v in ("inf", "-inf") else v for k, v in c.items()} for c in cells]


def render(folder: Path) -> str:
    """The section of docs/results.md from ``folder/cells.json`` (its figure: :data:`FIGURE`)."""
    return dichotomy_markdown(load_cells(folder / "cells.json"), FIGURE, COMMAND)


def refresh(folder: Path, work: Path, log: Callable[[str], Any]) -> None:
    """Run the missing cells of every family into ``folder`` (``docs/data/dichotomy``; ``work``
    is not used) and draw the figure into ``docs/figures``."""
    cells = run(folder, list(FAMILIES), log)
    draw(cells, folder.parent.parent / FIGURE)


__all__ = ["COMMAND", "FAMILIES", "FIGURE", "build_model", "dichotomy_markdown", "draw", "fits",
           "load_cells", "refresh", "render", "run", "run_cell"]
