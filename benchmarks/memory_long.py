"""Peak memory of the PLL, the sampler and the MH energies on one 1,000-token sequence.

A tiny random BERT (:func:`benchmarks.random_models.random_bert`, 1,024 positions) scores a
sequence of ``n = 1000`` residues. Each measurement runs in a fresh Python process and reads its
peak resident set size (``resource.getrusage``'s ``ru_maxrss``) after the work, less the peak
after building the model: the memory the work itself added. Three paths, each sub-batched (the
library's default budget, or ``--rows`` rows per forward through ``max_batch_rows``) and as one
full batch measured in the same run (``max_batch_tokens`` = every token, ``batch_size`` = every
row: one forward of all rows per call):

* ``pll``: :func:`glauber.estimators.pseudo_log_likelihood` of one sequence (``n`` rows);
* ``sampler``: one step of :func:`glauber.estimators.glauber_chains` for ``--chains`` chains;
* ``mh``: one ``mh:pll`` step of one chain (its energies: ``2 n - 1`` rows).

Run ``python benchmarks/memory_long.py`` (``--help`` for sizes; ``--json PATH`` keeps the
results).
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

MIB = 2**20
PATHS = ("pll", "sampler", "mh")

#: Code run in the child process: build the model, run one path, print the peaks in bytes.
_CHILD = """
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import numpy as np
import torch
from benchmarks.random_models import random_bert
from glauber.estimators import glauber_chains, pseudo_log_likelihood
torch.set_num_threads(1)
path, n, chains, rows, full = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], \\
    sys.argv[6] == "full"
width = {"pll": n, "sampler": chains, "mh": 2 * n}[path]
options = ({"max_batch_tokens": width * (n + 2)} if full else
           {} if rows == "default" else {"max_batch_rows": int(rows)})
mlm = random_bert(n=n, max_position_embeddings=n + 24, **options)
x = np.random.default_rng(0).integers(0, mlm.q, size=(max(chains, 1), n))
batch = width if full else 512
loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
start = time.perf_counter()
if path == "pll":
    value = float(pseudo_log_likelihood(mlm, x[:1], batch_size=batch)[0])
elif path == "sampler":
    value = float(glauber_chains(mlm, 1.0, x, 1, seed=0, batch_size=max(batch, chains))
                  .final_states.sum())
else:
    value = float(glauber_chains(mlm, 1.0, x[:1], 1, seed=0, kernel="mh:pll",
                                 batch_size=batch).final_energy[0])
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"loaded_bytes": loaded, "peak_bytes": peak, "seconds": seconds,
                  "rows_per_forward": mlm.rows_per_forward(), "value": value}))
"""


def measure(path: str, n: int, chains: int, rows: str, full: bool) -> dict:
    """Peaks (bytes), time and rows per forward of one path in a fresh process."""
    root = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, root, path, str(n), str(chains), rows,
         "full" if full else "sub"],
        check=True, capture_output=True, text=True,
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["added_bytes"] = max(res["peak_bytes"] - res["loaded_bytes"], 1)
    return res


def run(n: int = 1000, chains: int = 256, rows: str = "default",
        paths: Sequence[str] = PATHS) -> dict:
    """Each path sub-batched and as one full batch (the baseline), in the same run."""
    out: dict = {"n": n, "chains": chains, "rows": [], "paths": {}}
    for path in paths:
        sub = measure(path, n, chains, rows, False)
        whole = measure(path, n, chains, rows, True)
        out["paths"][path] = {"sub_batched": sub, "full_batch": whole}
        what = {"pll": "pseudo_log_likelihood, 1 sequence",
                "sampler": f"glauber_chains, {chains} chains, 1 step",
                "mh": "glauber_chains mh:pll, 1 chain, 1 step"}[path]
        out["rows"].append(row(
            f"peak RSS added, sub-batched vs one full batch ({what}; random BERT h32, "
            f"n = {n}, cpu)",
            sub["added_bytes"] / MIB, "MiB", whole["added_bytes"] / MIB,
            whole["added_bytes"] / sub["added_bytes"], "",
            None,
            f"{sub['rows_per_forward']} vs {whole['rows_per_forward']} rows per forward; "
            f"{sub['seconds']:.1f} s vs {whole['seconds']:.1f} s; same value: "
            f"{abs(sub['value'] - whole['value']) <= 1e-6 * max(1.0, abs(whole['value']))}",
        ))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="sites (default 1000)")
    parser.add_argument("--chains", type=int, default=256,
                        help="chains of the sampler path (default 256)")
    parser.add_argument("--rows", default="default",
                        help="rows per forward when sub-batched: 'default' (the library's "
                             "budget) or an integer (max_batch_rows)")
    parser.add_argument("--paths", default=",".join(PATHS), help="comma-separated subset")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)
    publish(run(args.n, args.chains, args.rows, args.paths.split(",")), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
