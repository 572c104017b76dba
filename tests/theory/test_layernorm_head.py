"""The LayerNorm -> linear head's enclosure (glauber.theory.layernorm_head).

Oracles: an independent numpy implementation of the float64 head algorithm the enclosure is
about (steps 1-5 of the module docstring) evaluated on adversarial hidden vectors (nearly
constant, huge, tiny, the extremal direction); mpmath at 50 digits for the exact logits; the
closed form of a two-token, two-dimensional head; and the supremum over head inputs, which the
bound attains in the limit (so the bound cannot be lowered without knowing the inputs).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError
from glauber.theory.layernorm_head import layernorm_head_enclosure

MP = mpmath.mp.clone()
MP.dps = 50


def _head(x: np.ndarray, w: np.ndarray, k: np.ndarray, eps: float) -> np.ndarray:
    """The float64 head of the module docstring on hidden vectors ``x [B, d]`` (float32 out)."""
    d = x.shape[1]
    a = x - x.sum(axis=1, keepdims=True) / d
    v = (a * a).sum(axis=1, keepdims=True) / d
    z = a * (1.0 / np.sqrt(v + eps))
    return (z @ w.T + k).astype(np.float32).astype(np.float64)


def _hidden(rng: np.random.Generator, d: int, kind: str, w: np.ndarray) -> np.ndarray:
    """Adversarial hidden vectors of one kind, ``[16, d]``, all float32 values."""
    if kind == "normal":
        x = rng.standard_normal((16, d)) * 10.0 ** rng.uniform(-3, 3, (16, 1))
    elif kind == "constant":  # variance far below eps: the normalised vector is tiny
        x = np.full((16, d), 3.0) + rng.standard_normal((16, d)) * 1e-9
    elif kind == "huge":
        x = rng.standard_normal((16, d)) * 1e30 + 1e31
    else:  # along the worst direction, scaled up: the enclosure is nearly attained
        a, b = 0, 1
        direction = w[a] - w[b]
        sign = np.where(np.arange(16) % 2 == 0, 1.0, -1.0)[:, None]
        x = sign * direction[None, :] * 10.0 ** rng.uniform(0, 6, (16, 1))
    return x.astype(np.float32).astype(np.float64)


def _check(w, k, eps, x):
    enc = layernorm_head_enclosure(w, k, eps)
    s = _head(x, w, k, eps)
    diff = s[:, :, None] - s[:, None, :]  # [B, a, b]
    centre = k[:, None] - k[None, :]
    assert np.all(np.abs(diff - centre) <= enc.radius + 1e-300), (
        float((np.abs(diff - centre) - enc.radius).max()))
    # the oscillation between any two contexts is within the bound
    osc = (diff[:, None] - diff[None, :]).max()
    assert osc <= enc.oscillation
    return enc, s


@pytest.mark.parametrize("kind", ["normal", "constant", "huge", "extremal"])
@pytest.mark.parametrize("eps", [1e-12, 1e-5, 1e-2])
def test_enclosure_holds_on_adversarial_hidden_vectors(kind, eps):
    rng = np.random.default_rng(hash((kind, eps)) % 2**32)
    q, d = 6, 32
    W = rng.standard_normal((q, d)) * 3.0
    w = W - W.mean(axis=1, keepdims=True)
    k = rng.standard_normal(q)
    _check(w, k, eps, _hidden(rng, d, kind, w))


@settings(max_examples=60, deadline=None, database=None)
@given(st.integers(2, 6), st.integers(1, 40), st.floats(-3, 3), st.floats(-12, -1),
       st.integers(0, 2**16), st.sampled_from(["normal", "constant", "huge", "extremal"]))
def test_enclosure_holds_for_random_heads(q, d, log_scale, log_eps, seed, kind):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((q, d)) * 10.0**log_scale
    k = rng.standard_normal(q) * 10.0**log_scale
    _check(w, k, 10.0**log_eps, _hidden(rng, d, kind, w))


def test_two_token_head_closed_form_and_the_bound_is_the_supremum_over_inputs():
    # w_0 - w_1 = (1, -1), d = 2: the normalised vector of x = t (1, -1) is sqrt(2) (1, -1) /
    # sqrt(2 + 2 eps / t^2) -> (1, -1), so s_0 - s_1 -> +-2 and the oscillation -> 4 =
    # 2 sqrt(d) ||w_0 - w_1||: the bound, up to rounding, cannot be lowered from the head alone.
    w = np.array([[0.5, -0.5], [-0.5, 0.5]])
    k = np.zeros(2)
    enc = layernorm_head_enclosure(w, k, 1e-5)
    assert 4.0 <= enc.oscillation <= 4.0 * (1 + 1e-6)
    x = np.array([[1e4, -1e4], [-1e4, 1e4]])
    s = _head(x, w, k, 1e-5)
    reached = (s[0, 0] - s[0, 1]) - (s[1, 0] - s[1, 1])
    assert reached > 4.0 * (1 - 1e-6)  # the supremum over head inputs is the bound


def test_enclosure_against_fifty_digit_logits():
    # The computed scores (float64 head, float32 out) against the exact LayerNorm of the same
    # hidden vector in mpmath: the rounding terms of the radius cover the difference.
    rng = np.random.default_rng(5)
    q, d, eps = 4, 24, 1e-12
    w = rng.standard_normal((q, d))
    k = rng.standard_normal(q)
    enc = layernorm_head_enclosure(w, k, eps)
    for x in _hidden(rng, d, "normal", w)[:4]:
        with MP.workprec(200):
            xs = [MP.mpf(float(v)) for v in x]
            m = MP.fsum(xs) / d
            a = [v - m for v in xs]
            z = [v / MP.sqrt(MP.fsum(u * u for u in a) / d + MP.mpf(eps)) for v in a]
            exact = [MP.fsum(MP.mpf(float(w[t, j])) * z[j] for j in range(d)) + float(k[t])
                     for t in range(q)]
        s = _head(x[None], w, k, eps)[0]
        for t in range(q):
            assert abs(float(exact[t]) - s[t]) <= enc.rounding  # E_a + E_b >= one error
        assert math.sqrt(sum(float(v) ** 2 for v in z)) <= enc.norm_radius


def test_large_vocabularies_use_the_centre_bound_and_stay_bounds():
    from glauber.theory import layernorm_head

    rng = np.random.default_rng(1)
    w = rng.standard_normal((12, 8))
    k = np.zeros(12)
    pairwise = layernorm_head_enclosure(w, k, 1e-5)
    old = layernorm_head.PAIRWISE_MAX_TOKENS
    try:
        layernorm_head.PAIRWISE_MAX_TOKENS = 4
        centred = layernorm_head_enclosure(w, k, 1e-5)
    finally:
        layernorm_head.PAIRWISE_MAX_TOKENS = old
    assert not centred.pairwise and pairwise.pairwise
    # about the mean row the bound is looser, never tighter, and at most twice as loose
    assert np.all(centred.radius >= pairwise.radius * (1 - 1e-12))
    assert centred.oscillation <= 2.0 * pairwise.oscillation * (1 + 1e-9) + 1e-6


@pytest.mark.parametrize("eps", [0.0, -1.0, math.nan, math.inf, 1e-300])
def test_bad_eps_is_refused(eps):
    with pytest.raises(InvalidParameterError, match="eps"):
        layernorm_head_enclosure(np.eye(2), np.zeros(2), eps)


def test_bad_weights_are_refused():
    with pytest.raises(InvalidParameterError):
        layernorm_head_enclosure(np.ones((1, 3)), np.zeros(1), 1e-5)  # q = 1
    with pytest.raises(InvalidParameterError):
        layernorm_head_enclosure(np.array([[np.nan, 0.0], [0.0, 0.0]]), np.zeros(2), 1e-5)
    with pytest.raises(InvalidParameterError, match="float32"):
        layernorm_head_enclosure(np.array([[1e40, 0.0], [0.0, 0.0]]), np.zeros(2), 1e-5)
