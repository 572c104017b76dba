"""The phase-diagram experiment on toy models."""

from __future__ import annotations

import csv
import importlib.util

import pytest

from glauber.errors import InvalidParameterError, ResumeMismatchError, UnknownModelError
from glauber.exact.chain import ExactChain
from glauber.experiments.phase_diagram import phase_diagram
from glauber.toy_models.specs import parse_toy_spec


def test_grid_outputs_and_exact_tmix(tmp_path):
    rows = phase_diagram("ising-cycle:n=4", "1,4", "4,5", pairs=6, budget=3000, seed=1,
                         out=tmp_path, progress=False)
    assert [(r["n"], r["tau"]) for r in rows] == [(4, 1.0), (4, 4.0), (5, 1.0), (5, 4.0)]
    for r in rows:
        chain = ExactChain(parse_toy_spec(f"ising-cycle:n={r['n']}"), r["tau"])
        assert r["exact_tmix"] == chain.mixing_time(0.25)
        assert not r["censored"] and r["median"] >= 0
    with open(tmp_path / "phase_diagram.csv", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == 4
    assert (tmp_path / "phase_diagram.png").read_bytes()[:4] == b"\x89PNG"


def test_independent_sites_couple_in_coupon_collector_time(tmp_path):
    # J = 0: every conditional is uniform, so the maximal coupling always agrees and a pair
    # meets once every site where it differs has been chosen: never before step 1 unless equal,
    # and (coupon collector over n = 6 sites) after at most ~6 H_6 = 14.7 steps on average.
    rows = phase_diagram("ising-cycle:n=6,J=0.0", "1", "6", pairs=64, budget=2000, seed=0,
                         out=tmp_path, progress=False, exact=False)
    assert rows[0]["n_censored"] == 0
    assert 1 <= rows[0]["median"] <= 6 * sum(1 / k for k in range(1, 7))


def test_tiny_budget_is_censored(tmp_path):
    rows = phase_diagram("ising-cycle:n=8", "0.3", "8", pairs=5, budget=1, seed=0,
                         out=tmp_path, progress=False, exact=False)
    assert rows[0]["censored"] and rows[0]["median"] is None


def test_resume_reuses_rows_and_refuses_other_configurations(tmp_path):
    first = phase_diagram("ising-cycle:n=4", "1", "4", 4, 200, 0, tmp_path, progress=False)
    again = phase_diagram("ising-cycle:n=4", "1", "4", 4, 200, 0, tmp_path, progress=False)
    assert again == first  # read back from the log (the timing column would differ otherwise)
    with pytest.raises(ResumeMismatchError):
        phase_diagram("ising-cycle:n=4", "1", "4", 4, 201, 0, tmp_path, progress=False)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"taus": ""}, InvalidParameterError),
        ({"lengths": " , "}, InvalidParameterError),
        ({"budget": 0}, InvalidParameterError),
        ({"pairs": -1}, InvalidParameterError),
        ({"taus": "0"}, ValueError),
        ({"model": "no-such-model"}, UnknownModelError),
    ],
)
def test_bad_input_is_typed(tmp_path, kwargs, error):
    args = {"model": "ising-cycle:n=4", "taus": "1", "lengths": "4", "pairs": 2, "budget": 10,
            "seed": 0, "out": tmp_path, "progress": False}
    args.update(kwargs)
    with pytest.raises(error):
        phase_diagram(**args)


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray not installed (optional)")
def test_ray_executor_gives_the_same_grid_as_in_process(tmp_path):
    """The Ray path (a local ray.init(num_cpus=2)) runs the same cells to the same rows."""
    import ray

    from glauber.experiments.executor import RayExecutor

    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True)
    try:
        kw = dict(pairs=4, budget=500, seed=3, progress=False)
        local = phase_diagram("ising-cycle:n=4", "1,2", "4,5", out=tmp_path / "a", **kw)
        remote = phase_diagram("ising-cycle:n=4", "1,2", "4,5", out=tmp_path / "b",
                               executor=RayExecutor(), **kw)
    finally:
        ray.shutdown()
    strip = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]  # noqa: E731
    assert strip(remote) == strip(local) and len(local) == 4


def test_progress_moves_within_a_cell_and_changes_no_result():
    from glauber.experiments.phase_diagram import phase_cell

    cell = {"key": "k", "model": "ising-cycle:n=8", "tau": 0.3, "n": 8, "pairs": 4,
            "budget": 200, "seed": 3, "device": "cpu", "exact": False}
    calls: list[float] = []
    plain, followed = phase_cell(cell), phase_cell(cell, progress=calls.append)
    plain.pop("seconds"), followed.pop("seconds")
    assert plain == followed  # the callback draws no random numbers
    assert len(calls) >= 2 and calls == sorted(calls) and 0 < calls[0] and calls[-1] <= 1.0
