"""ALBERT (``AlbertForMaskedLM``): shared layers and a head whose LayerNorm is over the
embedding size (below the hidden size), with the float64 head and its weight bound.

Oracles: exact enumeration (ExactChain) for upper >= exact >= searched on drawn tiny ALBERT
models (30 in CI, a twentieth of ``GLAUBER_ADVERSARIAL_EXAMPLES`` in the large profile); the
agreement of every head with plain transformers runs in test_hf_masked_lm.py on ALBERT too.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

from glauber.mlm_backend.heads import checked_head_parts
from glauber.testing import masked_lms

from .test_float64_head import check_upper_exact_searched

LARGE = "GLAUBER_ADVERSARIAL_EXAMPLES" in os.environ
DRAWN = int(os.environ.get("GLAUBER_ADVERSARIAL_EXAMPLES", "0")) // 20 if LARGE else 30

pytestmark = pytest.mark.usefixtures("single_thread")


def test_the_head_is_read_at_the_embedding_size(tiny_models):
    model, _ = tiny_models["albert"]
    parts = checked_head_parts(model)
    assert model.config.embedding_size < model.config.hidden_size
    assert tuple(parts.norm.normalized_shape) == (model.config.embedding_size,)
    assert parts.decoder.in_features == model.config.embedding_size
    assert parts.decoder.bias is model.predictions.bias  # ALBERT ties the decoder's bias
    assert parts.decoder.weight is model.albert.embeddings.word_embeddings.weight


@settings(max_examples=DRAWN, deadline=None, database=None, derandomize=not LARGE,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(masked_lms(archs=("albert",)))
def test_random_albert_models_upper_exact_searched(model):
    assert model.spec.arch == "albert"
    check_upper_exact_searched(model, 0.8)
