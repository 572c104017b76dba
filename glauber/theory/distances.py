"""Distances between laws on the vocabulary: total variation and Hilbert projective distance.

Total variation is HALF the L1 distance (the paper's Section 5.1 convention). The Hilbert
projective distance between two positive laws ``softmax(s)`` and ``softmax(t)`` is the
oscillation of the score difference, ``max_a (s_a - t_a) - min_a (s_a - t_a)``; it ignores
additive constants, so raw scores, logits and log-probabilities give the same value. It is the
bracket inside Lemma 6's score oscillation ``Delta_ij``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from glauber.core.validation import as_real_array
from glauber.errors import InvalidParameterError, NonFiniteScoresError


def tv_distance(p: ArrayLike, q: ArrayLike, axis: int = -1) -> np.ndarray | float:
    """Total-variation distance ``0.5 * sum_a |p_a - q_a|`` along ``axis`` (broadcasting).

    Parameters
    ----------
    p, q : array_like
        Probability vectors (or batches of them) that broadcast against each other.
    axis : int, optional
        The axis that indexes the vocabulary.

    Returns
    -------
    float or numpy.ndarray
        The distance, in ``[0, 1]`` for probability vectors; one value per batch element.

    Raises
    ------
    InvalidParameterError
        If the inputs hold NaN or infinite entries or non-real values, have different sizes
        along ``axis`` (the vocabulary), or their other axes do not broadcast.

    Examples
    --------
    >>> float(tv_distance([1.0, 0.0], [0.5, 0.5]))
    0.5
    """
    a = as_real_array(p, "p")
    b = as_real_array(q, "q")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise InvalidParameterError("tv_distance needs finite probability vectors; got NaN/inf")
    _same_vocabulary(a, b, axis, "p and q")
    try:
        diff = a - b
    except ValueError as exc:
        raise InvalidParameterError(
            f"p and q must broadcast together, got shapes {a.shape} and {b.shape}"
        ) from exc
    return 0.5 * np.sum(np.abs(diff), axis=axis)


def hilbert_distance(s: ArrayLike, t: ArrayLike, axis: int = -1) -> np.ndarray | float:
    """Hilbert projective distance between ``softmax(s)`` and ``softmax(t)``.

    Defined as the oscillation ``max_a (s_a - t_a) - min_a (s_a - t_a)`` along ``axis``. For
    score vectors of site ``i`` in two contexts that differ only at site ``j`` this is the
    bracket of Lemma 6's ``Delta_ij``; by the sharper form of Lemma 6,
    ``tv_distance(softmax(s), softmax(t)) <= tanh(hilbert_distance(s, t) / 4)``.

    Parameters
    ----------
    s, t : array_like
        Score vectors (logits, scores or log-probabilities; constants cancel), broadcastable.
    axis : int, optional
        The axis that indexes the vocabulary.

    Returns
    -------
    float or numpy.ndarray
        The distance, >= 0; one value per batch element.

    Raises
    ------
    NonFiniteScoresError
        If a score is NaN or infinite (a zero-probability token has infinite Hilbert distance
        from any positive law; drop it from the vocabulary instead).
    InvalidParameterError
        If the inputs do not broadcast.

    Examples
    --------
    >>> float(hilbert_distance([0.0, 1.0, 5.0], [0.0, 0.0, 2.0]))
    3.0
    """
    a = as_real_array(s, "s")
    b = as_real_array(t, "t")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise NonFiniteScoresError(
            "hilbert_distance needs finite scores; a NaN or infinite score was passed (mask "
            "zero-probability tokens out of the vocabulary first)"
        )
    _same_vocabulary(a, b, axis, "s and t")
    try:
        diff = a - b
    except ValueError as exc:
        raise InvalidParameterError(
            f"s and t must broadcast together, got shapes {a.shape} and {b.shape}"
        ) from exc
    return np.max(diff, axis=axis) - np.min(diff, axis=axis)


def _same_vocabulary(a: np.ndarray, b: np.ndarray, axis: int, names: str) -> None:
    """Both arrays index the same vocabulary along ``axis`` (batch axes may broadcast)."""
    try:
        size_a = a.shape[axis] if a.ndim else None
        size_b = b.shape[axis] if b.ndim else None
    except IndexError as exc:
        raise InvalidParameterError(
            f"axis {axis} is out of range for {names} of shapes {a.shape} and {b.shape}"
        ) from exc
    if size_a is None or size_b is None or size_a != size_b:
        raise InvalidParameterError(
            f"{names} must have the same vocabulary size along axis {axis}, got shapes "
            f"{a.shape} and {b.shape} (a length-1 axis is not broadcast over the vocabulary)"
        )


__all__ = [
    "hilbert_distance",
    "tv_distance",
]
