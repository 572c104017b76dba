"""Tests of the parameter checks in glauber.core.validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from glauber.core.validation import (
    check_eps,
    check_finite_float,
    check_nonnegative_float,
    check_nonnegative_int,
    check_positive_float,
    check_positive_int,
    check_square_matrix,
    check_tau,
    check_vocab_size,
)
from glauber.errors import (
    GlauberInputError,
    InvalidParameterError,
    InvalidProbabilityError,
    InvalidTemperatureError,
    VocabularyError,
)


def test_accepts_and_converts() -> None:
    assert check_tau(2) == 2.0
    assert check_eps(np.float64(0.25)) == 0.25
    assert check_positive_int(np.int64(3), "n") == 3
    assert check_nonnegative_int(0, "t") == 0
    assert check_positive_float(1e-9, "x") == 1e-9
    assert check_nonnegative_float(0, "x") == 0.0
    assert check_finite_float(-3, "x") == -3.0
    assert check_vocab_size(2) == 2
    arr = check_square_matrix([[1, 2], [3, 4]], "C")
    assert arr.dtype == np.float64 and arr.shape == (2, 2)
    assert check_square_matrix([[-1.0]], "J", nonnegative=False)[0, 0] == -1.0


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: check_tau(0.0), InvalidTemperatureError),
        (lambda: check_eps(1.0), InvalidProbabilityError),
        (lambda: check_nonnegative_int(-1, "t"), InvalidParameterError),
        (lambda: check_nonnegative_int(1.5, "t"), InvalidParameterError),
        (lambda: check_nonnegative_int(True, "t"), InvalidParameterError),
        (lambda: check_nonnegative_float(-0.1, "x"), InvalidParameterError),
        (lambda: check_nonnegative_float(math.inf, "x"), InvalidParameterError),
        (lambda: check_finite_float(math.nan, "x"), InvalidParameterError),
        (lambda: check_finite_float("1", "x"), InvalidParameterError),
        (lambda: check_vocab_size(1), VocabularyError),
        (lambda: check_vocab_size(2.0), VocabularyError),
        (lambda: check_square_matrix(np.ones((2, 3)), "C"), InvalidParameterError),
        (lambda: check_square_matrix(np.ones((0, 0)), "C"), InvalidParameterError),
        (lambda: check_square_matrix([[0.0, -1.0], [0.0, 0.0]], "C"), InvalidParameterError),
        (lambda: check_square_matrix([[math.inf]], "C"), InvalidParameterError),
        (lambda: check_square_matrix([["a"]], "C"), InvalidParameterError),
    ],
)
def test_rejects_with_typed_input_errors(call, error) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, GlauberInputError) and isinstance(info.value, ValueError)
