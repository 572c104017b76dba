"""Temperature-scaled conditionals ``p_tau(. | x_{-i}) = softmax(s_i(.; x_{-i}) / tau)``.

This is the one place where scores are divided by ``tau`` (DESIGN.md, "The protocol").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glauber.errors import NonFiniteScoresError, SequenceLengthError, VocabularyError
from glauber.estimators.arrays import all_finite, is_torch, log_softmax, to_numpy
from glauber.estimators.protocol import ConditionalModel
from glauber.theory.validation import check_tau


def check_states(model: ConditionalModel, states: Any) -> None:
    """Check that ``states`` is ``[B, n]`` with entries in ``0..q-1``.

    Raises
    ------
    SequenceLengthError
        If the array is not two-dimensional with ``n`` columns.
    VocabularyError
        If an entry lies outside the resampling vocabulary ``0..q-1``.
    """
    shape = tuple(states.shape)
    if len(shape) != 2 or shape[1] != model.n:
        raise SequenceLengthError(
            f"states must have shape [B, n] with n = {model.n} sites, got shape {shape}; "
            "pad or truncate the sequences, or build the model with the matching length"
        )
    arr = to_numpy(states) if is_torch(states) else np.asarray(states)
    if arr.size and (arr.min() < 0 or arr.max() >= model.q):
        bad = arr[(arr < 0) | (arr >= model.q)][0]
        raise VocabularyError(
            f"state entry {int(bad)} lies outside the resampling vocabulary 0..{model.q - 1}; "
            "states hold indices into model.vocab, not raw token ids (use the backend's encode())"
        )


def log_conditionals(model: ConditionalModel, states: Any, sites: Any, tau: float) -> Any:
    """Log-conditionals ``log p_tau(a | x_{-i})`` for a batch of states, one site per state.

    Parameters
    ----------
    model : ConditionalModel
        Any model meeting the protocol (toy or MLM).
    states : array of int, shape (B, n)
        Vocabulary indices.
    sites : array of int, shape (B,)
        The site resampled in each state.
    tau : float
        Temperature, finite and > 0.

    Returns
    -------
    array, shape (B, q)
        ``log_softmax(scores / tau)`` in the model's array library (numpy float64 for toys,
        torch float32 or better for MLMs).

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and positive.
    NonFiniteScoresError
        If the model returned NaN or infinite scores.
    """
    tau = check_tau(tau)
    s = model.scores(states, sites)
    if not all_finite(s):
        raise NonFiniteScoresError(
            f"model {getattr(model, 'name', type(model).__name__)} returned non-finite scores; "
            "check the score function (scores must be finite real numbers at every site)"
        )
    return log_softmax(s / tau)
