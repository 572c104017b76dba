"""ESM-2 / ESM-1b (``EsmForMaskedLM``) behind HFMaskedLM, on tiny random models offline.

Oracles: the model's own full forward pass on ids built by ESM's own tokenizer from text with
``<mask>`` (independent of HFMaskedLM's framing and head split); ESM-2's published 33-token
vocabulary layout (``<cls> <pad> <eos> <unk>``, 25 residue letters, ``<null_1>``, ``<mask>``)
for the conventions; exact enumeration (ExactChain) for upper >= exact >= searched on drawn
ESM models (50 in CI, a twentieth of ``GLAUBER_ADVERSARIAL_EXAMPLES`` in the large profile of
tests/test_adversarial.py: 500 at 10,000).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings

from glauber.errors import SequenceLengthError, VocabularyError
from glauber.mlm_backend import HFMaskedLM, load_model
from glauber.mlm_backend.sequences import AMINO_ACIDS
from glauber.testing import masked_lms

from .test_float64_head import check_upper_exact_searched

#: ESM-2's vocabulary (facebook/esm2_*: ``vocab.txt``), in id order.
ESM2_VOCAB = ("<cls> <pad> <eos> <unk> L A G V S E R T I D P K Q N F Y M H W C X B U Z O . - "
              "<null_1> <mask>").split()
HUB_NAME = "facebook/esm2_t6_8M_UR50D"
LARGE = "GLAUBER_ADVERSARIAL_EXAMPLES" in os.environ
DRAWN = int(os.environ.get("GLAUBER_ADVERSARIAL_EXAMPLES", "0")) // 20 if LARGE else 50
N = 10

pytestmark = pytest.mark.usefixtures("single_thread")


def _esm2(folder: Path, absolute: bool = False, seed: int = 0):
    """A tiny random ESM-2 (rotary, token dropout) or ESM-1b-like (learned positions, embedding
    LayerNorm) model with ESM-2's tokenizer, saved to ``folder``; a random nonzero
    ``lm_head.bias``."""
    import transformers as tf

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(ESM2_VOCAB) + "\n")
    tok = tf.EsmTokenizer(str(folder / "vocab.txt"))
    config = tf.EsmConfig(
        vocab_size=len(ESM2_VOCAB), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=N + 4, pad_token_id=1,
        mask_token_id=len(ESM2_VOCAB) - 1, token_dropout=not absolute,
        position_embedding_type="absolute" if absolute else "rotary",
        emb_layer_norm_before=absolute, initializer_range=0.5,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = tf.EsmForMaskedLM(config).eval()
        with torch.no_grad():
            model.lm_head.bias.normal_(0.0, 0.5)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return model, tok


@pytest.fixture(scope="module")
def esm2(tmp_path_factory):
    folder = tmp_path_factory.mktemp("esm2")
    return (*_esm2(folder), folder)


def _batch(q: int, count: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, q, (count, N), generator=g), torch.randint(0, N, (count,), generator=g)


def _oracle(model, tok, mlm, states, sites) -> torch.Tensor:
    """Logits of ``model(tok(text with <mask>))`` at the mask, on the vocabulary's rows."""
    rows = []
    for x, i in zip(states.tolist(), sites.tolist()):
        text = "".join("<mask>" if k == i else mlm.labels[v] for k, v in enumerate(x))
        enc = tok(text, return_tensors="pt")
        assert enc["input_ids"].shape[1] == N + 2
        with torch.no_grad():
            logits = model(**enc).logits[0, i + 1]
        rows.append(logits[list(mlm.vocab)])
    return torch.stack(rows)


def test_esm2_conventions_and_default_amino_acid_vocabulary(esm2):
    model, tok, _ = esm2
    mlm = HFMaskedLM(model, tok, n=N)
    # the 20 standard residues, not X B U Z O . - <null_1> nor a special token
    assert mlm.labels == tuple(AMINO_ACIDS)
    assert [ESM2_VOCAB[i] for i in mlm.vocab] == list(AMINO_ACIDS)
    assert mlm.head == "float64"
    states, sites = _batch(mlm.q, 6, seed=1)
    ids = mlm.masked_input_ids(states, sites)
    assert ids.shape == (6, N + 2)
    assert set(ids[:, 0].tolist()) == {ESM2_VOCAB.index("<cls>")}
    assert set(ids[:, -1].tolist()) == {ESM2_VOCAB.index("<eos>")}
    assert ESM2_VOCAB.index("<pad>") not in ids.tolist()  # one length: no padding
    body = ids[:, 1:-1]
    assert (body[torch.arange(6), sites] == ESM2_VOCAB.index("<mask>")).all()
    # text is read one residue per character (no split_chars needed)
    assert mlm.decode(mlm.encode("EVQLVESGGG")) == "EVQLVESGGG"


@pytest.mark.parametrize("absolute", [False, True], ids=["esm2-rotary", "esm1b-learned"])
def test_every_head_agrees_with_plain_transformers(tmp_path, absolute):
    model, tok = _esm2(tmp_path / "m", absolute=absolute, seed=3)
    states, sites = _batch(20, 16, seed=4)
    oracle = None
    for head in ("float64", "masked", "full"):
        mlm = HFMaskedLM(model, tok, n=N, head=head)
        got = mlm.scores(states, sites)
        oracle = _oracle(model, tok, mlm, states, sites) if oracle is None else oracle
        # float32 rounding of a head of 16 numbers with weights of 0.5: about 1e-6
        torch.testing.assert_close(got, oracle, atol=2e-5, rtol=0)
    assert oracle.std(dim=1).min() > 0.05  # scores that vary: a wrong path would show


def test_the_decoder_is_the_tied_embedding_and_the_bias_is_counted(esm2):
    model, tok, _ = esm2
    assert model.lm_head.decoder.weight is model.esm.embeddings.word_embeddings.weight
    assert model.lm_head.decoder.bias is None and model.lm_head.bias.abs().max() > 0.1
    states, sites = _batch(20, 8, seed=5)
    biased = HFMaskedLM(model, tok, n=N).scores(states, sites)
    bias = model.lm_head.bias.detach().clone()
    try:
        with torch.no_grad():
            model.lm_head.bias.zero_()
        unbiased = HFMaskedLM(model, tok, n=N).scores(states, sites)
    finally:
        with torch.no_grad():
            model.lm_head.bias.copy_(bias)
    vocab = HFMaskedLM(model, tok, n=N).vocab
    torch.testing.assert_close(biased - unbiased, bias[list(vocab)].expand(8, -1),
                               atol=2e-5, rtol=0)


def test_local_directory_and_hub_name_load_the_same_model(esm2, tmp_path):
    model, tok, folder = esm2
    states, sites = _batch(20, 4, seed=6)
    ref = HFMaskedLM(model, tok, n=N).scores(states, sites)
    loaded = load_model(str(folder), n=N)
    assert loaded.head == "float64" and loaded.labels == tuple(AMINO_ACIDS)
    torch.testing.assert_close(loaded.scores(states, sites), ref, atol=1e-6, rtol=0)
    # a hub name, resolved from a local hub cache with the hub switched off
    repo = tmp_path / ("models--" + HUB_NAME.replace("/", "--"))
    snapshot = repo / "snapshots" / ("0" * 40)
    snapshot.parent.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    os.symlink(folder, snapshot)
    np.save(tmp_path / "states.npy", states.numpy())
    np.save(tmp_path / "sites.npy", sites.numpy())
    code = (
        "import numpy as np, torch; from glauber.mlm_backend import load_model; "
        f"m = load_model('hf:{HUB_NAME}', n={N}); "
        f"s = m.scores(np.load({str(tmp_path / 'states.npy')!r}), "
        f"np.load({str(tmp_path / 'sites.npy')!r})); "
        f"np.save({str(tmp_path / 'hub.npy')!r}, s.numpy()); print(m.head, ''.join(m.labels))"
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(tmp_path), OMP_NUM_THREADS="1")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["float64", AMINO_ACIDS]
    np.testing.assert_allclose(np.load(tmp_path / "hub.npy"), ref.numpy(), atol=1e-6, rtol=0)


def test_residues_outside_the_alphabet_are_named_with_their_position(esm2):
    model, tok, _ = esm2
    mlm = HFMaskedLM(model, tok, n=N)
    with pytest.raises(VocabularyError, match=r"'X' at position 4, 'B' at position 7"):
        mlm.encode("EVQXLVBSGG")  # X, B are ESM tokens, but not standard residues
    with pytest.raises(VocabularyError, match=r"'e' at position 1.*uppercase"):
        mlm.encode("evqlvesggg")
    with pytest.raises(VocabularyError, match=r"'<' at position 3"):
        mlm.encode("EV<mask>QL")  # a special token is text, one character per residue


def test_learned_positions_start_after_pad_and_bound_the_length(tmp_path):
    model, tok = _esm2(tmp_path / "m", absolute=True, seed=8)
    mlm = HFMaskedLM(model, tok)
    # positions pad + 1 .. pad + n + 2 of max_position_embeddings = N + 4: n <= N
    assert mlm.max_sites == N + 4 - 2 - 2
    HFMaskedLM(model, tok, n=N).scores(*_batch(20, 2, seed=9))
    with pytest.raises(SequenceLengthError):
        HFMaskedLM(model, tok, n=N + 1)


def test_a_protein_tokenizer_without_the_amino_acids_says_what_to_pass(tmp_path):
    import transformers as tf

    (tmp_path / "vocab.txt").write_text("\n".join(["<cls>", "<pad>", "<eos>", "<unk>", "A", "C",
                                                   "<mask>"]) + "\n")
    tok = tf.EsmTokenizer(str(tmp_path / "vocab.txt"))
    model = tf.EsmForMaskedLM(tf.EsmConfig(
        vocab_size=7, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=16, max_position_embeddings=12, pad_token_id=1, mask_token_id=6,
        position_embedding_type="rotary"))
    with pytest.raises(VocabularyError, match=r"no token for D E F.*allowed_tokens"):
        HFMaskedLM(model, tok, n=3)
    assert HFMaskedLM(model, tok, n=3, allowed_tokens=["A", "C"]).labels == ("A", "C")


@settings(max_examples=DRAWN, deadline=None, database=None, derandomize=not LARGE,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(masked_lms(archs=("esm",)))
def test_random_esm_models_upper_exact_searched(model):
    """upper >= exact >= searched, entrywise, on drawn tiny ESM models (rotary or learned
    positions, token dropout on or off, windows in longer contexts among them)."""
    assert type(model.spec).__name__ == "MaskedLMSpec" and model.spec.arch == "esm"
    check_upper_exact_searched(model, 0.8)


def test_same_weights_another_function_is_another_score_table():
    """Found by the large profile: drawn ESM models with the same seed and scale but token
    dropout on and off have identical weights, and shared one cached score table."""
    from glauber.testing import MaskedLMSpec

    base = dict(arch="esm", layers=1, hidden=8, heads=2, scale=0.36, eps=1e-5, seed=0,
                tokens=("H", "E"), context=None, sites=(0, 1))
    plain, dropout = (MaskedLMSpec(**base, variant=v).build() for v in (0, 2))
    wider = MaskedLMSpec(**{**base, "eps": 1e-2}, variant=0).build()
    assert all(torch.equal(a, b) for a, b in zip(plain.model.state_dict().values(),
                                                 dropout.model.state_dict().values()))
    x = torch.tensor([[0, 1], [1, 0]])
    for other in (dropout, wider):
        assert not torch.allclose(plain.scores(x, [0, 1]), other.scores(x, [0, 1]), atol=1e-4)
        assert plain.cache_key != other.cache_key
    assert plain.cache_key == MaskedLMSpec(**base, variant=0).build().cache_key
