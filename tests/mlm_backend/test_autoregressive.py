"""The autoregressive control: joint log-probabilities, compatible conditionals, delta 0.

Oracles: a slow reference that scores one sequence at a time with the raw GPT-2 forward pass and
float64 arithmetic; exact enumeration of the joint on V^n (q**n <= 64) whose conditionals must
equal the control's; and the tiny random masked LM as the negative control for delta.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.core.conditionals import log_conditionals
from glauber.core.protocol import ConditionalModel
from glauber.errors import (
    InvalidParameterError,
    SequenceLengthError,
    UnknownModelError,
    VocabularyError,
)
from glauber.mlm_backend import CausalLMControl, HFMaskedLM, tiny_gpt2_control

pytestmark = pytest.mark.usefixtures("single_thread")


def _slow_log_joint(control: CausalLMControl, x: list[int]) -> float:
    """log p(x) = sum_t log p(x_t | BOS, x_<t), one sequence, float64 (reference)."""
    ids = [control.bos_token_id] + [control.vocab[k] for k in x]
    with torch.no_grad():
        logits = control.model(input_ids=torch.tensor([ids[:-1]])).logits[0].double()
    logp = torch.log_softmax(logits, dim=-1)
    return float(sum(logp[t, ids[t + 1]] for t in range(len(x))))


def test_scores_are_joint_log_probabilities_of_the_candidates():
    control = tiny_gpt2_control(vocab_size=6, n=5, seed=3)
    assert isinstance(control, ConditionalModel)
    g = torch.Generator().manual_seed(0)
    states = torch.randint(0, 6, (4, 5), generator=g)
    sites = torch.tensor([0, 2, 4, 1])
    scores = control.scores(states, sites)
    assert scores.dtype == torch.float32 and scores.shape == (4, 6)
    for row in range(4):
        for a in range(6):
            x = states[row].tolist()
            x[int(sites[row])] = a
            assert abs(float(scores[row, a]) - _slow_log_joint(control, x)) < 1e-4
    torch.testing.assert_close(
        control.log_joint(states),
        torch.tensor([_slow_log_joint(control, x) for x in states.tolist()], dtype=torch.float32),
        atol=1e-4, rtol=0,
    )


def test_conditionals_equal_those_of_the_enumerated_joint():
    # q**n = 4**3 = 64 states: p(x) from log_joint, renormalised on V^n; its exact conditionals
    # p(x_i = a | x_{-i}) must be the control's log_conditionals at tau = 1 and tau = 0.7.
    q, n = 4, 3
    control = tiny_gpt2_control(vocab_size=q, n=n, seed=1)
    space = torch.tensor(list(itertools.product(range(q), repeat=n)))
    logp = control.log_joint(space).double()
    joint = torch.exp(logp - torch.logsumexp(logp, 0)).reshape((q,) * n)
    assert joint.max() / joint.min() > 5  # far from uniform: the comparison is not trivial
    for tau in (1.0, 0.7):
        sites = torch.arange(n).repeat_interleave(q**n)
        lc = log_conditionals(control, space.repeat(n, 1), sites, tau)
        for site in range(n):
            block = lc[site * q**n:(site + 1) * q**n].double()
            tempered = joint ** (1 / tau)
            cond = tempered / tempered.sum(dim=site, keepdim=True)
            expected = torch.movedim(cond, site, -1)  # [.., a] with a last
            for idx, x in enumerate(space.tolist()):
                ctx = tuple(v for k, v in enumerate(x) if k != site)
                torch.testing.assert_close(block[idx].exp(), expected[ctx], atol=1e-5, rtol=0)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6), q=st.integers(2, 8), n=st.integers(2, 9))
def test_rectangle_delta_is_zero(seed, q, n, rectangle):
    control = tiny_gpt2_control(vocab_size=q, n=n, seed=seed)
    deltas = rectangle["deltas"](control, *rectangle["random"](n, q, 40, seed))
    assert deltas.abs().max() < 1e-4


def test_masked_lm_negative_control_has_nonzero_delta(tiny_models, rectangle):
    # The same rectangle computation on a random masked LM is far from 0: the test can fail.
    model, tok = tiny_models["bert"]
    mlm = HFMaskedLM(model, tok, n=8, split_chars=True)
    deltas = rectangle["deltas"](mlm, *rectangle["random"](8, 20, 40, seed=4))
    assert deltas.abs().mean() > 0.05


def test_seed_fixes_weights_and_leaves_global_rng_alone():
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    a = tiny_gpt2_control(vocab_size=5, n=4, seed=7)
    after = torch.rand(3)
    assert torch.equal(before, after)
    b = tiny_gpt2_control(vocab_size=5, n=4, seed=7)
    c = tiny_gpt2_control(vocab_size=5, n=4, seed=8)
    x = torch.zeros((1, 4), dtype=torch.long)
    assert torch.equal(a.scores(x, [1]), b.scores(x, [1]))
    assert not torch.allclose(a.scores(x, [1]), c.scores(x, [1]))


def test_sub_batching_and_labels():
    kw = dict(vocab_size=5, n=6, seed=2, labels=list("ACDEF"), split_chars=True)
    control, small = tiny_gpt2_control(**kw), tiny_gpt2_control(**kw, max_batch_tokens=6)
    x = control.encode("ACDEFA")[None].repeat(3, 1)
    torch.testing.assert_close(small.scores(x, [0, 3, 5]), control.scores(x, [0, 3, 5]))
    assert control.decode(x[0]) == "ACDEFA"
    words = tiny_gpt2_control(vocab_size=3, n=3, labels=["ab", "c", "d"])
    assert words.decode(words.encode("ab d c")) == "ab d c"  # no tokenizer: whitespace-split
    assert control.labels == tuple("ACDEF") and control.vocab == tuple(range(5))
    assert control.with_length(4).n == 4 and control.n == 6


def test_errors(tmp_path):
    control = tiny_gpt2_control(vocab_size=5, n=6)
    with pytest.raises(SequenceLengthError):
        control.with_length(7)  # the tiny model has exactly n positions
    with pytest.raises(SequenceLengthError):
        control.scores(torch.zeros((2, 5), dtype=torch.long), [0, 0])
    with pytest.raises(VocabularyError):
        control.scores(torch.full((1, 6), 5), [0])
    with pytest.raises(VocabularyError):
        control.scores(torch.zeros((1, 6), dtype=torch.long), [6])
    with pytest.raises(VocabularyError, match="BOS"):
        CausalLMControl(control.model, 6, allowed_tokens=[0, 5])
    with pytest.raises(InvalidParameterError, match="bos_token_id"):
        cfg_model = control.model
        bos = cfg_model.config.bos_token_id
        cfg_model.config.bos_token_id = None
        try:
            CausalLMControl(cfg_model, 6)
        finally:
            cfg_model.config.bos_token_id = bos
    with pytest.raises(InvalidParameterError):
        tiny_gpt2_control(vocab_size=1, n=3)
    with pytest.raises(UnknownModelError):
        CausalLMControl(tmp_path, 4)  # an empty directory: no checkpoint
