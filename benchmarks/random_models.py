"""Randomly initialised BERT masked LMs of a given size, built offline (no model hub).

The tokenizer is a WordPiece ``BertTokenizer`` over the five BERT specials, the 20 amino acids
and filler tokens up to ``vocab_size``; the resampling vocabulary is the 20 amino acids, so the
same states work for AntiBERTy and for these models. Speed does not depend on the weights.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import torch

from glauber.mlm_backend import HFMaskedLM
from glauber.mlm_backend.sequences import AMINO_ACIDS

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

#: BERT-base (Devlin et al. 2019): 12 layers, hidden 768, 12 heads, FFN 3072, vocabulary 30522.
BERT_BASE = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, vocab_size=30522)


def random_bert(
    hidden_size: int = 32,
    num_hidden_layers: int = 2,
    num_attention_heads: int = 2,
    intermediate_size: int = 64,
    vocab_size: int = 25,
    n: int | None = None,
    device: str = "cpu",
    dtype: Any = None,
    head: str = "auto",
    seed: int = 0,
    max_position_embeddings: int = 512,
    **options: Any,
) -> HFMaskedLM:
    """A randomly initialised ``BertForMaskedLM`` as an :class:`HFMaskedLM` over the amino acids.

    ``vocab_size`` must be at least 25 (specials and amino acids); the rest are filler tokens.
    ``options`` (e.g. ``autocast``, ``cuda_graphs``) go to :class:`HFMaskedLM`.
    """
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    tokens = SPECIALS + list(AMINO_ACIDS)
    if vocab_size < len(tokens):
        raise ValueError(f"vocab_size must be >= {len(tokens)}, got {vocab_size}")
    tokens += [f"[unused{k}]" for k in range(vocab_size - len(tokens))]
    with tempfile.TemporaryDirectory() as folder:
        vocab = Path(folder) / "vocab.txt"
        vocab.write_text("\n".join(tokens) + "\n", encoding="utf-8")
        tokenizer = BertTokenizer(str(vocab), do_lower_case=False)
    config = BertConfig(
        vocab_size=vocab_size, hidden_size=hidden_size, num_hidden_layers=num_hidden_layers,
        num_attention_heads=num_attention_heads, intermediate_size=intermediate_size,
        max_position_embeddings=max_position_embeddings,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertForMaskedLM(config).eval()
    return HFMaskedLM(
        model, tokenizer=tokenizer, n=n, allowed_tokens=list(AMINO_ACIDS), device=device,
        dtype=dtype, head=head, split_chars=True, name=f"random-bert-h{hidden_size}", **options,
    )
