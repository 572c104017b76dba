"""Checkpointed results logs, atomic writes and executors."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest

from glauber.core.io import atomic_write_text
from glauber.errors import MissingDependencyError, ResumeMismatchError
from glauber.experiments.checkpoint import ResultsLog, config_hash
from glauber.experiments.executor import (
    LocalExecutor,
    RayExecutor,
    make_executor,
    run_cells,
)


def test_config_hash_ignores_key_order_and_sees_values():
    assert config_hash({"a": 1, "b": [1.0, 2.0]}) == config_hash({"b": [1.0, 2.0], "a": 1})
    assert config_hash({"a": 1}) != config_hash({"a": 2})


def test_atomic_write_leaves_only_the_target(tmp_path):
    atomic_write_text(tmp_path / "x.txt", "one")
    atomic_write_text(tmp_path / "x.txt", "two")
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]
    assert (tmp_path / "x.txt").read_text() == "two"


def test_log_roundtrip_every_line_is_complete_json(tmp_path):
    path = tmp_path / "r.jsonl"
    log = ResultsLog(path, {"model": "m", "seed": 0}, command="glauber x")
    log.append("a", {"v": 1.5, "inf": float("inf")})
    log.append("b", {"v": None})
    lines = path.read_text().splitlines()
    assert len(lines) == 3
    records = [json.loads(line) for line in lines]  # strict JSON: no partial rows, no Infinity
    assert records[0]["header"]["command"] == "glauber x"
    assert records[1] == {"cell": "a", "result": {"v": 1.5, "inf": "inf"}}
    again = ResultsLog(path, {"seed": 0, "model": "m"})
    assert list(again.done) == ["a", "b"] and "a" in again


def test_resume_with_another_configuration_is_refused(tmp_path):
    ResultsLog(tmp_path / "r.jsonl", {"model": "m", "budget": 10}).append("a", {})
    with pytest.raises(ResumeMismatchError, match="budget"):
        ResultsLog(tmp_path / "r.jsonl", {"model": "m", "budget": 11})


def test_a_foreign_file_is_refused(tmp_path):
    (tmp_path / "r.jsonl").write_text("not json\n")
    with pytest.raises(ResumeMismatchError):
        ResultsLog(tmp_path / "r.jsonl", {})


def test_run_cells_skips_finished_cells(tmp_path):
    calls = []

    def fn(cell):
        calls.append(cell["key"])
        return {"sq": cell["x"] ** 2}

    cells = [{"key": f"c{x}", "x": x} for x in range(4)]
    log = ResultsLog(tmp_path / "r.jsonl", {"k": 1})
    log.append("c1", {"sq": 1})  # as if an earlier run finished c1
    out = run_cells(log, fn, cells, LocalExecutor(), "t", progress=False)
    assert out == [{"sq": x * x} for x in range(4)]
    assert calls == ["c0", "c2", "c3"]
    calls.clear()
    run_cells(ResultsLog(tmp_path / "r.jsonl", {"k": 1}), fn, cells, LocalExecutor(), "t", False)
    assert calls == []


def _cell(cell, progress):
    for k in range(1, 4):  # thirds do not add up to one in floating point
        progress(k / 3)
    return {"x": cell["x"]}


def test_progress_counts_whole_cells(tmp_path, capsys):
    """The bar moves within a cell but counts whole cells: it ends at 6/6, never at
    5.999999999999993/6 (issue 24)."""
    cells = [{"key": f"c{x}", "x": x} for x in range(6)]
    run_cells(ResultsLog(tmp_path / "r.jsonl", {"k": 1}), _cell, cells, LocalExecutor(), "t")
    err = capsys.readouterr().err
    frames = [f.strip() for f in err.replace("\r", "\n").splitlines() if f.strip()]
    assert frames[-1].startswith("t: 100%") and "| 6/6 cells" in frames[-1]
    assert all(re.search(r"\| \d/6 cells", f) for f in frames), frames
    assert "5.99" not in err


def test_local_executor_keeps_order():
    assert list(LocalExecutor().map(lambda v: -v, [3, 1, 2])) == [-3, -1, -2]
    assert isinstance(make_executor(None), LocalExecutor)


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="ray is installed")
def test_ray_without_ray_says_how_to_install():
    with pytest.raises(MissingDependencyError, match="pip install ray"):
        RayExecutor()
    with pytest.raises(MissingDependencyError):
        make_executor("auto")
