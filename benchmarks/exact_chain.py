"""Exact chains: t_mix by repeated squaring vs step iteration, stationary solvers, largest chain.

Three measurements, each against a baseline timed in the same run:

(a) worst-start ``t_mix(eps)`` by repeated squaring and bisection
    (:func:`glauber.exact.mixing.mixing_time`, about ``2 log2 t_mix`` dense products)
    against step iteration (``D <- D P`` from ``D = I`` until ``max_x ||D(x, .) - pi||_TV <= eps``,
    ``t_mix`` products), on slow chains with ``t_mix`` in ``1e5..1e6`` and on a fast chain;
(b) the stationary distribution of an Ising model on a 3 x 4 grid (``2^12`` states) by GTH and by
    the sparse direct solve, with the residual ``||pi P - pi||_1`` and the largest relative error
    against the exact Gibbs law computed in log space;
(c) the largest chain ``ExactChain`` takes through transition matrix, stationary law and
    ``t_mix`` in a time budget;
(d) sparse point-mass stepping (:mod:`glauber.exact.stepping`) against repeated squaring on
    fast chains, where stepping should win, and the ``"auto"`` choice between them;
(e) the torch float64 backends (dense squaring and sparse stepping) on a device, against the
    numpy backend (``--parts torch_mixing``; the GPU script runs it on CUDA).

Run ``python benchmarks/exact_chain.py`` (``--help`` for options).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import networkx as nx
import numpy as np
from scipy.special import logsumexp

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.measure import clock, machine_info
from benchmarks.report import publish, row
from glauber.errors import GlauberError
from glauber.exact import ExactChain
from glauber.exact.stationary import stationary_distribution
from glauber.toy_models import CurieWeissLumpedChain, IsingModel

#: Target of (a): repeated squaring at least this many times faster on the slow chains.
SLOW_SPEEDUP_TARGET = 100.0
#: Target of (b): a stationary solve at 2^12 states within this many seconds.
STATIONARY_SECONDS_TARGET = 30.0


# --------------------------------------------------------------------------- (a) mixing time
def stepping_mixing_time(
    P: np.ndarray, pi: np.ndarray, eps: float, max_seconds: float | None = None
) -> tuple[int | None, int, float]:
    """Baseline: worst-start ``t_mix(eps)`` by multiplying ``D = P^t`` by ``P`` one step at a time.

    After every step the worst-start TV ``max_x 0.5 sum_y |D(x, y) - pi(y)|`` is compared with
    ``eps`` (Levin–Peres–Wilmer 2nd ed., Section 4.5). Buffers are preallocated, so a step is one
    dense ``S x S`` product and one pass over ``D``.

    Returns
    -------
    (t_mix or None, steps taken, seconds)
        ``None`` when ``max_seconds`` ran out first.
    """
    S = P.shape[0]
    D, buf, diff = np.eye(S), np.empty((S, S)), np.empty((S, S))
    start = time.perf_counter()
    t = 0
    while True:
        np.matmul(D, P, out=buf)
        D, buf = buf, D
        t += 1
        np.subtract(D, pi[None, :], out=diff)
        np.abs(diff, out=diff)
        if 0.5 * diff.sum(axis=1).max() <= eps:
            return t, t, time.perf_counter() - start
        if max_seconds is not None and t % 1024 == 0:
            elapsed = time.perf_counter() - start
            if elapsed > max_seconds:
                return None, t, elapsed


def compare_mixing(
    label: str,
    P: np.ndarray,
    pi: np.ndarray,
    squaring: Callable[[], int],
    eps: float,
    max_baseline_seconds: float,
    repeat: int = 5,
) -> dict:
    """Time ``squaring()`` (best of ``repeat``) and the stepping baseline on one chain.

    If the baseline runs out of ``max_baseline_seconds`` its time is extrapolated linearly to
    ``t_mix`` steps (every step costs the same) and the result says so.
    """
    seconds_sq, t_sq = clock(squaring, repeat)
    t_step, steps, seconds_step = stepping_mixing_time(P, pi, eps, max_baseline_seconds)
    extrapolated = t_step is None
    baseline_seconds = seconds_step / steps * t_sq if extrapolated else seconds_step
    return {
        "chain": label,
        "states": int(P.shape[0]),
        "eps": eps,
        "t_mix_squaring": int(t_sq),
        "t_mix_stepping": None if extrapolated else int(t_step),
        "agree": None if extrapolated else bool(t_step == t_sq),
        "seconds_squaring": seconds_sq,
        "seconds_stepping": baseline_seconds,
        "stepping_extrapolated": extrapolated,
        "stepping_steps_run": int(steps),
        "speedup": baseline_seconds / seconds_sq,
    }


def ising_chain(graph: nx.Graph, beta: float) -> ExactChain:
    """Heat-bath Ising chain on ``graph`` at inverse temperature ``beta`` (``J = 1``, ``h = 0``)."""
    return ExactChain(IsingModel(graph), tau=1.0 / beta)


def exact_chain_case(label: str, chain: ExactChain, eps: float, max_s: float) -> dict:
    """:func:`compare_mixing` for an :class:`ExactChain` (``P`` and ``pi`` computed beforehand)."""
    P, pi = chain.dense_transition_matrix(), chain.stationary()
    return compare_mixing(
        label, P, pi, lambda: chain.mixing_time(eps, method="squaring"), eps, max_s
    )


def lumped_case(label: str, chain: CurieWeissLumpedChain, eps: float, max_s: float) -> dict:
    """:func:`compare_mixing` for the lumped Curie–Weiss chain (its own banded squaring)."""
    P, pi = chain.transition_matrix().toarray(), chain.stationary()
    return compare_mixing(
        label, P, pi, lambda: chain.mixing_time(eps, max_t=2**50), eps, max_s
    )


def mixing_benchmark(
    cycle_sites: int = 6,
    slow_beta: float = 3.0,
    fast_beta: float = 0.5,
    lumped_n: int = 63,
    lumped_alpha: float = 1.5,
    eps: float = 0.25,
    max_baseline_seconds: float = 120.0,
) -> list[dict]:
    """(a): slow Ising cycle, slow lumped Curie–Weiss, fast Ising cycle.

    Defaults: Ising on the 6-cycle at ``beta = 3`` (64 states, ``t_mix(1/4) = 338449``), the
    Curie–Weiss chain with ``n = 63``, ``alpha = 1.5`` lumped to 64 levels
    (``t_mix(1/4) = 377192``), and the 6-cycle at ``beta = 0.5`` (fast).
    """
    cycle = nx.cycle_graph(cycle_sites)
    return [
        exact_chain_case(
            f"Ising {cycle_sites}-cycle beta={slow_beta} (slow)",
            ising_chain(cycle, slow_beta), eps, max_baseline_seconds,
        ),
        lumped_case(
            f"Curie-Weiss lumped n={lumped_n} alpha={lumped_alpha} (slow)",
            CurieWeissLumpedChain(lumped_n, lumped_alpha), eps, max_baseline_seconds,
        ),
        exact_chain_case(
            f"Ising {cycle_sites}-cycle beta={fast_beta} (fast)",
            ising_chain(cycle, fast_beta), eps, max_baseline_seconds,
        ),
    ]


# ---------------------------------------------------------------------- (b) stationary law
def exact_log_gibbs(model: IsingModel, chain: ExactChain) -> np.ndarray:
    """``log pi_tau(x)`` of every state from the Gibbs weights, normalised in log space."""
    log_w = model.log_weight(chain.states()) / chain.tau
    return log_w - logsumexp(log_w)


def max_relative_error(pi: np.ndarray, log_exact: np.ndarray) -> float:
    """``max_x |pi(x) / pi_exact(x) - 1|`` computed as ``expm1(log pi - log pi_exact)`` (an entry
    that underflowed to 0 counts as relative error 1)."""
    with np.errstate(divide="ignore"):
        return float(np.abs(np.expm1(np.log(pi) - log_exact)).max())


def stationary_benchmark(
    rows: int = 3,
    cols: int = 4,
    betas: Sequence[float] = (0.25, 1.0, 4.0),
    gth_betas: Sequence[float] = (0.25, 4.0),
    methods: Sequence[str] = ("sparse", "iterative", "gth"),
) -> list[dict]:
    """(b): GTH, the sparse direct solve and the Krylov solve on the Ising model on a
    ``rows x cols`` grid.

    The sparse and Krylov solves run at every ``beta``; GTH (whose operation count does not
    depend on ``beta``: about ``S^3 / 3`` multiply-adds) only at ``gth_betas``. A solver that
    raises (e.g. a failed residual check) is recorded with its message.
    """
    model = IsingModel(nx.grid_2d_graph(rows, cols))
    out = []
    for beta in betas:
        chain = ExactChain(model, tau=1.0 / beta)
        P = chain.transition_matrix()
        log_exact = exact_log_gibbs(model, chain)
        for method in methods:
            if method == "gth" and beta not in gth_betas:
                continue
            entry: dict[str, Any] = {
                "beta": beta, "method": method, "states": chain.num_states,
                "min_pi": float(np.exp(log_exact.min())),
            }
            start = time.perf_counter()
            try:
                sol = stationary_distribution(P, method)
            except GlauberError as exc:
                entry.update(seconds=time.perf_counter() - start, error=str(exc))
            else:
                entry.update(
                    seconds=time.perf_counter() - start,
                    residual_l1=sol.residual_l1,
                    clipped_mass=sol.clipped_mass,
                    max_relative_error=max_relative_error(sol.pi, log_exact),
                )
            out.append(entry)
    return out


# ------------------------------------------------------------------- (c) largest chain
def full_analysis(n_sites: int, beta: float, eps: float) -> dict:
    """Transition matrix, stationary law (``"auto"``) and ``t_mix`` of Ising on the ``n``-cycle."""
    start = time.perf_counter()
    chain = ising_chain(nx.cycle_graph(n_sites), beta)
    chain.transition_matrix()
    built = time.perf_counter()
    sol = chain.stationary_solution()
    solved = time.perf_counter()
    t_mix = chain.mixing_time(eps)
    done = time.perf_counter()
    return {
        "sites": n_sites, "states": chain.num_states, "t_mix": t_mix,
        "stationary_method": sol.method, "seconds_matrix": built - start,
        "seconds_stationary": solved - built, "seconds_mixing": done - solved,
        "seconds": done - start,
    }


def largest_chain_benchmark(
    sizes: Sequence[int] = (8, 10, 11, 12, 13, 14),
    beta: float = 0.3,
    eps: float = 0.25,
    budget_seconds: float = 60.0,
) -> dict:
    """(c): time the full analysis on growing cycles; stop after the first size over budget.

    ``t_mix`` is found by ``"auto"``: squaring or stepping up to 4096 states, sparse stepping
    above. A size that ``ExactChain`` refuses (``StateSpaceTooLargeError``, over its
    ``max_states``) is recorded with the message and ends the sweep.
    """
    runs: list[dict] = []
    for n_sites in sizes:
        try:
            runs.append(full_analysis(n_sites, beta, eps))
        except GlauberError as exc:
            runs.append({"sites": n_sites, "states": 2**n_sites, "error": str(exc)})
            break
        if runs[-1]["seconds"] > budget_seconds:
            break
    within = [r for r in runs if "error" not in r and r["seconds"] <= budget_seconds]
    return {
        "beta": beta, "budget_seconds": budget_seconds, "runs": runs,
        "largest_states_within_budget": max((r["states"] for r in within), default=0),
    }


def lumped_large(n: int = 1000, alpha: float = 0.5, eps: float = 0.25) -> dict:
    """Beyond ``ExactChain``: ``t_mix`` of the Curie–Weiss chain lumped to ``n + 1`` levels."""
    seconds, t_mix = clock(lambda: CurieWeissLumpedChain(n, alpha).mixing_time(eps))
    return {"n": n, "alpha": alpha, "levels": n + 1, "t_mix": t_mix, "seconds": seconds}


# ------------------------------------------------------- (d) stepping vs squaring, "auto"
def method_benchmark(
    cases: Sequence[tuple[int, float]] = ((12, 0.3), (10, 1.0)),
    eps: float = 0.25,
) -> list[dict]:
    """(d): exact ``t_mix`` of Ising on the ``n``-cycle at ``beta`` by squaring, by sparse
    stepping and by ``"auto"``, each timed once on the same ``P`` and ``pi`` (built beforehand)."""
    out = []
    for n_sites, beta in cases:
        chain = ising_chain(nx.cycle_graph(n_sites), beta)
        chain.dense_transition_matrix(), chain.stationary()
        entry: dict[str, Any] = {"sites": n_sites, "states": chain.num_states, "beta": beta}
        for method in ("squaring", "stepping", "auto"):
            seconds, t_mix = clock(lambda: chain.mixing_time(eps, method=method))
            entry[f"seconds_{method}"], entry[f"t_mix_{method}"] = seconds, int(t_mix)
        entry["agree"] = len({entry[f"t_mix_{m}"] for m in ("squaring", "stepping", "auto")}) == 1
        entry["speedup"] = entry["seconds_squaring"] / entry["seconds_stepping"]
        out.append(entry)
    return out


# ------------------------------------------------------------ (e) the torch backends
def torch_mixing_benchmark(
    sizes: Sequence[int] = (12, 14, 16),
    beta: float = 0.3,
    eps: float = 0.25,
    device: str | None = None,
    numpy_baseline_sites: int = 12,
    max_squaring_sites: int = 15,
) -> list[dict]:
    """``t_mix`` of Ising on the ``n``-cycle with the torch float64 backend on ``device`` (CUDA
    when available) by dense squaring (up to ``max_squaring_sites`` sites) and by sparse
    stepping, and with the numpy backend at ``numpy_baseline_sites`` as the baseline.

    ``ExactChain`` builds ``P`` and the stationary law (``"auto"``: the Krylov solve above 8192
    states; its relative error against the exact Gibbs law is reported). Squaring stores about
    ``log2 t_mix`` powers of ``8 S^2`` bytes (32 GiB each at ``2^16`` states: more than one
    H200 holds), stepping two ``S x b`` blocks; a run that still runs out of memory is recorded
    with the error.
    """
    import torch

    from glauber.exact import mixing

    out = []
    for n_sites in sizes:
        chain = ExactChain(IsingModel(nx.cycle_graph(n_sites)), 1.0 / beta, max_states=2**n_sites)
        S = chain.num_states
        entry: dict[str, Any] = {"sites": n_sites, "states": S}
        start = time.perf_counter()
        P = chain.transition_matrix()
        sol = chain.stationary_solution()
        entry.update(
            seconds_matrix_and_stationary=time.perf_counter() - start,
            stationary_method=sol.method,
            stationary_max_relative_error=max_relative_error(
                sol.pi, exact_log_gibbs(chain.model, chain)
            ),
        )
        runs = [("stepping", "torch", device)]
        if n_sites <= max_squaring_sites:
            runs.insert(0, ("squaring", "torch", device))
        if n_sites == numpy_baseline_sites:
            runs += [("squaring", "numpy", None), ("stepping", "numpy", None)]
        for method, backend, dev in runs:
            key = f"{method}_{backend}"
            try:
                seconds, t_mix = clock(lambda: mixing.mixing_time(
                    P, sol.pi, eps, backend, dev, max_dense_states=S, method=method
                ))
            except (MemoryError, torch.cuda.OutOfMemoryError) as exc:
                entry[f"error_{key}"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            else:
                entry[f"seconds_{key}"], entry[f"t_mix_{key}"] = seconds, int(t_mix)
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        out.append(entry)
    return out


# --------------------------------------------------------------------------------- driver
def summary_rows(result: dict) -> list[dict]:
    """The summary-table rows of a :func:`run` result (of the parts it holds)."""
    rows = []
    for m in result.get("mixing", []):
        slow = "(slow)" in m["chain"]
        note = f"t_mix={m['t_mix_squaring']}, {m['states']} states"
        if m["stepping_extrapolated"]:
            note += f", baseline extrapolated from {m['stepping_steps_run']} steps"
        elif not m["agree"]:
            note += f", DISAGREE: stepping gives {m['t_mix_stepping']}"
        rows.append(row(
            f"t_mix squaring vs stepping: {m['chain']}", m["seconds_squaring"], "s",
            m["seconds_stepping"], m["speedup"],
            f">= {SLOW_SPEEDUP_TARGET:g}x" if slow else "",
            bool(m["speedup"] >= SLOW_SPEEDUP_TARGET) if slow else None, note,
        ))
    gth_seconds = {s["beta"]: s["seconds"] for s in result.get("stationary", [])
                   if s["method"] == "gth" and "error" not in s}
    for s in result.get("stationary", []):
        if "error" in s:
            note = "failed: " + s["error"][:80]
        else:
            note = (f"resid {s['residual_l1']:.1e}, max rel err "
                    f"{s['max_relative_error']:.1e}, min pi {s['min_pi']:.1e}")
        base = gth_seconds.get(s["beta"]) if s["method"] != "gth" else None
        rows.append(row(
            f"stationary {s['method']} {s['states']} states beta={s['beta']}", s["seconds"], "s",
            base, None if base is None else base / s["seconds"],
            f"< {STATIONARY_SECONDS_TARGET:g} s",
            bool("error" not in s and s["seconds"] < STATIONARY_SECONDS_TARGET),
            ("baseline = GTH; " if base is not None else "") + note,
        ))
    if "largest" in result:
        big = result["largest"]
        for r in big["runs"]:
            if "error" in r:
                rows.append(row(f"full analysis {r['states']} states", float("nan"), "s",
                                note="refused: " + r["error"][:80]))
            else:
                rows.append(row(
                    f"full analysis {r['states']} states", r["seconds"], "s",
                    target=f"<= {big['budget_seconds']:g} s",
                    met=bool(r["seconds"] <= big["budget_seconds"]),
                    note=f"t_mix={r['t_mix']}, pi by {r['stationary_method']}",
                ))
    if "lumped_large" in result:
        lump = result["lumped_large"]
        rows.append(row(
            f"lumped Curie-Weiss t_mix, n={lump['n']} ({lump['levels']} levels)",
            lump["seconds"], "s", note=f"t_mix={lump['t_mix']}",
        ))
    for m in result.get("methods", []):
        agree = "" if m["agree"] else ", DISAGREE"
        rows.append(row(
            f"t_mix stepping vs squaring: Ising {m['sites']}-cycle beta={m['beta']}",
            m["seconds_stepping"], "s", m["seconds_squaring"], m["speedup"],
            note=f"t_mix={m['t_mix_stepping']}, {m['states']} states, auto "
                 f"{m['seconds_auto']:.3g} s{agree}",
        ))
    for r in result.get("torch_mixing", []):
        for key in ("squaring_torch", "stepping_torch", "squaring_numpy", "stepping_numpy"):
            method, backend = key.split("_")
            if f"seconds_{key}" not in r and f"error_{key}" not in r:
                continue
            base = r.get(f"seconds_{method}_numpy") if backend == "torch" else None
            measured = r.get(f"seconds_{key}", float("nan"))
            note = (f"t_mix={r[f't_mix_{key}']}" if f"t_mix_{key}" in r
                    else r[f"error_{key}"][:80])
            rows.append(row(
                f"t_mix {method}, {backend} backend, {r['states']} states", measured, "s", base,
                None if base is None or f"seconds_{key}" not in r else base / measured,
                note=note + (", baseline = numpy backend" if base is not None else ""),
            ))
    return rows


#: The parts :func:`run` can run, and those it runs by default (on a CPU machine).
PARTS = {
    "mixing": mixing_benchmark,
    "stationary": stationary_benchmark,
    "largest": largest_chain_benchmark,
    "lumped_large": lumped_large,
    "methods": method_benchmark,
    "torch_mixing": torch_mixing_benchmark,
}
DEFAULT_PARTS = ("mixing", "stationary", "largest", "lumped_large", "methods")


def run(parts: Sequence[str] = DEFAULT_PARTS, **options: dict) -> dict:
    """Run ``parts`` of :data:`PARTS`; ``options[part]`` holds keyword arguments of that part's
    function. Returns the results with their summary ``rows``."""
    result: dict[str, Any] = {part: PARTS[part](**options.get(part, {})) for part in parts}
    result["rows"] = summary_rows(result)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=list(DEFAULT_PARTS), choices=list(PARTS))
    parser.add_argument("--budget", type=float, default=60.0,
                        help="time budget of the largest-chain sweep (s)")
    parser.add_argument("--gth-betas", type=float, nargs="*", default=[0.25, 4.0],
                        help="temperatures at which GTH runs at 2^12 states (~1 min each)")
    parser.add_argument("--torch-sizes", type=int, nargs="+", default=[12, 14, 16],
                        help="cycle lengths n (2^n states) of the torch-backend part")
    parser.add_argument("--numpy-baseline-sites", type=int, default=12,
                        help="cycle length at which the torch-backend part also runs numpy")
    parser.add_argument("--max-squaring-sites", type=int, default=15,
                        help="largest cycle the torch-backend part squares (above: stepping only)")
    parser.add_argument("--device", default=None, help="torch device of the torch-backend part")
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    print(machine_info())
    result = run(
        args.parts,
        stationary={"gth_betas": tuple(args.gth_betas)},
        largest={"budget_seconds": args.budget},
        torch_mixing={"sizes": tuple(args.torch_sizes), "device": args.device,
                      "max_squaring_sites": args.max_squaring_sites,
                      "numpy_baseline_sites": args.numpy_baseline_sites},
    )
    publish(result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
