"""Upper bounds on influence: the float64 head's cost, and the bound on a full chain.

Measured in one run on AntiBERTy with the trastuzumab heavy chain (120 residues) as context:

- the masked LM's forward rate with the float64 LayerNorm head (``head="float64"``, the
  default, whose scores have a rigorous enclosure) against the model's own float32 head at the
  masked position (``head="masked"``), the same rows in the same batches, interleaved;
- :func:`glauber.estimators.influence_upper_bound` on the full chain (``n = 120``) at one
  temperature, and the whole bracket of its upper side (grid and bisection), in seconds
  (target: under 60 s on 2 cores).

Run ``python benchmarks/upper_bound.py`` (``--help`` for options).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.measure import clock, machine_info
from benchmarks.report import publish, row
from glauber.estimators import UpperBoundSource, influence_bracket, influence_upper_bound
from glauber.mlm_backend import load_antiberty
from glauber.mlm_backend.sequences import ANTIBODY_SEQUENCES


def head_rates(rows: int = 128, repeats: int = 3, seed: int = 0) -> dict:
    """Forwards/s of the float64 head and of the model's float32 head, interleaved."""
    chain = ANTIBODY_SEQUENCES["trastuzumab_vh"]
    f64 = load_antiberty(n=len(chain))
    f32 = load_antiberty(n=len(chain), head="masked")
    rng = np.random.default_rng(seed)
    states = np.broadcast_to(f64.encode(chain).numpy(), (rows, len(chain))).copy()
    sites = rng.integers(len(chain), size=rows)
    f64.scores(states[:8], sites[:8])  # warm-up
    f32.scores(states[:8], sites[:8])
    t64, t32 = [], []
    for _ in range(repeats):
        t64.append(clock(lambda: f64.scores(states, sites))[0])
        t32.append(clock(lambda: f32.scores(states, sites))[0])
    a, b = f64.scores(states, sites), f32.scores(states, sites)
    return {"rows": rows, "seconds_float64": min(t64), "seconds_float32": min(t32),
            "ratio": min(t64) / min(t32), "max_abs_difference": float((a - b).abs().max()),
            "max_abs_score": float(b.abs().max())}


def full_chain_bound(tau: float = 1.0) -> dict:
    """Seconds of the upper bound at one tau on the full chain, and of the upper side of the
    bracket (grid and bisection; no lower side)."""
    from glauber.models import resolve_model

    model = resolve_model("antiberty@trastuzumab-vh")
    seconds, ub = clock(lambda: influence_upper_bound(model, tau))
    bracket_seconds, b = clock(lambda: influence_bracket(UpperBoundSource(model), tau))
    return {"n": int(model.n), "seconds": seconds, "bracket_seconds": bracket_seconds,
            "Delta": float(ub.Delta[0, 1]), "tau_cert": b.tau_cert, "evaluations": len(b.grid)}


def run(rows: int = 128) -> dict:
    heads = head_rates(rows)
    bound = full_chain_bound()
    result = {"machine": machine_info(), "heads": heads, "bound": bound}
    result["rows"] = [
        row("AntiBERTy full chain: float64 LayerNorm head vs float32 head, forwards",
            rows / heads["seconds_float64"], "forwards/s", rows / heads["seconds_float32"],
            heads["seconds_float32"] / heads["seconds_float64"], ">= 0.9x",
            heads["seconds_float32"] / heads["seconds_float64"] >= 0.9,
            f"scores differ by at most {heads['max_abs_difference']:.2g} "
            f"(magnitude {heads['max_abs_score']:.3g})"),
        row("influence_upper_bound, 120-site chain, one tau", bound["seconds"], "s",
            target="< 60 s", met=bound["seconds"] < 60),
        row("upper side of the bracket (grid + bisection)", bound["bracket_seconds"], "s",
            note=f"{bound['evaluations']} temperatures, tau_cert = {bound['tau_cert']:.5g}"),
    ]
    return result


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=128)
    p.add_argument("--json", default=None, help="also write the results here")
    a = p.parse_args(argv)
    publish(run(a.rows), a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
