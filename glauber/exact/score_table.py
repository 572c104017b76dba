"""The score table of a small chain, ``s_i(a; x_{-i})`` for every site and state: built once.

Two facts make an exact chain of a real model cheap:

* the conditional at site ``i`` depends only on ``x_{-i}`` (the protocol: a model ignores the
  token it resamples), so the ``q`` states that differ only at ``i`` share one query: the table
  needs ``n q^(n-1)`` rows, not ``n q^n`` (1,200 forwards for 3 sites of 20 amino acids);
* scores are temperature-free (``tau`` enters only at the softmax), so one table serves every
  temperature: a sweep of exact chains over ``tau`` costs one build.

:func:`score_table` builds it in batches and, for a model with a ``cache_key`` (a restricted
masked LM, see :func:`glauber.core.restrict`), keeps it on disk under
``$GLAUBER_CACHE/score_tables/<key>/`` in shards of consecutive queries
(:mod:`glauber.exact.table_shards`: each written atomically and keyed, so an interrupted build
resumes at the first missing shard, byte-identically, and a second build costs nothing). The
shards can be computed by an executor (``executor.map``: a Ray cluster's workers,
:mod:`glauber.experiments.executor`), and the build's size is checked against memory and disk
before the first query.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable

import numpy as np

from glauber.core.enumeration import radix_weights, table_queries
from glauber.core.heap import heap_reuse
from glauber.core.io import atomic_write_text, cache_root
from glauber.core.memory import check_fits
from glauber.core.protocol import ConditionalModel
from glauber.core.site_model import SiteScoreModel
from glauber.core.validation import check_positive_int
from glauber.errors import UnboundableModelError
from glauber.exact.table_shards import (
    DEFAULT_SHARD_ROWS,
    load_shard,
    save_shard,
    shard_count,
    shard_key,
    shard_path,
    shard_scores,
    shard_task,
    table_plan,
)

#: Rows per :meth:`scores` call when building a table.
DEFAULT_BATCH_SIZE = 256
#: Table layout version (part of every cache folder's manifest): 2 since the shards.
TABLE_FORMAT = 2


def score_table(
    model: ConditionalModel,
    batch_size: int = DEFAULT_BATCH_SIZE,
    cache: bool | str | Path | None = None,
    progress: Callable[[int, int], Any] | None = None,
    shard_rows: int = DEFAULT_SHARD_ROWS,
    executor: Any = None,
) -> np.ndarray:
    """Scores at ``tau = 1`` for every site and state: float64 ``[n, q**n, q]``.

    Parameters
    ----------
    model : ConditionalModel
        Any model (states in mixed-radix order, site 0 most significant).
    batch_size : int
        Most rows per :meth:`scores` call.
    cache : bool, str, Path or None
        Where to keep the table on disk: a folder, ``True`` for
        ``glauber.core.io.cache_root() / "score_tables"``, ``False`` for nowhere; ``None``
        (default) means ``True`` for a model with a ``cache_key`` attribute, else ``False``.
        The folder of a table is named by the model's ``cache_key`` (a model without one is
        never cached).
    progress : callable, optional
        ``progress(rows_done, rows_total)`` after every model call (after every shard with an
        executor).
    shard_rows : int
        Most queries of one shard (:mod:`~glauber.exact.table_shards`).
    executor : object, optional
        Something with ``map(fn, items)`` yielding ``fn(item)`` in order (e.g.
        :class:`glauber.experiments.executor.RayExecutor`): the missing shards are computed
        through it, each saved as it arrives. Default: in this process.

    Returns
    -------
    numpy.ndarray, shape (n, q**n, q)

    Raises
    ------
    NonFiniteScoresError
        If the model returns NaN or infinite scores.
    InvalidParameterError
        If ``batch_size`` or ``shard_rows`` is not an integer >= 1.
    ResourceLimitError
        If the table does not fit in the memory available, or its shards on the disk.
    ResumeMismatchError
        If a shard on disk belongs to another table (model, context or window).

    Examples
    --------
    >>> from glauber.toy_models import FunctionModel
    >>> m = FunctionModel(2, 2, lambda x, i: np.stack([x.sum(1), 0 * x.sum(1)], 1).astype(float))
    >>> score_table(m)[0].tolist()  # site 0: scores of x_1 at (0,0), (0,1), (1,0), (1,1)
    [[0.0, 0.0], [1.0, 0.0], [0.0, 0.0], [1.0, 0.0]]
    """
    n, q = int(model.n), int(model.q)
    plan = table_plan(model, None, check_positive_int(shard_rows, "shard_rows"))  # sizes only
    check_fits(plan.table_bytes, f"the score table of {n} sites x {q} tokens ({plan.rows:,} "
               "rows, float64 [n, q^n, q])", "use a window of fewer sites")
    compact = compact_score_table(model, batch_size, cache, progress, shard_rows, executor)
    table = np.empty((n, q**n, q), dtype=np.float64)
    for i in range(n):
        _spread(table[i], compact[i], n, q, i)
    return table


def compact_score_table(
    model: ConditionalModel,
    batch_size: int = DEFAULT_BATCH_SIZE,
    cache: bool | str | Path | None = None,
    progress: Callable[[int, int], Any] | None = None,
    shard_rows: int = DEFAULT_SHARD_ROWS,
    executor: Any = None,
) -> np.ndarray:
    """The ``n q^(n-1)`` distinct rows of :func:`score_table`: float64 ``[n, q^(n-1), q]``.

    Row ``r`` of site ``i`` holds ``s_i(.; x_{-i})`` for the context ``x_{-i}`` of mixed-radix
    index ``r`` over the other sites (site 0 most significant): ``q`` times smaller than the
    expanded table, what the matrix-free chain of a 5-site window reads
    (:mod:`glauber.exact.window`). Same parameters, cache, shards and errors as
    :func:`score_table`.
    """
    batch_size = check_positive_int(batch_size, "batch_size")
    shard_rows = check_positive_int(shard_rows, "shard_rows")
    n, q = int(model.n), int(model.q)
    folder = _cache_folder(model, cache)
    plan = table_plan(model, None, shard_rows)  # sizes only: the shards are read below, once
    check_fits(plan.table_bytes // q, f"the compact score table of {n} sites x {q} tokens "
               f"({plan.rows:,} rows, float64 [n, q^(n-1), q])", "use a window of fewer sites")
    per_site = q ** (n - 1)
    total, done = n * per_site, 0
    shards: dict[tuple[int, int], np.ndarray] = {}
    missing = []
    for i in range(n):
        for k in range(shard_count(per_site, shard_rows)):
            lo, hi = k * shard_rows, min((k + 1) * shard_rows, per_site)
            found = None if folder is None else load_shard(
                shard_path(folder, i, k), shard_key(model, i, lo, hi), hi - lo, q)
            if found is None:
                found = _legacy_rows(folder, i, per_site, q, lo, hi)
            if found is None:
                missing.append((i, k, lo, hi))
            else:
                shards[i, k] = found
                done += hi - lo
    if folder is not None and missing:
        check_fits(8 * q * (total - done), f"the {plan.shards:,} shards of the score table",
                   "free disk space or point GLAUBER_CACHE elsewhere (or build it without a "
                   "cache)", disk=str(folder))
    if progress is not None and done:
        progress(done, total)

    def report(rows: int) -> None:
        nonlocal done
        done += rows
        if progress is not None:
            progress(done, total)

    if executor is None:
        results = (_local_shard(model, i, lo, hi, batch_size, report) for i, _, lo, hi in missing)
    else:
        results = executor.map(shard_task, [(model, i, lo, hi, batch_size)
                                            for i, _, lo, hi in missing])
    with heap_reuse() if missing else nullcontext():  # forward intermediates reused
        for (i, k, lo, hi), scores in zip(missing, results):
            if folder is not None:
                save_shard(shard_path(folder, i, k), shard_key(model, i, lo, hi), scores)
            shards[i, k] = scores
            if executor is not None:
                report(hi - lo)
    compact = np.empty((n, per_site, q), dtype=np.float64)
    for i in range(n):
        count = shard_count(per_site, shard_rows)
        for k in range(count):
            compact[i, k * shard_rows:min((k + 1) * shard_rows, per_site)] = shards.pop((i, k))
    return compact


def _local_shard(model: ConditionalModel, site: int, lo: int, hi: int, batch_size: int,
                 report: Callable[[int], None]) -> np.ndarray:
    """:func:`~glauber.exact.table_shards.shard_scores` batch by batch, reporting each."""
    out = np.empty((hi - lo, int(model.q)), dtype=np.float64)
    for a in range(lo, hi, batch_size):
        b = min(a + batch_size, hi)
        out[a - lo:b - lo] = shard_scores(model, site, a, b, b - a)
        report(b - a)
    return out


class TabulatedModel(SiteScoreModel):
    """A model answering from its score table: ``s_i(a; x_{-i}) = table[i, index(x), a]``.

    Once a real model's table is built (:func:`score_table`), every estimator can run on the
    table instead of the model: exhaustively, on the host, at no model cost. Name, labels and
    ``default_states`` are the source model's.

    Parameters
    ----------
    source : ConditionalModel
        The model the table was built from.
    table : numpy.ndarray, shape (n, q**n, q) or (n, q**(n-1), q)
        Its score table (:func:`score_table`), or its compact rows
        (:func:`compact_score_table`), read by context: ``q`` times less memory.

    Examples
    --------
    >>> from glauber.toy_models import FunctionModel
    >>> m = FunctionModel(2, 2, lambda x, i: np.stack([x.sum(1), 0 * x.sum(1)], 1).astype(float))
    >>> t = TabulatedModel(m, score_table(m))
    >>> x = np.array([[1, 1]])
    >>> t.scores(x, np.array([0])).tolist() == m.scores(x, [0]).tolist()
    True
    """

    def __init__(self, source: ConditionalModel, table: np.ndarray) -> None:
        labels = getattr(source, "labels", None)
        super().__init__(int(source.n), int(source.q),
                         name=str(getattr(source, "name", type(source).__name__)),
                         labels=None if labels is None else [str(v) for v in labels])
        self.source = source
        self.table = table
        self.compact = table.shape[1] != self.q**self.n
        #: Site ``i``'s scores never read ``x_i``: the rows are contexts (the expanded table
        #: spreads each context's row over the ``q`` values of ``x_i``). An exhaustive influence
        #: then compares each pair of contexts once (:func:`glauber.estimators.influence`).
        self.contexts_only = True
        weights = radix_weights(self.n, self.q)
        others = radix_weights(self.n - 1, self.q)
        #: ``_weights[i] @ x``: the row of ``x`` in site ``i``'s table (its context ``x_{-i}``
        #: in the compact table, the state itself in the expanded one).
        self._weights = np.stack([
            np.insert(others, i, 0) if self.compact else weights for i in range(self.n)])

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        return self.table[site, states @ self._weights[site]]

    def oscillation_upper_bound(self) -> Any:
        """The source model's tau-free bound on Lemma 6's oscillation (see
        :func:`glauber.estimators.influence_upper_bound`).

        Raises
        ------
        UnboundableModelError
            If the source model has none.
        """
        hook = getattr(self.source, "oscillation_upper_bound", None)
        if hook is None:
            raise UnboundableModelError(f"{self.name} has no closed-form or weight bound")
        return hook()

    def default_states(self) -> Any:
        """The source model's default states (None when it has none)."""
        method = getattr(self.source, "default_states", None)
        return None if method is None else method()


def _spread(out: np.ndarray, site: np.ndarray, n: int, q: int, i: int) -> None:
    """Write the scores of the ``x_i = 0`` states to all ``q`` states that share ``x_{-i}``.

    ``out`` is ``[q**n, q]``; viewed as ``[q^i, q, q^(n-1-i), q]`` its axis 1 is ``x_i``, and the
    rows of ``site`` (mixed radix over the other sites) are ``[q^i, q^(n-1-i)]``.
    """
    view = out.reshape(q**i, q, q ** (n - 1 - i), q)
    view[:] = site.reshape(q**i, 1, q ** (n - 1 - i), q)


def table_folder(model: ConditionalModel, cache: bool | str | Path | None = None
                 ) -> Path | None:
    """The folder of ``model``'s score table under ``cache`` (see :func:`score_table`;
    None when it is not cached), created by the first build."""
    key = getattr(model, "cache_key", None)
    if key is None or cache is False:
        return None
    root = cache_root() / "score_tables" if cache in (None, True) else Path(cache)
    return root / str(key)


def _cache_folder(model: ConditionalModel, cache: bool | str | Path | None) -> Path | None:
    folder = table_folder(model, cache)
    if folder is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / "manifest.json"
    if not manifest.exists():
        atomic_write_text(manifest, json.dumps({
            "format": TABLE_FORMAT, "model": str(getattr(model, "name", type(model).__name__)),
            "n": int(model.n), "q": int(model.q),
        }, indent=2) + "\n")
    return folder


def _legacy_rows(folder: Path | None, i: int, rows: int, q: int, lo: int,
                 hi: int) -> np.ndarray | None:
    """Rows ``lo:hi`` of a whole-site file of the first layout (``site_<i>.npy``, before shards),
    so tables built then are not rebuilt (their folder is the same key)."""
    path = None if folder is None else folder / f"site_{i}.npy"
    if path is None or not path.exists():
        return None
    try:
        site = np.load(path, allow_pickle=False, mmap_mode="r")
    except (OSError, ValueError):
        return None
    if site.shape != (rows, q):
        return None
    part = np.array(site[lo:hi], dtype=np.float64)
    return part if np.isfinite(part).all() else None


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "TABLE_FORMAT",
    "TabulatedModel",
    "compact_score_table",
    "score_table",
    "table_folder",
    "table_queries",
]
