"""Chosen sites of a full-length state, the rest frozen: :func:`restrict`.

The people who run Glauber dynamics on a masked LM resample *chosen positions of a full
sequence* (a CDR loop in its framework, a span inside a passage) with every other position held
at its value. :func:`restrict` makes that chain a :class:`~glauber.core.protocol.ConditionalModel`
of its own, over the ``k`` chosen sites: a window state ``w`` stands for the full state
``x = context`` with ``x[sites[s]] = w[s]``, and its scores at window site ``s`` are the full
model's scores at site ``sites[s]`` of ``x`` (for an MLM, one forward of the whole sequence per
query). So every estimator, ``certify`` and ``ExactChain`` run on it unchanged; for a Gibbs
model the restricted chain is the Glauber chain of the conditional law given the frozen sites.
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

import numpy as np

from glauber.core.arrays import is_torch, to_numpy
from glauber.core.conditionals import host_states
from glauber.core.protocol import ConditionalModel
from glauber.errors import InvalidParameterError, SequenceLengthError, UnboundableModelError

#: The site numbering of the JSON files glauber writes, stated in each (``site_numbering``):
#: indices count from 0 there, positions a person reads count from 1.
SITE_NUMBERING = (
    "0-based: site indices in this file (sites, i and j, the columns of states) count from 0; "
    "positions a person reads (--sites, a window's name such as [positions 98-100 of 120], "
    "the verdict, the report, the docs) count from 1, so index k is position k + 1"
)


class RestrictedModel:
    """The Glauber chain of ``model`` on ``sites`` of ``context``, every other site frozen.

    Build it with :func:`restrict` (which checks the arguments). Attributes follow the protocol:
    ``n = len(sites)``, ``q``, ``vocab`` and ``labels`` of the full model.

    Attributes
    ----------
    model : ConditionalModel
        The full-length model.
    context : numpy.ndarray of int, shape (N,)
        The full-length state whose other sites stay frozen (vocabulary indices).
    sites : numpy.ndarray of int, shape (k,)
        The resampled sites, in window order (window site ``s`` is full site ``sites[s]``).
    """

    def __init__(self, model: ConditionalModel, context: np.ndarray, sites: np.ndarray) -> None:
        self.model = model
        self.context = context
        self.sites = sites
        self.n = int(len(sites))
        self.q = int(model.q)
        self.vocab = model.vocab
        base = str(getattr(model, "name", type(model).__name__))
        self.name = f"{base}[positions {_span(sites)} of {len(context)}]"
        self._device_context: dict[str, Any] = {}

    # -------------------------------------------------------------------------------- protocol
    @property
    def labels(self) -> tuple[str, ...]:
        """The full model's token labels."""
        return tuple(getattr(self.model, "labels", tuple(str(a) for a in range(self.q))))

    @property
    def device(self) -> Any:
        """The full model's device (``"cpu"`` for an in-memory model)."""
        return getattr(self.model, "device", "cpu")

    @property
    def check_inputs(self) -> Any:
        """The full model's per-call input checks (None if it has none)."""
        return getattr(self.model, "check_inputs", None)

    @check_inputs.setter
    def check_inputs(self, value: bool) -> None:
        if hasattr(self.model, "check_inputs"):
            self.model.check_inputs = value

    def embed(self, states: Any) -> Any:
        """Full-length states ``[B, N]`` of window states ``[B, k]`` (same array library)."""
        if is_torch(states):
            import torch

            key = str(states.device)
            if key not in self._device_context:
                self._device_context[key] = (
                    torch.as_tensor(self.context, device=states.device),
                    torch.as_tensor(self.sites, device=states.device),
                )
            context, sites = self._device_context[key]
            full = context.expand(states.shape[0], -1).clone()
            full[:, sites] = states.to(full.dtype)
            return full
        arr = np.asarray(states, dtype=np.int64)
        full = np.broadcast_to(self.context, (arr.shape[0], len(self.context))).copy()
        full[:, self.sites] = arr
        return full

    def scores(self, states: Any, sites: Any) -> Any:
        """Scores of window site ``sites[b]`` of each window state: the full model's scores at
        ``self.sites[sites[b]]`` of the embedded full state (``[B, k], [B] -> [B, q]``)."""
        if is_torch(sites):
            import torch

            full_sites = torch.as_tensor(self.sites, device=sites.device)[sites.long()]
        else:
            full_sites = self.sites[np.asarray(sites, dtype=np.int64)]
        return self.model.scores(self.embed(states), full_sites)

    def oscillation_upper_bound(self) -> Any:
        """The full model's tau-free bound on Lemma 6's oscillation, on the window's sites.

        Every window context is a context of the full chain, so the full model's bound holds
        on the window (:meth:`OscillationBound.restricted
        <glauber.theory.influence_bounds.OscillationBound.restricted>`).

        Raises
        ------
        UnboundableModelError
            If the full model has no such bound.
        """
        hook = getattr(self.model, "oscillation_upper_bound", None)
        if hook is None:
            raise UnboundableModelError(
                f"{getattr(self.model, 'name', type(self.model).__name__)} has no closed-form "
                "or weight bound on its oscillation (oscillation_upper_bound())"
            )
        return hook().restricted(self.sites)

    # ---------------------------------------------------------------------------- extras
    def default_states(self) -> np.ndarray:
        """The context's own tokens at the chosen sites: ``[1, k]``."""
        return self.context[self.sites][None, :]

    def encode(self, text: Any) -> Any:
        """Window state of a text of ``k`` tokens (the full model's ``encode``)."""
        return self.model.encode(text)

    def decode(self, states: Any) -> Any:
        """Text of window states (the full model's ``decode``)."""
        return self.model.decode(states)

    def full_text(self, state: Any) -> Any:
        """The full sequence (context with the window state in place), decoded."""
        return self.model.decode(self.embed(np.asarray(to_numpy(state))[None, :])[0])

    @property
    def cache_key(self) -> str | None:
        """A key naming this window's score table on disk: the full model's ``cache_key``
        with the frozen part of the context and the sites (None when the full model has no
        key). The context's tokens at the window's own sites never reach the model (every
        query overwrites them), so contexts that differ only there share one table."""
        key = getattr(self.model, "cache_key", None)
        if key is None:
            return None
        frozen = np.array(self.context, dtype=np.int64)
        frozen[self.sites] = -1
        h = hashlib.sha256(str(key).encode())
        h.update(frozen.tobytes())
        h.update(np.ascontiguousarray(self.sites, dtype=np.int64).tobytes())
        return h.hexdigest()

    def __repr__(self) -> str:
        return f"RestrictedModel(name={self.name!r}, n={self.n}, q={self.q})"


def restrict(model: ConditionalModel, context: Any, sites: Sequence[int] | Any) -> RestrictedModel:
    """The chain of ``model`` on the chosen ``sites`` of ``context``, the rest frozen.

    Parameters
    ----------
    model : ConditionalModel
        The full-length model (``model.n`` sites, or ``None`` for a model of any length).
    context : array of int, shape (N,)
        A full-length state (vocabulary indices) holding the frozen sites.
    sites : sequence of int
        The sites to resample (0-based positions of ``context``), distinct, at least one.

    Returns
    -------
    RestrictedModel
        A ConditionalModel with ``n = len(sites)``.

    Raises
    ------
    InvalidParameterError
        If ``sites`` is empty, holds a non-integer, a repeated site, or a site outside
        ``0..N-1``.
    SequenceLengthError
        If ``context`` is not one non-empty state of the model's length (or is longer than the
        model's ``max_sites``).
    VocabularyError
        If ``context`` holds a token outside the vocabulary (or is not integer).

    Every check runs before the model is asked anything.

    Notes
    -----
    A site cannot lie on a special token: a state holds indices into the resampling vocabulary,
    which never contains special tokens (a masked LM frames the state as
    ``[CLS] x_0 .. x_{N-1} [SEP]`` itself), so the framing positions are not positions of the
    context and are refused as out of range.

    Examples
    --------
    >>> from glauber.toy_models import FunctionModel
    >>> full = FunctionModel(4, 2, lambda x, i: np.stack([x.sum(1), -x.sum(1)], axis=1) * 1.0)
    >>> window = restrict(full, [1, 0, 1, 1], [1, 2])
    >>> window.n, window.default_states().tolist()
    (2, [[0, 1]])
    >>> window.scores(np.array([[1, 0]]), np.array([0])).tolist()  # 1 1 0 1, site 1 masked
    [[2.0, -2.0]]
    """
    raw = to_numpy(context) if is_torch(context) else np.asarray(context)
    if raw.ndim != 1 or raw.shape[0] == 0:
        raise SequenceLengthError(
            f"context must be one non-empty full-length state [N], got shape {raw.shape}; pass "
            "a single sequence of vocabulary indices (encode text with the model's encode())"
        )
    full_n = getattr(model, "n", None)
    if full_n is not None and raw.shape[0] != full_n:
        raise SequenceLengthError(
            f"context has {raw.shape[0]} sites but the model resamples n = {full_n}; build the "
            f"model with the context's length (e.g. with_length({raw.shape[0]}))"
        )
    longest = getattr(model, "max_sites", None)
    if longest is not None and raw.shape[0] > longest:
        raise SequenceLengthError(
            f"context has {raw.shape[0]} sites but {getattr(model, 'name', 'the model')} accepts "
            f"at most {longest}; use a shorter context"
        )
    ctx = host_states(_Length(model, raw.shape[0]), raw[None, :])[0]
    chosen = _checked_sites(sites, ctx.shape[0])
    return RestrictedModel(model, ctx, chosen)


def _checked_sites(sites: Any, length: int) -> np.ndarray:
    """``sites`` as distinct int64 positions in ``0..length-1`` (at least one).

    Raises
    ------
    InvalidParameterError
        If ``sites`` is empty, not integers, repeated or out of range.
    """
    raw = to_numpy(sites) if is_torch(sites) else sites
    try:
        values = np.asarray(raw).ravel()
    except (TypeError, ValueError) as exc:  # ragged nesting
        raise InvalidParameterError(f"sites must be integer positions, got {sites!r}") from exc
    if values.size == 0:
        raise InvalidParameterError("sites is empty; choose at least one position to resample")
    integral = np.issubdtype(values.dtype, np.integer) or (
        np.issubdtype(values.dtype, np.floating)
        and bool(np.all(np.isfinite(values)) and np.all(values == np.round(values)))
    )
    if values.dtype == np.bool_ or not integral:
        raise InvalidParameterError(
            f"sites must be integer positions (0-based), got {values.tolist()!r}"
        )
    chosen = values.astype(np.int64)
    outside = chosen[(chosen < 0) | (chosen >= length)]
    if outside.size:
        raise InvalidParameterError(
            f"site {int(outside[0])} lies outside the context's positions 0..{length - 1} "
            "(0-based; the model's special tokens, such as [CLS] and [SEP], are not positions "
            "of a state); choose sites within the context"
        )
    if len(np.unique(chosen)) != len(chosen):
        raise InvalidParameterError(
            f"sites must be distinct, got {chosen.tolist()}; list each position once"
        )
    return chosen


class _Length:
    """``model`` seen with ``n`` sites (to check a context with the protocol's state checks)."""

    def __init__(self, model: ConditionalModel, n: int) -> None:
        self.n, self.q = n, model.q


def _span(sites: np.ndarray) -> str:
    """``"98-100"`` for consecutive sites, else ``"3,7,9"``: positions counted from 1, as
    residues are (site ``s`` is position ``s + 1``)."""
    s = [int(v) + 1 for v in sites]
    if len(s) > 1 and s == list(range(s[0], s[0] + len(s))):
        return f"{s[0]}-{s[-1]}"
    return ",".join(str(v) for v in s)


__all__ = ["SITE_NUMBERING", "RestrictedModel", "restrict"]
