"""What the transformer backends share: protocol attributes, text I/O, site checks, batching.

:class:`~glauber.mlm_backend.hf_masked_lm.HFMaskedLM` and
:class:`~glauber.mlm_backend.autoregressive.CausalLMControl` both meet the ConditionalModel
protocol (docs/architecture.md, "The protocol") over a :class:`TokenVocabulary`: states hold indices
``0..q-1`` into ``vocab`` (token ids), each state is scored at one site, and a large batch is
split into sub-batches sized by :func:`glauber.mlm_backend.device.token_budget`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from typing import Any, Iterator, Sequence

import torch

from glauber.errors import (
    InvalidParameterError,
    SequenceLengthError,
    UnknownModelError,
    VocabularyError,
)
from glauber.mlm_backend.device import activation_bytes_per_token, token_budget
from glauber.mlm_backend.vocabulary import TokenVocabulary


class TokenSequenceModel:
    """Base of the backends: a transformer ``model`` on ``device`` with a ``vocabulary``.

    Subclasses set ``vocabulary``, ``device``, ``dtype``, ``model`` and ``_budget`` (the
    result of :func:`glauber.mlm_backend.device.check_budget`) in their constructor.
    """

    def default_states(self) -> torch.Tensor | None:
        """Natural states to examine by default: the shipped antibody chains for amino-acid
        models (:func:`glauber.mlm_backend.sequences.natural_states`), None otherwise."""
        from glauber.mlm_backend.sequences import natural_states

        return natural_states(self)

    vocabulary: TokenVocabulary
    n: int | None
    check_inputs: bool
    device: torch.device
    dtype: torch.dtype
    model: Any
    _budget: tuple[int | None, int | None]

    @property
    def q(self) -> int:
        """Size of the resampling vocabulary."""
        return self.vocabulary.q

    @property
    def vocab(self) -> tuple[int, ...]:
        """Token ids a chain may take (state value ``k`` means ``vocab[k]``)."""
        return self.vocabulary.token_ids

    @property
    def labels(self) -> tuple[str, ...]:
        """The printable label (token string) of each vocabulary entry."""
        return self.vocabulary.labels

    @property
    def cache_key(self) -> str:
        """A key of everything the scores depend on: the class, the name, the vocabulary, the
        compute precision, the head's path, the model's configuration (LayerNorm ``eps``, ESM's
        token dropout and positions: functions of the same weights) and a SHA-256 of the
        weights (computed once per model object).

        Score tables of exact window chains are kept on disk under it
        (:func:`glauber.exact.score_table.score_table`).
        """
        key = getattr(self, "_cache_key", None)
        if key is None:
            h = hashlib.sha256()
            for part in (type(self).__name__, getattr(self, "name", ""), str(self.dtype),
                         str(getattr(self, "autocast", None)), repr(self.vocab),
                         str(getattr(self, "head", ""))):
                h.update(part.encode())
            h.update(_config_text(self.model).encode())
            for name, tensor in sorted(self.model.state_dict().items()):
                h.update(name.encode())
                h.update(tensor.detach().cpu().contiguous().flatten().view(torch.uint8).numpy())
            key = self._cache_key = h.hexdigest()
        return key

    def encode(self, text: str | Sequence[str]) -> torch.Tensor:
        """State indices (1-D ``torch.long`` on the model's device) of a text or token list.

        Raises
        ------
        VocabularyError
            If a token lies outside the resampling vocabulary.
        """
        return self.vocabulary.encode(text, device=self.device)

    def decode(self, states: Any) -> str | list[str]:
        """Text of a state ``[n]`` (a string) or a batch ``[B, n]`` (a list of strings)."""
        return self.vocabulary.decode(states)

    def _checked_sites(self, sites: Any, batch: int) -> torch.Tensor:
        """``sites`` as a ``[batch]`` long tensor on the device (a scalar applies to every row).

        Raises
        ------
        InvalidParameterError
            If ``sites`` is neither a scalar nor one site per state.
        """
        sites = torch.as_tensor(sites, device=self.device).long()
        if sites.ndim == 0:
            sites = sites.expand(batch)
        if tuple(sites.shape) != (batch,):
            raise InvalidParameterError(
                f"sites must be one site per state, shape ({batch},), got {tuple(sites.shape)}"
            )
        return sites

    def _check_width(self, width: int) -> None:
        """Refuse states of ``width`` sites that the model cannot take (none here)."""

    def _checked_inputs(self, states: Any, sites: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """``states [B, n]`` and ``sites [B]`` as long tensors on the device, checked.

        Raises
        ------
        SequenceLengthError
            If states are not ``[B, n]`` (or are wider than :meth:`_check_width` allows).
        VocabularyError
            If an entry is not an index ``0..q-1`` or a site is not ``0..n-1`` (unless
            ``check_inputs`` is False).
        """
        states = torch.as_tensor(states, device=self.device)
        if states.dtype != torch.long:
            states = states.long()
        if states.ndim != 2:
            raise SequenceLengthError(
                f"states must have shape [B, n], got shape {tuple(states.shape)}; "
                "add a batch axis (states[None]) for a single sequence"
            )
        batch, width = states.shape
        if self.n is not None and width != self.n:
            raise SequenceLengthError(
                f"states have {width} sites but the model resamples n = {self.n}; "
                "use model.with_length(n) or pad/truncate the states"
            )
        self._check_width(width)
        sites = self._checked_sites(sites, batch)
        if not self.check_inputs:
            return states, sites
        bad = torch.stack(
            [((states < 0) | (states >= self.q)).any(), ((sites < 0) | (sites >= width)).any()]
        ).tolist()  # one host synchronisation per call
        if bad[0]:
            raise VocabularyError(
                f"state entries must be indices 0..{self.q - 1} into model.vocab, not token ids; "
                "build states with encode()"
            )
        if bad[1]:
            raise VocabularyError(f"sites must lie in 0..{width - 1}")
        return states, sites

    def _rows_for(self, length: int, logits_width: int) -> int:
        """Rows of ``length`` tokens one forward pass may take within the memory budget."""
        per_token = activation_bytes_per_token(self.model.config, length, self.dtype, logits_width)
        return max(1, token_budget(self.device, per_token, *self._budget) // length)


#: Configuration entries that name where or how a model was stored, not what it computes.
_STORAGE_KEYS = frozenset({"_name_or_path", "transformers_version", "dtype", "torch_dtype"})


def _config_text(model: Any) -> str:
    """The model's ``config`` as sorted JSON without :data:`_STORAGE_KEYS` ("" without one)."""
    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "to_dict"):
        return ""
    entries = {k: v for k, v in config.to_dict().items() if k not in _STORAGE_KEYS}
    return json.dumps(entries, sort_keys=True, default=str)


def load_pretrained(auto_model: Any, name: str, tokenizer: Any, kind: str,
                    hint: str) -> tuple[Any, Any]:
    """``auto_model.from_pretrained(name)`` and (unless given) ``AutoTokenizer`` of ``name``.

    Parameters
    ----------
    auto_model : type
        A ``transformers`` auto class (``AutoModelForMaskedLM``, ``AutoModelForCausalLM``).
    name : str
        A local directory or a hub name.
    tokenizer : PreTrainedTokenizerBase or None
        Kept when given; else loaded from ``name``.
    kind : str
        What is loaded, in the message (``"masked LM"``, ``"causal LM"``).
    hint : str
        What to do instead, ending the message.

    Returns
    -------
    tuple
        ``(model, tokenizer)``.

    Raises
    ------
    UnknownModelError
        If ``name`` cannot be loaded (``OSError``, ``ValueError`` or ``KeyError`` from
        ``transformers``).
    """
    from transformers import AutoTokenizer

    try:
        model = auto_model.from_pretrained(name)
        if tokenizer is None:
            tokenizer = AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError, KeyError) as exc:
        raise UnknownModelError(
            f"cannot load {kind} {name!r} ({type(exc).__name__}: {str(exc).splitlines()[0]}); "
            + hint
        ) from exc
    return model, tokenizer


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' load report (heads a loader ignores) and progress bar while loading."""
    from transformers.utils import logging

    verbosity, bar = logging.get_verbosity(), logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        logging.set_verbosity(verbosity)
        if bar:
            logging.enable_progress_bar()


__all__ = [
    "TokenSequenceModel",
    "load_pretrained",
    "quiet_transformers",
]
