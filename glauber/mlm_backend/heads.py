"""Split a masked LM into its base encoder and its MLM head, to apply the head at one position.

A Glauber step needs the logits at the masked site only. Running the base encoder, gathering the
hidden state at that position and applying the head to ``[B, hidden]`` costs ``B x V`` instead of
``B x L x V`` in the output layer (docs/architecture.md, "Speed"; mlm-scoring's
``select_positions``). The split is exact for the architectures listed in :func:`split_masked_lm`,
whose ``forward`` is ``head(encoder(...).last_hidden_state)`` position by position (checked against
the full logits in the tests); any other model uses the full-logits path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import nn


@dataclass(frozen=True)
class MaskedLMParts:
    """A masked LM split as ``logits = head(encoder(input_ids, attention_mask).last_hidden_state)``.

    Attributes
    ----------
    encoder : torch.nn.Module
        The base model (returns ``last_hidden_state`` of shape ``[B, L, hidden]``).
    head : callable
        Maps hidden states ``[..., hidden]`` to vocabulary logits ``[..., V]`` position-wise.
    architecture : str
        The ``*ForMaskedLM`` class name the split was made for.
    """

    encoder: nn.Module
    head: Callable[[torch.Tensor], torch.Tensor]
    architecture: str


def split_masked_lm(model: Any) -> MaskedLMParts | None:
    """Return the encoder/head split of ``model``, or None if its architecture is not known.

    Known (exact class, not subclasses, whose ``forward`` may differ): ``BertForMaskedLM``
    (``bert`` + ``cls``), ``RobertaForMaskedLM`` (``roberta`` + ``lm_head``),
    ``DistilBertForMaskedLM`` (``distilbert`` + ``vocab_transform``, activation,
    ``vocab_layer_norm``, ``vocab_projector``) and ``ModernBertForMaskedLM`` (``model`` +
    ``head`` + ``decoder``), as defined in the installed transformers 5.x.
    """
    name = type(model).__name__
    if type(model).__module__.split(".")[0] != "transformers":
        return None
    if name == "BertForMaskedLM":
        return MaskedLMParts(model.bert, model.cls, name)
    if name == "RobertaForMaskedLM":
        return MaskedLMParts(model.roberta, model.lm_head, name)
    if name == "DistilBertForMaskedLM":

        def distilbert_head(h: torch.Tensor) -> torch.Tensor:
            h = model.activation(model.vocab_transform(h))
            return model.vocab_projector(model.vocab_layer_norm(h))

        return MaskedLMParts(model.distilbert, distilbert_head, name)
    if name == "ModernBertForMaskedLM":

        def modernbert_head(h: torch.Tensor) -> torch.Tensor:
            return model.decoder(model.head(h))

        return MaskedLMParts(model.model, modernbert_head, name)
    return None


__all__ = [
    "MaskedLMParts",
    "split_masked_lm",
]
