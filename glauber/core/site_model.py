"""Models that answer one site at a time: the ConditionalModel protocol over numpy float64.

Such a model is defined by a *site score function* ``score_site(states[B, n], i) -> [B, q]``
giving ``s_i(a; x_{-i})`` at ``tau = 1`` for every state in the batch at one site ``i``.
:meth:`SiteScoreModel.scores` groups a batch by site, masks the resampled token and checks the
answer, so each subclass writes only the vectorised per-site score. The toy models
(:mod:`glauber.toy_models`) and the score tables of :mod:`glauber.exact.score_table` are such
models.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from glauber.core.validation import check_positive_int, check_vocab_size
from glauber.errors import (
    InvalidParameterError,
    NonFiniteScoresError,
    NonRealScoresError,
    SequenceLengthError,
    VocabularyError,
)


class SiteScoreModel:
    """A model answering site by site over tokens ``0..q-1`` (``vocab = range(q)``), in float64.

    Parameters
    ----------
    n : int
        Number of sites, >= 1.
    q : int
        Vocabulary size, >= 2.
    name : str, optional
        Human-readable name used in tables and JSON.
    labels : sequence of str, optional
        A printable label per token; defaults to ``"0", "1", ...``.

    Raises
    ------
    InvalidParameterError
        If ``n < 1``.
    VocabularyError
        If ``q < 2``.
    """

    def __init__(
        self, n: int, q: int, name: str | None = None, labels: Sequence[str] | None = None
    ) -> None:
        self.n = check_positive_int(n, "number of sites n")
        self.q = check_vocab_size(q)
        self.vocab = tuple(range(self.q))
        self.name = name or type(self).__name__
        self.labels = tuple(labels) if labels is not None else tuple(str(a) for a in range(self.q))
        if len(self.labels) != self.q:
            raise VocabularyError(f"labels must have q = {self.q} entries, got {len(self.labels)}")

    def as_states(self, states: np.ndarray) -> np.ndarray:
        """Return ``states`` as int64 ``[B, n]`` with tokens in ``0..q-1`` (a 1-D state is one row).

        Raises
        ------
        SequenceLengthError
            If the array does not have ``n`` columns.
        VocabularyError
            If an entry lies outside ``0..q-1``.
        """
        arr = np.asarray(states)
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.ndim != 2 or arr.shape[1] != self.n:
            raise SequenceLengthError(
                f"{self.name}: states must have shape [B, n] with n = {self.n}, got {arr.shape}"
            )
        if not np.issubdtype(arr.dtype, np.integer) and arr.size:
            raise VocabularyError(f"{self.name}: states must hold integer tokens, got {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() >= self.q):
            raise VocabularyError(f"{self.name}: states must hold tokens in 0..{self.q - 1}")
        return arr.astype(np.int64, copy=False)

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        """Scores ``s_site(a; x_{-site})`` at ``tau = 1`` for every state: ``[B, n] -> [B, q]``.

        Subclasses implement this; :meth:`scores` masks ``states[:, site]`` to 0 before calling.
        """
        raise NotImplementedError

    def scores(self, states: np.ndarray, sites: np.ndarray) -> np.ndarray:
        """Protocol method: scores at ``tau = 1`` for one site per state, ``[B, n], [B] -> [B, q]``.

        Raises
        ------
        NonFiniteScoresError
            If the score function returns NaN or inf.
        """
        states = np.asarray(states, dtype=np.int64)
        sites = np.broadcast_to(np.asarray(sites, dtype=np.int64), (states.shape[0],))
        out = np.empty((states.shape[0], self.q), dtype=np.float64)
        for i in np.unique(sites):
            rows = np.flatnonzero(sites == i)
            masked = states[rows]  # a copy: fancy indexing
            masked[:, i] = 0  # the model must not see the token it resamples
            out[rows] = self._checked_site_scores(masked, int(i))
        return out

    def _checked_site_scores(self, states: np.ndarray, site: int) -> np.ndarray:
        raw = np.asarray(self.score_site(states, site))
        if raw.dtype.kind not in "fiub":
            raise NonRealScoresError(
                f"{self.name}: score function returned dtype {raw.dtype} at site {site}; scores "
                "must be real numbers (a float array), not complex numbers, strings or objects"
            )
        s = raw.astype(np.float64)
        if s.shape != (states.shape[0], self.q):
            raise InvalidParameterError(
                f"{self.name}: score function returned shape {s.shape} at site {site}, expected "
                f"({states.shape[0]}, {self.q}) = (batch, q)"
            )
        if not np.isfinite(s).all():
            raise NonFiniteScoresError(
                f"{self.name}: non-finite score at site {site}; scores must be finite reals "
                "(a zero conditional needs score -inf, which positivity (Proposition 1) excludes)"
            )
        return s

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, n={self.n}, q={self.q})"


__all__ = ["SiteScoreModel"]
