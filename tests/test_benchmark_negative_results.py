"""benchmarks/negative_results.py: its pure-math bounds against sampled values on tiny layers."""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import negative_results as nr  # noqa: E402


def ln_outputs(rng, count, d, gamma, beta, spread=1.0):
    """LayerNorm outputs of random vectors, some nearly constant (a small variance)."""
    x = rng.standard_normal((count, d)) * spread
    x[: count // 4] = 3.0 + 1e-4 * x[: count // 4]
    return nr.layer_norm(x, gamma, beta, 1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_attention_logit_bound_holds_and_is_attained(seed):
    rng = np.random.default_rng(seed)
    d, dh = 8, 4
    Wq, Wk = rng.standard_normal((dh, d)), rng.standard_normal((dh, d))
    bq, bk = rng.standard_normal(dh), rng.standard_normal(dh)
    g, b = 1 + 0.5 * rng.standard_normal(d), 0.5 * rng.standard_normal(d)
    bound, attained = nr.attention_logit_bound(Wq, bq, Wk, bk, g, b)
    u, v = ln_outputs(rng, 4000, d, g, b), ln_outputs(rng, 4000, d, g, b)
    sampled = np.abs(((u @ Wq.T + bq) * (v @ Wk.T + bk)).sum(1)) / math.sqrt(dh)
    assert sampled.max() <= bound
    assert attained <= bound * (1 + 1e-12)
    assert attained >= sampled.max()  # the top singular pair beats random LayerNorm outputs
    # without the bias terms the bilinear part is attained exactly: bound == attained
    z = np.zeros(dh)
    bb, aa = nr.attention_logit_bound(Wq, z, Wk, z, g, np.zeros(d))
    assert aa == pytest.approx(bb, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_linear_range_over_ln_is_the_exact_hull(seed):
    rng = np.random.default_rng(seed)
    d, m = 6, 5
    W, c0 = rng.standard_normal((m, d)), rng.standard_normal(m)
    g, b = 1 + 0.3 * rng.standard_normal(d), 0.3 * rng.standard_normal(d)
    c, r = nr.linear_range_over_ln(W, c0, g, b)
    y = ln_outputs(rng, 20000, d, g, b) @ W.T + c0
    assert np.all(y <= c + r + 1e-9) and np.all(y >= c - r - 1e-9)
    assert np.all(y.max(0) > c + 0.8 * r)  # nearly reached by sampling in 6 dimensions


@pytest.mark.parametrize("seed", range(3))
def test_deeper_box_bound_holds_over_sampled_encoder_outputs(seed):
    rng = np.random.default_rng(seed)
    d, q = 8, 4
    W_t, b_t = rng.standard_normal((d, d)), rng.standard_normal(d)
    g, b = 1 + 0.3 * rng.standard_normal(d), 0.3 * rng.standard_normal(d)
    w = nr.centred_rows(rng.standard_normal((q, d)))
    H = {"W_t": W_t, "b_t": b_t, "w": w, "k": rng.standard_normal(q), "eps": 1e-12}
    deeper = nr.deeper_box_bound(W_t, b_t, g, b, w)
    s = nr.head_scores_np(ln_outputs(rng, 20000, d, g, b, spread=3.0), H)
    sampled = max((s[:, a] - s[:, c]).max() - (s[:, a] - s[:, c]).min()
                  for a, c in itertools.combinations(range(q), 2))
    assert sampled <= deeper.bound <= deeper.head_bound * (1 + 1e-12)


def test_gelu_interval_contains_every_value():
    rng = np.random.default_rng(0)
    lo = rng.uniform(-4, 2, 500)
    hi = lo + rng.uniform(0, 3, 500)
    gl, gh = nr.gelu_interval(lo, hi)
    t = rng.uniform(size=(200, 1))
    vals = nr.gelu(lo + t * (hi - lo))
    assert np.all(vals >= gl - 1e-12) and np.all(vals <= gh + 1e-12)
    assert nr.GELU_MIN <= nr.gelu(np.linspace(-3, 1, 200001)).min() <= nr.GELU_MIN + 1e-10


def test_interval_layer_contains_exact_forwards():
    # IBP on a tiny random layer with one free position: every exact forward stays inside
    rng = np.random.default_rng(5)
    T, d, free = 5, 8, 2
    p = nr.random_layer_params(d, 2, 16, rng)
    g, b = 1 + 0.2 * rng.standard_normal(d), 0.1 * rng.standard_normal(d)
    x = nr.layer_norm(rng.standard_normal((T, d)), g, b, 1e-12)
    alts = nr.layer_norm(x[free] + 0.3 * rng.standard_normal((30, d)), g, b, 1e-12)
    lo, hi = x.copy(), x.copy()
    lo[free], hi[free] = alts.min(0), alts.max(0)
    out = nr.interval_layer(lo, hi, p)
    for a in alts:
        xx = x.copy()
        xx[free] = a
        y = nr.layer_forward(xx, p)
        assert np.all(y >= out["lo"] - 1e-9) and np.all(y <= out["hi"] + 1e-9)


def test_variance_range_brackets_sampled_variances():
    rng = np.random.default_rng(1)
    lo = rng.standard_normal((3, 7))
    hi = lo + rng.uniform(0, 2, (3, 7))
    v_lo, v_hi = nr.variance_range(lo, hi)
    x = lo[:, None] + rng.uniform(size=(3, 5000, 7)) * (hi - lo)[:, None]
    v = x.var(axis=-1)
    assert np.all(v >= v_lo - 1e-9) and np.all(v <= v_hi + 1e-9)
