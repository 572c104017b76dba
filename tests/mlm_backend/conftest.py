"""Shared fixtures of the mlm_backend tests: tiny random transformers and the rectangle delta."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
import torch

from glauber.core.conditionals import log_conditionals

LETTERS = list("ACDEFGHIKLMNPQRSTVWY")
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
TINY_VOCAB = len(BERT_SPECIALS) + len(LETTERS)  # 25, as AntiBERTy
# Large initial weights so that logits vary by O(1) and path differences would show.
INIT = 0.5


@pytest.fixture
def single_thread():
    """One intra-op thread while a test runs: tiny forwards are dominated by thread start-up,
    and the suite runs one worker per core (``-n 2``). Restored afterwards."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tokenizers(tmp_path_factory) -> dict[str, Any]:
    """A BERT WordPiece, a RoBERTa BPE and an ESM tokenizer over the 20 amino acids, from
    files (ESM's: ``<cls> <pad> <eos> <unk>``, the letters, ``<mask>``)."""
    from transformers import BertTokenizer, RobertaTokenizer

    from glauber.testing.transformers import esm_tokenizer

    d: Path = tmp_path_factory.mktemp("tok")
    (d / "vocab.txt").write_text("\n".join(BERT_SPECIALS + LETTERS) + "\n")
    bpe_vocab = {t: k for k, t in enumerate(ROBERTA_SPECIALS + LETTERS)}
    (d / "vocab.json").write_text(json.dumps(bpe_vocab))
    (d / "merges.txt").write_text("#version: 0.2\n")
    return {
        "bert": BertTokenizer(str(d / "vocab.txt"), do_lower_case=False),
        "roberta": RobertaTokenizer(str(d / "vocab.json"), str(d / "merges.txt")),
        "esm": esm_tokenizer(tuple(LETTERS)),
    }


def _seeded(build: Callable[[], Any], seed: int) -> Any:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build().eval()


@pytest.fixture(scope="session")
def tiny_models(tokenizers) -> dict[str, tuple[Any, Any]]:
    """Randomly initialised 2-layer masked LMs of six architectures with their tokenizers."""
    import transformers as tf

    common = dict(
        vocab_size=TINY_VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=40, initializer_range=INIT,
    )
    bert = _seeded(lambda: tf.BertForMaskedLM(tf.BertConfig(**common)), 1)
    roberta = _seeded(
        lambda: tf.RobertaForMaskedLM(
            tf.RobertaConfig(**common, pad_token_id=1, bos_token_id=0, eos_token_id=2)
        ),
        2,
    )
    distil = _seeded(
        lambda: tf.DistilBertForMaskedLM(
            tf.DistilBertConfig(
                vocab_size=TINY_VOCAB, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                max_position_embeddings=40, initializer_range=INIT,
            )
        ),
        3,
    )
    # Sliding-window layers (local_attention=4 < length) exercise ModernBERT's local masks.
    modern = _seeded(
        lambda: tf.ModernBertForMaskedLM(
            tf.ModernBertConfig(
                vocab_size=TINY_VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                intermediate_size=64, max_position_embeddings=40, initializer_range=INIT,
                pad_token_id=0, cls_token_id=2, sep_token_id=3, bos_token_id=2, eos_token_id=3,
                global_attn_every_n_layers=2, local_attention=4,
            )
        ),
        4,
    )
    # ESM-2's layout (rotary positions, token dropout) with a random, nonzero lm_head.bias.
    esm = _seeded(
        lambda: tf.EsmForMaskedLM(
            tf.EsmConfig(**common, pad_token_id=1, mask_token_id=TINY_VOCAB - 1,
                         position_embedding_type="rotary", token_dropout=True)
        ),
        5,
    )
    with torch.no_grad():
        esm.lm_head.bias.normal_(0.0, INIT)
    # ALBERT: one group of shared layers, LayerNorm over an embedding size below the hidden one.
    albert = _seeded(
        lambda: tf.AlbertForMaskedLM(
            tf.AlbertConfig(**common, embedding_size=16, num_hidden_groups=1, inner_group_num=1)
        ),
        6,
    )
    return {
        "bert": (bert, tokenizers["bert"]),
        "roberta": (roberta, tokenizers["roberta"]),
        "distilbert": (distil, tokenizers["bert"]),
        "modernbert": (modern, tokenizers["bert"]),
        "esm": (esm, tokenizers["esm"]),
        "albert": (albert, tokenizers["bert"]),
    }


def rectangle_deltas(model: Any, x: torch.Tensor, i: torch.Tensor, j: torch.Tensor,
                     a2: torch.Tensor, b2: torch.Tensor) -> torch.Tensor:
    """Proposition 4's delta for rectangles (x, i -> a2, j -> b2), straight from log_conditionals.

    delta = (s_{x->y} + s_{y->z}) - (s_{x->w} + s_{w->z}) with y = x(i->a2), w = x(j->b2) and
    s_{u->v} = log p(new | u_{-k}) - log p(old | u_{-k}) at the changed site k (docs/theory.md,
    `prop4`).
    """
    rows = torch.arange(x.shape[0])
    a, b = x[rows, i], x[rows, j]
    y, w = x.clone(), x.clone()
    y[rows, i] = a2
    w[rows, j] = b2

    def log_ratio(states: torch.Tensor, site: torch.Tensor, new: torch.Tensor, old: torch.Tensor):
        lc = log_conditionals(model, states, site, 1.0).double().cpu()
        return lc[rows, new] - lc[rows, old]

    return (log_ratio(x, i, a2, a) + log_ratio(y, j, b2, b)) - (
        log_ratio(x, j, b2, b) + log_ratio(w, i, a2, a)
    )


def random_rectangles(n: int, q: int, count: int, seed: int, base: torch.Tensor | None = None):
    """Random rectangles: states (from ``base`` rows if given), sites i != j, new tokens != old."""
    g = torch.Generator().manual_seed(seed)
    x = (torch.randint(0, q, (count, n), generator=g) if base is None
         else base[torch.randint(0, base.shape[0], (count,), generator=g)].clone())
    i = torch.randint(0, n, (count,), generator=g)
    j = (i + torch.randint(1, n, (count,), generator=g)) % n
    rows = torch.arange(count)
    a2 = (x[rows, i] + torch.randint(1, q, (count,), generator=g)) % q
    b2 = (x[rows, j] + torch.randint(1, q, (count,), generator=g)) % q
    return x, i, j, a2, b2


@pytest.fixture(scope="session")
def rectangle():
    """The helpers above, as a fixture (test modules here are not a package)."""
    return {"deltas": rectangle_deltas, "random": random_rectangles}
