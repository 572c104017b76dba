"""AntiBERTy's rectangle test under its own rounding: float32 is flagged, bfloat16 is widened.

Oracle: the same rectangles evaluated in float32 and in bfloat16 (same weights, same seed); the
shift of ``delta`` between them is rounding of the bfloat16 forward pass, which the bfloat16
per-rectangle bound must cover. AntiBERTy is incompatible (paper §4: MLMs give mean |delta| of
order 1), so float32 must still refute compatibility.
"""

from __future__ import annotations

import numpy as np
import pytest

from glauber.estimators import rectangle_test
from glauber.mlm_backend import load_antiberty
from glauber.mlm_backend.sequences import TRASTUZUMAB_VH

pytestmark = [pytest.mark.mlm, pytest.mark.usefixtures("single_thread")]


@pytest.fixture(scope="module")
def contexts() -> np.ndarray:
    model = load_antiberty(n=20)
    return np.stack([model.encode(TRASTUZUMAB_VH[k:k + 20]) for k in (0, 20, 40)])


def test_float32_antiberty_is_flagged_and_bfloat16_bounds_cover_its_shift(contexts):
    r32 = rectangle_test(load_antiberty(n=20), contexts, 1.0, 100, seed=0)
    r16 = rectangle_test(load_antiberty(n=20, dtype="bfloat16"), contexts, 1.0, 100, seed=0)
    assert r32.precision == "float32" and r16.precision == "bfloat16"  # scores are float32
    # incompatibility found in float32: mean |delta| of order 1 against bounds of order 1e-3
    assert r32.mean_abs_delta > 0.3 and r32.n_above_bound > 90
    assert r32.max_error_bound < 1e-2
    # the same rectangles: bfloat16 moves delta by up to a few tenths; its bound covers that
    for name in ("state_index", "site_i", "site_j", "a", "b"):
        np.testing.assert_array_equal(getattr(r32.rectangles, name),
                                      getattr(r16.rectangles, name))
    same = (r32.rectangles.a_prime == r16.rectangles.a_prime) & (
        r32.rectangles.b_prime == r16.rectangles.b_prime)
    shift = np.abs(r16.rectangles.delta - r32.rectangles.delta)[same]
    assert same.sum() > 50 and shift.max() > 0.01  # bfloat16 rounding is really there
    assert (shift <= r16.rectangles.error_bound[same]).all()
