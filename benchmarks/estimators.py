"""Estimators on a masked LM: queries/s and fraction of matmul speed; stacked vs two-call coupling.

Measured in one run on AntiBERTy (``n = 20``) by default:

- :func:`glauber.estimators.rectangle_test` (``4 r`` conditional queries for ``r`` rectangles,
  in two batched passes) and :func:`glauber.estimators.influence` (``S n + S n R (n - 1)``
  queries): masked-LM forwards per second, and model FLOP/s (:mod:`benchmarks.flops`) as a
  fraction of ``torch.matmul`` FLOP/s on the model's feed-forward shape at the same row count;
- :func:`glauber.estimators.coupling_time` (both chains of every pair stacked into one
  :meth:`scores` call per step) against the same maximally coupled step with the two chains
  queried in two calls (pair-steps/s).

Run ``python benchmarks/estimators.py`` (``--help`` for options).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from benchmarks.flops import masked_lm_flops
from benchmarks.measure import clock, feed_forward_matmul_flops, machine_info
from benchmarks.report import publish, row
from benchmarks.sampler import add_model_arguments, initial_states, load_model, synchronize
from glauber.core import log_conditionals
from glauber.core.arrays import like, namespace
from glauber.estimators import (
    coupling_time,
    influence,
    maximal_coupling_step,
    rectangle_test,
)
from glauber.estimators.batch_arrays import to_model_library
from glauber.estimators.random_draws import device_generator, random_sites
from glauber.mlm_backend import HFMaskedLM


def throughput(mlm: HFMaskedLM, queries: int, seconds: float, rows_per_call: int) -> dict:
    """Queries/s, model FLOP/s and their fraction of matmul FLOP/s at ``rows_per_call`` rows."""
    rows = min(rows_per_call, queries)
    peak = feed_forward_matmul_flops(mlm, rows)["wall"]
    flops = queries * masked_lm_flops(mlm.model.config, mlm.n + 2) / seconds
    return {"queries": queries, "seconds": seconds, "queries_per_s": queries / seconds,
            "model_flops_per_s": flops, "matmul_flops_per_s": peak, "matmul_fraction": flops / peak,
            "rows_per_call": rows}


def rectangle_rate(mlm: HFMaskedLM, n_rectangles: int, batch_size: int = 4096) -> dict:
    """Time :func:`rectangle_test` on ``n_rectangles`` rectangles (``4 r`` queries)."""
    states = initial_states(mlm, 4)
    rectangle_test(mlm, states, n_rectangles=2, batch_size=batch_size)  # warm-up
    seconds, _ = clock(lambda: rectangle_test(mlm, states, n_rectangles=n_rectangles,
                                              batch_size=batch_size))
    return throughput(mlm, 4 * n_rectangles, seconds, min(batch_size, 2 * n_rectangles))


def influence_rate(mlm: HFMaskedLM, contexts: int, n_replacements: int = 1,
                   batch_size: int = 4096) -> dict:
    """Time :func:`influence` on ``contexts`` contexts (``S n + S n R (n - 1)`` queries)."""
    states = initial_states(mlm, contexts)
    n = mlm.n
    seconds, _ = clock(lambda: influence(mlm, 1.0, contexts=states,
                                         n_replacements=n_replacements, batch_size=batch_size))
    queries = contexts * n + contexts * n * n_replacements * (n - 1)
    return throughput(mlm, queries, seconds, batch_size)


@torch.inference_mode()
def two_call_coupling(mlm: HFMaskedLM, x0: np.ndarray, y0: np.ndarray, n_steps: int,
                      tau: float = 1.0, seed: int = 0) -> tuple[Any, Any]:
    """Baseline: the same-site maximally coupled step of :func:`coupling_time`, with the chains
    ``x`` and ``y`` of all pairs queried in two :meth:`scores` calls instead of one stacked call.
    """
    x = to_model_library(mlm, x0, 0, tau)
    y = to_model_library(mlm, y0, 0, tau)
    xp = namespace(x)
    gen = device_generator(x, np.random.default_rng(seed))
    all_sites, rows = like(x, np.arange(mlm.n)), like(x, np.arange(x.shape[0]))
    for _ in range(n_steps):
        sites = random_sites(x, all_sites, int(x.shape[0]), gen)
        lp_x = log_conditionals(mlm, x, sites, tau)
        lp_y = log_conditionals(mlm, y, sites, tau)
        a, b = maximal_coupling_step(lp_x, lp_y, gen)
        b = xp.where(xp.all(x == y, axis=1), a, b)
        x[rows, sites] = a
        y[rows, sites] = b
    synchronize(mlm)
    return x, y


def coupling_rate(mlm: HFMaskedLM, pairs: int, n_steps: int, seed: int = 0) -> dict:
    """Pair-steps/s of :func:`coupling_time` (stacked) and of :func:`two_call_coupling`.

    Pairs start from independent uniform states (they differ almost everywhere, so none
    coalesce within a few steps); ``sync_every = n_steps`` keeps every pair in the batch.
    """
    rng = np.random.default_rng(seed)
    x0 = rng.integers(mlm.q, size=(pairs, mlm.n))
    y0 = rng.integers(mlm.q, size=(pairs, mlm.n))
    coupling_time(mlm, 1.0, x0, y0, budget=1)  # warm-up
    t_stacked, res = clock(lambda: coupling_time(mlm, 1.0, x0, y0, budget=n_steps,
                                                 sync_every=n_steps))
    t_two, _ = clock(lambda: two_call_coupling(mlm, x0, y0, n_steps))
    return {
        "pairs": pairs, "steps": n_steps, "coalesced": int((~res.censored).sum()),
        "seconds_stacked": t_stacked, "seconds_two_calls": t_two,
        "pair_steps_per_s_stacked": pairs * n_steps / t_stacked,
        "pair_steps_per_s_two_calls": pairs * n_steps / t_two,
        "speedup": t_two / t_stacked,
    }


def run(
    model: str = "antiberty",
    n: int = 20,
    n_rectangles: int = 64,
    influence_contexts: int = 1,
    coupling_pairs: int = 64,
    coupling_steps: int = 2,
    device: str = "cpu",
    dtype: Any = None,
    mlm: HFMaskedLM | None = None,
) -> dict:
    """The estimator measurements (``mlm`` replaces the named ``model``); returns the results
    with their summary ``rows``."""
    mlm = mlm if mlm is not None else load_model(model, n, device, dtype)
    result = {
        "model": mlm.name, "n": mlm.n, "device": str(mlm.device),
        "rectangle": rectangle_rate(mlm, n_rectangles),
        "influence": influence_rate(mlm, influence_contexts),
        "coupling": coupling_rate(mlm, coupling_pairs, coupling_steps),
    }
    result["rows"] = summary_rows(result)
    return result


def summary_rows(result: dict) -> list[dict]:
    """The summary-table rows of a :func:`run` result."""
    tag = f"{result['model']} n={result['n']} {result['device']}"
    rows = []
    for name in ("rectangle", "influence"):
        r = result[name]
        rows.append(row(
            f"{name} model FLOP/s vs matmul ({tag})", r["model_flops_per_s"] / 1e9, "GFLOP/s",
            r["matmul_flops_per_s"] / 1e9, r["matmul_fraction"],
            note=f"{r['queries_per_s']:.3g} forwards/s, {r['queries']} queries",
        ))
    c = result["coupling"]
    rows.append(row(
        f"coupling stacked vs two calls, {c['pairs']} pairs ({tag})",
        c["pair_steps_per_s_stacked"], "pair-steps/s", c["pair_steps_per_s_two_calls"],
        c["speedup"], note=f"{c['steps']} steps",
    ))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_arguments(parser)
    parser.add_argument("--rectangles", type=int, default=64)
    parser.add_argument("--contexts", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    print(machine_info())
    result = run(args.model, args.n, args.rectangles, args.contexts, args.pairs, args.steps,
                 args.device, args.dtype)
    publish(result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
