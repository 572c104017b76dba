"""Cost of the convergence diagnostics of ``glauber trajectory`` against its sampling.

Measured in one run, in one process, on AntiBERTy in context (the whole trastuzumab VH chain,
120 residues, every residue resampled: ``antiberty@trastuzumab-vh``) with 8 chains of 10,000
steps recorded every 10 steps (8,008 recorded states), as ``glauber trajectory`` runs them:

- **sampling**: :func:`glauber.experiments.trajectory.run_chains` (the batched sampler, the CSV
  and the checkpoints);
- **diagnostics**: :func:`glauber.experiments.trajectory_diagnostics.diagnose` on the recorded
  states: the observables (Hamming distance to each start, one-hot tokens per site, the PCA
  coordinates; the energy as ``--energy auto`` decides, i.e. none here, see below), ArviZ's
  R-hat and bulk and tail ESS at every evaluation point, ``diagnostics.json``, the three figures
  and the verdict;
- for context, not counted as diagnostics: the trajectory's own analysis that existed before
  (reading the CSV, the embeddings whose PCA the diagnostics reuse), and the cost of
  ``--energy pll`` on this model (``n = 120`` forwards per recorded state), timed on a sample
  of states and **extrapolated** to all of them.

Wall and process-CPU seconds are both reported; the target (issue 22) is diagnostics < 5% of
the sampling time. ``python benchmarks/diagnostics.py`` (about an hour on 2 busy CPU cores),
``--quick`` (a toy, seconds), ``--help``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.measure import clock_cpu, machine_info
from benchmarks.report import publish, row
from glauber.estimators.diagnostics import energy_of_states
from glauber.experiments.common import embed, get_model
from glauber.experiments.trajectory import pca_projection, read_trajectory, run_chains
from glauber.experiments.trajectory_diagnostics import diagnose, resolve_energy

#: Target: diagnostics seconds / sampling seconds.
TARGET = 0.05
QUICK = dict(model="ising-cycle:n=8", steps=2000, record_every=10, energy_sample=16)


def note(text: str) -> None:
    """Progress on stderr (the run takes long)."""
    print(f"[diagnostics] {text}", file=sys.stderr, flush=True)


def run(model: str = "antiberty@trastuzumab-vh", chains: int = 8, steps: int = 10_000,
        record_every: int = 10, checkpoint_every: int = 500, seed: int = 0,
        energy_sample: int = 8) -> dict:
    """Time the sampling, the diagnostics and (for context) the rest of the analysis."""
    m = get_model(model)
    config = {"experiment": "trajectory", "model": model, "n": int(m.n), "tau": 1.0,
              "steps": steps, "chains": chains, "checkpoint_every": checkpoint_every,
              "record_every": record_every, "seed": seed, "window": 300, "threshold": 0.12,
              "levels": [0.1, 0.2, 0.4], "diagnostics": True,
              "energy": resolve_energy(m, "auto", record_every)}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        note(f"sampling {chains} chains x {steps} steps of {model}")
        wall_s, cpu_s, _ = clock_cpu(lambda: run_chains(m, config, out, progress=False))
        note(f"sampling: {wall_s:.1f} s wall, {cpu_s:.1f} s CPU; analysis")

        def analysis() -> tuple:
            rec_steps, states = read_trajectory(out / "trajectory.csv")
            r, b, n = states.shape
            uniq, inverse = np.unique(states.reshape(r * b, n), axis=0, return_inverse=True)
            emb = embed(m, uniq)[inverse.reshape(-1)].reshape(r, b, -1)
            return rec_steps, states, emb

        wall_a, cpu_a, (rec_steps, states, emb) = clock_cpu(analysis)
        note(f"analysis: {wall_a:.1f} s wall; diagnostics")
        wall_d, cpu_d, summary = clock_cpu(
            lambda: diagnose(m, config, out, rec_steps, states, pca_projection(emb)))
        note(f"diagnostics: {wall_d:.1f} s wall, {cpu_d:.1f} s CPU; {summary['verdict']}")
        flat = states.reshape(-1, states.shape[2])
        sample = flat[np.random.default_rng(seed).choice(len(flat), energy_sample, False)]
        wall_e, cpu_e, _ = clock_cpu(lambda: energy_of_states(m, sample))
        scale = len(flat) / energy_sample
    rows = [
        row("diagnostics / sampling (wall)", wall_d, "s", wall_s, wall_d / wall_s,
            f"< {TARGET:.0%}", wall_d / wall_s < TARGET,
            f"{chains} chains x {steps} steps, {summary['observables']} observables, energy "
            f"{config['energy']}"),
        row("diagnostics / sampling (CPU)", cpu_d, "s", cpu_s, cpu_d / cpu_s, f"< {TARGET:.0%}",
            cpu_d / cpu_s < TARGET),
        row("existing analysis: CSV + embeddings (context)", wall_a, "s", wall_s,
            wall_a / wall_s, note="not part of the diagnostics"),
        row("--energy pll, extrapolated (context)", wall_e * scale, "s", wall_s,
            wall_e * scale / wall_s,
            note=f"{energy_sample} states timed, x{scale:.0f}; --energy auto skips it here"),
    ]
    return {"benchmark": "diagnostics", "machine": machine_info(), "model": model,
            "chains": chains, "steps": steps, "record_every": record_every,
            "sampling": {"wall_s": wall_s, "cpu_s": cpu_s},
            "diagnostics": {"wall_s": wall_d, "cpu_s": cpu_d, **summary},
            "analysis": {"wall_s": wall_a, "cpu_s": cpu_a},
            "energy_pll_extrapolated_s": wall_e * scale, "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="antiberty@trastuzumab-vh")
    p.add_argument("--chains", type=int, default=8)
    p.add_argument("--steps", type=int, default=10_000)
    p.add_argument("--record-every", type=int, default=10)
    p.add_argument("--quick", action="store_true", help="a toy in seconds")
    p.add_argument("--json", default=None, help="also write the result here")
    args = p.parse_args(argv)
    kwargs = QUICK if args.quick else dict(model=args.model, steps=args.steps,
                                           record_every=args.record_every)
    publish(run(chains=args.chains, **kwargs), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
