"""Score-table rows per second on CPU: freed memory kept in the heap, and small sub-batches,
against glibc's defaults and the default 65,536 tokens per forward.

A window's score table (docs/performance.md, "A 4-site window end to end") is a long run of
forwards of the same model. On CPU the default sub-batch (:data:`glauber.mlm_backend.device.
CPU_BATCH_TOKENS`) puts 256 rows of AntiBERTy's 122-token frame in one forward, whose
feed-forward intermediate (256 MB) is above glibc's largest mmap threshold (32 MiB): under
glibc's defaults every forward maps fresh pages and faults them in. The 4-site build of
2026-12-07 counted 160 million minor page faults and 538 s of system time against 3,665 s of
user time. This script builds the same rows of the 4-site AntiBERTy window (trastuzumab VH
97-100, site 98, the table's own queries and batches,
:func:`glauber.exact.table_shards.shard_scores`) three ways, alternating ``--repeats`` times:
``default`` (glibc's defaults, the default sub-batch), ``heap`` (inside
:func:`glauber.core.heap.heap_reuse`, what the table build now does) and ``small``
(``--tokens`` tokens per forward, glibc's defaults); it prints rows/s, page faults and system
time of each, the ratios of ``heap`` and ``small`` to ``default``, and whether the scores agree
bit for bit.

Run ``python benchmarks/table_batch.py`` (``--tokens``, ``--rows``, ``--repeats``, ``--json``).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.report import publish, row  # noqa: E402

#: The window measured (a spec of glauber.models.resolve_model) and its site.
WINDOW, SITE = "antiberty@trastuzumab-vh[97-100]", 1
#: The small sub-batch's default, in tokens per forward (8 rows of the 122-token frame).
SMALL_TOKENS = 1024


def build(model, rows: int, batch: int) -> tuple[float, int, float, np.ndarray]:
    """``(seconds, minor page faults, system seconds, scores)`` of ``rows`` table rows."""
    from glauber.exact.table_shards import shard_scores

    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    scores = shard_scores(model, SITE, 0, rows, batch)
    seconds = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return seconds, r1.ru_minflt - r0.ru_minflt, r1.ru_stime - r0.ru_stime, scores


def run(rows: int = 512, repeats: int = 3, tokens: int = SMALL_TOKENS) -> dict:
    """The three builds on the same rows, alternating (module docstring)."""
    from benchmarks.measure import machine_info
    from glauber.core.heap import heap_reuse
    from glauber.exact.score_table import DEFAULT_BATCH_SIZE
    from glauber.models import resolve_model

    base = resolve_model(WINDOW)
    small = resolve_model(WINDOW)
    small.model._budget = (tokens, None)  # same weights and head; only the budget differs
    small.model._rows_cache.clear()
    build(small, 16, DEFAULT_BATCH_SIZE)  # warm-up: first-call costs on no side
    build(base, 16, DEFAULT_BATCH_SIZE)

    def heap(model) -> tuple[float, int, float, np.ndarray]:
        with heap_reuse():
            return build(model, rows, DEFAULT_BATCH_SIZE)

    variants = {"default": lambda: build(base, rows, DEFAULT_BATCH_SIZE),
                "heap": lambda: heap(base),
                "small": lambda: build(small, rows, DEFAULT_BATCH_SIZE)}
    runs: dict[str, list] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, measure in variants.items():
            runs[name].append(measure())
    same = all(np.array_equal(runs["default"][k][3], runs[name][k][3])
               for name in ("heap", "small") for k in range(repeats))

    def summary(name: str) -> dict:
        r = runs[name]
        return {"rows_per_s": rows * len(r) / sum(x[0] for x in r),
                "minor_faults_per_row": sum(x[1] for x in r) / (rows * len(r)),
                "system_s_per_row": sum(x[2] for x in r) / (rows * len(r))}

    out = {name: summary(name) for name in variants}
    o = out["default"]
    rows_per_forward = {"small": small.model.rows_per_forward(),
                        "default": base.model.rows_per_forward()}
    labels = {"heap": "freed memory kept in the heap (heap_reuse) vs glibc's defaults",
              "small": f"{tokens:,}-token CPU sub-batches vs the default 65,536"}
    table = []
    for name in ("heap", "small"):
        d = out[name]
        note = (f"{rows} rows x {repeats}, alternating; rows per forward "
                f"{rows_per_forward['small' if name == 'small' else 'default']} vs "
                f"{rows_per_forward['default']}; minor page faults per row "
                f"{d['minor_faults_per_row']:.0f} vs {o['minor_faults_per_row']:.0f}; system "
                f"time per row {1e3 * d['system_s_per_row']:.1f} vs "
                f"{1e3 * o['system_s_per_row']:.1f} ms; scores bit-identical: {same}")
        table.append(row(f"score-table rows/s, AntiBERTy 4-site window ({labels[name]})",
                         d["rows_per_s"], "rows/s", o["rows_per_s"],
                         d["rows_per_s"] / o["rows_per_s"], "> 1 and bit-identical",
                         d["rows_per_s"] > o["rows_per_s"] and same, note))
    return {"machine": machine_info(), "window": WINDOW, "site": SITE, "table_rows": rows,
            "repeats": repeats, "tokens": tokens, **out,
            "rows_per_forward": rows_per_forward, "bit_identical": same, "rows": table}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=512, help="table rows per build")
    parser.add_argument("--repeats", type=int, default=3, help="alternating builds of each")
    parser.add_argument("--tokens", type=int, default=SMALL_TOKENS,
                        help="tokens per forward of the small sub-batch")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)
    publish(run(args.rows, args.repeats, args.tokens), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
