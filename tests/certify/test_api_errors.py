"""Bad input to the Python API raises typed errors that say what to change (issue 13, item 7).

Oracle: the error types of :mod:`glauber.errors` and the words of their messages; each model
is tiny, so every check runs in milliseconds.
"""

from __future__ import annotations

import numpy as np
import pytest

from glauber.certify import certify
from glauber.errors import (
    GlauberInputError,
    InvalidModelError,
    InvalidParameterError,
    NonFiniteScoresError,
    NonRealScoresError,
)
from glauber.toy_models.base import FunctionModel


@pytest.mark.parametrize("model, needle", [
    ("ising-cycle:n=6", "resolve_model('ising-cycle:n=6')"),
    (None, "ConditionalModel"),
    (42, "ConditionalModel"),
])
def test_certify_needs_a_model_object(model, needle):
    with pytest.raises(InvalidModelError) as info:
        certify(model, 1.0)
    assert needle in str(info.value)
    assert isinstance(info.value, TypeError) and isinstance(info.value, GlauberInputError)


def test_score_fn_must_be_callable():
    with pytest.raises(InvalidParameterError, match="score_fn"):
        FunctionModel(3, 2, None)


@pytest.mark.parametrize("score_fn", [
    lambda x, i: np.full((len(x), 2), "a"),
    lambda x, i: None,
    lambda x, i: np.full((len(x), 2), 1j),
])
def test_non_real_scores_are_refused_at_the_first_query(score_fn):
    with pytest.raises(NonRealScoresError, match="real numbers"):
        certify(FunctionModel(3, 2, score_fn), 1.0, n_rectangles=2, budget=2)


def test_huge_scores_are_refused_with_what_to_change():
    def score_fn(x, i):  # +-1e308: a difference of two scores overflows float64
        return np.where(x[:, [(i + 1) % 3] * 2] == np.arange(2), 1e308, -1e308)

    with pytest.raises(NonFiniteScoresError, match="scale the scores down"):
        certify(FunctionModel(3, 2, score_fn), 1.0, n_rectangles=2, budget=2)
