"""Split a masked LM into its base encoder and its MLM head, to apply the head at one position.

A Glauber step needs the logits at the masked site only. Running the base encoder, gathering the
hidden state at that position and applying the head to ``[B, hidden]`` costs ``B x V`` instead of
``B x L x V`` in the output layer (docs/architecture.md, "Speed"; mlm-scoring's
``select_positions``). The split is exact for the architectures listed in :func:`split_masked_lm`,
whose ``forward`` is ``head(encoder(...).last_hidden_state)`` position by position (checked against
the full logits in the tests); any other model uses the full-logits path.

All six heads end in ``LayerNorm -> linear decoder`` (ESM adds a separate bias after a decoder
without one; ALBERT's LayerNorm is over its embedding size, not its hidden size).
:class:`Float64Head` evaluates those two layers for the resampling vocabulary in float64 by the
algorithm of :mod:`glauber.theory.layernorm_head` (the head's dense layer and activation stay in
the model's precision), so that the scores the library returns have a rigorous, context-free
enclosure of every difference (:meth:`Float64Head.enclosure`): the upper bound on influence of
:func:`glauber.estimators.influence_upper_bound`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
from torch import nn

import numpy as np

from glauber.errors import UnboundableModelError
from glauber.theory.influence_bounds import OscillationBound
from glauber.theory.layernorm_head import HeadEnclosure, layernorm_head_enclosure

#: The ``*ForMaskedLM`` classes of transformers whose head :func:`split_masked_lm` applies at the
#: masked position and :func:`layernorm_head_parts` evaluates in float64.
KNOWN_HEADS = ("BertForMaskedLM", "RobertaForMaskedLM", "DistilBertForMaskedLM",
               "ModernBertForMaskedLM", "EsmForMaskedLM", "AlbertForMaskedLM")
#: What the weight bound needs of a head, in the words of the errors.
BOUND_STRUCTURE = ("scores that end in LayerNorm(d) -> Linear(d, V) (plus an optional bias), "
                   "whose last two layers glauber evaluates in float64")


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


def _is_transformers_model(model: Any) -> bool:
    return type(model).__module__.split(".")[0] == "transformers"


def split_masked_lm(model: Any) -> MaskedLMParts | None:
    """Return the encoder/head split of ``model``, or None if its architecture is not known.

    Known (exact class, not subclasses, whose ``forward`` may differ): ``BertForMaskedLM``
    (``bert`` + ``cls``), ``RobertaForMaskedLM`` (``roberta`` + ``lm_head``),
    ``DistilBertForMaskedLM`` (``distilbert`` + ``vocab_transform``, activation,
    ``vocab_layer_norm``, ``vocab_projector``), ``ModernBertForMaskedLM`` (``model`` +
    ``head`` + ``decoder``), ``EsmForMaskedLM`` (``esm`` + ``lm_head``) and
    ``AlbertForMaskedLM`` (``albert`` + ``predictions``), as defined in the installed
    transformers 5.x.
    """
    name = type(model).__name__
    if not _is_transformers_model(model):
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
    if name == "EsmForMaskedLM":
        return MaskedLMParts(model.esm, model.lm_head, name)
    if name == "AlbertForMaskedLM":
        return MaskedLMParts(model.albert, model.predictions, name)
    return None


@dataclass(frozen=True)
class LayerNormHeadParts:
    """The last layers of a masked LM head: ``decoder(norm(pre(hidden))) + bias``.

    Attributes
    ----------
    pre : callable
        The head's dense layer and activation, ``[..., h] -> [..., d]`` (model precision).
    norm : torch.nn.LayerNorm
        Its LayerNorm over the last axis (optional ``weight`` and ``bias``, ``eps``).
    decoder : torch.nn.Linear
        The linear decoder to the vocabulary (optional bias).
    bias : torch.Tensor or None
        A bias the head adds after the decoder (ESM's ``lm_head.bias``; None for the others,
        whose decoder carries its bias).
    """

    pre: Callable[[torch.Tensor], torch.Tensor]
    norm: nn.LayerNorm
    decoder: nn.Linear
    bias: torch.Tensor | None = None


def layernorm_head_parts(model: Any) -> LayerNormHeadParts | None:
    """The ``LayerNorm -> linear`` end of the head of a known masked LM, or None.

    Known: the architectures of :func:`split_masked_lm` as defined in the installed
    transformers 5.x (BERT: ``cls.predictions.transform`` and ``decoder``; RoBERTa:
    ``lm_head`` with the exact gelu; DistilBERT: ``vocab_transform``, ``activation``,
    ``vocab_layer_norm``, ``vocab_projector``; ModernBERT: ``head`` and ``decoder``; ESM:
    ``lm_head.dense``, ESM's own erf gelu, ``lm_head.layer_norm``, ``lm_head.decoder``, which
    has no bias, and the separate ``lm_head.bias``; ALBERT: ``predictions.dense``,
    ``activation``, ``LayerNorm`` over the embedding size, ``decoder``, whose bias is the tied
    ``predictions.bias``). Use :func:`checked_head_parts` to know why a model has none.
    """
    name = type(model).__name__
    if not _is_transformers_model(model):
        return None
    if name == "BertForMaskedLM":
        pred = model.cls.predictions
        t = pred.transform
        return LayerNormHeadParts(lambda h: t.transform_act_fn(t.dense(h)), t.LayerNorm,
                                  pred.decoder)
    if name == "RobertaForMaskedLM":
        head = model.lm_head
        gelu = nn.functional.gelu  # RobertaLMHead.forward uses the exact (erf) gelu
        return LayerNormHeadParts(lambda h: gelu(head.dense(h)), head.layer_norm, head.decoder)
    if name == "DistilBertForMaskedLM":
        return LayerNormHeadParts(lambda h: model.activation(model.vocab_transform(h)),
                                  model.vocab_layer_norm, model.vocab_projector)
    if name == "ModernBertForMaskedLM":
        head = model.head
        return LayerNormHeadParts(lambda h: head.act(head.dense(h)), head.norm, model.decoder)
    if name == "EsmForMaskedLM":
        from transformers.models.esm.modeling_esm import gelu as esm_gelu

        head = model.lm_head
        return LayerNormHeadParts(lambda h: esm_gelu(head.dense(h)), head.layer_norm,
                                  head.decoder, head.bias)
    if name == "AlbertForMaskedLM":
        head = model.predictions
        return LayerNormHeadParts(lambda h: head.activation(head.dense(h)), head.LayerNorm,
                                  head.decoder)
    return None


def head_structure_problem(parts: LayerNormHeadParts) -> str | None:
    """What keeps ``parts`` from the float64 head and its bound, or None when nothing does.

    The norm must be a ``torch.nn.LayerNorm`` over one axis of size ``d`` (its weight and bias,
    if any, of length ``d``), the decoder a ``torch.nn.Linear`` from ``d`` inputs, and an extra
    bias, if any, one number per decoder output.
    """
    norm, decoder = parts.norm, parts.decoder
    if not isinstance(norm, nn.LayerNorm) or len(norm.normalized_shape) != 1:
        return f"its last normalisation is {type(norm).__name__}, not a LayerNorm over one axis"
    d = int(norm.normalized_shape[0])
    if not isinstance(decoder, nn.Linear):
        return f"its decoder is {type(decoder).__name__}, not a torch.nn.Linear"
    if decoder.in_features != d:
        return (f"its decoder takes {decoder.in_features} inputs but its LayerNorm gives {d}")
    if parts.bias is not None and tuple(parts.bias.shape) != (decoder.out_features,):
        return (f"its extra bias has shape {tuple(parts.bias.shape)}, not "
                f"({decoder.out_features},)")
    return None


def checked_head_parts(model: Any) -> LayerNormHeadParts:
    """:func:`layernorm_head_parts` of ``model``, checked by :func:`head_structure_problem`.

    Raises
    ------
    UnboundableModelError
        If the architecture is not one of :data:`KNOWN_HEADS` or its head does not have the
        structure the bound needs; the message names the class and that structure.
    """
    name = type(model).__name__
    parts = layernorm_head_parts(model)
    if parts is None:
        raise UnboundableModelError(
            f"{name} is not a masked LM whose head glauber knows: the weight bound needs "
            f"{BOUND_STRUCTURE} (known: {', '.join(KNOWN_HEADS)}). Its scores come from "
            "the full forward pass (head='full'); convert the checkpoint to a known "
            "architecture, or use the tabulated bound of a small window"
        )
    problem = head_structure_problem(parts)
    if problem is not None:
        raise UnboundableModelError(
            f"the head of this {name} does not have the structure the weight bound needs "
            f"({BOUND_STRUCTURE}): {problem}; use head='masked' or head='full' (no bound)"
        )
    return parts


class Float64Head:
    """``LayerNorm -> decoder`` on the resampling vocabulary, in float64, returning float32.

    Built once from a model's :class:`LayerNormHeadParts` and the vocabulary's token ids:
    ``w_a = W_a * gamma - mean(W_a * gamma)`` and ``k_a = W_a . beta + b_a`` in float64
    (``b_a`` the decoder's bias plus the head's extra bias; exactly the same function as
    ``decoder(LayerNorm(x)) + bias`` in real arithmetic, since the normalised vector is
    centred). A call runs the algorithm of :mod:`glauber.theory.layernorm_head` with autocast
    off, so that :meth:`enclosure` holds for every hidden vector, whatever precision produced
    it. The enclosure concerns the returned function of ``w`` and ``k`` as stored, so their
    own rounding here does not enter it.

    Parameters
    ----------
    parts : LayerNormHeadParts
        Checked by :func:`head_structure_problem` (``checked_head_parts`` does it).
    token_ids : sequence of int
        The model's output rows of the resampling vocabulary, in order.
    device : torch.device
    """

    def __init__(self, parts: LayerNormHeadParts, token_ids: Sequence[int],
                 device: torch.device) -> None:
        norm, decoder = parts.norm, parts.decoder
        ids = torch.as_tensor(list(token_ids), dtype=torch.long, device=decoder.weight.device)
        d = int(norm.normalized_shape[0])
        with torch.no_grad():
            W = decoder.weight.detach().index_select(0, ids).double()
            g = (norm.weight.detach().double() if norm.weight is not None
                 else torch.ones(d, dtype=torch.float64, device=W.device))
            beta = (norm.bias.detach().double() if norm.bias is not None
                    else torch.zeros_like(g))
            bias = torch.zeros(len(ids), dtype=torch.float64, device=W.device)
            for extra in (decoder.bias, parts.bias):
                if extra is not None:
                    bias = bias + extra.detach().to(W.device).index_select(0, ids).double()
            wg = W * g
            self.weights = (wg - wg.mean(dim=1, keepdim=True)).to(device)
            self.offsets = (W @ beta + bias).to(device)
        self.pre = parts.pre
        self.eps = float(norm.eps)
        self.d = d
        self._enclosure: HeadEnclosure | None = None

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        """Float32 scores ``[B, q]`` of hidden states ``[B, h]`` at the masked positions."""
        x = self.pre(hidden)
        with torch.autocast(x.device.type, enabled=False):
            x = x.double()
            a = x - x.sum(dim=-1, keepdim=True) / self.d
            v = (a * a).sum(dim=-1, keepdim=True) / self.d
            z = a * (1.0 / torch.sqrt(v + self.eps))
            return torch.addmm(self.offsets, z, self.weights.T).float()

    def enclosure(self) -> HeadEnclosure:
        """The enclosure of every score difference (computed once)."""
        if self._enclosure is None:
            self._enclosure = layernorm_head_enclosure(
                self.weights.cpu().numpy(), self.offsets.cpu().numpy(), self.eps, "float32")
        return self._enclosure


def head_oscillation_bound(head: Float64Head, n: int,
                           labels: Sequence[str]) -> OscillationBound:
    """Lemma 6's oscillation bounded from the weights of a float64 head, for every site pair.

    :meth:`Float64Head.enclosure` (docs/theory.md, "Upper bounds on influence") keeps every
    score difference ``s_a - s_b`` within ``R_ab`` of a constant for every hidden vector, so for
    every context ``Delta_ij <= 2 max_{a != b} R_ab`` for all ``i != j`` (zero diagonal).

    Parameters
    ----------
    head : Float64Head
        The head the model's scores come from.
    n : int
        Number of sites.
    labels : sequence of str
        The vocabulary's labels, in the head's row order (to name the widest pair).

    Returns
    -------
    OscillationBound
        ``method = "layernorm-head"``, with the head's size, ``eps`` and widest pair in
        ``details``.
    """
    enc = head.enclosure()
    Delta = np.full((n, n), enc.oscillation)
    np.fill_diagonal(Delta, 0.0)
    a, b = enc.pair
    return OscillationBound(Delta, "layernorm-head", {
        "hidden_size": head.d, "layer_norm_eps": head.eps,
        "tokens": len(labels), "radius_max": float(enc.radius[a, b]),
        "pair": [labels[a], labels[b]], "norm_radius": enc.norm_radius,
        "rounding": enc.rounding, "pairwise": enc.pairwise,
    })


def float64_head(model: Any, token_ids: Sequence[int], device: torch.device) -> Float64Head | None:
    """A :class:`Float64Head` of ``model`` for ``token_ids``, or None when its head is not a
    known ``LayerNorm -> linear`` one (:func:`checked_head_parts` says why) or the device has
    no float64 (Apple's MPS)."""
    parts = layernorm_head_parts(model)
    if parts is None or head_structure_problem(parts) is not None \
            or torch.device(device).type == "mps":
        return None
    return Float64Head(parts, token_ids, torch.device(device))


__all__ = [
    "BOUND_STRUCTURE",
    "Float64Head",
    "KNOWN_HEADS",
    "LayerNormHeadParts",
    "MaskedLMParts",
    "checked_head_parts",
    "float64_head",
    "head_oscillation_bound",
    "head_structure_problem",
    "layernorm_head_parts",
    "split_masked_lm",
]
