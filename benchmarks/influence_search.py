"""Searched influence against the exact supremum, and against random sampling at the same budget.

On random toy models (random score tables, Potts, asymmetric Ising and planted basins with
``64 <= q^n <= 4096``), at a temperature on the scale of each model's own interactions,
:func:`glauber.estimators.influence_search.search_influence` gets a query budget of 10% of
exhaustive enumeration, counted as :func:`glauber.estimators.influence` counts it
(``q^n n (1 + (q - 1)(n - 1))`` rows). Exact ``C`` comes from ``ExactChain.influence_matrix()``.
Printed, for the search and for random sampling with the same budget
(:func:`glauber.estimators.influence` on uniformly drawn contexts; both its settings, every
replacement and one replacement per site), measured in the same run:

- the fraction of non-zero exact entries reached to 95% (``C >= 0.95 c``; target >= 90%);
- the fraction of models whose ``rho(C) >= 0.95 rho(c)`` (target >= 90%);
- the queries used, as a fraction of the budget.

Ratios are search over sampling (the better of its two settings). Sampling takes at least one
context, so at the smallest budgets it may ask more than the budget (its ``queries`` say how
many): the comparison then favours it. Zero exact entries (e.g. non-neighbours in Ising/Potts) are
left out of the entry fraction: any method meets them. Note that 10% of exhaustive is, with
the search's memo, about ``0.1 q (1 + (q - 1)(n - 1))`` times the number of distinct queries
``n q^(n - 1)``; a second budget row, 10% of the distinct queries, shows the search where it
cannot see most of the state space.

Run ``python benchmarks/influence_search.py`` (``--help`` for options).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import networkx as nx
import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.report import publish, row
from glauber.core.enumeration import state_index
from glauber.estimators.influence import influence
from glauber.estimators.influence_search import search_influence
from glauber.exact import ExactChain
from glauber.theory.contraction import spectral_radius
from glauber.toy_models import AsymmetricIsingModel, FunctionModel, PlantedBasinModel, PottsModel

#: Reached-to fraction of an entry / of the spectral radius, and the targets of the issue.
REACH, TARGET = 0.95, 0.90
MIN_STATES, MAX_STATES = 64, 4096


def _shape(rng: np.random.Generator, qs: Sequence[int]) -> tuple[int, int]:
    """``(n, q)`` with ``MIN_STATES <= q^n <= MAX_STATES``, ``n >= 3``."""
    q = int(rng.choice(qs))
    ns = [n for n in range(3, 13) if MIN_STATES <= q**n <= MAX_STATES]
    return int(rng.choice(ns)), q


def table_model(rng: np.random.Generator) -> FunctionModel:
    """Random incompatible conditionals: each site's scores are a random table of the context."""
    n, q = _shape(rng, (2, 3, 4))
    table = rng.uniform(0.1, 2.0) * rng.standard_normal((n, q**n, q))

    def score_fn(states: np.ndarray, site: int) -> np.ndarray:
        return table[site, state_index(states, q)]  # site masked to 0 before the call

    return FunctionModel(n, q, score_fn, name=f"table(n={n},q={q})")


def potts_model(rng: np.random.Generator) -> PottsModel:
    """Potts on a random graph with random couplings and fields."""
    n, q = _shape(rng, (3, 4))
    graph = nx.gnp_random_graph(n, rng.uniform(0.3, 1.0), seed=int(rng.integers(2**31)))
    coupling = {e: float(rng.uniform(-1.0, 2.0)) for e in graph.edges}
    field = rng.uniform(0.0, 1.0) * rng.standard_normal((n, q))
    return PottsModel(graph, q, coupling=coupling, field=field, name=f"potts(n={n},q={q})")


def asym_ising_model(rng: np.random.Generator) -> AsymmetricIsingModel:
    """Asymmetric Ising with dense random couplings."""
    n, _ = _shape(rng, (2,))
    m = AsymmetricIsingModel.random(n, rng=rng, scale=rng.uniform(0.1, 1.5),
                                    asym=rng.uniform(0.0, 1.0),
                                    field=rng.uniform(0.0, 1.0) * rng.standard_normal(n))
    m.name = f"asym-ising(n={n})"
    return m


def planted_model(rng: np.random.Generator) -> PlantedBasinModel:
    """A planted self-reinforcing token on a random base."""
    n, q = _shape(rng, (2, 3))
    m = PlantedBasinModel.with_random_base(n, q, rng=rng, scale=rng.uniform(0.0, 1.0),
                                           token=int(rng.integers(q)),
                                           strength=rng.uniform(0.5, 6.0))
    m.name = f"planted(n={n},q={q})"
    return m


FAMILIES: dict[str, Callable[[np.random.Generator], Any]] = {
    "table": table_model, "potts": potts_model, "asym_ising": asym_ising_model,
    "planted": planted_model,
}


def exhaustive_queries(n: int, q: int) -> int:
    """Rows :func:`glauber.estimators.influence` asks with ``exhaustive=True``."""
    return q**n * n * (1 + (q - 1) * (n - 1))


def model_temperature(model: Any, rng: np.random.Generator) -> float:
    """``f max_i sum_j Delta_ij / 4`` (Corollary 7's threshold) with ``f ~ U(0.3, 1.5)``."""
    Delta = ExactChain(model, 1.0).oscillation_matrix()
    return max(float(rng.uniform(0.3, 1.5)) * float(Delta.sum(axis=1).max()) / 4.0, 0.05)


def sampled(model: Any, tau: float, budget: int, replacements: int, seed: int) -> dict:
    """:func:`influence` on uniform random contexts, as many as ``budget`` pays for."""
    n, q = model.n, model.q
    r = min(replacements, q - 1)
    per_context = n + n * r * (n - 1)
    contexts = max(1, budget // per_context)
    states = np.random.default_rng(seed).integers(q, size=(contexts, n))
    res = influence(model, tau, contexts=states, n_replacements=r, seed=seed)
    return {"C": res.C, "queries": contexts * per_context}


def compare(C: np.ndarray, exact: np.ndarray) -> dict:
    """Entries reached to :data:`REACH` (non-zero exact ones) and whether rho is reached."""
    off = ~np.eye(exact.shape[0], dtype=bool) & (exact > 1e-12)
    reached = C[off] >= REACH * exact[off]
    rho, rho_exact = spectral_radius(C), spectral_radius(exact)
    return {"entries": int(off.sum()), "reached": int(reached.sum()),
            "rho_reached": bool(rho >= REACH * rho_exact - 1e-12),
            "rho_ratio": rho / rho_exact if rho_exact > 0 else 1.0}


def one_model(family: str, seed: int, fraction: float, distinct: bool) -> dict:
    """Search and sampling on one random model of ``family``."""
    rng = np.random.default_rng(seed)
    model = FAMILIES[family](rng)
    tau = model_temperature(model, rng)
    n, q = model.n, model.q
    full = n * q ** (n - 1) if distinct else exhaustive_queries(n, q)
    budget = max(1, int(fraction * full))
    exact = ExactChain(model, tau).influence_matrix()
    out = {"family": family, "name": model.name, "n": n, "q": q, "tau": tau, "budget": budget}
    start = time.perf_counter()
    res = search_influence(model, tau, budget=budget, seed=seed)
    out["search_seconds"] = time.perf_counter() - start
    out["search"] = dict(compare(res.C, exact), queries=res.queries)
    for r, key in ((q - 1, "sampled_rall"), (1, "sampled_r1")):
        s = sampled(model, tau, budget, r, seed)
        out[key] = dict(compare(s["C"], exact), queries=s["queries"])
    return out


def summarise(models: list[dict], method: str) -> dict:
    entries = sum(m[method]["entries"] for m in models)
    reached = sum(m[method]["reached"] for m in models)
    return {
        "entry_fraction": reached / entries if entries else 1.0,
        "rho_fraction": float(np.mean([m[method]["rho_reached"] for m in models])),
        "query_fraction": float(np.mean([m[method]["queries"] / m["budget"] for m in models])),
        "entries": entries,
    }


def run(models: int = 200, seed: int = 0, fraction: float = 0.1, hard: bool = True) -> dict:
    """Search vs sampling on ``models`` random models (families in turn); returns the results
    with their summary ``rows``."""
    names = list(FAMILIES)
    result: dict = {"models": models, "fraction": fraction, "budgets": {}}
    settings = [("exhaustive", False)] + ([("distinct", True)] if hard else [])
    for label, distinct in settings:
        per_model = [one_model(names[k % len(names)], seed + k, fraction, distinct)
                     for k in range(models)]
        methods = ("search", "sampled_rall", "sampled_r1")
        result["budgets"][label] = {
            "per_model": per_model,
            "summary": {m: summarise(per_model, m) for m in methods},
            "by_family": {f: {m: summarise([p for p in per_model if p["family"] == f], m)
                              for m in methods} for f in names},
            "search_seconds": float(sum(p["search_seconds"] for p in per_model)),
        }
    result["rows"] = summary_rows(result)
    return result


def summary_rows(result: dict) -> list[dict]:
    """Summary-table rows of a :func:`run` result."""
    rows = []
    for label, data in result["budgets"].items():
        s = data["summary"]
        what = (f"{result['fraction']:.0%} of exhaustive" if label == "exhaustive"
                else f"{result['fraction']:.0%} of distinct queries")
        tag = f"{result['models']} toy models, budget {what}"
        for key, name in (("entry_fraction", "entries >= 95% of exact"),
                          ("rho_fraction", "models with rho >= 95% of exact")):
            base = max(s["sampled_rall"][key], s["sampled_r1"][key])
            checked = label == "exhaustive"
            rows.append(row(
                f"search: {name} ({tag})", s["search"][key], "fraction", base,
                s["search"][key] / base if base > 0 else None,
                target=">= 0.9" if checked else "", met=(s["search"][key] >= TARGET)
                if checked else None,
                note=f"sampling: {s['sampled_rall'][key]:.3f} all replacements, "
                     f"{s['sampled_r1'][key]:.3f} one; queries used "
                     f"{s['search']['query_fraction']:.2f} of budget",
            ))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--no-hard", action="store_true", help="skip the distinct-query budget")
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    result = run(args.models, args.seed, args.fraction, not args.no_hard)
    for label, data in result["budgets"].items():
        print(f"budget {label}: search {data['search_seconds']:.1f} s in all")
        for fam, ms in data["by_family"].items():
            print(f"  {fam:11s} " + "  ".join(
                f"{m}: entries {v['entry_fraction']:.3f} rho {v['rho_fraction']:.3f}"
                for m, v in ms.items()))
    publish(result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
