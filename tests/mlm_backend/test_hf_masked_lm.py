"""HFMaskedLM on tiny random BERT, RoBERTa, DistilBERT, ModernBERT, ESM and ALBERT models.

Oracles: the model's own full forward pass on input ids built by its own tokenizer from text
with the mask token (independent of HFMaskedLM's framing and head split), the full-logits path,
and invariances the protocol demands (the token at the masked site is not seen; sub-batching
does not change results).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.core.conditionals import check_states, log_conditionals
from glauber.core.protocol import ConditionalModel
from glauber.errors import (
    DeviceUnavailableError,
    InvalidParameterError,
    SequenceLengthError,
    UnknownModelError,
    VocabularyError,
)
from glauber.mlm_backend import HFMaskedLM, load_model

ARCHS = ["bert", "roberta", "distilbert", "modernbert", "esm", "albert"]
N = 12

pytestmark = pytest.mark.usefixtures("single_thread")


def _mlm(tiny_models, arch, **kw) -> HFMaskedLM:
    model, tok = tiny_models[arch]
    return HFMaskedLM(model, tok, **{"n": N, "split_chars": True, **kw})


def _batch(q: int, count: int, seed: int, n: int = N):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, q, (count, n), generator=g), torch.randint(0, n, (count,), generator=g)


def _oracle_logits(model, tok, mlm: HFMaskedLM, states, sites) -> torch.Tensor:
    """Logits from tokenizer(text with the mask token) and the model's full forward pass."""
    rows = []
    for x, i in zip(states.tolist(), sites.tolist()):
        toks = [mlm.labels[k] for k in x]
        toks[i] = tok.mask_token
        enc = tok(" ".join(toks), return_tensors="pt")
        ids = enc["input_ids"]
        assert ids.shape[1] == len(x) + 2  # one token per site, plus the two specials
        with torch.no_grad():
            logits = model(input_ids=ids, attention_mask=enc["attention_mask"]).logits[0, i + 1]
        rows.append(logits[list(mlm.vocab)])
    return torch.stack(rows)


@pytest.mark.parametrize("arch", ARCHS)
def test_head_at_mask_equals_full_logits_and_tokenizer_oracle(tiny_models, arch):
    model, tok = tiny_models[arch]
    masked, full = _mlm(tiny_models, arch, head="masked"), _mlm(tiny_models, arch, head="full")
    f64 = _mlm(tiny_models, arch)  # the default: the head's LayerNorm and decoder in float64
    assert (f64.head, masked.head, full.head) == ("float64", "masked", "full")
    states, sites = _batch(masked.q, 24, seed=ARCHS.index(arch))
    s_masked, s_full = masked.scores(states, sites), full.scores(states, sites)
    assert s_masked.dtype == torch.float32 and s_masked.shape == (24, 20)
    torch.testing.assert_close(s_masked, s_full, atol=1e-5, rtol=0)
    oracle = _oracle_logits(model, tok, masked, states, sites)
    torch.testing.assert_close(s_masked, oracle, atol=1e-5, rtol=0)
    s64 = f64.scores(states, sites)
    assert s64.dtype == torch.float32 and s64.shape == (24, 20)
    # the same function up to torch's float32 LayerNorm and decoder rounding
    torch.testing.assert_close(s64, oracle, atol=1e-5, rtol=0)
    # A test that could fail: the logits vary across tokens and contexts (INIT = 0.5).
    assert s_masked.std(dim=1).min() > 0.05


@pytest.mark.parametrize("arch", ARCHS)
def test_framing_places_specials_and_mask(tiny_models, arch):
    mlm = _mlm(tiny_models, arch)
    _, tok = tiny_models[arch]
    states, sites = _batch(mlm.q, 5, seed=10)
    ids = mlm.masked_input_ids(states, sites)
    assert ids.shape == (5, N + 2)
    # [CLS] x [SEP] for BERT-like tokenizers, <s> x </s> for RoBERTa's, <cls> x <eos> for ESM's.
    first, last = {"roberta": ("<s>", "</s>"), "esm": ("<cls>", "<eos>")}.get(
        arch, ("[CLS]", "[SEP]"))
    assert set(tok.convert_ids_to_tokens(ids[:, 0].tolist())) == {first}
    assert set(tok.convert_ids_to_tokens(ids[:, -1].tolist())) == {last}
    body = ids[:, 1:-1]
    rows = torch.arange(5)
    assert (body[rows, sites] == tok.mask_token_id).all()
    keep = torch.ones_like(body, dtype=torch.bool)
    keep[rows, sites] = False
    expected = torch.tensor(mlm.vocab)[states]
    assert torch.equal(body[keep], expected[keep])


@pytest.mark.parametrize("arch", ["bert", "roberta"])
def test_encode_decode_round_trip(tiny_models, arch):
    mlm = _mlm(tiny_models, arch)
    text = "EVQLVESGGGLV"
    x = mlm.encode(text)
    assert x.dtype == torch.long and x.shape == (N,)
    assert mlm.decode(x) == text
    assert mlm.decode(torch.stack([x, x])) == [text, text]
    assert "".join(mlm.labels[k] for k in x.tolist()) == text  # indices into labels
    assert torch.equal(mlm.encode(list(text)), x)


def test_word_level_tokenizer_round_trip(tiny_models):
    model, tok = tiny_models["bert"]
    mlm = HFMaskedLM(model, tok)  # default vocabulary: every non-special token
    assert mlm.q == 20 and set(mlm.vocab) == set(range(5, 25))
    assert mlm.decode(mlm.encode("E V Q L")) == "E V Q L"


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), arch=st.sampled_from(ARCHS))
def test_masked_site_token_is_not_seen(tiny_models, seed, arch):
    mlm = _mlm(tiny_models, arch)
    states, sites = _batch(mlm.q, 6, seed)
    other = states.clone()
    rows = torch.arange(6)
    other[rows, sites] = (states[rows, sites] + 1 + seed % 19) % mlm.q
    torch.testing.assert_close(
        mlm.scores(states, sites), mlm.scores(other, sites), atol=1e-5, rtol=0
    )


@pytest.mark.parametrize("arch", ["bert", "modernbert"])
def test_sub_batching_matches_one_batch(tiny_models, arch):
    one = _mlm(tiny_models, arch)
    states, sites = _batch(one.q, 23, seed=5)
    whole = one.scores(states, sites)
    for budget in (N + 2, 3 * (N + 2), 5 * (N + 2) + 1):  # 1, 3 and 5 rows per forward
        split = _mlm(tiny_models, arch, max_batch_tokens=budget)
        torch.testing.assert_close(split.scores(states, sites), whole, atol=1e-5, rtol=0)
    tiny_bytes = _mlm(tiny_models, arch, max_batch_bytes=1)  # one row per forward
    torch.testing.assert_close(tiny_bytes.scores(states, sites), whole, atol=1e-5, rtol=0)


def test_protocol_numpy_inputs_and_log_conditionals(tiny_models):
    mlm = _mlm(tiny_models, "bert")
    assert isinstance(mlm, ConditionalModel)
    states, sites = _batch(mlm.q, 4, seed=3)
    check_states(mlm, states)
    from_numpy = mlm.scores(states.numpy(), sites.numpy())
    torch.testing.assert_close(from_numpy, mlm.scores(states, sites))
    lc = log_conditionals(mlm, states, sites, tau=2.0)
    torch.testing.assert_close(lc.exp().sum(dim=1), torch.ones(4), atol=1e-5, rtol=0)
    torch.testing.assert_close(lc, torch.log_softmax(from_numpy / 2.0, dim=1))
    scalar_site = mlm.scores(states, 3)
    torch.testing.assert_close(scalar_site, mlm.scores(states, torch.full((4,), 3)))
    assert mlm.scores(states[:0], sites[:0]).shape == (0, mlm.q)
    unchecked = _mlm(tiny_models, "bert", check_inputs=False)  # no range check (no sync)
    torch.testing.assert_close(unchecked.scores(states, sites), from_numpy)


def test_allowed_tokens_restrict_the_vocabulary(tiny_models):
    model, tok = tiny_models["bert"]
    full = _mlm(tiny_models, "bert")
    sub = HFMaskedLM(model, tok, n=N, allowed_tokens=["W", "A", "C"], split_chars=True)
    assert sub.labels == ("W", "A", "C") and sub.q == 3
    x = sub.encode("WACWACWACWAC")
    # The same contexts, seen through both vocabularies, give the same logits.
    s_sub = sub.scores(x[None], [4])
    s_full = full.scores(full.encode("WACWACWACWAC")[None], [4])
    cols = [full.labels.index(t) for t in ("W", "A", "C")]
    torch.testing.assert_close(s_sub, s_full[:, cols], atol=1e-5, rtol=0)
    by_id = HFMaskedLM(model, tok, n=N, allowed_tokens=list(sub.vocab), split_chars=True)
    assert by_id.vocab == sub.vocab
    with pytest.raises(VocabularyError):
        sub.encode("WACD")  # D is outside the resampling vocabulary


def test_with_length_shares_weights_and_checks_width(tiny_models):
    mlm = _mlm(tiny_models, "bert", n=None)
    assert mlm.n is None
    states, sites = _batch(mlm.q, 3, seed=1, n=7)
    free = mlm.scores(states, sites)  # any length while n is unset
    fixed = mlm.with_length(7)
    assert fixed.n == 7 and mlm.n is None and fixed.model is mlm.model
    torch.testing.assert_close(fixed.scores(states, sites), free)
    with pytest.raises(SequenceLengthError):
        fixed.scores(states[:, :6], sites % 6)


def test_compiled_forward_matches(tiny_models):
    plain = _mlm(tiny_models, "bert")
    compiled = _mlm(tiny_models, "bert", compile="eager")  # the compile path, no C compiler
    states, sites = _batch(plain.q, 6, seed=8)
    torch.testing.assert_close(compiled.scores(states, sites), plain.scores(states, sites))


def test_other_architectures_use_the_full_logits_fallback(tokenizers):
    from transformers import ElectraConfig, ElectraForMaskedLM

    model = ElectraForMaskedLM(ElectraConfig(
        vocab_size=25, embedding_size=16, hidden_size=32, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=40,
    )).eval()
    mlm = HFMaskedLM(model, tokenizers["bert"], n=6, split_chars=True)
    assert mlm.head == "full"
    x = mlm.encode("ACDEFG")[None]
    with torch.no_grad():
        ref = model(input_ids=mlm.masked_input_ids(x, [2])).logits[0, 3, list(mlm.vocab)]
    torch.testing.assert_close(mlm.scores(x, [2])[0], ref, atol=1e-5, rtol=0)
    with pytest.raises(InvalidParameterError, match="head='masked'"):
        HFMaskedLM(model, tokenizers["bert"], n=6, head="masked")


def test_local_directory_loads_with_from_pretrained(tiny_models, tmp_path):
    model, tok = tiny_models["bert"]
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    states, sites = _batch(20, 4, seed=2)
    ref = _mlm(tiny_models, "bert").scores(states, sites)
    for loaded in (HFMaskedLM(tmp_path, n=N, split_chars=True),
                   load_model(str(tmp_path), n=N, split_chars=True)):
        assert loaded.head == "float64"
        torch.testing.assert_close(loaded.scores(states, sites), ref, atol=1e-5, rtol=0)


# ------------------------------------------------------------------------------ errors ----


def test_sequence_length_errors(tiny_models):
    mlm = _mlm(tiny_models, "bert", n=None)
    assert mlm.max_sites == 40 - 2
    roberta = _mlm(tiny_models, "roberta", n=None)
    assert roberta.max_sites == 40 - 2 - 2  # positions start at pad_token_id + 1 = 2
    with pytest.raises(SequenceLengthError, match="longer"):
        mlm.encode("A" * 39)
    with pytest.raises(SequenceLengthError):
        mlm.with_length(39)
    with pytest.raises(SequenceLengthError):
        HFMaskedLM(*tiny_models["roberta"], n=37)
    with pytest.raises(SequenceLengthError):
        mlm.scores(torch.zeros((2, 39), dtype=torch.long), [0, 0])
    with pytest.raises(SequenceLengthError):
        mlm.scores(torch.zeros(5, dtype=torch.long), 0)
    with pytest.raises(InvalidParameterError):
        mlm.with_length(0)


def test_vocabulary_errors(tiny_models):
    model, tok = tiny_models["bert"]
    mlm = _mlm(tiny_models, "bert")
    with pytest.raises(VocabularyError, match="outside the resampling vocabulary"):
        mlm.encode("ACDXB")  # X, B are not tokens of the model
    with pytest.raises(VocabularyError, match="indices"):
        mlm.scores(torch.full((1, N), 20), [0])
    with pytest.raises(VocabularyError, match="sites"):
        mlm.scores(torch.zeros((1, N), dtype=torch.long), [N])
    with pytest.raises(VocabularyError, match="special"):
        HFMaskedLM(model, tok, allowed_tokens=["A", "[MASK]"])
    with pytest.raises(VocabularyError, match="not in the tokenizer"):
        HFMaskedLM(model, tok, allowed_tokens=["A", "Z"])
    with pytest.raises(VocabularyError, match="at least 2"):
        HFMaskedLM(model, tok, allowed_tokens=["A"])
    with pytest.raises(VocabularyError, match="repeats"):
        HFMaskedLM(model, tok, allowed_tokens=["A", "A"])
    with pytest.raises(VocabularyError):
        mlm.decode(np.array([0, 20]))


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is present on this machine")
def test_device_unavailable(tiny_models):
    model, tok = tiny_models["bert"]
    with pytest.raises(DeviceUnavailableError, match="--device cpu"):
        HFMaskedLM(model, tok, device="cuda")
    with pytest.raises(DeviceUnavailableError, match="--device cpu"):
        HFMaskedLM(model, tok, device="not-a-device")


def test_parameter_errors(tiny_models, tmp_path):
    model, tok = tiny_models["bert"]
    with pytest.raises(InvalidParameterError, match="tokenizer"):
        HFMaskedLM(model)
    with pytest.raises(InvalidParameterError, match="head"):
        HFMaskedLM(model, tok, head="sparse")
    with pytest.raises(InvalidParameterError, match="CUDA"):
        HFMaskedLM(model, tok, dtype="float16")
    with pytest.raises(InvalidParameterError, match="max_batch_tokens"):
        HFMaskedLM(model, tok, max_batch_tokens=0)
    with pytest.raises(UnknownModelError, match="cannot load masked LM"):
        HFMaskedLM(tmp_path)  # an empty directory: not a checkpoint
    with pytest.raises(UnknownModelError, match="antiberty"):
        load_model(str(tmp_path))  # through the catalogue: the offline names are listed


def test_bfloat16_on_cpu_scores_in_float32_close_to_fp32(tiny_models):
    """bf16 is opt-in on the CPU; scores come back in float32 and agree with fp32 to bf16 precision."""
    import copy

    model, tok = tiny_models["bert"]
    ref = HFMaskedLM(copy.deepcopy(model), tok, n=6)
    low = HFMaskedLM(copy.deepcopy(model), tok, n=6, dtype="bf16")
    assert low.dtype == torch.bfloat16
    gen = torch.Generator().manual_seed(0)
    states = torch.randint(0, ref.q, (8, 6), generator=gen)
    sites = torch.arange(8) % 6
    a, b = ref.scores(states, sites), low.scores(states, sites)
    assert b.dtype == torch.float32
    scale = float(a.abs().max())
    # bf16 keeps ~3 significant digits per operation; errors compound over the layers
    assert float((a - b).abs().mean()) <= 0.02 * scale
    assert float((a - b).abs().max()) <= 0.1 * scale
    assert not torch.equal(a, b)  # it really ran in lower precision
