"""A memo of model queries, counted against a budget: what a search asks the model, once.

Scores are temperature-free (``p_tau = softmax(s / tau)``), and the model masks the site it
scores (the protocol: the token at the queried site is ignored), so a query is keyed by its
site and the state with that site's token set to 0. The scores stay in the model's array
library (numpy for toys, torch on the model's device for MLMs); only the keys live on the host.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glauber.core.arrays import all_finite, like, to_numpy
from glauber.core.conditionals import check_states
from glauber.core.protocol import ConditionalModel, check_model
from glauber.errors import NonFiniteScoresError
from glauber.estimators.batch_arrays import concat


class ScoreCache:
    """The scores of every (state, site) query asked through it, and how many rows it asked.

    Pass one cache to several searches (e.g. over a grid of temperatures): a query it has
    answered costs nothing again, and every pair of answered queries that differ at one site
    is a free candidate for the influence at any temperature.

    Parameters
    ----------
    model : ConditionalModel

    Attributes
    ----------
    queries : int
        Rows sent to ``model.scores`` over the cache's life (each distinct query once).

    Raises
    ------
    InvalidParameterError
        If ``model`` does not meet the protocol (see
        :func:`glauber.core.protocol.check_model`).

    Examples
    --------
    >>> import numpy as np
    >>> from glauber.toy_models import FunctionModel
    >>> cache = ScoreCache(FunctionModel(3, 2, lambda x, i: np.zeros((len(x), 2))))
    >>> ids = cache.fetch(np.array([[0, 1, 1], [1, 1, 1]]), np.array([0, 0]), batch_size=8)
    >>> ids.tolist(), cache.queries  # both states agree off site 0: one query
    ([0, 0], 1)
    """

    def __init__(self, model: ConditionalModel) -> None:
        self.model = check_model(model)
        self.n, self.q = int(model.n), int(model.q)
        self.queries = 0
        self._index: dict[bytes, int] = {}
        self._chunks: list[Any] = []
        self._states: list[np.ndarray] = []
        self._sites: list[np.ndarray] = []

    def keys(self, states: np.ndarray, sites: np.ndarray) -> list[bytes]:
        """Hashable keys of queries: the site and the state with that site's token set to 0."""
        rows = np.empty((states.shape[0], self.n + 1), dtype=np.int32)
        rows[:, 0] = sites
        rows[:, 1:] = states
        rows[np.arange(rows.shape[0]), 1 + np.asarray(sites, dtype=np.int64)] = 0
        return np.ascontiguousarray(rows).view(np.dtype((np.void, 4 * (self.n + 1)))).ravel().tolist()

    def new_keys(self, keys: list[bytes], pending: set[bytes]) -> list[bytes]:
        """The distinct keys, in order, that are neither cached nor in ``pending``."""
        return list(dict.fromkeys(k for k in keys if k not in self._index and k not in pending))

    def fetch(self, states: np.ndarray, sites: np.ndarray, batch_size: int,
              keys: list[bytes] | None = None) -> np.ndarray:
        """Row ids (into :meth:`rows`) of queries, asking the model for the new ones only.

        New queries go to ``model.scores`` in chunks of at most ``batch_size`` rows, each
        distinct query once; :attr:`queries` counts them. ``keys``, when given, are
        :meth:`keys` of the same queries.

        Raises
        ------
        SequenceLengthError, VocabularyError
            If the states are not ``[R, n]`` indices into the vocabulary.
        NonFiniteScoresError
            If the model returns NaN or infinite scores.
        """
        states = np.asarray(states, dtype=np.int64)
        sites = np.asarray(sites, dtype=np.int64)
        check_states(self.model, states)
        keys = self.keys(states, sites) if keys is None else keys
        first: dict[bytes, int] = {}
        for r, key in enumerate(keys):
            if key not in self._index and key not in first:
                first[key] = r
        new = np.fromiter(first.values(), dtype=np.int64, count=len(first))
        for lo in range(0, len(new), batch_size):
            rows = new[lo:lo + batch_size]
            scores = self.model.scores(states[rows], sites[rows])
            if not all_finite(scores):
                raise NonFiniteScoresError(
                    f"model {getattr(self.model, 'name', type(self.model).__name__)} returned "
                    "non-finite scores; scores must be finite real numbers at every site"
                )
            self._chunks.append(scores)
            held = states[rows].copy()
            held[np.arange(len(rows)), sites[rows]] = 0
            self._states.append(held)
            self._sites.append(sites[rows].copy())
            for r in rows.tolist():
                self._index[keys[r]] = len(self._index)
            self.queries += len(rows)
        return np.fromiter((self._index[k] for k in keys), dtype=np.int64, count=len(keys))

    def rows(self, ids: np.ndarray) -> Any:
        """Stored scores of the row ids, ``[len(ids), q]``, in the model's array library."""
        if len(self._chunks) > 1:
            self._chunks = [concat(self._chunks)]
        return self._chunks[0][like(self._chunks[0], ids)]

    def queries_asked(self) -> tuple[np.ndarray, np.ndarray]:
        """Every query answered so far, in row-id order: ``(states [N, n], sites [N])``, each
        state with its queried site set to 0."""
        if not self._states:
            return np.zeros((0, self.n), dtype=np.int64), np.zeros(0, dtype=np.int64)
        if len(self._states) > 1:
            self._states = [np.concatenate(self._states)]
            self._sites = [np.concatenate(self._sites)]
        return self._states[0], self._sites[0]

    @property
    def dtype(self) -> str | None:
        """Name of the scores' dtype (``"float64"``, ``"float32"``, ...), None before any query."""
        if not self._chunks:
            return None
        return str(self._chunks[0].dtype).replace("torch.", "")

    def __contains__(self, key: bytes) -> bool:
        """Whether the query of a :meth:`keys` key has been answered."""
        return key in self._index

    def __len__(self) -> int:
        return len(self._index)


class MemoisedModel:
    """A ConditionalModel that answers through a :class:`ScoreCache`: each distinct (state,
    site) query goes to ``model`` once, and every answered query stays available afterwards
    (e.g. to re-evaluate the pairs of a search's witnesses at other temperatures for free).

    Other attributes are the wrapped model's.

    Parameters
    ----------
    model : ConditionalModel
    batch_size : int
        Most new rows per call of ``model.scores``.

    Examples
    --------
    >>> from glauber.toy_models import FunctionModel
    >>> m = MemoisedModel(FunctionModel(2, 2, lambda x, i: np.zeros((len(x), 2))))
    >>> _ = m.scores(np.array([[0, 1], [1, 1]]), np.array([0, 0]))
    >>> m.cache.queries
    1
    """

    def __init__(self, model: ConditionalModel, batch_size: int = 4096) -> None:
        self.cache = ScoreCache(model)
        self.model = self.cache.model
        self.n, self.q, self.vocab = self.cache.n, self.cache.q, model.vocab
        self.batch_size = int(batch_size)

    def scores(self, states: Any, sites: Any) -> Any:
        """``model.scores(states, sites)``, each distinct query asked once."""
        states = np.asarray(to_numpy(states), dtype=np.int64)
        sites = np.broadcast_to(np.asarray(to_numpy(sites), dtype=np.int64), (states.shape[0],))
        return self.cache.rows(self.cache.fetch(states, sites, self.batch_size))

    def __getattr__(self, name: str) -> Any:
        if name in ("cache", "model"):
            raise AttributeError(name)
        return getattr(self.model, name)


__all__ = ["MemoisedModel", "ScoreCache"]
