"""Peak memory of the batched sampler at B = 1024 chains of n = 128 sites on the CPU.

Target (issue "Performance and the GPU path"): the sampler at B = 1024, n = 128 stays within
4 GiB on the CPU, thanks to automatic sub-batching. Each measurement runs in a fresh Python
process (so one run's allocations cannot hide another's) and reads the process's peak resident
set size (``ru_maxrss``) after a short run of :func:`glauber.estimators.glauber_chains` on
AntiBERTy. The baseline, measured in the same run, is one unbatched forward of all 1024 rows
(``max_batch_tokens = B (n + 2)``): what the sampler would need without sub-batching.

Run ``python benchmarks/memory.py`` (``--help`` for sizes).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Sequence

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.report import publish, row

GIB = 2**30
TARGET_BYTES = 4 * GIB

#: Code run in the child process: load the model, run the chains, print the peak RSS in bytes.
_CHILD = """
import json, resource, sys
import numpy as np
from glauber.estimators import glauber_chains
from glauber.mlm_backend import load_antiberty
batch, n, steps, tokens = (int(a) if a != "None" else None for a in sys.argv[1:5])
mlm = load_antiberty(n=n, max_batch_tokens=tokens)
loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
init = np.random.default_rng(0).integers(mlm.q, size=(batch, n))
glauber_chains(mlm, 1.0, init, n_steps=steps, seed=0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"loaded_bytes": loaded, "peak_bytes": peak}))
"""


def peak_memory(batch: int, n: int, steps: int, max_batch_tokens: int | None) -> dict:
    """Peak RSS (bytes) of a fresh process running ``steps`` sampler steps at ``batch`` x ``n``."""
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(batch), str(n), str(steps), str(max_batch_tokens)],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(batch: int = 1024, n: int = 128, steps: int = 1) -> dict:
    """Sub-batched (library default) vs one unbatched forward; returns results with ``rows``."""
    sub = peak_memory(batch, n, steps, None)
    whole = peak_memory(batch, n, steps, batch * (n + 2))
    tag = f"antiberty B={batch} n={n} cpu, {steps} step(s)"
    rows = [row(
        f"sampler peak RSS, default sub-batching vs one unbatched forward ({tag})",
        sub["peak_bytes"] / GIB, "GiB", whole["peak_bytes"] / GIB,
        whole["peak_bytes"] / sub["peak_bytes"], "<= 4 GiB",
        bool(sub["peak_bytes"] <= TARGET_BYTES),
        f"after loading the model {sub['loaded_bytes'] / GIB:.2f} GiB",
    )]
    return {"batch": batch, "n": n, "steps": steps, "sub_batched": sub, "unbatched": whole,
            "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--n", type=int, default=128)
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)
    publish(run(args.batch, args.n, args.steps), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
