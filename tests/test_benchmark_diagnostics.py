"""Smoke test of benchmarks/diagnostics.py at toy size: its rows, its timings, its ratios."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import diagnostics as bench  # noqa: E402

pytest.importorskip("arviz_stats.base")  # the 'diagnostics' extra


def test_toy_run_reports_both_ratios():
    res = bench.run(model="ising-cycle:n=6", chains=4, steps=400, record_every=10,
                    energy_sample=4)
    assert res["sampling"]["wall_s"] > 0 and res["diagnostics"]["wall_s"] > 0
    wall, cpu = res["rows"][:2]
    assert wall["ratio"] == pytest.approx(res["diagnostics"]["wall_s"] / res["sampling"]["wall_s"])
    assert cpu["ratio"] == pytest.approx(res["diagnostics"]["cpu_s"] / res["sampling"]["cpu_s"])
    assert wall["met"] == (wall["ratio"] < bench.TARGET)
    assert res["diagnostics"]["energy"] == "pll" and res["diagnostics"]["observables"] > 4
