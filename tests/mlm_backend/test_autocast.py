"""HFMaskedLM(autocast=...): the forward pass under torch.autocast over float32 weights.

Oracles: the same model run by hand under ``torch.autocast`` (bitwise), the float32 forward
(close, to a tolerance derived from bfloat16's precision, but not equal), the bf16 grid (the
LM head's output is a bf16 tensor under autocast, so every score is a bf16 number), and the
typed errors of bad combinations.
"""

from __future__ import annotations

import copy

import pytest
import torch

import glauber.cli
from glauber.core.conditionals import log_conditionals
from glauber.errors import DeviceUnavailableError, InvalidParameterError
from glauber.mlm_backend import HFMaskedLM
from glauber.mlm_backend.device import resolve_autocast
from glauber.models import resolve_model

ARCHS = ["bert", "roberta", "distilbert", "modernbert", "esm", "albert"]
N = 12
# bfloat16 has an 8-bit significand (7 stored bits), unit roundoff u = 2**-8. Autocast rounds
# both operands of every matrix product to bf16 and accumulates in float32, so each product
# adds a relative error of at most about 2u. A score ends a chain of about 18 products (Q, K, V,
# Q K^T, attention x V, output projection, two FFN products, per layer, x 2 layers, + the
# head's two), so to first order its error is at most 18 * 2u ~ 0.14 of the score scale, and
# rounding errors of random sign, adding in quadrature, average about sqrt(18) * 2u ~ 0.03.
U_BF16 = 2.0**-8
MAX_REL = 18 * 2 * U_BF16
MEAN_REL = 18**0.5 * 2 * U_BF16

pytestmark = pytest.mark.usefixtures("single_thread")


def _pair(tiny_models, arch, **kw) -> tuple[HFMaskedLM, HFMaskedLM]:
    model, tok = tiny_models[arch]
    plain = HFMaskedLM(model, tok, n=N, split_chars=True, **kw)
    return plain, HFMaskedLM(model, tok, n=N, split_chars=True, autocast="bfloat16", **kw)


def _batch(q: int, count: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, q, (count, N), generator=g), torch.randint(0, N, (count,), generator=g)


@pytest.mark.parametrize("arch", ARCHS)
def test_bf16_autocast_scores_are_float32_close_to_fp32_and_on_the_bf16_grid(tiny_models, arch):
    plain, low = _pair(tiny_models, arch, head="masked")
    assert low.autocast == torch.bfloat16 and low.dtype == torch.float32
    assert next(low.model.parameters()).dtype == torch.float32  # the weights stay float32
    states, sites = _batch(plain.q, 32, seed=ARCHS.index(arch))
    ref, got = plain.scores(states, sites), low.scores(states, sites)
    assert got.dtype == torch.float32 and got.shape == ref.shape
    scale = float(ref.abs().max())
    diff = (got - ref).abs()
    assert float(diff.max()) <= MAX_REL * scale
    assert float(diff.mean()) <= MEAN_REL * scale
    # Autocast really ran: the head's output was a bf16 tensor, so every score is a bf16
    # number (but ESM's, whose head adds its float32 lm_head.bias after the bf16 decoder), and
    # the error is far above float32 rounding (~1e-7 of the scale).
    assert arch == "esm" or torch.equal(got, got.bfloat16().float())
    assert not torch.equal(ref, ref.bfloat16().float())
    assert float(diff.max()) > 1e-3 * scale
    # Downstream, the log-softmax runs in float32 and normalises at float32 precision.
    lc = log_conditionals(low, states, sites, 0.7)
    assert lc.dtype == torch.float32
    torch.testing.assert_close(lc.exp().sum(1), torch.ones(32), atol=1e-5, rtol=0)


@pytest.mark.parametrize("arch", ARCHS)
def test_full_head_equals_a_hand_written_autocast_forward(tiny_models, arch):
    model, _ = tiny_models[arch]
    _, low = _pair(tiny_models, arch, head="full")
    states, sites = _batch(low.q, 9, seed=20 + ARCHS.index(arch))
    ids = low.masked_input_ids(states, sites)
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits
    expected = logits[torch.arange(9), sites + 1][:, list(low.vocab)].float()
    assert torch.equal(low.scores(states, sites), expected)


def test_masked_head_equals_a_hand_written_autocast_forward(tiny_models):
    model, _ = tiny_models["bert"]
    _, low = _pair(tiny_models, "bert", head="masked")
    assert low.head == "masked"
    states, sites = _batch(low.q, 9, seed=30)
    ids = low.masked_input_ids(states, sites)
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
        hidden = model.bert(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state
        logits = model.cls(hidden[torch.arange(9), sites + 1])
    expected = logits[:, list(low.vocab)].float()
    assert torch.equal(low.scores(states, sites), expected)


def test_with_length_keeps_autocast_and_repr_shows_it(tiny_models):
    _, low = _pair(tiny_models, "bert")
    short = low.with_length(6)
    assert short.autocast == torch.bfloat16 and short.n == 6
    assert "autocast='bfloat16'" in repr(low) and "autocast='bfloat16'" in repr(short)
    assert "autocast=None" in repr(_pair(tiny_models, "bert")[0])
    x = torch.randint(0, low.q, (4, 6), generator=torch.Generator().manual_seed(1))
    hand = HFMaskedLM(tiny_models["bert"][0], tiny_models["bert"][1], n=6, split_chars=True,
                      autocast=torch.bfloat16)
    assert torch.equal(short.scores(x, 2), hand.scores(x, 2))


def test_invalid_autocast_combinations_raise_typed_errors(tiny_models):
    model, tok = tiny_models["bert"]
    with pytest.raises(InvalidParameterError, match="choose one"):
        HFMaskedLM(copy.deepcopy(model), tok, dtype="bfloat16", autocast="bfloat16")
    with pytest.raises(InvalidParameterError, match="only supported on CUDA"):
        HFMaskedLM(model, tok, autocast="float16")
    for bad in ("float32", "int8", torch.float64):
        with pytest.raises(InvalidParameterError, match="unsupported autocast"):
            HFMaskedLM(model, tok, autocast=bad)
    if not torch.cuda.is_available():
        with pytest.raises(DeviceUnavailableError):
            HFMaskedLM(model, tok, device="cuda", autocast="float16")
    assert next(model.parameters()).dtype == torch.float32  # the shared fixture is untouched


def test_resolve_autocast_rules_per_device():
    cpu, cuda, mps = torch.device("cpu"), torch.device("cuda"), torch.device("mps")
    assert resolve_autocast(None, cpu, torch.float32) is None
    assert resolve_autocast("bf16", cpu, torch.float32) == torch.bfloat16
    assert resolve_autocast("fp16", cuda, torch.float32) == torch.float16  # no CUDA needed
    assert resolve_autocast(torch.bfloat16, cuda, torch.float32) == torch.bfloat16
    with pytest.raises(InvalidParameterError, match="float32 weights"):
        resolve_autocast("bf16", cuda, torch.float16)
    with pytest.raises(InvalidParameterError, match="cpu and cuda"):
        resolve_autocast("bf16", mps, torch.float32)


def test_command_line_autocast_reaches_the_model(tiny_models, tmp_path):
    model, tok = tiny_models["bert"]
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    mlm = resolve_model(str(tmp_path), length=6, autocast="bfloat16")
    assert isinstance(mlm, HFMaskedLM) and mlm.autocast == torch.bfloat16
    assert resolve_model(str(tmp_path), length=6).autocast is None
    args = glauber.cli.build_parser().parse_args(["certify", "--autocast", "bfloat16"])
    assert args.autocast == "bfloat16"
    with pytest.raises(SystemExit):  # argparse refuses other precisions
        glauber.cli.build_parser().parse_args(["certify", "--autocast", "float32"])
    with pytest.raises(InvalidParameterError, match="masked LMs"):
        resolve_model("tiny-gpt2-control", length=6, autocast="bfloat16")
