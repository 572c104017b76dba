"""Results on the real footing: real models resampling chosen sites of a full chain.

Two experiments (docs/results.md, "In context"):

* **rectangles by window length** (Proposition 4, the paper's §4 protocol): mean ``|delta|`` at
  ``tau = 1`` of AntiBERTy on windows of ``n`` contiguous residues of the shipped chains, for
  ``n`` from 12 to the whole chain, once *in context* (:func:`glauber.core.restrict.restrict` of
  the model of the whole chain to the window: the rest of the chain frozen, every forward sees
  the whole sequence) and once as a *framed fragment* (the model of length ``n`` on the window
  alone, ``[CLS] window [SEP]``, the protocol of the compare table). Both use the same contexts
  (8 windows drawn as :func:`glauber.experiments.common.context_states` draws them) and, per
  context, the same random rectangles (same seed; with ``q = 20`` the top-50 replacement set is
  every other token), so the two columns are paired.
* **exact window chains** (issue 9, item 2): the Glauber chain on 3 contiguous CDR3 sites of a
  shipped chain (``20^3 = 8000`` states), on AntiBERTy and on Sapiens (``sapiens-vh`` on a heavy
  chain, ``sapiens-vl`` on a light chain), on SCEPTR on 3 sites of the CDR3B of its example TCR
  (:data:`TCR_WINDOWS`), beside toy chains of the same size, at every
  temperature of a grid from one score table per window
  (:class:`~glauber.exact.ExactChain`; the table is kept under ``$GLAUBER_CACHE``): exact
  worst-start ``t_mix(1/4)``, absolute spectral gap, the exact influence summaries and the
  corrected Theorem 5 certificate (:func:`glauber.certify.exact.exact_values`), the stationary
  mode and its mass, and Theorem 8's escape bound on the best perfect trap.

``glauber results --rerun windows`` runs both (:func:`refresh`; each part is one JSON file under
``docs/data/windows``, written atomically; a rerun skips the parts already there) and renders the
section from them (:func:`render`).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from glauber.core.io import write_json_atomic
from glauber.core.restrict import SITE_NUMBERING, restrict
from glauber.errors import (
    ConvergenceError,
    GapBelowFloorError,
    GlauberError,
    InvalidParameterError,
    PrecisionError,
)
from glauber.exact.chain import ExactChain
from glauber.experiments import domains
from glauber.experiments.common import markdown_table
from glauber.theory.contraction import certify_contraction

#: Window lengths of the rectangle sweep (``"full"``: every residue of each shipped chain).
LENGTHS: tuple[int | str, ...] = (12, 20, 40, 80, "full")
#: Temperatures of the exact window table.
TAUS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
#: Target distance of ``t_mix``.
EPS = 0.25
#: Steps after which the exact ``t_mix`` of one start is given up (reported as ``> cap``); a
#: chain whose spectral lower bound already exceeds it is not stepped at all.
TMIX_CAP = 20
#: The command that refreshes the section (its data under ``docs/data/windows``).
COMMAND = "glauber results --rerun windows"

#: The exact windows: name -> (model, shipped chain, CDR3 motif, offset of the window in it).
#: Trastuzumab VH CDR3 ``SRWGGDGFYAMDY`` starts at position 97 (1-based, as ``--sites`` counts),
#: so ``GGD`` is positions 100-102; the VL CDR3 ``QQHYTTPPT`` starts at 89, so ``HYT`` is 91-93.
WINDOWS: dict[str, tuple[str, str, str, int]] = {
    "antiberty / trastuzumab VH": ("antiberty", "trastuzumab_vh", "SRWGGDGFYAMDY", 3),
    "antiberty / trastuzumab VL": ("antiberty", "trastuzumab_vl", "QQHYTTPPT", 2),
    "sapiens-vh / trastuzumab VH": ("sapiens-vh", "trastuzumab_vh", "SRWGGDGFYAMDY", 3),
    "sapiens-vl / trastuzumab VL": ("sapiens-vl", "trastuzumab_vl", "QQHYTTPPT", 2),
}
#: The exact windows of the reaction models: name -> model, on :data:`domains.REACTION_SITES`
#: of the shipped reaction over a 22-token alphabet (:func:`domains.reaction_window`).
REACTION_WINDOWS: dict[str, str] = {
    "rxnmapper / reaction": "rxnmapper",
    "rxnfp / reaction": "rxnfp",
}
#: The exact windows of SCEPTR on its example TCR: name -> (model, context, 1-based sites), as
#: ``glauber certify --model M --context C --sites S`` takes them (positions 50-52 are residues
#: 7-9 of the CDR3B ``CASSEFQGDNEQFF``, which holds positions 44-57 of the 57).
TCR_WINDOWS: dict[str, tuple[str, str, str]] = {
    "sceptr / sceptr-example": ("sceptr", "sceptr-example", "50-52"),
}
#: Toy chains of the same size (8000 states; the Ising cycle has 2^13 = 8192).
TOYS = (
    "potts-cycle:n=3,q=20,J=1.0",
    "random-table:n=3,q=20,seed=0,scale=1.0",
    "planted:n=3,q=20,token=0,strength=4.0,seed=0,scale=1.0",
    "ising-cycle:n=13,J=1.0,h=0.0",
)


# ------------------------------------------------------------------------------------ models
def load_mlm(name: str, n: int) -> Any:
    """AntiBERTy or Sapiens (``sapiens-vh``/``sapiens-vl``) of length ``n`` on the CPU."""
    from glauber.mlm_backend import load_model

    return load_model(name, n=n)


def window_sites(chain: str, motif: str, offset: int, k: int = 3) -> list[int]:
    """``k`` contiguous 0-based sites of ``chain`` starting ``offset`` residues into ``motif``."""
    from glauber.mlm_backend.sequences import ANTIBODY_SEQUENCES

    start = ANTIBODY_SEQUENCES[chain].index(motif) + offset
    return list(range(start, start + k))


# ------------------------------------------------------------------------------- rectangles
def _contexts(length: int, count: int, seed: int) -> list[tuple[str, int]]:
    """``(chain, start)`` of ``count`` windows of ``length`` residues, drawn exactly as
    :func:`glauber.experiments.common.context_states` draws them (same seed, same windows)."""
    from glauber.mlm_backend.sequences import ANTIBODY_SEQUENCES

    rng = np.random.default_rng(seed)
    windows = [(name, k) for name, seq in ANTIBODY_SEQUENCES.items()
               for k in range(0, len(seq) - length + 1)]
    pick = rng.choice(len(windows), size=count, replace=count > len(windows))
    return [windows[p] for p in pick]


def _split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if p < total % parts else 0) for p in range(parts)]


def _summary(deltas: np.ndarray, above: np.ndarray) -> dict:
    a = np.abs(deltas)
    return {"mean_abs_delta": float(a.mean()), "sd_abs_delta": float(a.std(ddof=1)),
            "median_abs_delta": float(np.median(a)), "max_abs_delta": float(a.max()),
            "n_above_bound": int(above.sum()), "n_rectangles": int(a.size)}


def rectangle_row(model_name: str, length: int | str, contexts: int = 8, rectangles: int = 300,
                  seed: int = 0) -> dict:
    """Mean ``|delta|`` at ``tau = 1`` on windows of ``length`` residues, in context and as
    framed fragments, over the same contexts and (per context) the same rectangles.

    ``length = "full"`` takes each shipped chain whole (``rectangles`` split over the chains);
    a window of every site in context *is* the framed whole chain, so the two columns agree.
    """
    from glauber.estimators import rectangle_test
    from glauber.mlm_backend.sequences import ANTIBODY_SEQUENCES

    if length == "full":
        picks = [(name, 0, len(seq)) for name, seq in ANTIBODY_SEQUENCES.items()]
    else:
        picks = [(name, k, int(length)) for name, k in _contexts(int(length), contexts, seed)]
    counts = _split(rectangles, len(picks))
    full_models: dict[int, Any] = {}
    out: dict[str, list] = {"context": [], "fragment": []}
    started = time.perf_counter()
    for c, ((name, start, n), count) in enumerate(zip(picks, counts)):
        seq = ANTIBODY_SEQUENCES[name]
        for N in (len(seq), n):
            if N not in full_models:
                full_models[N] = load_mlm(model_name, N)
        fragment = full_models[n]
        frag_state = np.asarray(fragment.encode(seq[start:start + n]), dtype=np.int64)[None]
        whole = full_models[len(seq)]
        window = restrict(whole, np.asarray(whole.encode(seq), dtype=np.int64),
                          list(range(start, start + n)))
        for key, model, states in (("fragment", fragment, frag_state),
                                   ("context", window, window.default_states())):
            if key == "context" and n == len(seq):
                out[key].append(out["fragment"][-1])  # every site of the chain: the same chain
                continue
            r = rectangle_test(model, states, 1.0, count, "topk", 50, seed + c)
            out[key].append((r.rectangles.delta, r.rectangles.above_bound))
    row = {"length": length, "model": model_name,
           "contexts": [{"chain": name, "start": start, "n": n} for name, start, n in picks],
           "seconds": time.perf_counter() - started}
    for key, parts in out.items():
        row[key] = _summary(np.concatenate([d for d, _ in parts]),
                            np.concatenate([a for _, a in parts]))
    paired = np.abs(np.concatenate([d for d, _ in out["context"]])) - np.abs(
        np.concatenate([d for d, _ in out["fragment"]]))
    row["paired_mean_difference"] = float(paired.mean())
    return row


# ------------------------------------------------------------------------------ exact chains
def capped_tmix(chain: ExactChain, eps: float = EPS, cap: int = TMIX_CAP) -> int | None:
    """Exact worst-start ``t_mix(eps)``: by squaring the chain's factor where it has one
    (:attr:`~glauber.exact.ExactChain.factored`: any ``t``, no cap), else by stepping
    every start's point mass, None when a start needs more than ``cap`` steps (so a slow
    chain costs at most ``cap`` steps)."""
    method = "auto" if chain.factored else "stepping"
    try:
        return int(chain.mixing_time(eps, method=method, max_steps=cap))
    except ConvergenceError:
        return None


def spectral_lower_bound(gap: float, eps: float = EPS) -> int:
    """``t_mix(eps)`` from below by the absolute gap (reversible or not):
    :func:`glauber.certify.exact.spectral_tmix_lower_bound`."""
    from glauber.certify.exact import spectral_tmix_lower_bound

    return spectral_tmix_lower_bound(gap, eps)


def _decode(model: Any, state: Sequence[int] | None) -> str | None:
    """A state as its tokens: ``"GGD"`` when every label is one character, else spaced."""
    if state is None:
        return None
    labels = tuple(getattr(model, "labels", None) or (str(a) for a in range(model.q)))
    sep = "" if all(len(label) == 1 for label in labels) else " "
    return sep.join(labels[int(v)] for v in state)


def exact_rows(model: Any, taus: Sequence[float] = TAUS, cap: int = TMIX_CAP,
               progress: Callable[[str], Any] | None = None) -> tuple[list[dict], dict]:
    """One row per temperature of the exact chain of ``model`` (one score table for all).

    Returns the rows and the timings (``build_seconds`` of the score table, ``seconds`` per
    temperature in each row).
    """
    started = time.perf_counter()
    base = ExactChain(model, taus[0])
    table = base.scores()
    timing = {"build_seconds": time.perf_counter() - started,
              "score_spread": float(np.median(table.max(axis=2) - table.min(axis=2)))}
    rows = []
    for tau in taus:
        t0 = time.perf_counter()
        chain = base.at(tau)
        try:
            gap: float | None = chain.absolute_spectral_gap()
            lower = spectral_lower_bound(gap)
        except GapBelowFloorError as exc:  # proved below the eigensolver's floor
            gap, lower = None, spectral_lower_bound(exc.gap_upper)
        except PrecisionError:  # no gap (e.g. the stationary law underflows): no spectral bound
            gap, lower = None, None
        tmix, stepped = None, False
        if lower is None or lower <= cap or chain.factored:
            try:
                tmix, stepped = capped_tmix(chain, EPS, cap), True
            except GlauberError:  # the stationary law itself is unavailable
                pass
        if tmix is None and stepped:
            lower = cap + 1  # some start needs more than cap steps
        row = _exact_row(model, chain)
        row.update(tau=tau, tmix=tmix, tmix_cap=cap, tmix_lower_bound=lower, absolute_gap=gap,
                   seconds=time.perf_counter() - t0)
        rows.append(row)
        if progress is not None:
            progress(f"tau={tau:g} t_mix={tmix} (>= {lower}) ({row['seconds']:.0f} s)")
    return rows, timing


def _exact_row(model: Any, chain: ExactChain) -> dict:
    """The columns of :func:`glauber.certify.exact.exact_values` (t_mix and gap set apart)."""
    from glauber.certify.exact import exact_values

    values = exact_values(_NoTmix(chain), EPS)
    return {
        **_certificate(chain), "num_states": values.num_states, "reversible": values.reversible,
        "mode_state": _decode(model, values.mode_state),
        "max_stationary_mass": values.max_stationary_mass,
        "perfect_traps": values.perfect_traps,
        "best_trap_index": values.best_trap_state,
        "best_trap_state": _decode(model, values.best_trap_state),
        "best_trap_delta_star": values.best_trap_delta_star,
        "best_trap_escape_bound": values.best_trap_escape_bound,
        "best_trap_exact_escape": values.best_trap_exact_escape,
        "best_trap_mass": None if values.best_trap_log_mass is None
        else math.exp(values.best_trap_log_mass),
        "rectangles_mean_abs_delta": values.rectangles.mean_abs_delta,
        "rectangles_max_abs_delta": values.rectangles.max_abs_delta,
        "notes": [n for n in values.notes if not n.startswith(("t_mix", "spectral gap"))],
    }


def _certificate(chain: ExactChain) -> dict:
    c = certify_contraction(chain.influence_matrix(), EPS)
    return {"alpha_row": c.alpha_row, "alpha_col": c.alpha_col,
            "spectral_radius": c.spectral_radius, "certificate": c.best,
            "certificate_bound": None if c.best == "none" else float(c.best_bound)}


class _NoTmix:
    """``chain`` whose :meth:`mixing_time` is left to :func:`capped_tmix` (exact_values then
    reports it missing); every other attribute is the chain's."""

    def __init__(self, chain: ExactChain) -> None:
        self._chain = chain

    def __getattr__(self, name: str) -> Any:
        return getattr(self._chain, name)

    def mixing_time(self, *args: Any, **kw: Any) -> int:
        raise ConvergenceError("t_mix is computed by capped_tmix")


def exact_window(label: str, taus: Sequence[float] = TAUS, cap: int = TMIX_CAP,
                 progress: Callable[[str], Any] | None = None) -> dict:
    """The exact chain of a window of :data:`WINDOWS` (or a toy of :data:`TOYS`) over ``taus``."""
    from glauber.mlm_backend.sequences import ANTIBODY_SEQUENCES

    model = chain_model(label)
    if label in TCR_WINDOWS:
        model_name, context, _ = TCR_WINDOWS[label]
        sites = [int(s) for s in model.sites]
        meta = {"kind": "mlm", "model": model_name, "chain": context, "sites": sites,
                "positions": [s + 1 for s in sites], "site_numbering": SITE_NUMBERING,
                "window": _decode(model, model.default_states()[0]),
                "chain_length": len(model.context)}
    elif label in REACTION_WINDOWS:
        sites = [int(s) for s in model.sites]
        meta = {"kind": "mlm", "model": REACTION_WINDOWS[label], "chain": "reaction",
                "sites": sites, "positions": [s + 1 for s in sites],
                "site_numbering": SITE_NUMBERING,
                "window": _decode(model, model.default_states()[0]),
                "chain_length": len(model.context), "alphabet": list(model.labels),
                "alphabet_mass": domains.alphabet_mass(REACTION_WINDOWS[label], model)}
    elif label in WINDOWS:
        model_name, chain, _, _ = WINDOWS[label]
        seq, sites = ANTIBODY_SEQUENCES[chain], [int(s) for s in model.sites]
        meta = {"kind": "mlm", "model": model_name, "chain": chain, "sites": sites,
                "positions": [s + 1 for s in sites], "site_numbering": SITE_NUMBERING,
                "window": seq[sites[0]:sites[-1] + 1], "chain_length": len(seq)}
    else:
        meta = {"kind": "toy", "model": label}
    rows, timing = exact_rows(model, taus, cap, progress)
    return {"label": label, **meta, **timing, "rows": rows}


def chain_model(label: str) -> Any:
    """The model of a window of :data:`WINDOWS`, :data:`TCR_WINDOWS` or
    :data:`REACTION_WINDOWS` (restricted to its sites) or a toy."""
    from glauber.mlm_backend.sequences import ANTIBODY_SEQUENCES

    if label in TCR_WINDOWS:
        from glauber.models import resolve_model

        model_name, context, sites = TCR_WINDOWS[label]
        return resolve_model(f"{model_name}@{context}[{sites}]")
    if label in REACTION_WINDOWS:
        return domains.reaction_window(REACTION_WINDOWS[label])
    if label not in WINDOWS:
        from glauber.models import resolve_model

        return resolve_model(label)
    model_name, chain, motif, offset = WINDOWS[label]
    seq = ANTIBODY_SEQUENCES[chain]
    whole = load_mlm(model_name, len(seq))
    return restrict(whole, np.asarray(whole.encode(seq), dtype=np.int64),
                    window_sites(chain, motif, offset))


def refine_tmix(path: Path, cap: int, log: Callable[[str], Any]) -> None:
    """Step again, up to ``cap`` steps, the rows of ``path`` (``exact.json``) whose t_mix is
    open and whose lower bound is at most ``cap`` (cheapest first); each row is saved at once."""
    data = _load(path)
    todo = sorted(((r["tmix_lower_bound"], res["label"], r) for res in data["results"]
                   for r in res["rows"] if r["tmix"] is None and r["tmix_lower_bound"]
                   is not None and r["tmix_cap"] < cap and r["tmix_lower_bound"] <= cap),
                  key=lambda item: item[0])
    for lower, label, row in todo:
        log(f"refine {label} tau = {row['tau']:g} (t_mix >= {lower}, cap {cap})")
        t0 = time.perf_counter()
        chain = ExactChain(chain_model(label), row["tau"])
        tmix = capped_tmix(chain, EPS, cap)
        row.update(tmix=tmix, tmix_cap=cap, tmix_lower_bound=cap + 1 if tmix is None else lower,
                   tmix_seconds=time.perf_counter() - t0)
        log(f"  t_mix = {tmix} ({row['tmix_seconds']:.0f} s)")
        write_json_atomic(path, data)


# ------------------------------------------------------------------------------- rendering
def _g(v: Any, digits: int = 3) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        if math.isinf(v):
            return "∞"
        return f"{v:.{digits}g}"
    return str(v)


def rectangle_markdown(rows: Sequence[dict]) -> str:
    """The side-by-side table of mean ``|delta|`` by window length."""
    cells = []
    for r in rows:
        c, f = r["context"], r["fragment"]
        n = "full chain (107–120)" if r["length"] == "full" else str(r["length"])
        cells.append((n, f"{c['mean_abs_delta']:.3g} ± {c['sd_abs_delta']:.2g}",
                      f"{c['max_abs_delta']:.3g}", c["n_above_bound"],
                      f"{f['mean_abs_delta']:.3g} ± {f['sd_abs_delta']:.2g}",
                      f"{f['max_abs_delta']:.3g}", f["n_above_bound"],
                      f"{r['paired_mean_difference']:+.3g}", c["n_rectangles"]))
    return markdown_table(("window length n", "in context: mean \\|δ\\| ± sd", "max",
                           "above bound", "framed fragment: mean \\|δ\\| ± sd", "max",
                           "above bound", "paired mean (context − fragment)", "rectangles"),
                          cells)


#: The footnote of a temperature whose stationary law underflows float64 (exact_values' notes).
_UNDERFLOW = (
    "μ has entries below 1e-200, which float64 solves on 8000 states may lose, so its "
    "log-accurate form is not available: max μ with its state, the traps' masses and t_mix (a "
    "total-variation distance) come from the float64 law, which is normwise accurate; "
    "reversibility is left undecided"
)
#: Notes of :func:`glauber.certify.exact.exact_values` that the footnote above stands for.
_UNDERFLOW_NOTES = ("UnderflowError", "log-accurate stationary law", "stationary masses come",
                    "reversibility")


def exact_markdown(results: Sequence[dict], cap: int = TMIX_CAP) -> str:
    """One table of every exact chain at every temperature."""
    cells = []
    notes = []
    for res in results:
        name = res["label"] if res["kind"] == "toy" else (
            f"{res['label']} {_positions(res)} ({res['window']})")
        for r in res["rows"]:
            tau = f"{r['tau']:g}"
            if r["notes"]:
                text = "; ".join(dict.fromkeys(
                    _UNDERFLOW if n.startswith(_UNDERFLOW_NOTES) else n for n in r["notes"]))
                if text not in notes:
                    notes.append(text)
                tau += f" [{notes.index(text) + 1}]"
            tmix = str(r["tmix"]) if r["tmix"] is not None else (
                "—" if r["tmix_lower_bound"] is None else f"≥ {r['tmix_lower_bound']:.3g}")
            if r["tmix_cap"] != cap:
                tmix += f" (cap {r['tmix_cap']})"
            bound = "none" if r["certificate"] == "none" else (
                f"{r['certificate_bound']:.3g} ({r['certificate']})")
            trap = "—" if r["best_trap_state"] is None else (
                f"{r['best_trap_state']}: {r['best_trap_delta_star']:.3g}, "
                f"{_g(r['best_trap_escape_bound'])} ({_g(r['best_trap_exact_escape'])})")
            cells.append((name, tau, tmix, _g(r["absolute_gap"]), _g(r["alpha_row"]),
                          _g(r["alpha_col"]), _g(r["spectral_radius"]), bound,
                          f"{_g(r['max_stationary_mass'])} ({r['mode_state']})",
                          r["perfect_traps"], trap, _g(r["rectangles_mean_abs_delta"])))
    table = markdown_table(("chain", "tau", "t_mix(1/4)", "gap γ*", "α row", "α col", "ρ(C)",
                            "Thm 5 bound", "max μ (state)", "perfect traps",
                            "best trap: Δ*, escape bound (exact)", "exact mean \\|δ\\|"), cells)
    return table + "".join(f"\n[{k}] {note}\n" for k, note in enumerate(notes, 1))


def _positions(res: dict) -> str:
    """A window's positions as a person reads them, 1-based as ``--sites`` takes them
    (``100–102``); data written before the ``positions`` field hold the 0-based ``sites``."""
    pos = res.get("positions") or [s + 1 for s in res["sites"]]
    return f"{pos[0]}–{pos[-1]}"


def _exact_summary(results: Sequence[dict]) -> str:
    """One sentence per chain: t_mix at tau = 1 and the first temperature certified."""
    parts = []
    for res in results:
        rows = {r["tau"]: r for r in res["rows"]}
        one = rows.get(1.0)
        certified = [t for t, r in sorted(rows.items()) if r["certificate"] != "none"]
        if one is None:
            continue
        tmix = f"= {one['tmix']}" if one["tmix"] is not None else (
            f"≥ {one['tmix_lower_bound']}")
        first = "at no temperature of the grid" if not certified else (
            "at every temperature of the grid" if len(certified) == len(rows) else
            f"from tau = {certified[0]:g}")
        parts.append(f"{res['label']}: t_mix(1/4) {tmix} at tau = 1, max μ "
                     f"{_g(one['max_stationary_mass'])}; Theorem 5 certifies {first}")
    return ("**Summary.** " + "; ".join(parts) + ".\n") if parts else ""


def render(folder: Path) -> str:
    """The section of docs/results.md (below its heading) from the JSON in ``folder``: the
    command, the headline, the rectangle sweep and the exact window table."""
    rect = _load(folder / "rectangles.json")
    exact = _load(folder / "exact.json")
    whole = _load(folder / "domains.json")
    parts = [f"```\n{COMMAND}\n```\n"]
    if rect:
        rows = rect["rows"]
        by = {r["length"]: r for r in rows}
        short = by.get(12)
        full = by.get("full")
        if short and full:
            parts.append(
                f"**Incompatibility in context (headline).** AntiBERTy resampling a window of 12 "
                f"residues inside its chain (the rest frozen, the model sees the whole "
                f"sequence) gives mean |δ| = {short['context']['mean_abs_delta']:.2f} at tau = 1 "
                f"({short['context']['n_above_bound']} of "
                f"{short['context']['n_rectangles']} rectangles above their rounding bound); "
                f"the same 12 residues framed as a whole sequence give "
                f"{short['fragment']['mean_abs_delta']:.2f}. On whole chains (every site "
                f"resampled) it is {full['context']['mean_abs_delta']:.2f}. The compare table "
                "below (Runs) measures framed 12-residue fragments.\n")
        parts += [
            "### Rectangle statistic against window length (AntiBERTy, tau = 1)\n",
            "Same contexts in both columns (8 windows of n residues drawn from the four "
            "shipped chains as the compare table draws them; the full chains at n = full) and, "
            "per context, the same rectangles (same seed): *in context* is `restrict(model of "
            "the whole chain, chain, sites = the window)`, *framed fragment* is the model of "
            "length n on the window alone (`[CLS] window [SEP]`), as in the compare table. "
            "Above bound: rectangles whose |δ| exceeds their own rounding bound. Rectangles are "
            "drawn per context (rectangles / 8 each), not across the contexts as in the compare "
            "table, so at n = 12 the fragment column differs from it by sampling error "
            "(sd / √rectangles ≈ 0.1).\n",
            rectangle_markdown(rows),
            "\nTimes: " + ", ".join(f"n = {r['length']}: {r['seconds']:.0f} s" for r in rows)
            + ".\n"]
    if whole:
        parts += [
            "### Rectangle test on whole sequences: antibodies, a TCR and reaction SMILES "
            "(tau = 1)\n",
            "The paper's protocol on the whole sequence, every site free: rectangles drawn "
            f"uniformly (a state, two sites), replacements uniformly among the model's own top "
            f"{domains.TOPK} predictions at each site (every other token for 20 amino acids, "
            f"a real choice among 576 SMILES tokens), {domains.RECTANGLES} rectangles, seed 0 "
            "(`glauber.experiments.domains.rectangle_entry`). The TCR is SCEPTR's example "
            "(`--context sceptr-example`: 57 residues, the six CDR loops "
            "CDR1A/CDR2A/CDR3A/CDR1B/CDR2B/CDR3B of a paired alpha-beta receptor), read by "
            "SCEPTR's MLM-only variant (`sceptr`: 3 layers, width 64). The reaction is the "
            "example of "
            "rxnmapper's README (54 tokens: `--context reaction`); rxnmapper is an ALBERT "
            "(one layer shared 12 times), rxnfp a BERT, both trained on USPTO reactions. "
            "Above rounding bound: rectangles whose |δ| exceeds their own float rounding "
            "bound.\n",
            domains.rectangles_markdown(
                whole, None if not rect else next(
                    (r["context"]["mean_abs_delta"] for r in rect["rows"]
                     if r["length"] == "full"), None))]
    if exact:
        parts += [
            "### Exact window chains beside toys of the same size\n",
            "Three contiguous CDR3 sites of a shipped chain (positions counted from 1, as "
            "`--sites` takes them; 20^3 = 8000 states; for SCEPTR three sites of the CDR3B of "
            "its example TCR, positions 44–57 of 57), every other "
            "site frozen, each model on its own chain type; toys with 8000 states (the Ising "
            f"cycle 8192). All values exact for the window chain: t_mix(1/4) worst start, "
            "computed by repeated squaring of the window's factor M = BA (1,200 classes (site, "
            "other two tokens) for 8,000 states, P^t = A M^(t−1) B; glauber.exact.factored) "
            "at any t, and for chains without a useful factor (the Ising cycle) by stepping "
            f"every start while it takes at most {exact['cap']} steps; beyond, "
            "`≥ L` is a lower bound: the spectral one, t_mix(1/4) ≥ log 2 / log(1/(1 − γ*)) "
            "(d(t) ≥ |λ|^t/2 for every eigenvalue λ ≠ 1, reversible or not; where Lanczos proves "
            "γ* below its floor 1e-9, from that proved upper bound on γ*), or "
            f"the cap + 1 when stepping to the cap ({exact['cap']} steps, or as marked) showed a "
            "start still farther than 1/4. Absolute "
            "spectral gap γ* (— where none is available: below the eigensolver's floor, or a "
            "stationary law that underflows in float64), α and ρ(C) from "
            "the exact influence matrix, the tightest corrected Theorem 5 bound on t_mix "
            "(none when every summary is ≥ 1), the mode of μ_tau and its mass, the perfect "
            "trap (every site its strict argmax) of largest margin Δ* with Theorem 8's bound "
            "q e^(−Δ*/tau) on its one-step escape probability and the exact one, and the mean "
            "|δ| over every rectangle.\n",
            *_reaction_note(exact["results"]),
            _exact_summary(exact["results"]),
            tcr_exact_sentence(exact["results"]),
            exact_markdown(exact["results"], exact["cap"]),
            "\nScore-table builds (one per chain, shared by the six temperatures): "
            + ", ".join(f"{r['label']} " + (
                f"{r['build_seconds']:.2g} s" if r["build_seconds"] >= 1 or r["kind"] == "toy"
                else "read from the disk cache of an earlier run") for r in exact["results"])
            + ". Median score spread max − min per conditional: "
            + ", ".join(f"{r['label']} {r['score_spread']:.3g}" for r in exact["results"])
            + ".\n"]
        if exact.get("missing"):
            parts.append("Missing: " + "; ".join(exact["missing"]) + "\n")
    return "\n".join(parts)


def _reaction_note(results: Sequence[dict]) -> list[str]:
    """The paragraph that says what a reaction window's exact chain is (empty without one)."""
    chem = [r for r in results if r.get("chain") == "reaction"]
    if not chem:
        return []
    q = len(chem[0]["alphabet"])
    mass = "; ".join(f"{r['model']} " + ", ".join(f"{m:.3f}" for m in r["alphabet_mass"])
                     for r in chem)
    return [
        f"**Reaction windows** ({', '.join(r['model'] for r in chem)}): positions "
        f"{_positions(chem[0])} ({chem[0]['window']}: the product's thioether sulfur, the ring "
        f"carbon it bonds to and its ring closure) of the {chem[0]['chain_length']}-token "
        f"reaction. Over the full 576-token vocabulary 3 sites hold 576^3 ≈ 1.9e8 states and "
        "even 2 sites 331,776, so the exact object is another chain: each step picks one of "
        "the 3 sites uniformly and resamples it from the model's conditional renormalised on "
        f"an alphabet A of {q} tokens, softmax(s_i(a; x_−i) / tau) over a ∈ A "
        "(`HFMaskedLM(allowed_tokens=A)`): the Glauber chain of that truncated conditional, "
        f"{q}^3 = {q ** 3:,} states from a score table of {3 * q * q:,} rows. A is the 20 "
        "first ordinary tokens of the models' vocab.txt (by their order, the most frequent: "
        f"{' '.join(chem[0]['alphabet'][:20])}) and the reaction's tokens outside them "
        f"({' '.join(chem[0]['alphabet'][20:])}), so the frozen rest of the reaction is a "
        "state. Mass of the full conditional on A at the three sites in the reaction, tau = 1: "
        f"{mass} (what the truncation leaves out at the start; the chain's other states are "
        "not checked).\n"]


def tcr_exact_sentence(results: Sequence[dict], taus: Sequence[float] = (0.25, 1.0)) -> str:
    """SCEPTR's exact CDR3B window beside the antibody and reaction windows (empty without
    it): its exact ``t_mix(1/4)`` at each of ``taus`` placed among theirs
    (:func:`domains.place`), and the temperature from which Theorem 5 certifies each."""
    tcr = [r for r in results if r["label"] in TCR_WINDOWS]
    if not tcr:
        return ""
    others = [r for r in results if r["label"] in WINDOWS or r["label"] in REACTION_WINDOWS]
    parts = []
    for tau in taus:
        mine = next((row for row in tcr[0]["rows"] if row["tau"] == tau), None)
        if mine is None or mine["tmix"] is None:
            continue
        theirs = {r["label"]: float(row["tmix"]) for r in others for row in r["rows"]
                  if row["tau"] == tau and row["tmix"] is not None}
        parts.append(f"{mine['tmix']} steps at tau = {tau:g}"
                     + (f" ({domains.place(float(mine['tmix']), theirs)} of the antibody and "
                        "reaction windows)" if theirs else ""))
    if not parts:
        return ""

    def first(res: dict) -> float | None:
        done = [row["tau"] for row in sorted(res["rows"], key=lambda row: row["tau"])
                if row["certificate"] != "none"]
        return done[0] if done else None

    from_tau = first(tcr[0])
    certified = {r["label"]: first(r) for r in others}
    same = sorted(k for k, v in certified.items() if v is not None and v == from_tau)
    return (f"**SCEPTR's CDR3B window** ({tcr[0]['window']}) mixes in t_mix(1/4) = "
            + "; ".join(parts)
            + ("" if from_tau is None else
               f"; Theorem 5 certifies it from tau = {from_tau:g}"
               + (f", as {', '.join(same)}" if same else ", as no other window of the table"))
            + ".\n")


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


# ---------------------------------------------------------------------------------- driver
def run(out: Path, parts: Sequence[str], lengths: Sequence[int | str], taus: Sequence[float],
        cap: int, log: Callable[[str], Any], rectangles: int = 300,
        refine_cap: int = 150) -> None:
    """Run the parts (``rectangles``, ``windows``, ``tcr``: :data:`TCR_WINDOWS`,
    ``reactions``: :data:`REACTION_WINDOWS`,
    ``toys``, ``domains``: the whole-sequence rectangle tests of :mod:`domains`, ``refine``:
    :func:`refine_tmix` with ``refine_cap``) into ``out`` in the order given;
    every finished item is saved at once, and a rerun skips it."""
    out.mkdir(parents=True, exist_ok=True)
    for part in parts:
        if part == "rectangles":
            _run_rectangles(out / "rectangles.json", lengths, rectangles, log)
        elif part == "refine":
            refine_tmix(out / "exact.json", refine_cap, log)
        elif part in _EXACT_PARTS:
            _run_exact(out / "exact.json", list(_EXACT_PARTS[part]), taus, cap, log)
        elif part == "domains":
            path = out / "domains.json"
            domains.run_rectangles(_load(path), lambda data: write_json_atomic(path, data), log)
        else:
            raise InvalidParameterError(
                f"unknown part {part!r}; use rectangles, windows, tcr, reactions, toys, "
                "domains, refine")


#: The parts of :func:`run` that compute exact chains, and their labels.
_EXACT_PARTS = {"windows": WINDOWS, "tcr": TCR_WINDOWS, "reactions": REACTION_WINDOWS,
                "toys": TOYS}


def _run_rectangles(path: Path, lengths: Sequence[int | str], rectangles: int,
                    log: Callable[[str], Any]) -> None:
    done = {str(r["length"]): r for r in (_load(path) or {"rows": []})["rows"]}
    for length in lengths:
        if str(length) in done:
            continue
        log(f"rectangles n = {length}")
        row = done[str(length)] = rectangle_row("antiberty", length, rectangles=rectangles)
        log(f"  context {row['context']['mean_abs_delta']:.3g}, fragment "
            f"{row['fragment']['mean_abs_delta']:.3g} ({row['seconds']:.0f} s)")
        order = [str(k) for k in LENGTHS if str(k) in done] + [
            k for k in done if k not in {str(v) for v in LENGTHS}]
        write_json_atomic(path, {"rows": [done[k] for k in order]})


def _run_exact(path: Path, labels: Sequence[str], taus: Sequence[float], cap: int,
               log: Callable[[str], Any]) -> None:
    data = _load(path) or {"results": [], "missing": []}
    data.update(cap=cap, taus=list(taus))
    data["missing"] = [m for m in data["missing"] if m.split(":")[0] not in labels]
    have = {r["label"] for r in data["results"]}
    for label in labels:
        if label in have:
            continue
        log(f"exact {label}")
        try:
            res = exact_window(label, taus, cap, lambda s: log("  " + s))
        except Exception as exc:  # a real model that cannot load (e.g. Sapiens not fetched)
            if label not in WINDOWS and label not in REACTION_WINDOWS and (
                    label not in TCR_WINDOWS):
                raise
            data["missing"].append(f"{label}: {type(exc).__name__}: {exc}")
            log(f"  missing: {exc}")
            continue
        data["results"].append(res)
        order = [*WINDOWS, *TCR_WINDOWS, *REACTION_WINDOWS, *TOYS]
        data["results"].sort(key=lambda r: order.index(r["label"]))
        write_json_atomic(path, data)


def refresh(folder: Path, work: Path, log: Callable[[str], Any]) -> None:
    """Run every part of :func:`run` with its defaults into ``folder`` (``work`` is not used:
    the parts' JSON is the data itself, and the score tables are cached under
    ``$GLAUBER_CACHE``)."""
    run(folder, ("windows", "rectangles", "toys", "tcr", "reactions", "domains", "refine"),
        LENGTHS, TAUS, TMIX_CAP, log)


__all__ = ["COMMAND", "LENGTHS", "REACTION_WINDOWS", "TAUS", "TCR_WINDOWS", "TOYS", "WINDOWS",
           "capped_tmix", "chain_model",
           "exact_markdown", "exact_rows", "exact_window", "rectangle_markdown", "rectangle_row",
           "refine_tmix", "refresh", "render", "run", "spectral_lower_bound",
           "tcr_exact_sentence", "window_sites"]
