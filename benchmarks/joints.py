"""The joint table of an exact 3-site window from a cached score table (target: under 10 s).

``glauber joints --model antiberty --context trastuzumab-vh --sites 100-102`` at one temperature:
the model load, the score table read back from ``$GLAUBER_CACHE`` (built first if missing, not
timed), and :func:`glauber.exact.joints.joints` (the Glauber stationary law of 8,000 states, the
MRF, PLL, HCB and Arnold-Gokhale joints, every pair, every edge mismatch, the 8.7 million
rectangles of the bound); wall and process-CPU seconds. ``python benchmarks/joints.py
[--spec S] [--tau T]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.measure import clock_cpu, machine_info
from benchmarks.report import publish, row

#: Target: seconds for the table from a cached score table.
TARGET_S = 10.0


def run(spec: str = "antiberty@trastuzumab-vh[100-102]", tau: float = 1.0) -> dict:
    """Time ``glauber joints`` on ``spec`` at ``tau`` with its score table on disk."""
    from glauber.exact.chain import ExactChain
    from glauber.experiments.common import get_model
    from glauber.experiments.joints import joints_table

    ExactChain(get_model(spec), tau).scores()  # make sure the table is cached (not timed)
    get_model.cache_clear()
    wall, cpu, data = clock_cpu(lambda: joints_table(spec, tau))
    r = data["rows"][0]
    rows = [row("joint table from a cached score table", wall, "s", target=f"< {TARGET_S:g} s",
                met=wall < TARGET_S,
                note=f"{spec}, tau = {tau:g}, {data['states']:,} states, {cpu:.1f} s CPU, "
                     f"Arnold-Gokhale {r['ag_iterations']} maps")]
    return {"benchmark": "joints", "machine": machine_info(), "spec": spec, "tau": tau,
            "wall_s": wall, "cpu_s": cpu, "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spec", default="antiberty@trastuzumab-vh[100-102]")
    p.add_argument("--tau", type=float, default=1.0)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    publish(run(args.spec, args.tau), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
