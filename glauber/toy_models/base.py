"""Common machinery of the toy models: :class:`ToyModel` and :class:`FunctionModel`.

A toy model is a :class:`~glauber.core.site_model.SiteScoreModel`: it writes the vectorised
site score ``score_site(states[B, n], i) -> [B, q]`` at ``tau = 1``, and the base class groups a
batch by site, masks the resampled token and checks the scores.
"""

from __future__ import annotations

import numpy as np

from glauber.core.site_model import SiteScoreModel
from glauber.errors import InvalidParameterError


class ToyModel(SiteScoreModel):
    """Base class of the small-vocabulary toy models (tokens are ``0..q-1``).

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


class FunctionModel(ToyModel):
    """A model given by an arbitrary score function (positive conditionals at every tau).

    Parameters
    ----------
    n, q : int
        Sites and vocabulary size.
    score_fn : callable
        ``score_fn(states[B, n], site) -> scores[B, q]``, scores at ``tau = 1``. The column
        ``states[:, site]`` is masked (set to 0) before the call, so the conditional cannot
        depend on the token being resampled.
    name : str, optional

    Raises
    ------
    InvalidParameterError
        If ``score_fn`` is not callable (a score function that returns strings, ``None`` or
        non-finite values raises :class:`~glauber.errors.NonRealScoresError` or
        :class:`~glauber.errors.NonFiniteScoresError` at the first query).

    Examples
    --------
    >>> import numpy as np
    >>> m = FunctionModel(3, 2, lambda x, i: np.zeros((len(x), 2)))
    >>> m.scores(np.zeros((1, 3), dtype=int), np.array([0])).tolist()
    [[0.0, 0.0]]
    """

    def __init__(self, n: int, q: int, score_fn, name: str | None = None) -> None:
        super().__init__(n, q, name=name or "function-model")
        if not callable(score_fn):
            raise InvalidParameterError(
                f"score_fn must be a function score_fn(states[B, n], site) -> scores[B, q], got "
                f"{type(score_fn).__name__}"
            )
        self.score_fn = score_fn

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        return self.score_fn(states, site)


__all__ = [
    "FunctionModel",
    "ToyModel",
]
