"""States of a batch of chains in the model's array library (numpy or torch, on its device).

Concatenating and copying batches without leaving their library, and moving host states to
where the model answers (:func:`to_model_library`: one probe query), for the samplers
(:mod:`glauber.estimators.sampler`, :mod:`glauber.estimators.coupling`), the kernel steps and
the query memo.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glauber.core.arrays import is_torch, namespace
from glauber.core.conditionals import log_conditionals
from glauber.core.protocol import ConditionalModel


def concat(chunks: list) -> Any:
    """Concatenate arrays of one library along the first axis (``np.concatenate``/``torch.cat``)."""
    if is_torch(chunks[0]):
        return namespace(chunks[0]).cat(chunks)
    return np.concatenate(chunks)


def copy_states(states: Any) -> Any:
    """Return a copy of a numpy array or torch tensor (same library and device)."""
    return states.clone() if is_torch(states) else states.copy()


def to_model_library(model: ConditionalModel, states: np.ndarray, site: int, tau: float) -> Any:
    """Return ``states`` in the array library and on the device where ``model`` answers.

    Asks the model once, for one row (the cost of one tiny forward), and moves the states to the
    device of the answer: a torch model then receives torch tensors for the rest of the run.
    """
    probe = log_conditionals(model, states[:1], np.array([site], dtype=np.int64), tau)
    if is_torch(probe):
        torch = namespace(probe)
        return torch.tensor(states, dtype=torch.long, device=probe.device)  # a copy
    return states.copy()


__all__ = [
    "concat",
    "copy_states",
    "to_model_library",
]
