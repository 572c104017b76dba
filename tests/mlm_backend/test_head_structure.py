"""Heads the weight bound cannot read: a typed error naming the class and the structure it needs.

Oracles: models whose head was altered on purpose (an RMSNorm or no normalisation where the
LayerNorm was, a LayerNorm without weights) and an architecture glauber does not know
(ELECTRA); the model's own head (head='masked') for the scores that still come back.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch import nn

from glauber.errors import UnboundableModelError
from glauber.estimators import influence_upper_bound
from glauber.mlm_backend import HFMaskedLM
from glauber.mlm_backend.heads import checked_head_parts

N = 6
STRUCTURE = r"LayerNorm\(d\) -> Linear\(d, V\)"

pytestmark = pytest.mark.usefixtures("single_thread")


def _batch(q, count, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, q, (count, N), generator=g), torch.randint(0, N, (count,), generator=g)


def test_an_unknown_architecture_names_its_class_and_the_structure(tokenizers):
    from transformers import ElectraConfig, ElectraForMaskedLM

    model = ElectraForMaskedLM(ElectraConfig(
        vocab_size=25, embedding_size=16, hidden_size=32, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=40,
    )).eval()
    mlm = HFMaskedLM(model, tokenizers["bert"], n=N, split_chars=True)
    assert mlm.head == "full"
    for call in (mlm.oscillation_upper_bound, lambda: influence_upper_bound(mlm, 1.0,
                                                                           tabulate=False)):
        with pytest.raises(UnboundableModelError, match=f"ElectraForMaskedLM.*{STRUCTURE}"):
            call()
    with pytest.raises(UnboundableModelError, match=f"ElectraForMaskedLM.*{STRUCTURE}"):
        HFMaskedLM(model, tokenizers["bert"], n=N, split_chars=True, head="float64")


@pytest.mark.parametrize(("arch", "where", "replacement", "named"), [
    ("bert", "cls.predictions.transform.LayerNorm", lambda d: nn.RMSNorm(d), "RMSNorm"),
    ("esm", "lm_head.layer_norm", lambda d: nn.Identity(), "Identity"),
])
def test_a_known_class_with_another_head_shape_says_what_is_missing(tiny_models, arch, where,
                                                                     replacement, named):
    model, tok = tiny_models[arch]
    model = copy.deepcopy(model)
    parent, attr = model.get_submodule(where.rsplit(".", 1)[0]), where.rsplit(".", 1)[1]
    setattr(parent, attr, replacement(32))
    with pytest.raises(UnboundableModelError, match=f"{type(model).__name__}.*{STRUCTURE}"
                       f".*{named}"):
        checked_head_parts(model)
    mlm = HFMaskedLM(model, tok, n=N, split_chars=True)
    assert mlm.head == "masked"  # auto falls back to the model's own head, without a bound
    with pytest.raises(UnboundableModelError, match=named):
        mlm.oscillation_upper_bound()
    with pytest.raises(UnboundableModelError, match=named):
        HFMaskedLM(model, tok, n=N, split_chars=True, head="float64")
    states, sites = _batch(mlm.q, 8, seed=1)
    full = HFMaskedLM(model, tok, n=N, split_chars=True, head="full")
    torch.testing.assert_close(mlm.scores(states, sites), full.scores(states, sites),
                               atol=1e-5, rtol=0)


def test_a_layernorm_without_weights_keeps_the_float64_head_and_its_bound(tiny_models):
    model, tok = tiny_models["bert"]
    model = copy.deepcopy(model)
    eps = model.config.layer_norm_eps
    model.cls.predictions.transform.LayerNorm = nn.LayerNorm(32, eps=eps,
                                                             elementwise_affine=False)
    mlm = HFMaskedLM(model, tok, n=N, split_chars=True)
    assert mlm.head == "float64"
    states, sites = _batch(mlm.q, 32, seed=2)
    s = mlm.scores(states, sites)
    ref = HFMaskedLM(model, tok, n=N, split_chars=True, head="masked").scores(states, sites)
    torch.testing.assert_close(s, ref, atol=1e-5, rtol=0)
    enc = mlm._float64.enclosure()
    d = s.double().numpy()
    diff = d[:, :, None] - d[:, None, :] - (enc.centre[:, None] - enc.centre[None, :])
    assert np.all(np.abs(diff) <= enc.radius)
