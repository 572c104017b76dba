"""Coverage of the lag-coupling estimate against the exact TV of toys and exact windows.

Each case is one independent run of :func:`glauber.estimators.lag_coupling_bound` (its own
seed) on an enumerable chain, at one step ``t``: it *covers* when the exact
``TV(mu_0 P^t, pi)`` (the start law stepped through the exact transition matrix,
:class:`glauber.exact.ExactChain`, against its exact stationary law) is at most the estimate's
upper 95% confidence limit. Families: Ising cycles (metastable at low temperature), random
tables (incompatible conditionals), Potts cycles, a 3-site window of a random joint model
with two sites frozen (:func:`glauber.core.restrict`, as a masked LM's window is), and the
exact 3-site CDR3 windows of two real masked LMs (AntiBERTy and Sapiens VH on trastuzumab VH
positions 98-100, every other residue frozen: 8,000 states, sampled from their score tables,
:meth:`glauber.exact.ExactChain.tabulated`); temperatures 0.5, 1 and 2; a single start (the
context's own residues for a window, else all zeros) or a start law (eight random states);
lags 10 and 100; ``t`` at 0, 1/4, 1/2, 1 and 2 times the exact ``t_mix(1/4)`` from that start
law (at most 2,000).
A run whose pairs do not all meet within 5,000 coupled steps is refused by the estimator (a
typed error, no claim), and counted apart.
The baseline is the point estimate (the mean, without its confidence allowance), measured on
the same runs: its coverage says how much the interval adds.

Run ``python benchmarks/lag_coupling_coverage.py`` (``--pairs``, ``--json PATH``).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path
from typing import Sequence

import networkx as nx
import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.report import publish, row
from glauber.core import restrict
from glauber.errors import ConvergenceError
from glauber.estimators.lag_coupling import lag_coupling_bound
from glauber.exact.chain import ExactChain
from glauber.toy_models import IsingModel, PottsModel, RandomJointModel, RandomTableModel

TAUS = (0.5, 1.0, 2.0)
LAGS = (10, 100)
FRACTIONS = (0.0, 0.25, 0.5, 1.0, 2.0)
TARGET = 0.95
#: Coupled steps a pair may take; a run whose pairs do not all meet is refused (a typed error).
MAX_STEPS = 5000


#: The real exact windows: family -> model spec (a window of a full chain, as certify takes it).
MLM_WINDOWS = {
    "antiberty window": "antiberty@trastuzumab-vh[98-100]",
    "sapiens-vh window": "sapiens-vh@trastuzumab-vh[98-100]",
}


def families() -> dict:
    """The chains of the benchmark, by family (a real window as its score table)."""
    from glauber.models import resolve_model

    joint = RandomJointModel(5, 3, rng=11)
    toys = {
        "ising-cycle": IsingModel(nx.cycle_graph(5)),
        "random-table": RandomTableModel(3, 3, rng=5),
        "potts-cycle": PottsModel(nx.cycle_graph(4), q=3),
        "window": restrict(joint, np.array([0, 2, 1, 1, 0]), [1, 2, 4]),
    }
    return toys | {name: ExactChain(resolve_model(spec), 1.0).tabulated()
                   for name, spec in MLM_WINDOWS.items()}


def single_start(model: object) -> np.ndarray:
    """The single start: a window's own residues (its context), else all zeros."""
    method = getattr(model, "default_states", None)
    context = None if method is None else method()
    if context is not None:
        return np.asarray(context, dtype=np.int64).reshape(1, -1)
    return np.zeros((1, model.n), dtype=np.int64)


def tmix_from(chain: ExactChain, mu0: np.ndarray, eps: float = 0.25, cap: int = 2000) -> int:
    """First ``t`` with ``TV(mu0 P^t, pi) <= eps`` (at most ``cap``)."""
    P, pi = chain.transition_matrix(), chain.stationary()
    Pt = P.T.tocsr()
    mu = mu0.copy()
    for t in range(cap + 1):
        if 0.5 * np.abs(mu - pi).sum() <= eps:
            return t
        mu = Pt @ mu
    return cap


def run(n_pairs: int = 100) -> dict:
    """Every case (module docstring); coverage overall and by family."""
    started = time.perf_counter()
    cases, refused = [], []
    seed = 0
    chains = families()
    for (name, model), tau, start, lag in itertools.product(
            chains.items(), TAUS, ("single", "law"), LAGS):
        chain = ExactChain(model, tau)
        rng = np.random.default_rng(len(cases))
        starts = (single_start(model) if start == "single" else
                  rng.integers(0, model.q, size=(8, model.n)))
        mu0 = np.zeros(chain.num_states)
        np.add.at(mu0, chain.index_of(starts), 1.0 / len(starts))
        tmix = tmix_from(chain, mu0)
        steps = sorted({int(round(f * tmix)) for f in FRACTIONS})
        tv = dict(zip(steps, chain.distance_from(starts, steps)))
        for t in steps:  # one independent run per case
            seed += 1
            try:
                bound = lag_coupling_bound(model, tau, starts, lag=lag, n_pairs=n_pairs,
                                           seed=seed, max_steps=MAX_STEPS)
            except ConvergenceError:  # refused (pairs that never met): no claim to cover
                refused.append({"family": name, "tau": tau, "start": start, "lag": lag,
                                "t": t, "tmix": tmix})
                continue
            estimate, upper = bound.at(t)
            cases.append({"family": name, "tau": tau, "start": start, "lag": lag, "t": t,
                          "tmix": tmix, "exact_tv": tv[t], "estimate": estimate,
                          "upper": upper, "covered": tv[t] <= upper + 1e-12,
                          "point_covered": tv[t] <= estimate + 1e-12})
    seconds = time.perf_counter() - started
    covered = float(np.mean([c["covered"] for c in cases]))
    point = float(np.mean([c["point_covered"] for c in cases]))
    by_family = {name: float(np.mean([c["covered"] for c in cases if c["family"] == name]))
                 for name in chains}
    print(f"{len(cases)} cases ({len(refused)} more refused: pairs that did not meet within "
          f"{MAX_STEPS:,} steps) in {seconds:.0f} s; coverage of the upper 95% limit "
          f"{covered:.3f}, of the point estimate {point:.3f}; by family: "
          + ", ".join(f"{k} {v:.3f}" for k, v in by_family.items()), flush=True)
    rows = [row(f"lag-coupling coverage of exact TV ({len(cases)} cases, {n_pairs} pairs, "
                "upper 95% limit vs the point estimate)", covered, "", point,
                covered / point if point else None, f">= {TARGET} on >= 200 cases",
                covered >= TARGET and len(cases) >= 200,
                "by family: " + ", ".join(f"{k} {v:.3f}" for k, v in by_family.items()))]
    return {"cases": cases, "refused": refused, "coverage": covered, "point_coverage": point,
            "by_family": by_family, "n_pairs": n_pairs, "seconds": seconds, "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100, help="coupled pairs a case (100)")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)
    publish(run(args.pairs), args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
