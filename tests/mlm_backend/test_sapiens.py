"""Sapiens fairseq RoBERTa-small -> transformers.RobertaForMaskedLM.

Oracles: (1) a plain-torch re-implementation of the fairseq 0.10 RoBERTa forward pass (written
here from the fairseq modules, independent of the converter's key map), (2) weight bookkeeping by
value (every fairseq tensor appears in the HF model and vice versa), (3) masked-token accuracy on
public antibody sequences, with a vocabulary-permuted negative control at chance level.

The checkpoints come from the PyPI sdist of sapiens==1.0.0: read from the glauber cache
(``$GLAUBER_CACHE`` or ``~/.cache/glauber``) when it holds them, else fetched once per session into
a temporary cache; without a package index the tests that need them are skipped with the reason.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import io
import math
import tarfile
from pathlib import Path

import pytest
import torch

from glauber.core.conditionals import log_conditionals
from glauber.errors import MissingDependencyError, UnknownModelError
from glauber.mlm_backend.registry import available_models, load_model
from glauber.mlm_backend.sapiens import (
    convert_sapiens,
    load_sapiens,
    sapiens_cache_dir,
    sapiens_checkpoint_path,
    unpack_sapiens_sdist,
)

AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"  # dict.txt of the sdist, one symbol per line

# Public variable regions. Trastuzumab (humAb4D5-8): Carter et al., PNAS 89:4285 (1992); chains
# H and L of PDB 1N8Z (Cho et al., Nature 421:756, 2003). Pembrolizumab: Fab chains of PDB 5B8C
# (Na et al., Cell Res. 27:147, 2017); the VH is also the example of the Sapiens README.
TRASTUZUMAB_VH = ("EVQLVESGGGLVQPGGSLRLSCAASGFNIKDTYIHWVRQAPGKGLEWVARIYPTNGYTRYADSVKGRFTISADTSKNTAYLQ"
                  "MNSLRAEDTAVYYCSRWGGDGFYAMDYWGQGTLVTVSS")
TRASTUZUMAB_VL = ("DIQMTQSPSSLSASVGDRVTITCRASQDVNTAVAWYQQKPGKAPKLLIYSASFLYSGVPSRFSGSRSGTDFTLTISSLQPEDF"
                  "ATYYCQQHYTTPPTFGQGTKVEIK")
PEMBROLIZUMAB_VH = ("QVQLVQSGVEVKKPGASVKVSCKASGYTFTNYYMYWVRQAPGQGLEWMGGINPSNGGTNFNEKFKNRVTLTTDSSTTTAYM"
                    "ELKSLQFDDTAVYYCARRDYRFDMGFDYWGQGTTVTVSS")
PEMBROLIZUMAB_VL = ("EIVLTQSPATLSLSPGERATLSCRASKGVSTSGYSYLHWYQQKPGQAPRLLIYLASYLESGVPARFSGSGSGTDFTLTISSL"
                    "EPEDFAVYYCQHSRDLPLTFGGGTKVEIK")
CHAIN_SEQUENCES = {"vh": (TRASTUZUMAB_VH, PEMBROLIZUMAB_VH), "vl": (TRASTUZUMAB_VL, PEMBROLIZUMAB_VL)}


@pytest.fixture(scope="session")
def sapiens_cache(tmp_path_factory) -> Path:
    """The cache root (``GLAUBER_CACHE``) the Sapiens tests read, set for the whole session.

    A cache that already holds both checkpoints (``$GLAUBER_CACHE`` or ``~/.cache/glauber``) is
    only read. Otherwise the sdist is fetched into a temporary folder (never into the user's
    cache), and the tests that need it are skipped, with pip's reason, when the package index
    cannot be reached.
    """
    existing = sapiens_cache_dir()
    names = ("checkpoint_vh.pt", "checkpoint_vl.pt", "dict.txt")
    if all((existing / "sapiens" / "models" / "v1" / name).is_file() for name in names):
        root = existing.parent
    else:
        root = tmp_path_factory.mktemp("glauber-cache")
        try:
            sapiens_checkpoint_path("vh", cache_dir=root / existing.name)
        except MissingDependencyError as exc:
            first = str(exc).splitlines()[0][:300]
            pytest.skip(f"Sapiens checkpoints not cached and the download failed: {first}")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GLAUBER_CACHE", str(root))
        yield root


@pytest.fixture(scope="session")
def checkpoints(sapiens_cache) -> dict[str, Path]:
    """Both checkpoints, from the cache of :func:`sapiens_cache`."""
    return {chain: sapiens_checkpoint_path(chain) for chain in ("vh", "vl")}


@pytest.fixture(scope="session")
def converted(checkpoints):
    return {chain: convert_sapiens(path) for chain, path in checkpoints.items()}


def raw_fairseq(path: Path) -> tuple[dict, dict[str, torch.Tensor]]:
    """Training args and state dict of a trusted checkpoint, read directly with torch."""
    ck = torch.load(path, map_location="cpu", weights_only=False)
    return vars(ck["args"]), ck["model"]


# --------------------------------------------------------------------------- vocabulary ----


def test_dictionary_is_the_fairseq_order_of_the_sdist(checkpoints, converted):
    # fairseq Dictionary: <s> <pad> </s> <unk> first, then dict.txt in file order, then the
    # <mask> that MaskedLMTask appends. dict.txt is read here independently of the module.
    lines = (checkpoints["vh"].parent / "dict.txt").read_text().split("\n")
    symbols = ["<s>", "<pad>", "</s>", "<unk>"] + [ln.split()[0] for ln in lines if ln] + ["<mask>"]
    assert "".join(symbols[4:-1]) == AMINO_ACIDS
    _, tok = converted["vh"]
    assert tok.convert_ids_to_tokens(list(range(len(symbols)))) == symbols
    assert (tok.bos_token_id, tok.pad_token_id, tok.eos_token_id, tok.unk_token_id,
            tok.mask_token_id) == (0, 1, 2, 3, 24)


def test_tokenizer_matches_sapiens_seq2tokens(converted):
    # sapiens/roberta.py seq2tokens: '<s> ' + ' '.join(seq) + ' </s>', one token per residue.
    _, tok = converted["vh"]
    ids = tok("EVQ<mask>Y")["input_ids"]
    assert ids == [0, 4 + AMINO_ACIDS.index("E"), 4 + AMINO_ACIDS.index("V"),
                   4 + AMINO_ACIDS.index("Q"), 24, 4 + AMINO_ACIDS.index("Y"), 2]
    assert tok("E V Q <mask> Y")["input_ids"] == ids
    assert tok("EBQ")["input_ids"][2] == tok.unk_token_id


# ------------------------------------------------------------------------------ weights ----


@pytest.mark.parametrize("chain", ["vh", "vl"])
def test_every_weight_lands_somewhere(chain, checkpoints, converted):
    args, state = raw_fairseq(checkpoints[chain])
    model, _ = converted[chain]
    hf = model.state_dict()
    for key, value in state.items():
        assert any(v.shape == value.shape and torch.equal(v, value) for v in hf.values()), key
    for key, value in hf.items():
        if key == "roberta.embeddings.token_type_embeddings.weight":
            assert not value.any()  # fairseq RoBERTa has no segment embedding
            continue
        assert any(v.shape == value.shape and torch.equal(v, value) for v in state.values()), key
    config = model.config
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads,
            config.intermediate_size) == (args["encoder_layers"], args["encoder_embed_dim"],
                                          args["encoder_attention_heads"],
                                          args["encoder_ffn_embed_dim"])
    # fairseq's learned positions: max_positions + padding_idx + 1 rows (padding_idx = 1).
    assert config.max_position_embeddings == args["max_positions"] + 2
    assert config.layer_norm_eps == 1e-5  # fairseq.modules.LayerNorm default


# ------------------------------------------------------------- slow fairseq reference ----


def _layer_norm(x, state, name):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5) * state[name + ".weight"] + state[name + ".bias"]


def _linear(x, state, name):
    return x @ state[name + ".weight"].T + state[name + ".bias"]


def _gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def fairseq_roberta_logits(args: dict, state: dict, tokens: torch.Tensor) -> torch.Tensor:
    """fairseq 0.10 RobertaModel.forward (masked LM logits), float64, written out by hand.

    TransformerSentenceEncoder: token + learned positions (utils.make_positions: padding_idx +
    cumulative count of non-pad tokens), emb_layer_norm, then post-LN layers (self-attention with
    q scaled by head_dim**-0.5 and pad keys masked; fc1-gelu-fc2); RobertaLMHead: dense, gelu,
    layer_norm, the tied embedding matrix and a bias.
    """
    s = {k.removeprefix("decoder."): v.double() for k, v in state.items()}
    pad = 1
    keep = tokens.ne(pad)
    positions = torch.cumsum(keep, dim=1) * keep + pad
    x = s["sentence_encoder.embed_tokens.weight"][tokens] + \
        s["sentence_encoder.embed_positions.weight"][positions]
    x = _layer_norm(x, s, "sentence_encoder.emb_layer_norm")
    batch, length, dim = x.shape
    heads = args["encoder_attention_heads"]
    head_dim = dim // heads
    for layer in range(args["encoder_layers"]):
        p = f"sentence_encoder.layers.{layer}."
        q = _linear(x, s, p + "self_attn.q_proj") * head_dim ** -0.5
        k = _linear(x, s, p + "self_attn.k_proj")
        v = _linear(x, s, p + "self_attn.v_proj")
        out = torch.zeros_like(x)
        for b in range(batch):
            for h in range(heads):
                cols = slice(h * head_dim, (h + 1) * head_dim)
                att = q[b, :, cols] @ k[b, :, cols].T
                att = att.masked_fill(~keep[b][None, :], float("-inf")).softmax(-1)
                out[b, :, cols] = att @ v[b, :, cols]
        x = _layer_norm(x + _linear(out, s, p + "self_attn.out_proj"), s, p + "self_attn_layer_norm")
        ffn = _linear(_gelu(_linear(x, s, p + "fc1")), s, p + "fc2")
        x = _layer_norm(x + ffn, s, p + "final_layer_norm")
    h = _layer_norm(_gelu(_linear(x, s, "lm_head.dense")), s, "lm_head.layer_norm")
    return h @ s["lm_head.weight"].T + s["lm_head.bias"]


@pytest.mark.parametrize("chain", ["vh", "vl"])
def test_logits_equal_plain_torch_fairseq_forward(chain, checkpoints, converted):
    args, state = raw_fairseq(checkpoints[chain])
    model, tok = converted[chain]
    # Two sequences of different lengths (the second padded), one with a mask token.
    batch = tok(["EVQLVESGG<mask>LVQPGGSLRLSC", "DIQMTQSPSSL"], padding=True, return_tensors="pt")
    expected = fairseq_roberta_logits(args, state, batch["input_ids"])
    hf64 = copy.deepcopy(model).double()
    with torch.no_grad():
        got = hf64(**batch).logits
    keep = batch["attention_mask"].bool()
    assert torch.allclose(got[keep], expected[keep], rtol=0, atol=1e-9)
    with torch.no_grad():  # the float32 model itself agrees to float32 precision
        got32 = model(**batch).logits.double()
    assert torch.allclose(got32[keep], expected[keep], rtol=0, atol=1e-4)


# ---------------------------------------------------------------- masked-token accuracy ----


def masked_token_accuracy(model, tok, sequence: str, period: int, permute: bool = False) -> float:
    """Fraction of residues whose argmax over the 20 amino acids is right when masked.

    Residue ``i`` is masked in pass ``i % period``, so every residue is masked exactly once and
    ``period = len(sequence)`` masks one residue per pass. ``permute`` feeds the sequence
    through a vocabulary shifted by one amino acid (what an off-by-one dictionary does): the
    negative control.
    """
    ids = torch.tensor(tok(sequence)["input_ids"])
    if permute:
        ids[1:-1] = (ids[1:-1] - 4 + 1) % 20 + 4
    n = len(sequence)
    sites = torch.arange(n) + 1
    passes = torch.arange(n) % period
    batch = ids.repeat(min(period, n), 1)
    batch[passes, sites] = tok.mask_token_id
    with torch.no_grad():
        logits = model(input_ids=batch).logits[passes, sites]
    amino_ids = torch.tensor(tok.convert_tokens_to_ids(list(AMINO_ACIDS)))
    predicted = amino_ids[logits[:, amino_ids].argmax(-1)]
    return (predicted == ids[1:-1]).double().mean().item()


@pytest.mark.parametrize("chain", ["vh", "vl"])
def test_masked_token_accuracy_on_therapeutic_antibodies(chain, converted):
    model, tok = converted[chain]
    # Each residue masked once, 1 residue in 12 per pass (BERT trains with 15%): measured vh
    # 0.767 (trastuzumab), 0.750 (pembrolizumab); vl 0.850, 0.766. One residue per pass gives
    # vh 0.767, 0.758; vl 0.850, 0.757. Chance is 1/20 = 0.05; a wrong vocabulary order lands
    # near it (the control below: measured vh 0.050, 0.042; vl 0.084, 0.063).
    accuracies = [masked_token_accuracy(model, tok, s, period=12) for s in CHAIN_SEQUENCES[chain]]
    assert min(accuracies) > 0.6, accuracies
    control = [masked_token_accuracy(model, tok, s, period=12, permute=True)
               for s in CHAIN_SEQUENCES[chain]]
    assert max(control) < 0.2, control


def test_each_model_knows_its_own_chain(converted):
    # The heavy model predicts light chains poorly (measured 0.18 on trastuzumab VL against 0.77
    # on its VH; the light model 0.28 on VH), so the two checkpoints are not swapped.
    own = masked_token_accuracy(*converted["vh"], TRASTUZUMAB_VH, period=12)
    cross = masked_token_accuracy(*converted["vh"], TRASTUZUMAB_VL, period=12)
    assert own > cross + 0.3, (own, cross)


# ------------------------------------------------------------------ protocol wrapper ----


@pytest.mark.parametrize("chain", ["vh", "vl"])
def test_load_sapiens_scores_are_the_masked_logits(chain, converted):
    sequence = CHAIN_SEQUENCES[chain][0]
    mlm = load_sapiens(chain, n=len(sequence))
    assert (mlm.q, mlm.vocab, "".join(mlm.labels)) == (20, tuple(range(4, 24)), AMINO_ACIDS)
    # max_positions (144 vh, 128 vl) minus <s> and </s>
    assert mlm.max_sites == {"vh": 142, "vl": 126}[chain]
    sites = torch.tensor([0, 7, len(sequence) - 1])
    states = mlm.encode(sequence).repeat(len(sites), 1)
    got = mlm.scores(states, sites)
    model, tok = converted[chain]
    ids = torch.tensor(tok(sequence)["input_ids"]).repeat(len(sites), 1)
    ids[torch.arange(len(sites)), sites + 1] = tok.mask_token_id
    with torch.no_grad():
        expected = model(input_ids=ids).logits[torch.arange(len(sites)), sites + 1, 4:24]
    assert torch.allclose(got, expected, rtol=0, atol=1e-4)
    logp = log_conditionals(mlm, states, sites, tau=0.5)
    assert torch.allclose(logp.exp().sum(-1), torch.ones(len(sites)), atol=1e-5)


def test_registered_by_name(checkpoints):
    assert {"sapiens-vh", "sapiens-vl"} <= set(available_models())
    mlm = load_model("sapiens-vl", n=12)
    assert (mlm.name, mlm.n, mlm.q) == ("sapiens-vl", 12, 20)


# ------------------------------------------------------------------ fetching and caching ----


def _fake_sdist(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"sapiens-1.0.0/sapiens/models/v1/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("sapiens-1.0.0/setup.py")
        info.size = 0
        tar.addfile(info, io.BytesIO(b""))
    return path


def test_unpack_is_atomic_and_keeps_a_finished_cache(tmp_path):
    files = {"checkpoint_vh.pt": b"vh", "checkpoint_vl.pt": b"vl", "dict.txt": b"A 1\n"}
    archive = _fake_sdist(tmp_path / "sapiens-1.0.0.tar.gz", files)
    cache = tmp_path / "cache" / "sapiens-1.0.0"
    folder = unpack_sapiens_sdist(archive, cache)
    assert folder == cache / "sapiens" / "models" / "v1"
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == files
    assert [p.name for p in cache.parent.iterdir()] == ["sapiens-1.0.0"]  # no staging left
    other = _fake_sdist(tmp_path / "other.tar.gz", {k: b"new" for k in files})
    unpack_sapiens_sdist(other, cache)  # a second unpack (lost race) keeps the first copy
    assert (folder / "checkpoint_vh.pt").read_bytes() == b"vh"
    assert [p.name for p in cache.parent.iterdir()] == ["sapiens-1.0.0"]


def test_unpack_rejects_an_archive_without_the_models(tmp_path):
    archive = _fake_sdist(tmp_path / "x.tar.gz", {"dict.txt": b"A 1\n"})
    with pytest.raises(MissingDependencyError, match="checkpoint_v"):
        unpack_sapiens_sdist(archive, tmp_path / "cache" / "sapiens-1.0.0")
    (tmp_path / "broken.tar.gz").write_bytes(b"not a tar archive")
    with pytest.raises(MissingDependencyError, match="tar.gz archive"):
        unpack_sapiens_sdist(tmp_path / "broken.tar.gz", tmp_path / "cache" / "sapiens-1.0.0")
    assert not (tmp_path / "cache").exists()  # nothing half-written left behind


def test_cache_dir_follows_glauber_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("GLAUBER_CACHE", str(tmp_path))
    assert sapiens_cache_dir() == tmp_path / "sapiens-1.0.0"
    assert sapiens_cache_dir(tmp_path / "elsewhere") == tmp_path / "elsewhere"


@pytest.mark.skipif(importlib.util.find_spec("sapiens") is not None,
                    reason="an installed sapiens package is used before any download")
def test_failed_download_says_what_to_run(monkeypatch, tmp_path):
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # pip finds nothing, as on a machine offline
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    with pytest.raises(MissingDependencyError, match="pip download --no-deps --no-binary"):
        sapiens_checkpoint_path("vl", cache_dir=tmp_path / "sapiens-1.0.0")
    assert list(tmp_path.iterdir()) == []


def test_unknown_chain_is_rejected():
    with pytest.raises(UnknownModelError, match="'vh'"):
        sapiens_checkpoint_path("vk")


# ------------------------------------------------------------ strict conversion errors ----


def _rewritten(tmp_path: Path, source: Path, args: dict | None = None,
               weights: dict | None = None) -> Path:
    """A copy of ``source`` (with its dict.txt) with some args and weights changed."""
    ck = torch.load(source, map_location="cpu", weights_only=False)
    target = tmp_path / "checkpoint.pt"
    torch.save({"args": argparse.Namespace(**{**vars(ck["args"]), **(args or {})}),
                "model": {**ck["model"], **(weights or {})}}, target)
    (tmp_path / "dict.txt").write_bytes((source.parent / "dict.txt").read_bytes())
    return target


def test_pre_ln_checkpoint_fails(tmp_path, checkpoints):
    final_norm = {"decoder.sentence_encoder.layer_norm.weight": torch.ones(128)}
    with pytest.raises(UnknownModelError, match="RobertaPreLayerNorm"):
        convert_sapiens(_rewritten(tmp_path, checkpoints["vl"], weights=final_norm))


def test_unmapped_weight_fails(tmp_path, checkpoints):
    pooler = {"decoder.sentence_encoder.pooler.weight": torch.ones(128, 128)}
    with pytest.raises(UnknownModelError, match="pooler.weight"):
        convert_sapiens(_rewritten(tmp_path, checkpoints["vl"], weights=pooler))


def test_missing_lm_head_fails(tmp_path, checkpoints):
    ck = torch.load(checkpoints["vl"], map_location="cpu", weights_only=False)
    encoder_only = {k: v for k, v in ck["model"].items() if not k.startswith("decoder.lm_head.")}
    torch.save({"args": ck["args"], "model": encoder_only}, tmp_path / "checkpoint.pt")
    (tmp_path / "dict.txt").write_bytes((checkpoints["vl"].parent / "dict.txt").read_bytes())
    with pytest.raises(UnknownModelError, match="lm_head.bias"):
        convert_sapiens(tmp_path / "checkpoint.pt")


def test_inconsistent_args_fail(tmp_path, checkpoints):
    with pytest.raises(UnknownModelError, match="encoder_layers=6"):
        convert_sapiens(_rewritten(tmp_path, checkpoints["vl"], args={"encoder_layers": 6}))


def test_dictionary_of_the_wrong_size_fails(tmp_path, checkpoints):
    target = _rewritten(tmp_path, checkpoints["vl"])
    (tmp_path / "dict.txt").write_text("A 1\nC 1\n")
    with pytest.raises(UnknownModelError, match="dict.txt"):
        convert_sapiens(target)
