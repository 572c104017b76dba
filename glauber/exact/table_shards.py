"""A score table on disk in shards: resumable, keyed, planned before any forward pass.

A table of ``n q^(n-1)`` rows (:mod:`glauber.exact.score_table`) is cut into shards of at most
``shard_rows`` consecutive queries of one site: 1,200 rows make 3 shards for 3 sites of 20 amino
acids, 32,000 rows make 32 for 4 sites, 800,000 rows 800 for 5. Each shard is one file
``site_<i>/shard_<k>.npz`` written atomically (:func:`glauber.core.io.atomic_write_bytes`), so a
build killed at any moment (``kill -9`` included) loses at most the shard it was computing, and a
rerun resumes at the first missing shard. Batches never straddle a shard (each starts at its
shard's first row), so a resumed build makes exactly the model calls of an uninterrupted one and
its table is byte-identical.

Every shard carries the key of its table (the model's ``cache_key``: model, frozen context and
sites; ``n``, ``q``, the format, the site and the shard's rows), and a shard is read only under
its own key: a shard copied from another model's or another context's table is refused with
:class:`~glauber.errors.ResumeMismatchError`, never mixed in.

:func:`table_plan` says what a build will cost before it starts: rows, shards (and how many are
on disk already), the table's size in memory and on disk, and the time at a rate in rows per
second for each place it can run (this CPU, a Ray cluster's workers, a GPU).
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from glauber.core.arrays import JsonResult, all_finite, to_numpy
from glauber.core.heap import heap_reuse
from glauber.core.io import atomic_write_bytes
from glauber.core.memory import human_bytes
from glauber.core.protocol import ConditionalModel
from glauber.errors import NonFiniteScoresError, ResumeMismatchError

#: Rows of one shard: about 45 s of AntiBERTy's forwards on 2 cores (23 rows/s), the most a
#: killed build loses.
DEFAULT_SHARD_ROWS = 1024
#: Shard layout version (part of every shard's key).
SHARD_FORMAT = 2
#: Rows per second of one CPU core on AntiBERTy's window queries (a 120-residue context: 23
#: rows/s on 2 cores, docs/performance.md): the CPU and Ray rates of :func:`plan_rates`.
CPU_ROWS_PER_CORE = 11.5
#: Rows per second assumed on one GPU: uncalibrated (no table has been built on a GPU yet).
GPU_ROWS_PER_SECOND = 2000.0
#: CPUs of the Ray cluster a plan assumes when none is named.
RAY_PLAN_CPUS = 16


def shard_count(rows: int, shard_rows: int) -> int:
    """Shards of one site's ``rows`` queries."""
    return max(1, math.ceil(rows / shard_rows))


def shard_key(model: ConditionalModel, site: int, lo: int, hi: int) -> str:
    """The key a shard is written and read under: the table's model key, ``n``, ``q``, the
    format, the site and the rows ``lo:hi`` of its queries (JSON, sorted keys)."""
    return json.dumps({"format": SHARD_FORMAT, "key": str(getattr(model, "cache_key", None)),
                       "n": int(model.n), "q": int(model.q), "site": int(site),
                       "rows": [int(lo), int(hi)]}, sort_keys=True)


def shard_path(folder: Path, site: int, k: int) -> Path:
    """The file of shard ``k`` of ``site``."""
    return folder / f"site_{site}" / f"shard_{k:05d}.npz"


def save_shard(path: Path, key: str, scores: np.ndarray) -> None:
    """Write one shard (its scores and key) atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.savez(buf, scores=np.ascontiguousarray(scores, dtype=np.float64), key=np.array(key))
    atomic_write_bytes(path, buf.getvalue())


def load_shard(path: Path, key: str, rows: int, q: int) -> np.ndarray | None:
    """The scores of one shard, or None when it is missing, unreadable or not ``[rows, q]`` of
    finite floats (then it is recomputed and replaced).

    Raises
    ------
    ResumeMismatchError
        If the shard was written under another key (another model, context, window or layout).
    """
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            found = str(data["key"])
            scores = data["scores"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # torn: recompute
        return None
    if found != key:
        raise ResumeMismatchError(
            f"score-table shard {path} belongs to another table ({found}), not to this one "
            f"({key}); remove it (or the folder {path.parent.parent}) to rebuild, or point "
            "GLAUBER_CACHE at the right cache")
    if scores.shape != (rows, q) or not np.isfinite(scores).all():
        return None
    return scores


@dataclass(frozen=True)
class TablePlan(JsonResult):
    """What building a score table costs, said before the first forward pass.

    Attributes
    ----------
    n, q : int
        Sites and tokens of the chain.
    rows : int
        Queries of the whole table, ``n q^(n-1)``.
    shard_rows : int
        Most rows of one shard.
    shards : int
        Shard files of the table.
    shards_done : int
        Shards already on disk under this table's key (0 without a cache folder).
    rows_left : int
        Queries still to run.
    table_bytes : int
        The table in memory: float64 ``[n, q^n, q]``, or the compact ``[n, q^(n-1), q]`` for a
        chain the exact path takes matrix-free (:func:`glauber.exact.window.matrix_free`),
        which never expands it.
    disk_bytes : int
        The shards on disk, float64 ``[rows, q]``.
    folder : str or None
        Where the shards go.
    rates : dict
        Rows per second assumed for each place (``"cpu"``, ``"ray"``, ``"gpu"``) and what each
        rate rests on (``rate_notes``): estimates, never measurements of this build.
    rate_notes : dict
    """

    n: int
    q: int
    rows: int
    shard_rows: int
    shards: int
    shards_done: int
    rows_left: int
    table_bytes: int
    disk_bytes: int
    folder: str | None
    rates: dict
    rate_notes: dict
    compact: bool = False

    def seconds(self, where: str) -> float:
        """Estimated seconds of the rows left at ``where``'s rate (``inf`` when unknown)."""
        rate = self.rates.get(where)
        return math.inf if not rate else self.rows_left / float(rate)

    def summary(self) -> str:
        """The plan in a few lines, each time labelled an estimate."""
        lines = [
            f"score table: {self.rows:,} rows (n q^(n-1) = {self.n} x {self.q}^{self.n - 1}) in "
            f"{self.shards:,} shards of <= {self.shard_rows:,} rows; {self.shards_done:,} on disk, "
            f"{self.rows_left:,} rows left",
            f"  size: {human_bytes(self.table_bytes)} in memory"
            f"{' (compact: the matrix-free chain never expands it)' if self.compact else ''}, "
            f"{human_bytes(self.disk_bytes)} on disk"
            f"{'' if self.folder is None else ' (' + self.folder + ')'}",
        ]
        for where in ("cpu", "ray", "gpu"):
            if where in self.rates:
                lines.append(f"  {where}: about {_duration(self.seconds(where))} at "
                             f"{self.rates[where]:.3g} rows/s (estimate: "
                             f"{self.rate_notes[where]})")
        return "\n".join(lines)


def table_plan(model: ConditionalModel, folder: Path | None = None,
               shard_rows: int = DEFAULT_SHARD_ROWS,
               rates: dict | None = None, rate_notes: dict | None = None) -> TablePlan:
    """The plan of :func:`glauber.exact.score_table.score_table` for ``model``: sizes, shards
    on disk (keys checked), and times at the given rates.

    Parameters
    ----------
    model : ConditionalModel
    folder : Path, optional
        The table's cache folder (shards found there are counted as done).
    shard_rows : int
    rates, rate_notes : dict, optional
        Rows per second per place and what each rests on (see :class:`TablePlan`).

    Raises
    ------
    ResumeMismatchError
        If a shard in ``folder`` belongs to another table.
    """
    from glauber.exact.window import matrix_free

    n, q = int(model.n), int(model.q)
    per_site = q ** (n - 1)
    compact = matrix_free(n, q)
    shards = shard_count(per_site, shard_rows)
    done = rows_done = 0
    if folder is not None:
        for i in range(n):
            for k in range(shards):
                lo, hi = k * shard_rows, min((k + 1) * shard_rows, per_site)
                if load_shard(shard_path(folder, i, k), shard_key(model, i, lo, hi),
                              hi - lo, q) is not None:
                    done += 1
                    rows_done += hi - lo
    return TablePlan(
        n=n, q=q, rows=n * per_site, shard_rows=int(shard_rows), shards=n * shards,
        shards_done=done, rows_left=n * per_site - rows_done,
        table_bytes=8 * n * (per_site if compact else q**n) * q,
        disk_bytes=8 * n * per_site * q, folder=None if folder is None else str(folder),
        rates=dict(rates or {}), rate_notes=dict(rate_notes or {}), compact=compact)


def plan_rates(cores: int, ray_cpus: int = RAY_PLAN_CPUS) -> tuple[dict, dict]:
    """The rows per second a :class:`TablePlan` assumes on ``cores`` CPU cores of this
    machine, on a Ray cluster of ``ray_cpus`` CPUs (one task a CPU) and on one GPU, with what
    each rests on: estimates scaled from AntiBERTy's measured CPU rate, the GPU's uncalibrated.

    Examples
    --------
    >>> rates, notes = plan_rates(2)
    >>> rates["cpu"], rates["ray"]
    (23.0, 184.0)
    """
    rates = {"cpu": CPU_ROWS_PER_CORE * cores, "ray": CPU_ROWS_PER_CORE * ray_cpus,
             "gpu": GPU_ROWS_PER_SECOND}
    notes = {"cpu": f"{cores} cores at AntiBERTy's {CPU_ROWS_PER_CORE:g} rows/s a core, "
                    "measured on a 120-residue context; other models scale with their forward "
                    "cost",
             "ray": f"{ray_cpus} Ray CPUs at the same rate a CPU, one shard a task",
             "gpu": "uncalibrated: no score table has been built on a GPU yet"}
    return rates, notes


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "unknown"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def shard_queries(n: int, q: int, site: int, lo: int, hi: int) -> np.ndarray:
    """Rows ``lo:hi`` of the queries of ``site``: the states with ``x_site = 0``, the other sites
    in mixed radix (site 0 most significant), ``[hi - lo, n]``."""
    index = np.arange(lo, hi, dtype=np.int64)
    weights = q ** np.arange(n - 2, -1, -1, dtype=np.int64)
    others = (index[:, None] // weights[None, :]) % q
    return np.insert(others, site, 0, axis=1)


def shard_scores(model: ConditionalModel, site: int, lo: int, hi: int,
                 batch_size: int) -> np.ndarray:
    """Scores of the queries ``lo:hi`` of ``site``, ``[hi - lo, q]`` float64, in batches of at
    most ``batch_size`` rows that start at ``lo`` (the same calls however the build was cut).

    Raises
    ------
    NonFiniteScoresError
        If the model returns NaN or infinite scores.
    """
    n, q = int(model.n), int(model.q)
    queries = shard_queries(n, q, site, lo, hi)
    out = np.empty((hi - lo, q), dtype=np.float64)
    for a in range(0, hi - lo, batch_size):
        b = min(a + batch_size, hi - lo)
        s = model.scores(queries[a:b], np.full(b - a, site, dtype=np.int64))
        if not all_finite(s):
            raise NonFiniteScoresError(
                f"model {getattr(model, 'name', type(model).__name__)} returned non-finite "
                f"scores at site {site}; scores must be finite real numbers")
        out[a:b] = np.asarray(to_numpy(s), dtype=np.float64)
    return out


def shard_task(task: tuple[Any, ...]) -> np.ndarray:
    """:func:`shard_scores` of ``task = (model, site, lo, hi, batch_size)``: a module-level
    function, so that a remote executor (Ray) can run it on a worker, whose freed forward
    intermediates it keeps in the heap (:func:`glauber.core.heap.heap_reuse`)."""
    with heap_reuse():
        return shard_scores(*task)


__all__ = [
    "CPU_ROWS_PER_CORE",
    "DEFAULT_SHARD_ROWS",
    "GPU_ROWS_PER_SECOND",
    "RAY_PLAN_CPUS",
    "SHARD_FORMAT",
    "TablePlan",
    "load_shard",
    "plan_rates",
    "save_shard",
    "shard_count",
    "shard_key",
    "shard_path",
    "shard_queries",
    "shard_scores",
    "shard_task",
    "table_plan",
]
