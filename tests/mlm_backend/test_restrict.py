"""`restrict` on AntiBERTy: chosen sites of a full shipped chain, the rest frozen.

Oracles: the BERT tokenizer's own ``[CLS] ... [MASK] ... [SEP]`` encoding of the whole
sequence and the full ``BertForMaskedLM`` forward (all logits, then the masked position), and a
transition matrix built by hand from those logits with plain numpy (the kernel of
docs/theory.md, "Notation": ``P(x, y) = (1/k) sum_s 1{x_{-s} = y_{-s}} p_tau(y_s | x_{-s})``).
A few forwards only (20 and 40 rows of 122 tokens).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from glauber.core import restrict
from glauber.errors import InvalidParameterError, SequenceLengthError, VocabularyError
from glauber.exact import ExactChain
from glauber.mlm_backend import HFMaskedLM, load_antiberty
from glauber.mlm_backend.sequences import AMINO_ACIDS, TRASTUZUMAB_VH

pytestmark = [pytest.mark.mlm, pytest.mark.usefixtures("single_thread")]

#: 0-based sites of trastuzumab VH: both ends, a framework residue and CDR3 ("SRWGGDGFYAMDY"
#: starts at 96).
SITES = [0, 57, 99, 100, 119]


@pytest.fixture(scope="module")
def antiberty() -> HFMaskedLM:
    return load_antiberty()


@pytest.fixture(scope="module")
def context(antiberty) -> np.ndarray:
    return antiberty.encode(TRASTUZUMAB_VH).numpy()


@torch.inference_mode()
def reference_logits(mlm: HFMaskedLM, sequences: list[str], sites: list[int]) -> np.ndarray:
    """``[B, 20]`` logits of the amino acids at ``sites[b]`` of ``sequences[b]`` (masked): the
    tokenizer's framing and the full model's logits at every position."""
    tok = mlm.tokenizer
    rows = [["[CLS]", *seq[:i], "[MASK]", *seq[i + 1:], "[SEP]"]
            for seq, i in zip(sequences, sites)]
    ids = torch.tensor([tok.convert_tokens_to_ids(r) for r in rows])
    logits = mlm.model(input_ids=ids).logits
    aa = torch.tensor(tok.convert_tokens_to_ids(list(AMINO_ACIDS)))
    return logits[torch.arange(len(rows)), torch.tensor(sites) + 1][:, aa].double().numpy()


def full_sequence(window_state: np.ndarray, sites: list[int]) -> str:
    seq = list(TRASTUZUMAB_VH)
    for s, a in zip(sites, window_state):
        seq[s] = AMINO_ACIDS[a]
    return "".join(seq)


def test_restricted_scores_are_the_full_models_logits_at_those_positions(antiberty, context):
    window = restrict(antiberty, context, SITES)
    rng = np.random.default_rng(0)
    states = np.vstack([context[SITES][None], rng.integers(0, 20, size=(3, len(SITES)))])
    rows = np.repeat(states, len(SITES), axis=0)
    at = np.tile(np.arange(len(SITES)), len(states))
    got = window.scores(rows, at).double().numpy()
    want = reference_logits(antiberty, [full_sequence(w, SITES) for w in rows],
                            [SITES[s] for s in at])
    assert np.abs(got - want).max() < 1e-4  # float32 logits of two head paths
    log_p = torch.log_softmax(torch.from_numpy(got), 1)
    assert (log_p - torch.log_softmax(torch.from_numpy(want), 1)).abs().max() < 1e-4


def test_exact_window_transition_matrix_against_a_hand_built_one(antiberty, context):
    sites = [99, 100]
    chain = ExactChain(restrict(antiberty, context, sites), 1.0, cache=False)
    # 40 masked sequences: site s masked, the other window site at every amino acid b
    queries = [(s, b) for s in range(2) for b in range(20)]
    seqs = [full_sequence([0, b] if s == 0 else [b, 0], sites) for s, b in queries]
    logits = reference_logits(antiberty, seqs, [sites[s] for s, _ in queries]).reshape(2, 20, 20)
    for tau in (1.0, 0.5, 4.0):  # one score table serves every temperature
        P = chain.at(tau).dense_transition_matrix()
        assert np.abs(P - hand_built(logits, tau)).max() < 1e-5
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def hand_built(logits: np.ndarray, tau: float) -> np.ndarray:
    """``P`` of the 2-site window from ``logits[s, b, c]`` (site ``s`` masked, the other window
    site at ``b``, token ``c``), by loops over the 400 states."""
    p = np.exp(logits / tau - (logits / tau).max(axis=2, keepdims=True))
    p /= p.sum(axis=2, keepdims=True)  # p[s, b, c] = p_tau(c at s | other site = b)
    ref = np.zeros((400, 400))
    for a0 in range(20):
        for a1 in range(20):
            x = 20 * a0 + a1  # site 0 most significant
            for c in range(20):
                ref[x, 20 * c + a1] += 0.5 * p[0, a1, c]
                ref[x, 20 * a0 + c] += 0.5 * p[1, a0, c]
    return ref


def test_bad_windows_of_a_real_model_are_refused_before_any_forward(antiberty, context,
                                                                    monkeypatch):
    def no_forward(*args, **kwargs):
        raise AssertionError("the model was asked before the input was checked")

    monkeypatch.setattr(antiberty, "scores", no_forward)
    monkeypatch.setattr(antiberty, "_vocab_scores", no_forward)
    # [CLS] and [SEP] frame the state and are no positions of it: "site 120" is out of range
    with pytest.raises(InvalidParameterError, match=r"0\.\.119.*\[SEP\]"):
        restrict(antiberty, context, [118, 119, 120])
    with pytest.raises(InvalidParameterError, match="outside"):
        restrict(antiberty, context, [-1, 0])
    with pytest.raises(VocabularyError, match="encode"):  # raw token ids, not indices
        restrict(antiberty, np.asarray(antiberty.vocab)[context], [99])
    with pytest.raises(SequenceLengthError, match="at most 510"):
        restrict(antiberty, np.zeros(511, dtype=int), [99])
    with pytest.raises(SequenceLengthError, match=r"with_length\(120\)"):
        restrict(antiberty.with_length(20), context, [3])
    with pytest.raises(SequenceLengthError):
        restrict(antiberty, TRASTUZUMAB_VH, [3])  # text: encode it first


def test_score_table_keys_differ_by_precision(tiny_models, tokenizers):
    bert, tok = tiny_models["bert"]
    ctx, sites = np.arange(8) % 20, [2, 3]

    def key(**kw) -> str:
        mlm = HFMaskedLM(copy.deepcopy(bert), tok, allowed_tokens=list(AMINO_ACIDS), **kw)
        return restrict(mlm, ctx, sites).cache_key

    keys = [key(), key(dtype="bfloat16"), key(autocast="bfloat16")]
    assert len(set(keys)) == 3 and key() == keys[0]
