"""A window's score table built by a real local Ray cluster (``--ray`` with no address).

Oracle: the certificate computed in this process, shard for shard and value for value, against
one whose shards ran as Ray tasks in Ray's own worker processes (every task pickled, the
shards written back by this process). ``ray`` is in the ``ray`` extra, which scripts/setup.sh
installs for the tests; without it the module is skipped, saying so.
"""

from __future__ import annotations

import numpy as np
import pytest

from glauber.certify import certify
from glauber.core import restrict
from glauber.toy_models import RandomJointModel

from ..support import CountingModel

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'glauber[ray]')")


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray of two CPUs for the module (started as ``--ray`` alone starts it)."""
    from glauber.experiments.executor import make_executor

    executor = make_executor(True)
    yield executor
    ray.shutdown()


def test_a_table_built_by_ray_tasks_gives_the_same_certificate(tmp_path, monkeypatch,
                                                                 local_ray):
    full = RandomJointModel(5, 3, rng=11)
    window = CountingModel(restrict(full, np.array([2, 0, 1, 2, 0]), [4, 1, 2]))
    monkeypatch.setenv("GLAUBER_CACHE", str(tmp_path / "here"))
    here = certify(window, 1.0, exact=True, n_rectangles=5, n_pairs=0)
    monkeypatch.setenv("GLAUBER_CACHE", str(tmp_path / "ray"))  # nothing on disk there
    there = certify(window, 1.0, exact=True, n_rectangles=5, n_pairs=0, executor=local_ray)
    (folder,) = (tmp_path / "ray" / "score_tables").iterdir()
    shards = sorted(folder.rglob("shard_*.npz"))
    assert len(shards) == 3  # one a site, each came back from a Ray worker and was saved
    for shard in shards:  # the same bytes' worth of scores as the in-process build
        mine = tmp_path / "here" / "score_tables" / folder.name / shard.relative_to(folder)
        with np.load(shard) as a, np.load(mine) as b:
            assert sorted(a.files) == sorted(b.files)
            for key in a.files:
                np.testing.assert_array_equal(a[key], b[key])
    assert there.exact == here.exact
    np.testing.assert_array_equal(there.influence.C, here.influence.C)
    assert there.timings.rows == here.timings.rows == 27


def test_the_ray_tasks_ran_in_other_processes(local_ray):
    """The executor is Ray's: its tasks run in worker processes, not in this one."""
    import os

    pids = set(local_ray.map(_pid, range(4)))
    assert os.getpid() not in pids


def _pid(_: int) -> int:
    import os

    return os.getpid()
