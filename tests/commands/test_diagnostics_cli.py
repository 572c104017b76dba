"""``glauber trajectory``'s convergence diagnostics and ``glauber joints`` on the command line.

Oracles: the files and keys the issue names (``diagnostics.json``: per observable ``rhat``,
``ess_bulk``, ``ess_tail`` and the first converged step), the starts written in record 0 of
``trajectory.csv``, and one-line typed errors (exit 2) for a missing ArviZ, a window over the
exact limit and a pivot a toy cannot have.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import glauber.cli
from glauber.experiments.trajectory import read_trajectory

pytest.importorskip("arviz_stats.base")  # the 'diagnostics' extra

RUN = ["trajectory", "--model", "ising-cycle:n=6", "--tau", "0.4", "--steps", "2000",
       "--checkpoint-every", "500", "--record-every", "10", "--window", "200", "--threshold",
       "0.05", "--no-progress"]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = glauber.cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_trajectory_writes_diagnostics_and_a_verdict(tmp_path):
    first = tmp_path / "first"
    code, out, err = run(*RUN, "--chains", "4", "--out", str(first))
    assert code == 0, err
    assert "diagnostics: " in out and "diagnostics.json" in out
    report = json.loads((first / "diagnostics.json").read_text())
    assert report["chains"] == 4 and report["energy"] == "pll"
    assert report["verdict"] in out
    names = set(report["observables"]) | set(report["constant_observables"])
    assert {"energy", "hamming to start 1", "hamming to start 4", "PC1"} <= names
    for entry in report["observables"].values():
        assert len(entry["rhat"]) == len(entry["ess_bulk"]) == len(entry["ess_tail"]) == len(
            report["steps"])
        assert "first_converged_step" in entry
    assert report["steps"][-1] == 2000
    manifest = json.loads((first / "manifest.json").read_text())
    for name in ("diagnostics.json", "diagnostics_trace.png", "diagnostics_rank.png",
                 "diagnostics_rhat.png"):
        assert (first / name).stat().st_size > 0 and name in manifest["files"]
    summary = json.loads((first / "trajectory_summary.json").read_text())
    assert summary["diagnostics"]["verdict"] == report["verdict"]
    # at tau = 0.4 the aligned states trap the chains: the next run starts from those modes
    assert summary["n_traps"] >= 1
    second = tmp_path / "second"
    code, _, err = run(*RUN, "--chains", "6", "--seed", "1", "--starts-from", str(first),
                       "--out", str(second))
    assert code == 0, err
    traps = json.loads((second / "manifest.json").read_text())["config"]["trap_starts"]
    _, states = read_trajectory(second / "trajectory.csv")
    assert 1 <= len(traps) <= 3
    np.testing.assert_array_equal(states[0, 1:1 + len(traps)], traps)  # after the context


def test_no_diagnostics_and_too_few_chains(tmp_path):
    code, out, err = run(*RUN, "--chains", "4", "--no-diagnostics", "--out", str(tmp_path / "a"))
    assert code == 0 and "diagnostics:" not in out, err
    assert not (tmp_path / "a" / "diagnostics.json").exists()
    code, out, err = run(*RUN, "--chains", "2", "--out", str(tmp_path / "b"))
    assert code == 0, err
    verdict = json.loads((tmp_path / "b" / "diagnostics.json").read_text())["verdict"]
    assert verdict.startswith("only 2 chains")
    code, out, err = run(*RUN, "--chains", "1", "--out", str(tmp_path / "c"))
    assert code == 0 and not (tmp_path / "c" / "diagnostics.json").exists(), err
    assert "diagnostics: none" in out and "--chains 4" in out


def test_bad_starts_from_is_one_line(tmp_path):
    (tmp_path / "x.json").write_text("{}")
    code, _, err = run(*RUN, "--starts-from", str(tmp_path / "x.json"), "--out",
                       str(tmp_path / "o"))
    assert code == 2 and err.count("\n") == 1 and "--starts-from" in err


def test_missing_arviz_is_a_one_line_error_before_any_work(tmp_path):
    stub = tmp_path / "stub" / "arviz_stats"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("raise ImportError('arviz-stats is not installed')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path / "stub"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run([sys.executable, "-m", "glauber.cli", *RUN, "--out", "run"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "glauber[diagnostics]" in lines[0], lines
    assert not (tmp_path / "run").exists()


def test_joints_prints_the_table_and_writes_json(tmp_path):
    path = tmp_path / "j.json"
    code, out, err = run("joints", "--model", "asym-ising:n=3", "--taus", "0.5,2", "--json",
                         str(path))
    assert code == 0, err
    data = json.loads(path.read_text())
    assert [r["tau"] for r in data["rows"]] == [0.5, 2.0] and data["states"] == 8
    for name in ("glauber", "mrf", "pll", "hcb", "ag"):
        assert name in out
    row = data["rows"][0]
    assert len(row["pairs"]) == 10 and all(0 <= tv <= 1 for tv in row["tv"])


@pytest.mark.parametrize("argv, needle", [
    (["joints", "--model", "potts-cycle:n=5,q=7"], "exact limit"),
    (["joints", "--model", "ising-cycle:n=4", "--pivot", "context"], "--pivot context"),
    (["joints", "--model", "ising-cycle:n=4", "--taus", "0"], "tau"),
])
def test_joints_bad_input_is_one_line(tmp_path, argv, needle):
    code, out, err = run(*argv, "--json", str(tmp_path / "j.json"))
    assert code == 2 and err.count("\n") == 1 and needle in err, err
    assert not Path(tmp_path / "j.json").exists()
