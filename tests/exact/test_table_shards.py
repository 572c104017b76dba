"""Score tables in shards (glauber.exact.table_shards): the same table however it is cut, resumed
or distributed; a shard of another table refused; the plan and the size checks before any work.

Oracle: the table built in one piece without a cache (:func:`score_table` with ``cache=False``
and one shard per site), compared byte for byte.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import glauber
from glauber.core import memory
from glauber.errors import InvalidParameterError, ResourceLimitError, ResumeMismatchError
from glauber.exact.score_table import score_table
from glauber.exact.table_shards import shard_key, shard_path, shard_queries, table_plan
from glauber.experiments.executor import LocalExecutor
from glauber.toy_models.random_joint import RandomJointModel

from ..support import CountingModel as Keyed
from ..support import table_model


def one_piece(model) -> np.ndarray:
    """The oracle: no cache, one shard per site, one batch per shard."""
    rows = model.q ** (model.n - 1)
    return score_table(model, batch_size=rows, cache=False, shard_rows=rows)


def test_shard_queries_are_the_states_with_the_site_at_zero_in_mixed_radix() -> None:
    from glauber.core.enumeration import all_states

    for site in range(3):
        expected = np.insert(all_states(2, 4), site, 0, axis=1)
        np.testing.assert_array_equal(shard_queries(3, 4, site, 0, 16), expected)
        np.testing.assert_array_equal(shard_queries(3, 4, site, 5, 11), expected[5:11])


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 4), q=st.integers(2, 4), seed=st.integers(0, 10**6),
       shard_rows=st.integers(1, 70), batch=st.integers(1, 9))
def test_every_cut_gives_the_same_table(tmp_path_factory, n, q, seed, shard_rows, batch) -> None:
    model = Keyed(table_model(n, q, seed), key=f"k{seed}")
    folder = tmp_path_factory.mktemp("shards")
    built = score_table(model, batch_size=batch, cache=folder, shard_rows=shard_rows)
    np.testing.assert_array_equal(built, one_piece(model))
    again = Keyed(table_model(n, q, seed), key=f"k{seed}")
    np.testing.assert_array_equal(score_table(again, batch, folder, shard_rows=shard_rows),
                                  built)
    assert again.calls == 0  # every shard read back
    plan = table_plan(again, folder / f"k{seed}", shard_rows)
    assert plan.shards_done == plan.shards and plan.rows_left == 0
    assert plan.rows == n * q ** (n - 1)


def test_an_interrupted_build_resumes_losing_at_most_one_shard(tmp_path) -> None:
    inner = RandomJointModel(3, 5, rng=3)  # 25 rows a site, 75 in all
    # shards of 8 rows, batches of 4: site 0 is 4 shards (8, 8, 8, 1 rows) in 7 calls; the 9th
    # call, the second of site 1's first shard, is interrupted, losing the 4 rows of the 8th
    failing = Keyed(inner, fail_on=9)
    with pytest.raises(KeyboardInterrupt):
        score_table(failing, batch_size=4, cache=tmp_path, shard_rows=8)
    assert failing.rows == 29
    done = table_plan(failing, tmp_path / "keyed", 8)
    assert done.shards_done == 4 and done.rows_left == 75 - 25
    resumed = Keyed(inner)
    table = score_table(resumed, batch_size=4, cache=tmp_path, shard_rows=8)
    assert resumed.rows == 75 - 25
    np.testing.assert_array_equal(table, one_piece(inner))


SLOW_BUILD = textwrap.dedent("""
    import sys, time
    import numpy as np
    from glauber.exact.score_table import score_table
    from glauber.toy_models.random_joint import RandomJointModel

    class Slow:
        def __init__(self):
            self.inner = RandomJointModel(3, 6, rng=11)
            self.n, self.q, self.cache_key = 3, 6, "slow"
        def scores(self, states, sites):
            time.sleep(float(sys.argv[2]))
            return self.inner.scores(states, sites)

    np.save(sys.argv[3], score_table(Slow(), batch_size=3, cache=sys.argv[1], shard_rows=6))
""")


def test_a_build_killed_with_sigkill_resumes_byte_identically(tmp_path) -> None:
    script = tmp_path / "build.py"
    script.write_text(SLOW_BUILD)
    cache, out = tmp_path / "cache", tmp_path / "table.npy"
    env = {**os.environ, "PYTHONPATH": str(Path(glauber.__file__).parents[1])}
    proc = subprocess.Popen([sys.executable, str(script), str(cache), "0.05", str(out)], env=env)
    shards = cache / "slow"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(shards.glob("site_*/shard_*.npz"))) < 3:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kept = len(list(shards.glob("site_*/shard_*.npz")))
    assert 3 <= kept < 18 and not out.exists()  # killed mid-build: 18 shards of 6 rows in all
    subprocess.run([sys.executable, str(script), str(cache), "0", str(out)], env=env, check=True)
    expected = one_piece(RandomJointModel(3, 6, rng=11))
    assert np.load(out).tobytes() == expected.tobytes()


def test_a_shard_of_another_table_is_refused(tmp_path) -> None:
    a, b = Keyed(table_model(2, 3, 1), key="a"), Keyed(table_model(2, 3, 2), key="b")
    score_table(a, cache=tmp_path, shard_rows=2)
    score_table(b, cache=tmp_path, shard_rows=2)
    source, target = shard_path(tmp_path / "a", 1, 0), shard_path(tmp_path / "b", 1, 0)
    target.write_bytes(source.read_bytes())
    with pytest.raises(ResumeMismatchError, match="belongs to another table"):
        score_table(Keyed(table_model(2, 3, 2), key="b"), cache=tmp_path, shard_rows=2)
    with pytest.raises(ResumeMismatchError):
        table_plan(b, tmp_path / "b", 2)
    assert shard_key(a, 1, 0, 2) != shard_key(b, 1, 0, 2)


def test_a_torn_shard_is_recomputed(tmp_path) -> None:
    model = Keyed(table_model(2, 4, 5))
    built = score_table(model, cache=tmp_path, shard_rows=3)
    shard_path(tmp_path / "keyed", 0, 1).write_bytes(b"not a shard")
    again = Keyed(table_model(2, 4, 5))
    np.testing.assert_array_equal(score_table(again, cache=tmp_path, shard_rows=3), built)
    assert again.rows == 1  # the torn shard (row 3 of site 0) only


def test_an_executor_computes_the_missing_shards(tmp_path) -> None:
    model = Keyed(table_model(3, 3, 9))
    seen = []

    class Recording(LocalExecutor):
        def map(self, fn, cells):
            cells = list(cells)
            seen.extend(cells)
            return super().map(fn, cells)

    built = score_table(model, batch_size=2, cache=tmp_path, shard_rows=4, executor=Recording())
    np.testing.assert_array_equal(built, one_piece(model))
    assert [(site, lo, hi) for _, site, lo, hi, _ in seen] == [
        (i, lo, min(lo + 4, 9)) for i in range(3) for lo in (0, 4, 8)]


def test_the_plan_says_sizes_shards_and_times(tmp_path) -> None:
    model = Keyed(table_model(4, 5, 0))
    plan = table_plan(model, None, 30, rates={"cpu": 10.0, "gpu": 1000.0},
                      rate_notes={"cpu": "assumed", "gpu": "assumed"})
    assert (plan.rows, plan.shards, plan.rows_left) == (4 * 125, 4 * 5, 500)
    assert plan.table_bytes == 8 * 4 * 5**4 * 5 and plan.disk_bytes == 8 * 500 * 5
    assert plan.seconds("cpu") == pytest.approx(50.0) and plan.seconds("ray") == float("inf")
    text = plan.summary()
    assert "500 rows" in text and "20 shards" in text and "estimate" in text


def test_a_table_that_does_not_fit_is_refused_before_any_query(monkeypatch, tmp_path) -> None:
    model = Keyed(table_model(3, 4, 0))
    monkeypatch.setattr(memory, "available_memory", lambda: 1000)
    with pytest.raises(ResourceLimitError, match="score table of 3 sites x 4 tokens"):
        score_table(model, cache=False)
    monkeypatch.undo()
    monkeypatch.setattr(memory, "available_disk", lambda path: 10)
    with pytest.raises(ResourceLimitError, match="shards of the score table"):
        score_table(model, cache=tmp_path)
    assert model.calls == 0
    with pytest.raises(InvalidParameterError):
        score_table(model, shard_rows=0)
