"""Exact chains at scale: the sparse path of ExactChain at 2^20 states, against same-run baselines.

Parts (each measured in a fresh subprocess, so peak memory is that computation's own
``ru_maxrss``, and ``uptime``'s load average is recorded before and after):

* ``gap``: the spectral gap of heat-bath Ising on the 4 x 5 grid at tau = 2 (2^20 states) by
  ``ExactChain(...).spectral_gap()`` from scratch (score table, kernel, joint law, Lanczos),
  against an independent reference written here: conditionals from the heat-bath formula
  ``p(+) = expit(2 beta f)``, the kernel as a COO matrix, ``pi`` from the Gibbs weight
  ``exp(beta sum_edges s_u s_v)``, ``A = D^(1/2) P D^(-1/2)`` by diagonal scalings, and ARPACK
  for the two largest eigenvalues of ``A`` (no deflation). Targets: relative difference
  <= 1e-6, time <= 2x the reference's.
* ``largest``: Ising on the n-cycle at beta = 0.3 (the chain of ``exact_chain.py`` (c)),
  n = 16..20: stationary law, gap and a t_mix bracket through ``ExactChain``; the largest done
  within the budget (60 s), and its peak memory (target < 8 GiB at 2^20).
* ``orbit``: the Ising 20-cycle's orbit chain (``OrbitChain``, site symmetries: 27,012 orbits;
  with the spin flip: 13,648) built and solved (stationary law and gap), target < 10 s.

``python benchmarks/exact_scale.py [--parts gap largest orbit] [--budget 60] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.report import publish, row

PARTS = ("gap", "largest", "orbit")
GRID = (4, 5)
GRID_TAU = 2.0
CYCLE_BETA = 0.3


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# ------------------------------------------------------------------------------ child side
def _peak_gib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def child_ours_gap() -> dict:
    import networkx as nx

    from glauber.exact.chain import ExactChain
    from glauber.toy_models import IsingModel

    start = time.perf_counter()
    chain = ExactChain(IsingModel(nx.grid_2d_graph(*GRID)), GRID_TAU)
    est = chain.spectral_estimate()
    return {"gap": est.gap, "error_bound": est.error_bound, "gap_upper": est.gap_upper,
            "matvecs": est.matvecs, "method": est.method,
            "stationary": chain.stationary_solution().method,
            "seconds": time.perf_counter() - start, "peak_gib": _peak_gib()}


def child_reference_gap() -> dict:
    """The independent reference (see the module docstring); shares no code with glauber."""
    import networkx as nx
    import numpy as np
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    from scipy.special import expit
    from threadpoolctl import threadpool_limits

    start = time.perf_counter()
    graph = nx.convert_node_labels_to_integers(nx.grid_2d_graph(*GRID), ordering="sorted")
    n, beta = graph.number_of_nodes(), 1.0 / GRID_TAU
    S = 2**n
    index = np.arange(S, dtype=np.int64)
    spin = np.empty((S, n), dtype=np.int8)
    for i in range(n):  # site 0 is the most significant bit
        spin[:, i] = 2 * ((index >> (n - 1 - i)) & 1) - 1
    energy = np.zeros(S)
    for u, v in graph.edges:
        energy += spin[:, u] * spin[:, v]
    log_w = beta * energy
    rows, cols, vals = [], [], []
    stay = np.zeros(S)
    for i in range(n):
        field = np.zeros(S)
        for k in graph.neighbors(i):
            field += spin[:, k]
        p_plus = expit(2.0 * beta * field)
        p_own = np.where(spin[:, i] > 0, p_plus, 1.0 - p_plus)
        stay += p_own / n
        rows.append(index)
        cols.append(index ^ (1 << (n - 1 - i)))
        vals.append((1.0 - p_own) / n)
    rows.append(index)
    cols.append(index)
    vals.append(stay)
    P = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(S, S)).tocsr()
    pi = np.exp(log_w - log_w.max())
    pi /= pi.sum()
    root = np.sqrt(pi)
    A = (sp.diags(root) @ P @ sp.diags(1.0 / root)).tocsr()
    A = 0.5 * (A + A.T)  # symmetric up to rounding: make it exactly so for eigsh
    with threadpool_limits(1, user_api="blas"):  # as the library does (fair on a loaded machine)
        values = spla.eigsh(A, k=2, which="LA", tol=1e-13, return_eigenvectors=False,
                            v0=np.random.default_rng(1).standard_normal(S))
    values = np.sort(values)
    return {"gap": float(1.0 - values[0]), "top": float(values[1]),
            "seconds": time.perf_counter() - start, "peak_gib": _peak_gib()}


def child_full(n: int) -> dict:
    import networkx as nx

    from glauber.exact.chain import ExactChain
    from glauber.toy_models import IsingModel

    start = time.perf_counter()
    chain = ExactChain(IsingModel(nx.cycle_graph(n)), 1.0 / CYCLE_BETA)
    pi_method = chain.stationary_solution().method
    t_pi = time.perf_counter() - start
    est = chain.spectral_estimate()
    t_gap = time.perf_counter() - start - t_pi
    bracket = chain.mixing_bracket(0.25)
    total = time.perf_counter() - start
    return {"n": n, "states": 2**n, "stationary": pi_method, "gap": est.gap,
            "closed_form_gap": (1 - math.tanh(2 * CYCLE_BETA)) / n, "gap_method": est.method,
            "bracket": [bracket.lower, bracket.upper], "exact": bracket.exact,
            "seconds_pi": t_pi, "seconds_gap": t_gap, "seconds_bracket": total - t_pi - t_gap,
            "seconds": total, "peak_gib": _peak_gib()}


def child_orbit(tokens: bool) -> dict:
    import networkx as nx

    from glauber.exact.symmetry import OrbitChain
    from glauber.toy_models import IsingModel

    start = time.perf_counter()
    oc = OrbitChain(IsingModel(nx.cycle_graph(20)), 1.0 / CYCLE_BETA, tokens=tokens)
    built = time.perf_counter() - start
    oc.transition_matrix()
    oc.stationary()
    est = oc.spectral_estimate()
    return {"orbits": oc.num_orbits, "gap": est.gap, "method": est.method,
            "closed_form_gap": (1 - math.tanh(2 * CYCLE_BETA)) / 20,
            "seconds_build": built, "seconds": time.perf_counter() - start,
            "peak_gib": _peak_gib()}


CHILDREN = {"ours_gap": child_ours_gap, "reference_gap": child_reference_gap,
            "full": child_full, "orbit": child_orbit}


def _in_child(name: str, *args: Any) -> dict:
    before = _load()
    proc = subprocess.run(
        [sys.executable, __file__, "--child", name, json.dumps(list(args))],
        capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:], "load_before": before, "load_after": _load()}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out.update(load_before=before, load_after=_load())
    return out


# ----------------------------------------------------------------------------- parent side
def part_gap() -> tuple[dict, list[dict]]:
    reference = _in_child("reference_gap")
    ours = _in_child("ours_gap")
    rows = []
    if "error" not in reference and "error" not in ours:
        rel = abs(ours["gap"] - reference["gap"]) / reference["gap"]
        ratio = ours["seconds"] / reference["seconds"]
        rows.append(row("2^20-state gap (4x5 Ising grid, tau 2): ExactChain vs independent "
                        "reference", ours["seconds"], "s", reference["seconds"], ratio,
                        "<= 2x, rel. diff <= 1e-6", ratio <= 2 and rel <= 1e-6,
                        f"rel. diff {rel:.1e}; gap {ours['gap']:.10g}; loads "
                        f"{ours['load_before']} / {reference['load_before']}"))
    return {"ours": ours, "reference": reference}, rows


def part_largest(budget: float, sizes: Sequence[int]) -> tuple[dict, list[dict]]:
    runs, largest = [], None
    for n in sizes:
        out = _in_child("full", n)
        runs.append(out)
        if "error" in out or out["seconds"] > budget:
            break
        largest = out
    rows = []
    if largest is not None:
        rows.append(row(f"largest chain with pi, gap and t_mix bracket in {budget:g} s (Ising "
                        f"cycle, beta {CYCLE_BETA})", largest["states"], "states",
                        target="2^20", met=largest["states"] >= 2**20,
                        note=f"{largest['seconds']:.1f} s, bracket {largest['bracket']}"))
        rows.append(row(f"peak memory at {largest['states']} states", largest["peak_gib"], "GiB",
                        target="< 8 GiB at 2^20",
                        met=largest["peak_gib"] < 8 if largest["states"] >= 2**20 else None))
    return {"runs": runs, "budget_seconds": budget}, rows


def part_orbit() -> tuple[dict, list[dict]]:
    sites = _in_child("orbit", False)
    flips = _in_child("orbit", True)
    rows = []
    for label, out in (("site symmetries", sites), ("sites and spin flip", flips)):
        if "error" not in out:
            rows.append(row(f"Ising 20-cycle orbit chain ({label}, {out['orbits']} orbits): "
                            "built and solved", out["seconds"], "s", target="< 10 s",
                            met=out["seconds"] < 10, note=f"load {out['load_before']}"))
    return {"sites": sites, "sites_and_flip": flips}, rows


def run(parts: Sequence[str] = PARTS, budget: float = 60.0,
        sizes: Sequence[int] = (16, 17, 18, 19, 20)) -> dict:
    """Run the parts; returns ``{"rows": [...], part: details}``."""
    result: dict = {"rows": [], "load_start": _load()}
    for part in parts:
        details, rows = (part_gap() if part == "gap" else part_largest(budget, sizes)
                         if part == "largest" else part_orbit())
        result[part] = details
        result["rows"] += rows
    result["load_end"] = _load()
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry (``--child NAME ARGS`` is the subprocess side)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=list(PARTS))
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 17, 18, 19, 20])
    parser.add_argument("--json", help="also write the results to this JSON file")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(CHILDREN[args.child[0]](*json.loads(args.child[1]))))
        return 0
    publish(run(args.parts, args.budget, args.sizes), args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
