"""The float64 LayerNorm head of HFMaskedLM and its rigorous enclosure.

Oracles: a numpy float64 implementation of the head's algorithm (glauber.theory.layernorm_head)
applied to the model's own pre-LayerNorm activations; the model's own float32 head; the
enclosure checked on every pair of tokens of real forward passes of four architectures; and,
as a property over random tiny BERT and RoBERTa models (glauber.testing.masked_lms), the chain
of inequalities upper >= exact >= searched, with the exact influence by enumeration
(ExactChain).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings

from glauber.core.enumeration import table_queries
from glauber.core.restrict import restrict
from glauber.errors import UnboundableModelError
from glauber.estimators import influence_upper_bound, search_influence
from glauber.exact import ExactChain
from glauber.mlm_backend import HFMaskedLM
from glauber.mlm_backend.heads import layernorm_head_parts
from glauber.testing import masked_lms
from glauber.theory.floating import softmax_tv_rounding

ARCHS = ["bert", "roberta", "distilbert", "modernbert", "esm", "albert"]
N = 8

pytestmark = pytest.mark.usefixtures("single_thread")


def _mlm(tiny_models, arch, **kw):
    model, tok = tiny_models[arch]
    return HFMaskedLM(model, tok, n=N, split_chars=True, **kw)


def _batch(q, count, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, q, (count, N), generator=g), torch.randint(0, N, (count,), generator=g)


@pytest.mark.parametrize("arch", ARCHS)
def test_float64_head_is_the_documented_algorithm_on_the_models_activations(tiny_models, arch):
    mlm = _mlm(tiny_models, arch)
    assert mlm.head == "float64"
    parts = layernorm_head_parts(mlm.model)
    states, sites = _batch(mlm.q, 16, seed=ARCHS.index(arch))
    ids = mlm.masked_input_ids(states, sites)
    with torch.inference_mode():
        hidden = mlm._parts.encoder(input_ids=ids).last_hidden_state[torch.arange(16), sites + 1]
        x = parts.pre(hidden).double().numpy()
    W = parts.decoder.weight.detach().double().numpy()[list(mlm.vocab)]
    g = parts.norm.weight.detach().double().numpy()
    beta = (parts.norm.bias.detach().double().numpy() if parts.norm.bias is not None
            else np.zeros_like(g))
    b = np.zeros(len(mlm.vocab))
    for extra in (parts.decoder.bias, parts.bias):  # ESM adds its bias after the decoder
        if extra is not None:
            b = b + extra.detach().double().numpy()[list(mlm.vocab)]
    d = x.shape[1]
    a = x - x.sum(1, keepdims=True) / d
    z = a / np.sqrt((a * a).sum(1, keepdims=True) / d + parts.norm.eps)
    wg = W * g
    ref = z @ (wg - wg.mean(1, keepdims=True)).T + (W @ beta + b)
    got = mlm.scores(states, sites).double().numpy()
    np.testing.assert_allclose(got, ref, rtol=2.0**-22, atol=1e-6)


@pytest.mark.parametrize("arch", ARCHS)
def test_every_score_difference_of_real_forwards_is_inside_the_enclosure(tiny_models, arch):
    mlm = _mlm(tiny_models, arch)
    enc = mlm._float64.enclosure()
    states, sites = _batch(mlm.q, 64, seed=10 + ARCHS.index(arch))
    s = mlm.scores(states, sites).double().numpy()
    diff = s[:, :, None] - s[:, None, :]
    centre = enc.centre[:, None] - enc.centre[None, :]
    assert np.all(np.abs(diff - centre) <= enc.radius)
    bound = mlm.oscillation_upper_bound()
    assert bound.method == "layernorm-head" and bound.Delta.shape == (N, N)
    assert np.all(np.diag(bound.Delta) == 0) and bound.Delta[0, 1] == enc.oscillation
    osc = (diff[:, None] - diff[None, :]).max()  # between any two of these contexts
    assert osc <= enc.oscillation


def test_float64_head_under_bf16_autocast_keeps_its_float64_part(tiny_models):
    plain = _mlm(tiny_models, "bert")
    low = _mlm(tiny_models, "bert", autocast="bfloat16")
    states, sites = _batch(plain.q, 16, seed=3)
    ref, got = plain.scores(states, sites), low.scores(states, sites)
    assert low.head == "float64"
    assert not torch.equal(got, got.bfloat16().float())  # not a bf16 head output
    scale = float(ref.abs().max())
    assert float((got - ref).abs().max()) <= 18 * 2 * 2.0**-8 * scale  # see test_autocast
    enc = low._float64.enclosure()  # the enclosure holds for any hidden state: bf16 ones too
    s = got.double().numpy()
    diff = s[:, :, None] - s[:, None, :] - (enc.centre[:, None] - enc.centre[None, :])
    assert np.all(np.abs(diff) <= enc.radius)


def test_models_without_a_bound_say_what_to_change(tiny_models):
    with pytest.raises(UnboundableModelError, match="head='auto'"):
        _mlm(tiny_models, "bert", head="masked").oscillation_upper_bound()
    with pytest.raises(UnboundableModelError, match="head='auto'"):
        influence_upper_bound(_mlm(tiny_models, "bert", head="full"), 1.0)
    model, tok = tiny_models["bert"]
    with pytest.raises(UnboundableModelError, match="with_length"):
        HFMaskedLM(model, tok, split_chars=True).oscillation_upper_bound()


def test_a_window_inherits_the_full_models_bound(tiny_models):
    mlm = _mlm(tiny_models, "roberta")
    window = restrict(mlm, [0, 1, 2, 3, 4, 5, 6, 7], [5, 1, 3])
    full, part = mlm.oscillation_upper_bound(), window.oscillation_upper_bound()
    np.testing.assert_array_equal(part.Delta, full.Delta[np.ix_([5, 1, 3], [5, 1, 3])])
    ub = influence_upper_bound(window, 2.0, tabulate=False)
    assert ub.method == "layernorm-head"
    exact = ExactChain(window, 2.0).influence_matrix()
    assert np.all(ub.C >= exact)


@settings(max_examples=6, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(masked_lms())
def test_random_transformers_upper_exact_searched(model):
    """upper >= exact >= searched, entrywise, on random tiny BERT / RoBERTa models
    (tests/test_adversarial.py runs the same property on hundreds of models)."""
    check_upper_exact_searched(model, 0.8)


def check_upper_exact_searched(model, tau):
    chain = ExactChain(model, tau)
    C, D = chain.influence_matrix(), chain.oscillation_matrix()
    weights = influence_upper_bound(model, tau, tabulate=False)
    tabulated = influence_upper_bound(chain.tabulated(), tau)  # exact for the chain's table
    tol = softmax_tv_rounding(float(np.abs(chain.scores()).max()), tau, model.q)
    spec = model.spec
    assert np.all(weights.Delta >= D), spec
    assert np.all(weights.C >= C - tol), spec
    assert np.all(tabulated.C >= C - tol), spec
    # a budget is distinct queries, at most the n q^(n-1) that tabulate the model
    found = search_influence(model, tau, budget=min(40, table_queries(model.n, model.q)), seed=0)
    assert np.all(found.C <= C + found.tolerance), spec


@pytest.mark.parametrize("tau", [1e-4, 1e6])
@pytest.mark.parametrize("eps", [1e-12, 1e-2])
def test_extremes_of_temperature_weights_and_eps(tau, eps):
    from glauber.testing import MaskedLMSpec

    spec = MaskedLMSpec("roberta", 2, 8, 2, 3.0, eps, 7, ("A", "C", "D"), None, (0, 1, 2))
    model = spec.build()
    model.spec = spec
    ub = influence_upper_bound(model, tau, tabulate=False)
    assert np.all(ub.C <= 1.0) and np.all(np.isfinite(ub.Delta))
    if tau > 1:  # the chain's conditionals stay positive: the exact oracle applies
        check_upper_exact_searched(model, tau)
        assert ub.certified  # far above the scores, the weight bound proves fast mixing
