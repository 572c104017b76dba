"""The same estimators on a real torch backend: the autoregressive control (a joint law)."""

from __future__ import annotations

import numpy as np
import pytest

from glauber.estimators import (
    arnold_press_statistic,
    coupling_time,
    glauber_chains,
    rectangle_test,
)


@pytest.mark.mlm
def test_autoregressive_control_is_compatible_and_runs_on_torch():
    # A causal LM defines a joint law, so every rectangle delta telescopes to 0 (paper §4, GPT-2
    # control): only float32 rounding remains.
    autoregressive = pytest.importorskip("glauber.mlm_backend.autoregressive")
    model = autoregressive.tiny_gpt2_control(vocab_size=6, n=5, seed=0)
    xs = np.random.default_rng(0).integers(6, size=(10, 5))
    res = rectangle_test(model, xs, n_rectangles=40, k=3, seed=0)
    assert res.precision == "float32" and res.compatible_within_bound
    assert arnold_press_statistic(model, xs[0], 1, 3, K=4).statistic < 1e-4
    chains = glauber_chains(model, 1.0, xs, n_steps=4, seed=0, frozen=[0])
    assert chains.final_states.shape == (10, 5) and (chains.final_states[:, 0] == xs[:, 0]).all()
    coupled = coupling_time(model, 2.0, xs[:3], xs[3:6], budget=3, seed=0)
    assert coupled.times.shape == (3,)
