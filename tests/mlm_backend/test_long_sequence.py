"""A 1,000-token sequence on a tiny BERT (1,024 positions): every batched path sub-batches its
forwards (``max_batch_rows``) and gives the scores of the unbatched path.

Oracles: the row count of every forward (a hook on the word embeddings) never exceeds the
limit; the pseudo-log-likelihood, the MH energy and ``scores`` of 1,000 masked rows equal those
of one forward of all rows (``max_batch_tokens`` = every token, ``max_batch_rows`` off), and the
PLL equals the sum of 1,000 direct log-softmaxes of the unbatched scores.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from glauber.errors import InvalidParameterError
from glauber.estimators import glauber_chains, pseudo_log_likelihood
from glauber.mlm_backend import HFMaskedLM

pytestmark = pytest.mark.usefixtures("single_thread")

N = 1000
ROWS = 48


@pytest.fixture(scope="module")
def long_bert(tokenizers):
    import transformers as tf

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(7)
        model = tf.BertForMaskedLM(tf.BertConfig(
            vocab_size=25, hidden_size=16, num_hidden_layers=1, num_attention_heads=1,
            intermediate_size=32, max_position_embeddings=1024, initializer_range=0.5)).eval()
    return model, tokenizers["bert"]


def forward_rows(mlm: HFMaskedLM) -> list[int]:
    """Rows of every forward pass from now on (appended by a hook)."""
    rows: list[int] = []
    mlm.model.bert.embeddings.word_embeddings.register_forward_hook(
        lambda module, args, out: rows.append(int(args[0].shape[0])))
    return rows


def test_a_1000_token_sequence_is_sub_batched_and_scores_as_unbatched(long_bert):
    model, tokenizer = long_bert
    sub = HFMaskedLM(model, tokenizer, n=N, max_batch_rows=ROWS)
    whole = HFMaskedLM(model, tokenizer, n=N, max_batch_tokens=N * (N + 2))
    assert sub.max_sites >= N and sub.rows_per_forward() == ROWS
    assert whole.rows_per_forward() == N
    x = torch.as_tensor(np.random.default_rng(0).integers(0, sub.q, size=(1, N)))
    rows = forward_rows(sub)
    pll_sub = pseudo_log_likelihood(sub, x, batch_size=N)
    assert rows and max(rows) <= ROWS and sum(rows) in (N, N + 1)  # (+ a one-row probe)
    whole_rows = forward_rows(whole)
    sites = torch.arange(N)
    s = whole.scores(x.expand(N, N), sites).double()
    assert whole_rows == [N]  # the unbatched path: one forward of every row
    del whole_rows[:]
    pll_whole = pseudo_log_likelihood(whole, x, batch_size=N)
    direct = torch.log_softmax(s, dim=1)[sites, x[0]].sum().item()
    assert pll_sub[0] == pytest.approx(pll_whole[0], rel=1e-9, abs=1e-9)
    assert pll_sub[0] == pytest.approx(direct, rel=1e-9, abs=1e-9)
    del rows[:]
    s_sub = sub.scores(x.expand(N, N), sites).double()
    assert max(rows) <= ROWS and len(rows) == -(-N // ROWS)
    assert torch.allclose(s_sub, s, rtol=0, atol=1e-5)


def test_the_sampler_and_mh_energy_on_1000_tokens_stay_within_the_row_limit(long_bert):
    model, tokenizer = long_bert
    sub = HFMaskedLM(model, tokenizer, n=N, max_batch_rows=ROWS)
    x0 = np.random.default_rng(1).integers(0, sub.q, size=(2, N))
    rows = forward_rows(sub)
    run = glauber_chains(sub, 1.0, x0, 1, seed=0, kernel="mh:pll", batch_size=4096)
    assert max(rows) <= ROWS and sum(rows) >= 2 * N  # E(x): 2 N rows, E(y): 2 (N - 1)
    expected = -pseudo_log_likelihood(
        HFMaskedLM(model, tokenizer, n=N, max_batch_tokens=N * (N + 2)), run.final_states,
        batch_size=N)
    assert np.allclose(run.final_energy, expected, rtol=1e-6)


def test_max_batch_rows_is_checked(long_bert):
    model, tokenizer = long_bert
    with pytest.raises(InvalidParameterError, match="max_batch_rows"):
        HFMaskedLM(model, tokenizer, n=4, max_batch_rows=0)
    with pytest.raises(InvalidParameterError, match="with_length"):
        HFMaskedLM(model, tokenizer).rows_per_forward()
