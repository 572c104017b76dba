"""Exact 4-site AntiBERTy window on a GPU: the score table, then the factor ``M = B A`` squared.

The window chain of ``k`` sites over ``q = 20`` amino acids has ``q^k`` states (160,000 at
``k = 4``) and factors through ``R = k q^(k-1)`` classes (32,000): ``P^t = A M^(t-1) B``
(:mod:`glauber.exact.factored`), so worst-start ``t_mix`` costs about ``2 log2 t_mix`` products
of ``M`` (32,000^2 float64 = 7.6 GiB: one H200 holds ``M`` and two powers). This script

1. builds the score table (``k q^(k-1)`` = 32,000 forwards of the full 120-residue sequence) on
   the device: forwards/s against the batched sampler's rate measured in the same run;
2. forms ``M`` as a sparse matrix (``n q`` entries a row) and densifies it on the device;
3. squares it ``--squarings`` times in float64 (each product renormalised to unit row sums, as
   :mod:`glauber.exact.mixing` does): seconds per product and FLOP/s (``2 R^3`` per product)
   against a float64 ``torch.matmul`` of the same size timed just before.

``python benchmarks/gpu_window.py --device cuda`` (defaults: sites 99-102 of trastuzumab VH,
tau 1); ``--sites 99-100 --device cpu`` is the CPU smoke size (R = 40).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Sequence

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from benchmarks.report import publish, row


def _sync(torch, device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def factor_coo(conditionals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Rows, columns and values of ``M = B A`` (duplicates to be summed), and ``R``.

    Row ``c = (s, x_{-s})`` puts ``p_s(a | x_{-s}) / n`` on each class ``c_{s'}(y)`` of every
    ``y = x^(s -> a)`` (the construction of ``FactoredGlauber``, kept sparse).
    """
    n, S, q = conditionals.shape
    width = q ** (n - 1)
    x = np.arange(S)
    classes = np.stack([s * width + (x // q ** (n - s)) * q ** (n - 1 - s) + x % q ** (n - 1 - s)
                        for s in range(n)])
    own = np.take_along_axis(conditionals, ((x[None, :] // q ** (n - 1 - np.arange(n))[:, None])
                                            % q)[:, :, None], axis=2)[:, :, 0]  # p_s(y_s | .)
    rows, cols, vals = [], [], []
    for s in range(n):
        for other in range(n):
            rows.append(classes[s])
            cols.append(classes[other])
            vals.append(own[s] / n)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), n * width


def run(sites: str = "99-102", tau: float = 1.0, device: str = "cuda", squarings: int = 4,
        batch_size: int = 1024, dtype: str | None = "bfloat16") -> dict:
    import torch

    from glauber.estimators import glauber_chains
    from glauber.exact.chain import ExactChain
    from glauber.models import resolve_model

    window = resolve_model(f"antiberty@trastuzumab-vh[{sites}]", device=device, dtype=dtype)
    k, q = window.n, window.q
    chain = ExactChain(window, tau, max_states=q**k, batch_size=batch_size, cache=False)
    start = time.perf_counter()
    chain.scores()
    _sync(torch, device)
    build = time.perf_counter() - start
    forwards = k * q ** (k - 1)
    sampler_start = time.perf_counter()
    glauber_chains(window, tau, np.zeros((batch_size, k), dtype=np.int64), 2, seed=0,
                   batch_size=batch_size)
    _sync(torch, device)
    sampler_rate = 2 * batch_size / (time.perf_counter() - sampler_start)
    r, c, v, R = factor_coo(chain.conditionals())
    start = time.perf_counter()
    M = torch.sparse_coo_tensor(np.stack([r, c]), v, (R, R), dtype=torch.float64,
                                device=device, check_invariants=False).coalesce().to_dense()
    _sync(torch, device)
    densify = time.perf_counter() - start
    rowsum_error = float((M.sum(1) - 1).abs().max())
    ref = torch.rand(R, R, dtype=torch.float64, device=device)
    out = torch.empty_like(ref)
    torch.matmul(ref, ref, out=out)  # warm-up
    _sync(torch, device)
    start = time.perf_counter()
    torch.matmul(ref, ref, out=out)
    _sync(torch, device)
    matmul_seconds = time.perf_counter() - start
    del ref
    start = time.perf_counter()
    for _ in range(squarings):
        torch.matmul(M, M, out=out)
        out /= out.sum(1, keepdim=True)
        M, out = out, M
    _sync(torch, device)
    per_product = (time.perf_counter() - start) / squarings
    flops = 2.0 * R**3
    rows = [
        row(f"{k}-site AntiBERTy window: score table ({forwards} forwards)", forwards / build,
            "forwards/s", sampler_rate, forwards / build / sampler_rate, ">= 0.8x sampler",
            forwards / build / sampler_rate >= 0.8, f"{build:.1f} s on {device}"),
        row(f"factor M ({R} x {R}, float64) squared on {device}", flops / per_product / 1e12,
            "TFLOP/s", flops / matmul_seconds / 1e12, matmul_seconds / per_product,
            note=f"{per_product:.3g} s a product; 2 log2(t_mix) products for t_mix; "
                 f"densify {densify:.2g} s; row sums within {rowsum_error:.1e}"),
    ]
    return {"rows": rows, "states": q**k, "classes": R, "build_seconds": build,
            "sampler_forwards_per_s": sampler_rate, "seconds_per_product": per_product,
            "matmul_seconds": matmul_seconds, "squarings": squarings,
            "stochastic_after": float((M.sum(1) - 1).abs().max())}


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", default="99-102")
    parser.add_argument("--tau", type=float, default=1.0)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--squarings", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    publish(run(args.sites, args.tau, args.device, args.squarings, args.batch_size,
                None if args.dtype == "none" else args.dtype), args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
