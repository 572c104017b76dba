"""Interval arithmetic with outward rounding (numpy float64) through a post-LN BERT layer.

Sound in floating point: every interval returned holds the exact real value of the operation on
every point of the input boxes. An interval is a pair ``(lo, hi)`` of float64 arrays.

* ``+ - * /`` and ``sqrt`` are correctly rounded (IEEE 754), so the exact value lies within one
  ulp of the computed one: :func:`down` and :func:`up` (``np.nextafter`` towards ``-inf`` and
  ``+inf``) after every such operation make the interval outward.
* Matrix products go through BLAS in midpoint-radius form (Rump 1999, "Fast and parallel
  interval arithmetic"): for ``|x - c| <= r`` and an exact ``W``, ``|x W - fl(c W)| <=
  (gamma_n |c| + r) |W|`` with ``gamma_n = n u / (1 - n u)`` whatever the order of the
  summation or fused multiply-adds (Higham 2002, eq. 3.5), plus ``n eta`` for underflow
  (``eta = 2^-1074``); ``(K_n |c| + r) |W|`` is itself formed by BLAS, so it is inflated by
  ``1 + K_n`` (``K_n = 1.01 n u >= gamma_n / (1 - gamma_n)`` for ``n u <= 0.004``). The one
  assumption: BLAS forms each entry as a sum of ``n`` products (as OpenBLAS and MKL ``dgemm``
  do; no Strassen).
* ``exp`` and ``erf`` (numpy, scipy) are not correctly rounded; they are taken to be within
  ``2^-44`` relative (a few thousand ulps: the libraries claim a few ulps; the tests check
  against mpmath) and are monotone, so an interval maps to its endpoints' images, widened.
* ``gelu`` (BERT's exact ``x Phi(x)``) is not monotone: below its minimiser it decreases, above
  it increases; an interval within ``1e-6`` of the minimiser gets the certified minimum
  :data:`GELU_MIN` as its lower end.
* LayerNorm divides by ``sqrt(var + eps)``: the variance's lower bound over a box is
  ``min_c sum_k dist(c, [lo_k, hi_k])^2 / d`` (the box's squared distance to the diagonal),
  from a bracket ``[ca, cb]`` of the minimiser certified by the sign of the derivative
  (:func:`variance_bounds`), or the cheaper ``(||P m|| - ||r||)^2 / d`` for a thin box; the
  normalised vector is clipped to ``|z_k| <= sqrt(d - 1)`` (true of every centred ``z`` with
  ``||z||^2 <= d``).

Used by :mod:`benchmarks.window_ibp` (docs/theory.md, "Why the full-chain bracket stays wide",
(d)); tests in ``tests/test_benchmark_window_ibp.py``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf

#: Unit roundoff of float64.
U = 2.0**-53
#: Smallest subnormal float64.
ETA = 2.0**-1074
#: Relative error allowed to numpy's ``exp`` and scipy's ``erf``.
TRANSCENDENTAL_REL = 2.0**-44
#: Where the exact gelu ``x Phi(x)`` has its minimum (to about 1e-16).
GELU_ARGMIN = -0.7517915256586639
#: Below the true minimum of gelu, ``-0.16997120747990...``.
GELU_MIN = -0.1699712075
#: Half-width of the band around :data:`GELU_ARGMIN` treated as containing the minimiser.
GELU_GUARD = 1e-6

Interval = tuple[np.ndarray, np.ndarray]


def down(x: np.ndarray | float) -> np.ndarray:
    """The next float below ``x`` (below every real that rounds to ``x``)."""
    return np.nextafter(x, -np.inf)


def up(x: np.ndarray | float) -> np.ndarray:
    """The next float above ``x``."""
    return np.nextafter(x, np.inf)


def point(x: np.ndarray) -> Interval:
    """The degenerate interval of exact floats ``x``."""
    x = np.asarray(x, dtype=np.float64)
    return x.copy(), x.copy()


def k_factor(n: int) -> float:
    """``K_n = 1.01 n u``, rounded up: at least ``gamma_n / (1 - gamma_n)`` for ``n u <= 0.004``
    (module docstring)."""
    if n * U > 0.004:
        raise ValueError(f"a sum of {n} terms is too long for the error constant")
    return float(up(1.01 * n * U))


def add(a: Interval, b: Interval) -> Interval:
    """``a + b``."""
    return down(a[0] + b[0]), up(a[1] + b[1])


def sub(a: Interval, b: Interval) -> Interval:
    """``a - b``."""
    return down(a[0] - b[1]), up(a[1] - b[0])


def mul(a: Interval, b: Interval) -> Interval:
    """``a * b`` (elementwise): the extremes of the four endpoint products, rounded out."""
    p = np.stack([a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]])
    return down(p.min(axis=0)), up(p.max(axis=0))


def scale(a: Interval, w: np.ndarray) -> Interval:
    """``a * w`` for exact floats ``w`` (elementwise, broadcast)."""
    x, y = a[0] * w, a[1] * w
    return down(np.minimum(x, y)), up(np.maximum(x, y))


def square(a: Interval) -> Interval:
    """``a ** 2`` (0 at the bottom where ``a`` holds 0)."""
    lo2, hi2 = a[0] * a[0], a[1] * a[1]
    low = np.where((a[0] <= 0) & (a[1] >= 0), 0.0, down(np.minimum(lo2, hi2)))
    return low, up(np.maximum(lo2, hi2))


def div_positive(a: Interval, s: Interval) -> Interval:
    """``a / s`` for ``s`` with a positive lower end."""
    if not np.all(s[0] > 0):
        raise ValueError("div_positive needs a positive divisor")
    lo = np.where(a[0] >= 0, a[0] / s[1], a[0] / s[0])
    hi = np.where(a[1] >= 0, a[1] / s[0], a[1] / s[1])
    return down(lo), up(hi)


def sqrt(a: Interval) -> Interval:
    """``sqrt(a)`` for ``a >= 0``."""
    return down(np.sqrt(np.maximum(a[0], 0.0))).clip(0.0), up(np.sqrt(a[1]))


def _widen(lo: np.ndarray, hi: np.ndarray) -> Interval:
    """Values within :data:`TRANSCENDENTAL_REL` relative of the true ones, rounded out."""
    lo = down(lo - np.abs(lo) * TRANSCENDENTAL_REL - ETA)
    hi = up(hi + np.abs(hi) * TRANSCENDENTAL_REL + ETA)
    return lo, hi


def exp(a: Interval) -> Interval:
    """``exp(a)`` (monotone), not below 0."""
    lo, hi = _widen(np.exp(a[0]), np.exp(a[1]))
    return np.maximum(lo, 0.0), hi


def erf_(a: Interval) -> Interval:
    """``erf(a)`` (monotone), within ``[-1, 1]``."""
    lo, hi = _widen(erf(a[0]), erf(a[1]))
    return np.maximum(lo, -1.0), np.minimum(hi, 1.0)


#: ``1 / sqrt(2)``, enclosed (two ulps either side of the rounded value).
INV_SQRT2 = (float(down(down(1.0 / math.sqrt(2.0)))), float(up(up(1.0 / math.sqrt(2.0)))))


def _gelu_at(x: np.ndarray) -> Interval:
    """``gelu`` of the exact floats ``x``, enclosed."""
    t = mul(point(x), (np.full_like(x, INV_SQRT2[0]), np.full_like(x, INV_SQRT2[1])))
    e = erf_(t)
    one_plus = down(1.0 + e[0]), up(1.0 + e[1])
    return scale(mul(point(x), one_plus), 0.5)


def gelu(a: Interval) -> Interval:
    """The range of ``gelu(x) = x Phi(x)`` over each interval (module docstring)."""
    glo, ghi = _gelu_at(a[0]), _gelu_at(a[1])
    low = np.minimum(glo[0], ghi[0])
    low = np.where(a[1] <= GELU_ARGMIN - GELU_GUARD, ghi[0], low)  # decreasing part
    low = np.where(a[0] >= GELU_ARGMIN + GELU_GUARD, glo[0], low)  # increasing part
    near = (a[0] < GELU_ARGMIN + GELU_GUARD) & (a[1] > GELU_ARGMIN - GELU_GUARD)
    low = np.where(near, np.minimum(low, GELU_MIN), low)
    return low, np.maximum(glo[1], ghi[1])


def _dot_error(F: np.ndarray, n: int) -> np.ndarray:
    """An upper bound on ``T`` from ``F = fl(T)``, ``T`` a sum of ``n`` non-negative products
    (``T <= (F + n eta) / (1 - gamma_n)``), plus the underflow of another such sum."""
    K = k_factor(n)
    return up(up(F * up(1.0 + K)) + (2 * n + 2) * ETA)


def midrad(a: Interval) -> tuple[np.ndarray, np.ndarray]:
    """``(c, r)`` with ``[lo, hi]`` inside ``[c - r, c + r]``."""
    c = 0.5 * a[0] + 0.5 * a[1]
    return c, np.maximum(up(a[1] - c), up(c - a[0]))


def bilinear(a: Interval, b: Interval) -> Interval:
    """The enclosure of ``x @ y`` for every ``x`` in box ``a [..., m, n]`` and ``y`` in box
    ``b [..., n, p]`` (batched like ``np.matmul``): ``|x y - fl(ca cb)| <= |ca| (rb + K |cb|) +
    ra (|cb| + rb)`` with ``K = K_n`` (module docstring), the bound formed by BLAS and
    inflated by :func:`_dot_error`."""
    ca, ra = midrad(a)
    cb, rb = midrad(b)
    n = ca.shape[-1]
    K = k_factor(n)
    mid = ca @ cb
    F = np.abs(ca) @ up(up(K * np.abs(cb)) + rb) + ra @ up(np.abs(cb) + rb)
    err = _dot_error(F, 2 * n)
    return down(mid - err), up(mid + err)


def linear(a: Interval, W: np.ndarray, b: np.ndarray | None = None) -> Interval:
    """``x @ W.T + b`` for every ``x`` in the box ``a [..., n]`` and exact ``W [m, n]``,
    ``b [m]``."""
    y = bilinear(a, point(W.T))
    return y if b is None else add(y, point(b))


def sum_(a: Interval, axis: int = -1, keepdims: bool = False) -> Interval:
    """``sum(x, axis)`` over the box: ``fl(sum lo) - gamma_n fl(sum |lo|) (1 + K_n)`` and the
    same above."""
    n = a[0].shape[axis]
    lo = a[0].sum(axis=axis, keepdims=keepdims)
    hi = a[1].sum(axis=axis, keepdims=keepdims)
    elo = _dot_error(k_factor(n) * np.abs(a[0]).sum(axis=axis, keepdims=keepdims), n)
    ehi = _dot_error(k_factor(n) * np.abs(a[1]).sum(axis=axis, keepdims=keepdims), n)
    return down(lo - elo), up(hi + ehi)


def softmax(a: Interval) -> Interval:
    """Softmax along the last axis for every logit vector in the box: ``p_j >= e^{l_j} /
    sum_k e^{h_k}`` and ``p_j <= e^{h_j} / sum_k e^{l_k}`` (shifted by the row's largest upper
    end, exact), clipped to ``[0, 1]``."""
    M = a[1].max(axis=-1, keepdims=True)
    el = exp((down(a[0] - M), up(a[0] - M)))
    eh = exp((down(a[1] - M), up(a[1] - M)))
    s_hi = sum_(eh, keepdims=True)[1]
    s_lo = np.maximum(sum_(el, keepdims=True)[0], 0.0)
    lo = down(el[0] / s_hi)
    with np.errstate(divide="ignore"):
        hi = np.where(s_lo > 0, up(eh[1] / np.where(s_lo > 0, s_lo, 1.0)), 1.0)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def _derivative_sign(lo: np.ndarray, hi: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, ...]:
    """Certified signs of ``g'(c) / 2 = sum (c - hi)_+ - sum (lo - c)_+`` per row:
    ``(<= 0, >= 0)``."""
    right = (np.maximum(down(c - hi), 0.0), np.maximum(up(c - hi), 0.0))
    left = (np.maximum(down(lo - c), 0.0), np.maximum(up(lo - c), 0.0))
    r, l_ = sum_(right, keepdims=True), sum_(left, keepdims=True)
    return up(r[1] - l_[0]) <= 0, down(r[0] - l_[1]) >= 0


def variance_bounds(a: Interval, iters: int = 48) -> Interval:
    """``[lo, hi]`` of ``var x = min_c ||x - c 1||^2 / d`` over the box ``a [..., d]``.

    Upper: ``||x - c||^2 / d`` at ``c`` the midpoints' mean, each square at its worst corner.
    Lower: the larger of (i) ``(||P m|| - ||r||)_+^2 / d`` (``m, r`` the box's midpoint and
    radius, ``P`` centring; ``||P m||^2 = ||m - c||^2 - d (mean m - c)^2``) and (ii) for a box
    wider than ``1e-9`` of its size, ``sum_k dist([ca, cb], [lo_k, hi_k])^2 / d`` with the
    minimiser of the convex ``g(c) = sum_k dist(c, [lo_k, hi_k])^2`` bracketed in ``[ca, cb]``
    by bisection on the certified sign of ``g'`` (``ca = min lo``, ``cb = max hi`` to start).
    """
    d = a[0].shape[-1]
    m, r = midrad(a)
    c = m.mean(axis=-1, keepdims=True)
    y = sub(a, point(np.broadcast_to(c, a[0].shape)))
    hi = up(sum_(square(y), keepdims=True)[1] / d)
    ym = sub(point(m), point(np.broadcast_to(c, m.shape)))
    s2 = sum_(square(ym), keepdims=True)[0]
    mean_dev = sum_(ym, keepdims=True)
    dev = np.maximum(np.abs(mean_dev[0]), np.abs(mean_dev[1]))
    dev = up(dev / d)
    pm2 = np.maximum(down(s2 - up(d * up(dev * dev))), 0.0)
    rn = up(np.sqrt(up(sum_(square(point(r)), keepdims=True)[1])))
    gap = np.maximum(down(down(np.sqrt(pm2)) - rn), 0.0)
    lo = np.maximum(down(down(gap * gap) / d), 0.0)
    wide = (r.max(axis=-1, keepdims=True)
            > 1e-9 * (1.0 + np.abs(m).max(axis=-1, keepdims=True)))[..., 0]
    if wide.any():
        lo[wide] = np.maximum(lo[wide], _bracketed_lower(a[0][wide], a[1][wide], iters))
    return lo, hi


def _bracketed_lower(lo: np.ndarray, hi: np.ndarray, iters: int) -> np.ndarray:
    """(ii) of :func:`variance_bounds` on rows ``[rows, d]``: ``[rows, 1]``."""
    d = lo.shape[-1]
    ca, cb = lo.min(-1, keepdims=True), hi.max(-1, keepdims=True)
    for _ in range(iters):
        mid = 0.5 * ca + 0.5 * cb
        neg, pos = _derivative_sign(lo, hi, mid)
        ca, cb = np.where(neg, mid, ca), np.where(pos & ~neg, mid, cb)
    dist = np.maximum(np.maximum(down(lo - cb), down(ca - hi)), 0.0)
    return np.maximum(down(sum_(square((dist, dist)), keepdims=True)[0] / d), 0.0)


def layer_norm(a: Interval, gamma: np.ndarray, beta: np.ndarray, eps: float
               ) -> tuple[Interval, Interval]:
    """LayerNorm over the last axis for every ``x`` in the box: ``(z, gamma z + beta)`` with
    ``z = (x - mean x) / sqrt(var x + eps)`` enclosed coordinate by coordinate (the centred
    coordinate and the variance enclosed separately, then divided), clipped to
    ``|z_k| <= sqrt(d - 1)``."""
    d = a[0].shape[-1]
    mean = sum_(a, keepdims=True)
    mean = down(mean[0] / d), up(mean[1] / d)
    centred = sub(a, mean)
    v = variance_bounds(a)
    s = sqrt((down(v[0] + eps), up(v[1] + eps)))
    z = div_positive(centred, s)
    cap = float(up(math.sqrt(d - 1)))
    z = np.clip(z[0], -cap, cap), np.clip(z[1], -cap, cap)
    return z, add(scale(z, gamma), point(beta))


def attention(x: Interval, p: dict) -> Interval:
    """BERT self-attention (no mask) and its output projection, over the box ``x [B, T, d]``:
    ``[B, T, d]`` (before the residual)."""
    B, T, d = x[0].shape
    nh = p["nh"]
    dh = d // nh

    def heads(a: Interval) -> Interval:
        return tuple(t.reshape(B, T, nh, dh).transpose(0, 2, 1, 3) for t in a)

    q = heads(linear(x, p["Wq"], p["bq"]))
    k = heads(linear(x, p["Wk"], p["bk"]))
    v = heads(linear(x, p["Wv"], p["bv"]))
    inv = 1.0 / math.sqrt(dh)
    inv = (float(down(down(inv))), float(up(up(inv))))
    logits = bilinear(q, tuple(t.swapaxes(-1, -2) for t in k))
    logits = mul(logits, (np.full_like(logits[0], inv[0]), np.full_like(logits[0], inv[1])))
    probs = softmax(logits)
    ctx = bilinear(probs, v)
    # a convex combination of the values: within their hull too
    ctx = (np.maximum(ctx[0], v[0].min(axis=2, keepdims=True)),
           np.minimum(ctx[1], v[1].max(axis=2, keepdims=True)))
    ctx = tuple(t.transpose(0, 2, 1, 3).reshape(B, T, d) for t in ctx)
    return linear(ctx, p["Wo"], p["bo"])


def bert_layer(x: Interval, p: dict) -> tuple[Interval, Interval]:
    """One post-LN BERT layer (``negative_results.layer_forward``) over the box ``x``:
    ``(z, out)``, the output LayerNorm's normalised box and its output box."""
    _, h = layer_norm(add(attention(x, p), x), p["g1"], p["b1"], p["eps"])
    f = linear(gelu(linear(h, p["W1"], p["c1"])), p["W2"], p["c2"])
    return layer_norm(add(f, h), p["g2"], p["b2"], p["eps"])
