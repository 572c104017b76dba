"""Long chains: kill-and-resume gives the same bytes; traps, margins and drift."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from glauber.errors import InvalidParameterError, ResumeMismatchError
from glauber.experiments.trajectory import (
    cosine_distance,
    detect_traps,
    hitting_times,
    trajectory,
)

#: Runs ``glauber trajectory`` (only this sub-command is registered, so the test does not
#: depend on the other commands).
RUNNER = """
import argparse, sys
from glauber.commands import trajectory
parser = argparse.ArgumentParser()
trajectory.register(parser.add_subparsers(dest="command"))
args = parser.parse_args(sys.argv[1:])
sys.exit(args.func(args))
"""
ARGS = ["trajectory", "--model", "ising-cycle:n=8", "--tau", "0.7", "--steps", "8000",
        "--chains", "3", "--checkpoint-every", "400", "--record-every", "10", "--seed", "3",
        "--no-progress"]
OUTPUTS = ("trajectory.csv", "checkpoint.json", "trajectory_summary.json", "trajectory_pca.png")


def _cmd(out: Path) -> list[str]:
    return [sys.executable, "-c", RUNNER, *ARGS, "--out", str(out)]


def test_killed_and_resumed_run_is_byte_identical(tmp_path):
    env = dict(os.environ)
    full, cut = tmp_path / "full", tmp_path / "cut"
    subprocess.run(_cmd(full), check=True, env=env, timeout=120)
    proc = subprocess.Popen(_cmd(cut), env=env)
    deadline = time.monotonic() + 60
    while not (cut / "checkpoint.json").exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    assert not (cut / "trajectory_summary.json").exists()
    subprocess.run(_cmd(cut), check=True, env=env, timeout=120)
    for name in OUTPUTS:
        assert (cut / name).read_bytes() == (full / name).read_bytes(), name


def test_rerun_of_a_finished_run_returns_at_once_without_the_model(tmp_path, monkeypatch):
    """A finished folder answers from its summary before any model is loaded (issue 24: 5.8 s
    for Sapiens before), and holds no lock file."""
    import glauber.experiments.trajectory as module
    from glauber.experiments.outdir import LOCK

    first = trajectory("ising-cycle:n=5", 1.0, 100, 2, 50, tmp_path, record_every=10,
                       progress=False)
    assert LOCK not in {p.name for p in tmp_path.iterdir()}
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}

    def no_model(*args, **kw):
        raise AssertionError("a finished run loaded its model again")

    monkeypatch.setattr(module, "get_model", no_model)
    again = trajectory("ising-cycle:n=5", 1.0, 100, 2, 50, tmp_path, record_every=10,
                       progress=False)
    assert again == first
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before  # untouched
    with pytest.raises(AssertionError, match="loaded its model"):  # other settings: a new run
        trajectory("ising-cycle:n=5", 1.0, 100, 2, 50, tmp_path, record_every=10, seed=1,
                   progress=False)


def test_resume_with_other_settings_is_refused(tmp_path):
    trajectory("ising-cycle:n=5", 1.0, 100, 2, 50, tmp_path, record_every=10, progress=False)
    with pytest.raises(ResumeMismatchError):
        trajectory("ising-cycle:n=5", 2.0, 100, 2, 50, tmp_path, record_every=10,
                   progress=False)


def test_low_temperature_ising_traps_are_perfect_aligned_states(tmp_path):
    # Ising cycle, J = 1: in an aligned state each site's score gap is 2 * (J + J) = 4 (the
    # local field is 2J and the scores of +-1 differ by twice the field), so the aligned states
    # are perfect traps with Delta* = 4; at tau = 0.25 the chains sit in them.
    s = trajectory("ising-cycle:n=6", 0.25, 3000, 2, 500, tmp_path, seed=1, record_every=10,
                   window=200, threshold=0.05, progress=False)
    assert s["n_traps"] >= 1
    aligned = [t for t in s["traps"] if len(set(t["state"])) == 1]
    assert aligned
    for t in aligned:
        assert t["perfect"] and t["delta_star"] == pytest.approx(4.0)
        assert t["escape_bound"] == pytest.approx(2 * np.exp(-4.0 / 0.25))


def test_cosine_distance_and_hitting_times():
    a = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(cosine_distance(a, np.array([1.0, 0.0])), [0, 1, 2, 0])
    steps = np.array([0, 10, 20, 30])
    assert hitting_times(steps, np.array([0, 0.3, 0.1, 0.9]), [0.2, 0.5, 1.0]) == {
        "0.2": 10, "0.5": 30, "1": None}


def test_detect_traps_finds_the_constant_stretch():
    emb = np.array([[1, 0], [0, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [0, 1], [1, 0]],
                   dtype=float)
    runs = detect_traps(np.arange(9), emb, window_records=2, threshold=0.01)
    assert runs == [(2, 4)]  # windows starting at 2, 3, 4 see only [1, 1]


def test_bad_arguments_are_typed(tmp_path):
    with pytest.raises(InvalidParameterError, match="multiple"):
        trajectory("ising-cycle:n=5", 1.0, 100, 2, 55, tmp_path, record_every=10)
    with pytest.raises(InvalidParameterError):
        trajectory("ising-cycle:n=5", 1.0, 0, 2, 50, tmp_path)
