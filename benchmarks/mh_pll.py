"""The Metropolis-Hastings sampler and the pseudo-log-likelihood on a real MLM, against the plain
sampler timed in the same run (issue 21's targets).

Model: AntiBERTy on full antibody chains (trastuzumab VH, ``n = 120`` residues, every site free).

- **MH step rate.** :func:`glauber.estimators.glauber_chains` with ``kernel="mh:pll"`` against
  the paper's kernel (``kernel="random"``), same chains ``B``, same ``batch_size``: chain-steps
  per second. An MH step needs the proposal's forward and the ``n - 1`` other masked forwards of
  the proposal's energy (the current state's energy is cached), where a plain step needs one:
  the target is a ratio of at least ``1/(n + 1)``.
- **PLL rate.** :func:`glauber.estimators.pseudo_log_likelihood` of 64 sequences of 120 residues
  (``64 x 120`` masked rows), in rows per second, against the plain sampler's forward rate
  (rows per second: ``B`` rows per step): target at least 80%.

Also reported: the MH acceptance rate over the run (per site: in the JSON).

Run ``python benchmarks/mh_pll.py`` (``--quick``: fewer steps and sequences, for a smoke run).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from benchmarks.measure import clock, machine_info
from benchmarks.report import publish, row
from glauber.estimators import glauber_chains, pseudo_log_likelihood
from glauber.mlm_backend import load_antiberty
from glauber.mlm_backend.sequences import ANTIBODY_SEQUENCES

#: Target of the MH step rate as a multiple of ``1 / (n + 1)`` of the plain rate, and of the
#: PLL's rows per second as a fraction of the plain sampler's.
MH_TARGET = 1.0
PLL_TARGET = 0.8


def full_chain_states(model, chains: int) -> np.ndarray:
    """``chains`` copies of trastuzumab VH (as many residues as the model's ``n``)."""
    x = model.encode(ANTIBODY_SEQUENCES["trastuzumab_vh"][: model.n]).cpu().numpy()
    return np.tile(x, (chains, 1)).astype(np.int64)


def run(n: int = 120, chains: int = 8, plain_steps: int = 20, mh_steps: int = 2,
        pll_sequences: int = 64, batch_size: int = 512, device: str = "cpu",
        seed: int = 0) -> dict:
    """The measurements (see the module docstring)."""
    model = load_antiberty(n=n, device=device)
    x0 = full_chain_states(model, chains)
    glauber_chains(model, 1.0, x0, 1, seed=seed, batch_size=batch_size)  # warm-up
    plain_s, _ = clock(lambda: glauber_chains(model, 1.0, x0, plain_steps, seed=seed,
                                              batch_size=batch_size), repeat=2)
    mh_s, mh = clock(lambda: glauber_chains(model, 1.0, x0, mh_steps, seed=seed,
                                            batch_size=batch_size, kernel="mh:pll"))
    plain_rate = chains * plain_steps / plain_s
    mh_rate = chains * mh_steps / mh_s
    floor = 1.0 / (n + 1)
    ratio = mh_rate / plain_rate
    # PLL of 64 sequences (every shipped chain's first n residues, mutated at random)
    rng = np.random.default_rng(seed)
    xs = full_chain_states(model, pll_sequences)
    mutate = rng.random(xs.shape) < 0.05
    xs[mutate] = rng.integers(0, model.q, size=int(mutate.sum()))
    pll_s, pll = clock(lambda: pseudo_log_likelihood(model, xs, batch_size=batch_size))
    pll_rate = pll_sequences * n / pll_s
    plain_rows = plain_rate  # one forward row per chain and plain step
    rows = [
        row(f"MH (mh:pll) step rate vs plain, AntiBERTy n={n}", mh_rate, "chain-steps/s",
            baseline=plain_rate, ratio=ratio, target=f">= 1/(n+1) = {floor:.4f}",
            met=ratio >= MH_TARGET * floor,
            note=f"B={chains}; acceptance {mh.acceptance.overall:.3f}; "
                 f"ratio x (n+1) = {ratio * (n + 1):.2f}"),
        row(f"PLL rows/s vs plain sampler forward rows/s ({pll_sequences} x {n})", pll_rate,
            "rows/s",
            baseline=plain_rows, ratio=pll_rate / plain_rows, target=f">= {PLL_TARGET:.0%}",
            met=pll_rate >= PLL_TARGET * plain_rows,
            note=f"batch_size {batch_size}; mean normalised PLL {pll.mean() / n:.3f}"),
    ]
    return {
        "rows": rows, "machine": machine_info(), "n": n, "chains": chains,
        "plain_seconds": plain_s, "plain_steps": plain_steps, "mh_seconds": mh_s,
        "mh_steps": mh_steps, "pll_seconds": pll_s, "pll_sequences": pll_sequences,
        "acceptance": mh.acceptance.to_dict(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: n = 30, 4 chains, 8 sequences")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", default=None, help="write the whole result here")
    args = parser.parse_args(argv)
    kwargs = dict(n=30, chains=4, plain_steps=5, mh_steps=1, pll_sequences=8) \
        if args.quick else {}
    publish(run(device=args.device, **kwargs), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
