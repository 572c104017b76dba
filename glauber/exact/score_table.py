"""The score table of a small chain, ``s_i(a; x_{-i})`` for every site and state: built once.

Two facts make an exact chain of a real model cheap:

* the conditional at site ``i`` depends only on ``x_{-i}`` (the protocol: a model ignores the
  token it resamples), so the ``q`` states that differ only at ``i`` share one query: the table
  needs ``n q^(n-1)`` rows, not ``n q^n`` (1,200 forwards for 3 sites of 20 amino acids);
* scores are temperature-free (``tau`` enters only at the softmax), so one table serves every
  temperature: a sweep of exact chains over ``tau`` costs one build.

:func:`score_table` builds it in batches and, for a model with a ``cache_key`` (a restricted
masked LM, see :func:`glauber.core.restrict`), keeps it on disk under
``$GLAUBER_CACHE/score_tables/<key>/``, one file per site written atomically: an interrupted
build resumes at the first missing site and a second build costs nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import numpy as np

from glauber.core.arrays import all_finite, to_numpy
from glauber.core.enumeration import all_states, radix_weights, table_queries
from glauber.core.io import atomic_write_bytes, atomic_write_text, cache_root
from glauber.core.protocol import ConditionalModel
from glauber.core.site_model import SiteScoreModel
from glauber.core.validation import check_positive_int
from glauber.errors import NonFiniteScoresError, UnboundableModelError

#: Rows per :meth:`scores` call when building a table.
DEFAULT_BATCH_SIZE = 256
#: Table layout version (part of every cache folder's manifest).
TABLE_FORMAT = 1


def score_table(
    model: ConditionalModel,
    batch_size: int = DEFAULT_BATCH_SIZE,
    cache: bool | str | Path | None = None,
    progress: Callable[[int, int], Any] | None = None,
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
        ``progress(rows_done, rows_total)`` after every model call.

    Returns
    -------
    numpy.ndarray, shape (n, q**n, q)

    Raises
    ------
    NonFiniteScoresError
        If the model returns NaN or infinite scores.
    InvalidParameterError
        If ``batch_size`` is not an integer >= 1.

    Examples
    --------
    >>> from glauber.toy_models import FunctionModel
    >>> m = FunctionModel(2, 2, lambda x, i: np.stack([x.sum(1), 0 * x.sum(1)], 1).astype(float))
    >>> score_table(m)[0].tolist()  # site 0: scores of x_1 at (0,0), (0,1), (1,0), (1,1)
    [[0.0, 0.0], [1.0, 0.0], [0.0, 0.0], [1.0, 0.0]]
    """
    batch_size = check_positive_int(batch_size, "batch_size")
    n, q = int(model.n), int(model.q)
    folder = _cache_folder(model, cache)
    rows = q ** (n - 1)
    total, done = n * rows, 0
    table = np.empty((n, q**n, q), dtype=np.float64)
    for i in range(n):
        site = _load_site(folder, i, rows, q) if folder is not None else None
        if site is None:
            queries = _states_with_site_zero(n, q, i)
            site = np.empty((rows, q), dtype=np.float64)
            for lo in range(0, rows, batch_size):
                hi = min(lo + batch_size, rows)
                s = model.scores(queries[lo:hi], np.full(hi - lo, i, dtype=np.int64))
                if not all_finite(s):
                    raise NonFiniteScoresError(
                        f"model {getattr(model, 'name', type(model).__name__)} returned "
                        f"non-finite scores at site {i}; scores must be finite real numbers"
                    )
                site[lo:hi] = np.asarray(to_numpy(s), dtype=np.float64)
                done += hi - lo
                if progress is not None:
                    progress(done, total)
            if folder is not None:
                _save_site(folder, i, site)
        else:
            done += rows
            if progress is not None:
                progress(done, total)
        _spread(table[i], site, n, q, i)
    return table


class TabulatedModel(SiteScoreModel):
    """A model answering from its score table: ``s_i(a; x_{-i}) = table[i, index(x), a]``.

    Once a real model's table is built (:func:`score_table`), every estimator can run on the
    table instead of the model: exhaustively, on the host, at no model cost. Name, labels and
    ``default_states`` are the source model's.

    Parameters
    ----------
    source : ConditionalModel
        The model the table was built from.
    table : numpy.ndarray, shape (n, q**n, q)
        Its score table.

    Examples
    --------
    >>> from glauber.toy_models import FunctionModel
    >>> m = FunctionModel(2, 2, lambda x, i: np.stack([x.sum(1), 0 * x.sum(1)], 1).astype(float))
    >>> t = TabulatedModel(m, score_table(m))
    >>> t.scores(np.array([[1, 1]]), np.array([0])).tolist() == m.scores(np.array([[1, 1]]), [0]).tolist()
    True
    """

    def __init__(self, source: ConditionalModel, table: np.ndarray) -> None:
        labels = getattr(source, "labels", None)
        super().__init__(int(source.n), int(source.q),
                         name=str(getattr(source, "name", type(source).__name__)),
                         labels=None if labels is None else [str(v) for v in labels])
        self.source = source
        self.table = table
        self._weights = radix_weights(self.n, self.q)

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        return self.table[site, states @ self._weights]

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


def _states_with_site_zero(n: int, q: int, i: int) -> np.ndarray:
    """The ``q^(n-1)`` states with ``x_i = 0``, in the mixed-radix order of the others."""
    return np.insert(all_states(n - 1, q, max_states=q ** (n - 1)), i, 0, axis=1)


def _spread(out: np.ndarray, site: np.ndarray, n: int, q: int, i: int) -> None:
    """Write the scores of the ``x_i = 0`` states to all ``q`` states that share ``x_{-i}``.

    ``out`` is ``[q**n, q]``; viewed as ``[q^i, q, q^(n-1-i), q]`` its axis 1 is ``x_i``, and the
    rows of ``site`` (mixed radix over the other sites) are ``[q^i, q^(n-1-i)]``.
    """
    view = out.reshape(q**i, q, q ** (n - 1 - i), q)
    view[:] = site.reshape(q**i, 1, q ** (n - 1 - i), q)


def _cache_folder(model: ConditionalModel, cache: bool | str | Path | None) -> Path | None:
    key = getattr(model, "cache_key", None)
    if key is None or cache is False:
        return None
    root = cache_root() / "score_tables" if cache in (None, True) else Path(cache)
    folder = root / str(key)
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / "manifest.json"
    if not manifest.exists():
        atomic_write_text(manifest, json.dumps({
            "format": TABLE_FORMAT, "model": str(getattr(model, "name", type(model).__name__)),
            "n": int(model.n), "q": int(model.q),
        }, indent=2) + "\n")
    return folder


def _load_site(folder: Path, i: int, rows: int, q: int) -> np.ndarray | None:
    path = folder / f"site_{i}.npy"
    if not path.exists():
        return None
    try:
        site = np.load(path, allow_pickle=False)
    except (OSError, ValueError):  # unreadable: recompute (the file is replaced atomically)
        return None
    return site if site.shape == (rows, q) and np.isfinite(site).all() else None


def _save_site(folder: Path, i: int, site: np.ndarray) -> None:
    import io

    buf = io.BytesIO()
    np.save(buf, site, allow_pickle=False)
    atomic_write_bytes(folder / f"site_{i}.npy", buf.getvalue())


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "TABLE_FORMAT",
    "TabulatedModel",
    "score_table",
    "table_queries",
]
