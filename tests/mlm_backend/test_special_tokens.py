"""Special tokens are never sampled: every backend's default resampling vocabulary excludes them.

Oracles: the special ids computed here, independently of glauber, from the tokenizer's
``all_special_ids`` and the config's ``*_token_id`` entries (and the token strings, which no
``[...]``/``<...>`` label may be); chains run at tau = 1, 100 and 1e6 (near uniform: every
allowed token is drawn) whose every recorded token id is checked. The checker is shown to fail
on a vocabulary that does hold a special token, and on a tokenizer whose config names an
``<eos>`` the tokenizer itself treats as ordinary.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import VocabularyError
from glauber.estimators import glauber_chains
from glauber.mlm_backend import HFMaskedLM, load_antiberty, tiny_gpt2_control
from glauber.mlm_backend.vocabulary import (
    TokenVocabulary,
    special_token_ids,
    tokenizer_vocabulary,
)

pytestmark = pytest.mark.usefixtures("single_thread")

TEMPERATURES = (1.0, 100.0, 1e6)
CONFIG_KEYS = ("pad_token_id", "mask_token_id", "cls_token_id", "sep_token_id", "bos_token_id",
               "eos_token_id", "unk_token_id")
SPECIAL_LABEL = re.compile(r"\[[A-Za-z_]+\]|<[A-Za-z_/]+>")


def independent_specials(tokenizer, config) -> set[int]:
    """Special ids, computed without glauber."""
    ids = set(int(t) for t in tokenizer.all_special_ids)
    for key in CONFIG_KEYS:
        value = getattr(config, key, None)
        for t in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(t, int) and t >= 0:
                ids.add(t)
    return ids


def sampled_token_ids(model, tau: float, chains: int = 48, steps: int = 40) -> np.ndarray:
    """Every token id a batch of chains holds at every step (the recorded trajectory)."""
    rng = np.random.default_rng(0)
    x0 = rng.integers(0, model.q, size=(chains, model.n))
    run = glauber_chains(model, tau, x0, steps, seed=1, record_every=1)
    return np.asarray(model.vocab)[run.trajectory]


def assert_no_special_sampled(model, specials: set[int]) -> None:
    assert specials, "the oracle found no special ids: the test would prove nothing"
    assert not set(model.vocab) & specials, sorted(set(model.vocab) & specials)
    assert not any(SPECIAL_LABEL.fullmatch(label) for label in model.labels), model.labels
    for tau in TEMPERATURES:
        drawn = sampled_token_ids(model, tau)
        assert not set(np.unique(drawn).tolist()) & specials, tau
        if tau >= 100:  # near-uniform conditionals: every allowed token shows up
            assert set(np.unique(drawn).tolist()) == set(model.vocab), tau


@pytest.mark.parametrize("arch", ["bert", "roberta", "distilbert", "modernbert", "esm", "albert"])
def test_tiny_models_never_sample_a_special_token(arch, tiny_models):
    model, tokenizer = tiny_models[arch]
    mlm = HFMaskedLM(model, tokenizer, n=6)
    specials = independent_specials(tokenizer, model.config)
    non_special = {i for i in range(int(model.config.vocab_size)) if i not in specials}
    if arch != "esm":  # ESM's default is the 20 amino acids, which here are all the others
        assert set(mlm.vocab) == non_special
    assert_no_special_sampled(mlm, specials)


def test_antiberty_never_samples_a_special_token():
    mlm = load_antiberty().with_length(5)
    specials = independent_specials(mlm.tokenizer, mlm.model.config)
    assert {0, 1, 2, 3, 4} <= specials  # [PAD] [UNK] [CLS] [SEP] [MASK]
    assert_no_special_sampled(mlm, specials)


def test_the_sapiens_path_never_samples_a_special_token():
    """Sapiens' layout (RoBERTa over the fairseq dictionary and tokenizer), random weights."""
    import transformers as tf

    from glauber.mlm_backend.sapiens import FAIRSEQ_MASK, FAIRSEQ_SPECIALS, sapiens_tokenizer
    from glauber.mlm_backend.sequences import AMINO_ACIDS

    symbols = [*FAIRSEQ_SPECIALS, *AMINO_ACIDS, FAIRSEQ_MASK]
    torch.manual_seed(0)
    model = tf.RobertaForMaskedLM(tf.RobertaConfig(
        vocab_size=len(symbols), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=12, pad_token_id=1, bos_token_id=0,
        eos_token_id=2, initializer_range=0.5)).eval()
    tokenizer = sapiens_tokenizer(symbols, max_length=10)
    for allowed in (None, list(AMINO_ACIDS)):  # load_sapiens passes the amino acids
        mlm = HFMaskedLM(model, tokenizer, n=5, split_chars=True, allowed_tokens=allowed)
        specials = independent_specials(tokenizer, model.config)
        assert specials == {0, 1, 2, 3, 24}
        assert_no_special_sampled(mlm, specials)


def test_the_causal_control_never_samples_its_bos():
    control = tiny_gpt2_control(vocab_size=4, n=3)
    assert_no_special_sampled(control, {control.bos_token_id})


def test_a_config_special_the_tokenizer_calls_ordinary_is_excluded(tmp_path):
    """``<eos>`` is a plain vocabulary entry of this tokenizer; only the config names it."""
    import transformers as tf

    letters = list("ACDEFGH")
    (tmp_path / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *letters, "<eos>"]) + "\n")
    tokenizer = tf.BertTokenizer(str(tmp_path / "vocab.txt"), do_lower_case=False)
    eos = tokenizer.convert_tokens_to_ids("<eos>")
    assert eos not in tokenizer.all_special_ids  # the tokenizer alone would let it through
    torch.manual_seed(0)
    model = tf.BertForMaskedLM(tf.BertConfig(
        vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=12, eos_token_id=eos)).eval()
    mlm = HFMaskedLM(model, tokenizer, n=4)
    assert eos not in mlm.vocab and mlm.labels == tuple(letters)
    assert_no_special_sampled(mlm, independent_specials(tokenizer, model.config))
    with pytest.raises(VocabularyError, match="special token"):
        HFMaskedLM(model, tokenizer, n=4, allowed_tokens=["A", "<eos>"])


def test_the_checker_fails_on_a_vocabulary_holding_a_special_token(tiny_models):
    model, tokenizer = tiny_models["bert"]
    mlm = HFMaskedLM(model, tokenizer, n=4)
    ids = (tokenizer.mask_token_id, *mlm.vocab[:3])
    mlm.vocabulary = TokenVocabulary(ids, tokenizer.convert_ids_to_tokens(list(ids)))
    with pytest.raises(AssertionError):
        assert_no_special_sampled(mlm, independent_specials(tokenizer, model.config))


class FakeTokenizer:
    """The tokenizer surface :func:`tokenizer_vocabulary` reads, over ids ``0..size-1``."""

    def __init__(self, size: int, special: list[int]) -> None:
        self.all_special_ids = list(special)
        self._tokens = [f"t{i}" for i in range(size)]
        self.unk_token_id, self.unk_token = None, None

    def get_vocab(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self._tokens)}

    def convert_ids_to_tokens(self, ids):
        return [self._tokens[i] for i in ids]

    def __len__(self) -> int:
        return len(self._tokens)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), size=st.integers(4, 40))
def test_property_the_default_vocabulary_is_exactly_the_non_special_ids(data, size):
    ids = st.integers(0, size - 1)
    tok_special = data.draw(st.lists(ids, max_size=size // 2))
    config = SimpleNamespace(**{
        key: data.draw(st.one_of(st.none(), ids, st.lists(ids, max_size=2)), label=key)
        for key in CONFIG_KEYS})
    expected = independent_specials(SimpleNamespace(all_special_ids=tok_special), config)
    assert special_token_ids(FakeTokenizer(size, tok_special), config) == expected
    rest = [i for i in range(size) if i not in expected]
    if len(rest) < 2:
        with pytest.raises(VocabularyError):
            tokenizer_vocabulary(FakeTokenizer(size, tok_special), None, size, False, "cpu",
                                 config=config)
        return
    vocab = tokenizer_vocabulary(FakeTokenizer(size, tok_special), None, size, False, "cpu",
                                 config=config)
    assert list(vocab.token_ids) == rest
    bad = data.draw(st.sampled_from(sorted(expected))) if expected else None
    if bad is not None:
        with pytest.raises(VocabularyError, match="special"):
            tokenizer_vocabulary(FakeTokenizer(size, tok_special), [rest[0], bad], size, False,
                                 "cpu", config=config)
