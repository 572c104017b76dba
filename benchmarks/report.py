"""Summary rows of the benchmarks and their markdown table.

A row says what was measured, against which baseline (timed in the same run), their ratio, the
target and whether the target was met. ``met`` is ``None`` where a row has no target.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from glauber.core.arrays import jsonable
from glauber.core.io import write_json_atomic
from glauber.experiments import common


def row(
    benchmark: str,
    measured: float,
    unit: str,
    baseline: float | None = None,
    ratio: float | None = None,
    target: str = "",
    met: bool | None = None,
    note: str = "",
) -> dict:
    """One summary row (a JSON-safe dict)."""
    return {
        "benchmark": benchmark,
        "measured": float(measured),
        "baseline": None if baseline is None else float(baseline),
        "unit": unit,
        "ratio": None if ratio is None else float(ratio),
        "target": target,
        "met": met,
        "note": note,
    }


def _number(x: float | None, unit: str = "") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    text = f"{x:.3g}" if abs(x) < 1e4 else f"{x:.3e}"
    return f"{text} {unit}".strip()


def markdown_table(rows: list[dict]) -> str:
    """Markdown table: benchmark, measured, baseline, ratio, target, met?."""
    return common.markdown_table(
        ("benchmark", "measured", "baseline", "ratio", "target", "met?"),
        [(r["benchmark"] + (f" ({r['note']})" if r.get("note") else ""),
          _number(r["measured"], r["unit"]), _number(r["baseline"], r["unit"]),
          "-" if r["ratio"] is None else f"{r['ratio']:.3g}x", r["target"] or "-",
          {True: "yes", False: "**no**", None: "-"}[r["met"]]) for r in rows])


def print_rows(rows: list[dict]) -> None:
    """Print the rows as the markdown table (what each benchmark script shows)."""
    print(markdown_table(rows), flush=True)


def publish(result: dict, json_path: str | os.PathLike | None = None) -> None:
    """What a benchmark script ends with: print ``result["rows"]`` as the markdown table and,
    when ``json_path`` is given, write the whole ``result`` there (atomically)."""
    print_rows(result["rows"])
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(json_path, jsonable(result))
