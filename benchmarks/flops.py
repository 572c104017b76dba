"""Floating-point operations of a BERT-style encoder forward pass, counted exactly per layer.

A multiply-add counts as 2 FLOPs. For one sequence of ``L`` tokens, hidden size ``h``,
intermediate size ``I``, ``N`` layers and vocabulary ``V`` (Kaplan et al., "Scaling laws for
neural language models", 2020, Table 1, with the attention term kept since ``L`` is short here):

- per layer: Q, K, V and output projections ``8 L h^2``; scores ``Q K^T`` and ``A V``
  ``4 L^2 h``; feed-forward ``4 L h I``;
- LM head (BERT's transform ``h x h`` then decoder ``h x V``): ``2 h^2 + 2 h V`` per position it
  is applied at (one position with the head at the mask, ``L`` with full logits).

Embedding lookups, biases, layer norms, softmax and GELU are not counted (they are ``O(L h)``);
so "model FLOP/s" is a slight under-count of the arithmetic actually done.
"""

from __future__ import annotations

from typing import Any


def encoder_flops(config: Any, length: int) -> int:
    """FLOPs of the encoder layers on one sequence of ``length`` tokens (no head)."""
    h = int(config.hidden_size)
    inner = int(config.intermediate_size)
    layers = int(config.num_hidden_layers)
    per_layer = 8 * length * h * h + 4 * length * length * h + 4 * length * h * inner
    return layers * per_layer


def head_flops(config: Any, positions: int = 1) -> int:
    """FLOPs of the BERT LM head applied at ``positions`` positions."""
    h, vocab = int(config.hidden_size), int(config.vocab_size)
    return positions * (2 * h * h + 2 * h * vocab)


def masked_lm_flops(config: Any, length: int, full_logits: bool = False) -> int:
    """FLOPs of one masked-LM query: encoder plus the head at the mask (or at every position)."""
    return encoder_flops(config, length) + head_flops(config, length if full_logits else 1)


def parameter_estimate(config: Any, length: int) -> int:
    """The common approximation ``2 x (non-embedding parameters) x length`` (Kaplan et al.),
    reported next to the exact count for comparison."""
    h, inner = int(config.hidden_size), int(config.intermediate_size)
    params = int(config.num_hidden_layers) * (4 * h * h + 2 * h * inner)
    return 2 * params * length
