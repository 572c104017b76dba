"""Run every benchmark and write ``benchmarks/results.json`` and ``benchmarks/results.md``.

Each benchmark runs in turn in this process (its ratios compare timings taken in the same run);
a benchmark that fails is recorded with its error and the others still run. Each records the
load average at its start and end. ``--update`` reruns the named benchmarks into the existing
files and keeps the others. Both files are written atomically (temporary file, then rename).
``make bench`` runs this inside ``.venv``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Callable, Sequence

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import (
    diagnostics,
    estimators,
    exact_chain,
    exact_scale,
    exact_window,
    influence_search,
    influence_search_large,
    joints,
    memory,
    mh_pll,
    sampler,
    upper_bound,
)
from benchmarks.measure import machine_info
from benchmarks.report import markdown_table, print_rows
from glauber.core.arrays import jsonable
from glauber.core.io import atomic_write_text, write_json_atomic

HERE = Path(__file__).resolve().parent

#: Name -> (core function, command that reproduces it alone).
BENCHMARKS: dict[str, tuple[Callable[[], dict], str]] = {
    "exact_chain": (exact_chain.run, "python benchmarks/exact_chain.py"),
    "sampler": (sampler.run, "python benchmarks/sampler.py"),
    "estimators": (estimators.run, "python benchmarks/estimators.py"),
    "memory": (memory.run, "python benchmarks/memory.py"),
    "influence_search": (influence_search.run, "python benchmarks/influence_search.py"),
    "influence_search_large": (influence_search_large.run,
                               "python benchmarks/influence_search_large.py"),
    "exact_window": (exact_window.run, "python benchmarks/exact_window.py"),
    "mh_pll": (mh_pll.run, "python benchmarks/mh_pll.py"),
    "exact_scale": (exact_scale.run, "python benchmarks/exact_scale.py"),
    "joints": (joints.run, "python benchmarks/joints.py"),
    "upper_bound": (upper_bound.run, "python benchmarks/upper_bound.py"),
    "diagnostics": (diagnostics.run, "python benchmarks/diagnostics.py"),
}


def run_benchmarks(names: Sequence[str]) -> dict:
    """Run the named benchmarks; returns machine info, per-benchmark results and all rows."""
    results: dict = {"machine": machine_info(), "benchmarks": {}, "rows": []}
    for name in names:
        core, command = BENCHMARKS[name]
        print(f"== {name} ({command})", flush=True)
        load = machine_info()["load_average_1_5_15"]
        start = time.perf_counter()
        try:
            out = core()
        except Exception as exc:  # record the failure; the other benchmarks still run
            out = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(),
                   "rows": []}
            print(out["traceback"], file=sys.stderr, flush=True)
        out["seconds_total"] = time.perf_counter() - start
        out["command"] = command
        out["load_average"] = [load, machine_info()["load_average_1_5_15"]]
        results["benchmarks"][name] = out
        results["rows"].extend(out["rows"])
        print_rows(out["rows"])
    results["machine"]["load_average_at_end"] = machine_info()["load_average_1_5_15"]
    return results


def updated(previous: dict, fresh: dict) -> dict:
    """``previous`` with the benchmarks of ``fresh`` replaced (rows in :data:`BENCHMARKS`
    order; the machine of the first run kept, the update's recorded beside it)."""
    benchmarks = {**previous["benchmarks"], **fresh["benchmarks"]}
    order = [name for name in BENCHMARKS if name in benchmarks]
    machine = dict(previous["machine"])
    machine["updates"] = [*machine.get("updates", []),
                          {"benchmarks": list(fresh["benchmarks"]), **fresh["machine"]}]
    return {"machine": machine, "benchmarks": {name: benchmarks[name] for name in order},
            "rows": [row for name in order for row in benchmarks[name]["rows"]]}


def markdown_report(results: dict) -> str:
    """``results.md``: the machine, the summary table and the failures."""
    m = results["machine"]
    lines = [
        "# Benchmark results",
        "",
        f"Machine: {m['nproc']} cores, {m['cpu_model']} ({m['cpu_capability']}), torch "
        f"{m['torch']} with {m['torch_threads']} threads, numpy {m['numpy']}, scipy "
        f"{m['scipy']}; load average {m['load_average_1_5_15']} at start, "
        f"{m['load_average_at_end']} at end; {m['time']}.",
        "",
        "Ratios compare timings taken in the same run (`python benchmarks/run_all.py`).",
        "",
        markdown_table(results["rows"]),
    ]
    for update in m.get("updates", []):
        lines.insert(3, f"Rerun later (`--update`): {', '.join(update['benchmarks'])}; load "
                        f"average {update['load_average_1_5_15']} at start, "
                        f"{update['load_average_at_end']} at end; {update['time']}.")
    for name, out in results["benchmarks"].items():
        load = out.get("load_average")
        lines.append(f"- `{name}`: {out['seconds_total']:.0f} s (`{out['command']}`"
                     + (f"; load average {load[0]} at start, {load[1]} at end" if load else "")
                     + ")" + (f" **failed**: {out['error']}" if "error" in out else ""))
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*",
                        help=f"benchmarks to run, of {', '.join(BENCHMARKS)} (default: all)")
    parser.add_argument("--out", default=str(HERE), help="folder for results.json/results.md")
    parser.add_argument("--update", action="store_true",
                        help="rerun the named benchmarks into the existing results, keeping the "
                        "others")
    args = parser.parse_args(argv)
    unknown = [name for name in args.names if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmarks {unknown}; choose from {', '.join(BENCHMARKS)}")
    results = run_benchmarks(args.names or list(BENCHMARKS))
    out = Path(args.out)
    if args.update and (out / "results.json").exists():
        results = updated(json.loads((out / "results.json").read_text()), jsonable(results))
    write_json_atomic(out / "results.json", jsonable(results))
    atomic_write_text(out / "results.md", markdown_report(results))
    print(f"wrote {out / 'results.json'} and {out / 'results.md'}")
    return 1 if any("error" in b for b in results["benchmarks"].values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
