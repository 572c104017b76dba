"""The ConditionalModel protocol: the one seam between toy models and masked LMs.

A model is anything with

``n`` : int
    Sequence length (number of sites).
``q`` : int
    Size of the resampling vocabulary ``V``.
``vocab`` : sequence of int
    The token ids a chain may take, ``len(vocab) == q``. States never hold these ids: a state is a
    row of *indices into* ``vocab`` (``0 <= x_i < q``), so every estimator works in ``{0..q-1}^n``.
    Toy models have ``vocab = range(q)``; an MLM backend maps indices to its tokenizer's ids.
``scores(states, sites)``
    ``states``: integer array ``[B, n]`` of vocabulary indices; ``sites``: integer array ``[B]``,
    one site per state. Returns the scores ``s_i(a; x_{-i})`` at ``tau = 1`` for every ``a`` in
    ``V``: a float array ``[B, q]`` (numpy float64 for toys; a torch tensor on the model's device
    for MLMs). The entry at the state's own site is ignored by the model (it is masked).

Temperature enters in exactly one place, :func:`glauber.core.conditionals.log_conditionals`,
which divides by ``tau`` and applies a log-softmax. Optional attributes: ``labels`` (a printable
name for each vocabulary entry) and ``name``.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from glauber.errors import InvalidModelError


@runtime_checkable
class ConditionalModel(Protocol):
    """Structural type met by every toy model and by the MLM backend (see module docstring)."""

    n: int
    q: int
    vocab: Sequence[int]

    def scores(self, states: Any, sites: Any) -> Any:
        """Scores at ``tau = 1``: ``[B, n]`` ints and ``[B]`` sites to ``[B, q]`` floats."""
        ...


def check_model(model: Any, name: str = "model") -> Any:
    """Return ``model`` if it has the protocol's ``n``, ``q`` and a callable ``scores``.

    Raises
    ------
    InvalidModelError
        If it does not (or ``n``, ``q`` are not positive integers); a specification string is
        pointed to
        :func:`glauber.models.resolve_model`, which turns it into a model.
    """
    if (callable(getattr(model, "scores", None)) and hasattr(model, "n")
            and hasattr(model, "q")):
        for attr in ("n", "q"):
            value = getattr(model, attr)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise InvalidModelError(
                    f"{type(model).__name__}.{attr} must be a positive integer, got {value!r}; "
                    "set the sequence length (e.g. model.with_length(n)) first"
                )
        return model
    if isinstance(model, str):
        raise InvalidModelError(
            f"{name} must be a ConditionalModel, got the string {model!r}; resolve a name or "
            f"specification first: glauber.models.resolve_model({model!r})"
        )
    raise InvalidModelError(
        f"{name} must be a ConditionalModel (an object with n, q, vocab and scores(states, "
        f"sites)), got {type(model).__name__}; build one (glauber.toy_models) or resolve a "
        "name with glauber.models.resolve_model"
    )


__all__ = [
    "check_model",
    "ConditionalModel",
]
