"""Searched influence at large n (40 to 120 sites) against the exact supremum of local models.

On a model whose conditional at ``i`` depends on the context through a few sites ``N(i)``
only (Potts on a cycle or a bounded-degree graph, an asymmetric Ising model with sparse
couplings), Definition 2's supremum (docs/theory.md, Definition 2)
``c_ij(tau) = sup ||p_tau(. | x_{-i}) - p_tau(. | x^{j->b}_{-i})||_TV`` is 0 for ``j`` outside
``N(i)`` and, for ``j`` in it, a maximum over the ``q^|N(i)|`` configurations of ``N(i)`` and
the ``q - 1`` replacements: :func:`local_influence_matrix` enumerates them (tested against
``ExactChain.influence_matrix()`` on small ``n``). So the exact ``C`` is known at ``n = 120``,
where no chain can be enumerated, and the search can be measured where a masked LM's chains
are (``n = 120``, budgets below ``n^2`` distinct queries).

Families (``FAMILIES``): a homogeneous Potts cycle (``q = 3``); a Potts cycle with random
couplings and fields; Potts on a random 3-regular graph; an asymmetric Ising model on a cycle
plus ``n / 10`` random long-range chords (local structure plus something spread out).

Budgets count distinct conditional queries (rows sent to the model: a context ``x_{-i}`` and a
site ``i``), as everywhere (:func:`glauber.core.enumeration.table_queries`); here they are
``0.25 n^2``, ``n^2`` and ``4 n^2``, astronomically small fractions of the ``n q^(n-1)`` that
tabulate the model (``10^-10`` to ``10^-55``), as on a real chain. Printed for each budget,
search (``target="rho"``, as certify runs it) against sampling
(:func:`glauber.estimators.influence` on uniform random contexts, one random replacement per
site, as many whole contexts as the budget pays for, at least one: below ``n^2`` queries
sampling asks more than the budget, which favours it), measured in the same run: the rho
fraction ``rho(C) / rho(c)`` and the fraction of the non-zero exact entries reached to 95%.

Run ``python benchmarks/influence_search_large.py`` (``--help`` for options).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import networkx as nx
import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.report import publish, row
from glauber.core.arrays import log_softmax
from glauber.estimators.influence import influence
from glauber.estimators.influence_search import search_influence
from glauber.theory.contraction import spectral_radius
from glauber.toy_models import AsymmetricIsingModel, PottsModel

#: An entry counts as reached at this fraction of its exact value.
REACH = 0.95
#: Budgets, in units of ``n^2`` distinct queries (one whole context of influence() costs
#: ``n^2``).
BUDGETS = (0.25, 1.0, 4.0)


def local_influence_matrix(model: Any, tau: float, depends: np.ndarray) -> np.ndarray:
    """Exact ``C(tau)`` (Definition 2) of a model whose conditional at ``i`` depends only on the
    sites ``j`` with ``depends[i, j]``.

    ``p_tau(. | x_{-i})`` is then a function of ``x_{N(i)}``, so the supremum over pairs
    ``(x, x^{j->b})`` is the maximum over the ``q^|N(i)|`` configurations of ``N(i)`` (the other
    sites fixed at 0: they do not enter) of the TV between the configurations that differ at
    ``j``; ``c_ij = 0`` for ``j`` outside ``N(i)``.

    Parameters
    ----------
    model : ConditionalModel
        With ``scores(states, sites)``, ``n`` and ``q``.
    tau : float
    depends : bool array, shape (n, n)
        ``depends[i, j]``: the conditional at ``i`` may depend on ``x_j`` (a superset of the
        true dependence gives the same matrix, at a higher cost).

    Returns
    -------
    ndarray, shape (n, n)
    """
    n, q = int(model.n), int(model.q)
    C = np.zeros((n, n))
    for i in range(n):
        nb = np.flatnonzero(depends[i] & (np.arange(n) != i))
        if nb.size == 0:
            continue
        configs = np.array(list(itertools.product(range(q), repeat=nb.size)), dtype=np.int64)
        states = np.zeros((len(configs), n), dtype=np.int64)
        states[:, nb] = configs
        p = np.exp(log_softmax(np.asarray(model.scores(states, np.full(len(configs), i)),
                                          dtype=np.float64) / tau))
        weights = q ** np.arange(nb.size - 1, -1, -1)  # configs are in base-q order
        for pos, j in enumerate(nb):
            w = weights[pos]
            digit = (np.arange(len(configs)) // w) % q
            low = np.flatnonzero(digit == 0)  # configurations with x_j = 0
            rows = low[:, None] + w * np.arange(q)[None, :]  # the same, x_j = 0..q-1
            pr = p[rows]  # [configs / q, q (value of x_j), q (token at i)]
            tv = 0.5 * np.abs(pr[:, :, None, :] - pr[:, None, :, :]).sum(axis=-1)
            C[i, j] = float(tv.max())
    return C


def potts_cycle(n: int, rng: np.random.Generator) -> tuple[Any, np.ndarray, float]:
    """Homogeneous Potts cycle (``q = 3``, ``J = 1``) at ``tau = 0.75``."""
    graph = nx.cycle_graph(n)
    model = PottsModel(graph, 3, coupling=1.0, name=f"potts-cycle(n={n})")
    return model, model.J != 0, 0.75


def potts_cycle_field(n: int, rng: np.random.Generator) -> tuple[Any, np.ndarray, float]:
    """Potts cycle (``q = 3``) with couplings ``U(0.5, 2)`` and Gaussian fields at ``tau = 1``."""
    graph = nx.cycle_graph(n)
    coupling = {e: float(rng.uniform(0.5, 2.0)) for e in graph.edges}
    model = PottsModel(graph, 3, coupling=coupling, field=0.7 * rng.standard_normal((n, 3)),
                       name=f"potts-cycle-field(n={n})")
    return model, model.J != 0, 1.0


def potts_regular(n: int, rng: np.random.Generator) -> tuple[Any, np.ndarray, float]:
    """Potts (``q = 3``) on a random 3-regular graph, couplings ``U(0.5, 2)``, Gaussian fields,
    ``tau = 1.5``."""
    graph = nx.random_regular_graph(3, n, seed=int(rng.integers(2**31)))
    coupling = {e: float(rng.uniform(0.5, 2.0)) for e in graph.edges}
    model = PottsModel(graph, 3, coupling=coupling, field=0.7 * rng.standard_normal((n, 3)),
                       name=f"potts-3-regular(n={n})")
    return model, model.J != 0, 1.5


def ising_chords(n: int, rng: np.random.Generator) -> tuple[Any, np.ndarray, float]:
    """Asymmetric Ising: a cycle plus ``n / 10`` random chords, each direction its own
    coupling ``N(0, 1)``, Gaussian fields, ``tau = 1``."""
    J = np.zeros((n, n))
    for k in range(n):
        J[k, (k + 1) % n], J[(k + 1) % n, k] = rng.standard_normal(2)
    for _ in range(n // 10):
        a, b = rng.choice(n, size=2, replace=False)
        J[a, b], J[b, a] = rng.standard_normal(2)
    model = AsymmetricIsingModel(J, field=0.5 * rng.standard_normal(n),
                                 name=f"ising-cycle-chords(n={n})")
    return model, J != 0, 1.0


FAMILIES: dict[str, Callable[[int, np.random.Generator], tuple[Any, np.ndarray, float]]] = {
    "potts_cycle": potts_cycle, "potts_cycle_field": potts_cycle_field,
    "potts_3_regular": potts_regular, "ising_chords": ising_chords,
}


def compare(C: np.ndarray, exact: np.ndarray) -> dict:
    """rho fraction and the fraction of non-zero exact entries reached to :data:`REACH`."""
    off = ~np.eye(exact.shape[0], dtype=bool) & (exact > 1e-12)
    rho_exact = spectral_radius(exact)
    return {"rho_fraction": spectral_radius(C) / rho_exact if rho_exact > 0 else 1.0,
            "entry_fraction": float(np.mean(C[off] >= REACH * exact[off])) if off.any() else 1.0}


def sampled(model: Any, tau: float, budget: int, seed: int) -> dict:
    """:func:`influence` on uniform random contexts, one random replacement per site: as many
    whole contexts (``n^2`` queries each) as ``budget`` pays for, at least one."""
    n, q = model.n, model.q
    contexts = max(1, budget // (n * n))
    states = np.random.default_rng(seed).integers(q, size=(contexts, n))
    res = influence(model, tau, contexts=states, n_replacements=1, seed=seed)
    return {"C": res.C, "queries": contexts * n * n}


def one_model(family: str, n: int, seed: int, budgets: Sequence[float] = BUDGETS) -> dict:
    """Search and sampling on one model of ``family`` with ``n`` sites, at each budget."""
    rng = np.random.default_rng(seed)
    model, depends, tau = FAMILIES[family](n, rng)
    exact = local_influence_matrix(model, tau, depends)
    out: dict = {"family": family, "name": model.name, "n": n, "tau": tau,
                 "rho_exact": spectral_radius(exact), "budgets": {}}
    for units in budgets:
        budget = max(1, int(units * n * n))
        start = time.perf_counter()
        res = search_influence(model, tau, budget=budget, seed=seed, target="rho")
        seconds = time.perf_counter() - start
        s = sampled(model, tau, budget, seed)
        out["budgets"][units] = {
            "budget": budget,
            "search": dict(compare(res.C, exact), queries=res.queries, seconds=seconds),
            "sampled": dict(compare(s["C"], exact), queries=s["queries"]),
        }
    return out


def run(ns: Sequence[int] = (40, 80, 120), seed: int = 0,
        budgets: Sequence[float] = BUDGETS) -> dict:
    """Every family at every ``n`` (one model each, seeds ``seed + k``); returns the per-model
    results and summary ``rows`` (mean fractions over the models, per budget)."""
    per_model = [one_model(f, n, seed + k, budgets)
                 for k, (f, n) in enumerate(itertools.product(FAMILIES, ns))]
    result: dict = {"ns": list(ns), "budgets": list(budgets), "per_model": per_model}
    rows = []
    for units in budgets:
        for key, name in (("rho_fraction", "rho(C) / rho(exact)"),
                          ("entry_fraction", "entries >= 95% of exact")):
            search = float(np.mean([m["budgets"][units]["search"][key] for m in per_model]))
            samp = float(np.mean([m["budgets"][units]["sampled"][key] for m in per_model]))
            rows.append(row(
                f"search at n = {min(ns)}..{max(ns)}: {name}, budget {units:g} n^2 queries "
                f"({len(per_model)} local models)", search, "fraction", samp,
                search / samp if samp > 0 else None,
                note=f"sampling (influence(), whole contexts, at least one): {samp:.3f}",
            ))
    result["rows"] = rows
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ns", default="40,80,120", help="comma-separated sizes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    result = run([int(v) for v in args.ns.split(",")], args.seed)
    print(f"{'model':32s} {'budget':>8s} {'rho exact':>9s} {'search rho':>10s} "
          f"{'entries':>7s} {'sampled rho':>11s} {'entries':>7s} {'search s':>8s}")
    for m in result["per_model"]:
        for units, b in m["budgets"].items():
            print(f"{m['name']:32s} {units:>6g}n2 {m['rho_exact']:9.3f} "
                  f"{b['search']['rho_fraction']:10.3f} {b['search']['entry_fraction']:7.3f} "
                  f"{b['sampled']['rho_fraction']:11.3f} {b['sampled']['entry_fraction']:7.3f} "
                  f"{b['search']['seconds']:8.1f}")
    publish(result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
