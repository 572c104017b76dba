"""benchmarks/sound_intervals.py and window_ibp.py: outward rounding against exact arithmetic,
enclosures on tiny random BERT layers (corners included), the window bound against enumeration.
"""

from __future__ import annotations

import itertools
import math
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import negative_results as nr  # noqa: E402
from benchmarks import sound_intervals as iv  # noqa: E402
from benchmarks import window_ibp as wi  # noqa: E402

mpmath.mp.dps = 50


def floats(rng, n, spread=3.0):
    """Random floats over many magnitudes, zeros and a subnormal among them."""
    x = rng.standard_normal(n) * 10.0 ** rng.uniform(-spread, spread, n)
    x[:3] = [0.0, 5e-324, -1e-310]
    return x


def encloses(interval, exact, strict_where=None):
    lo, hi = interval
    for k, e in enumerate(exact):
        assert Fraction(float(lo.flat[k])) <= e <= Fraction(float(hi.flat[k])), (k, e)


@pytest.mark.parametrize("seed", range(3))
def test_arithmetic_rounds_outward_against_fractions(seed):
    rng = np.random.default_rng(seed)
    a, b = floats(rng, 200), floats(rng, 200)
    A, B = iv.point(a), iv.point(b)
    fa, fb = [Fraction(float(x)) for x in a], [Fraction(float(x)) for x in b]
    encloses(iv.add(A, B), [x + y for x, y in zip(fa, fb)])
    encloses(iv.sub(A, B), [x - y for x, y in zip(fa, fb)])
    encloses(iv.mul(A, B), [x * y for x, y in zip(fa, fb)])
    pos = np.abs(b) + 1e-3
    encloses(iv.div_positive(A, iv.point(pos)), [x / Fraction(float(y)) for x, y in zip(fa, pos)])
    # strictly outward: the rounded result lies strictly inside, even where it is exact
    lo, hi = iv.add(A, B)
    assert np.all(lo < a + b) and np.all(a + b < hi)
    # the sum of a long vector, with cancellation
    x = np.concatenate([a, -a[::-1] * (1 + 1e-9)])
    s = iv.sum_(iv.point(x))
    exact = sum(Fraction(float(v)) for v in x)
    assert Fraction(float(s[0])) <= exact <= Fraction(float(s[1]))


@pytest.mark.parametrize("seed", range(2))
def test_transcendentals_enclose_mpmath(seed):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.uniform(-40, 40, 300), rng.uniform(-1, 1, 100) * 1e-8,
                        [iv.GELU_ARGMIN, -0.75179, -0.7518, 0.0, -6.0, 6.0]])
    X = iv.point(x)
    for f, g in ((iv.exp, mpmath.exp), (iv.erf_, mpmath.erf), (iv.sqrt, None),
                 (iv.gelu, lambda t: t * (1 + mpmath.erf(t / mpmath.sqrt(2))) / 2)):
        if g is None:
            g, X2, xs = mpmath.sqrt, iv.point(np.abs(x)), np.abs(x)
        else:
            X2, xs = X, x
        lo, hi = f(X2)
        for k, t in enumerate(xs):
            v = g(mpmath.mpf(float(t)))
            assert mpmath.mpf(float(lo[k])) <= v <= mpmath.mpf(float(hi[k])), (f, t)
    # gelu over intervals: the true minimum inside, and sampled values
    lo = rng.uniform(-5, 3, 200)
    box = (lo, lo + rng.uniform(0, 3, 200))
    glo, ghi = iv.gelu(box)
    for k in range(200):
        ts = np.linspace(box[0][k], box[1][k], 50)
        vals = nr.gelu(ts)
        assert glo[k] <= vals.min() + 1e-15 and vals.max() <= ghi[k] + 1e-15
    assert iv.GELU_MIN < float(mpmath.mpf(iv.GELU_ARGMIN) * (1 + mpmath.erf(
        mpmath.mpf(iv.GELU_ARGMIN) / mpmath.sqrt(2))) / 2)


@pytest.mark.parametrize("seed", range(3))
def test_bilinear_and_variance_enclose_corners_exactly(seed):
    rng = np.random.default_rng(seed)
    m, n, p = 2, 5, 3
    c, r = rng.standard_normal((m, n)), rng.uniform(0, 0.5, (m, n))
    W = rng.standard_normal((p, n))
    box = (c - r, c + r)
    lo, hi = iv.linear(box, W, rng.standard_normal(p))
    b = iv.linear(box, W, None)
    for corner in itertools.product((0, 1), repeat=n):
        x = np.where(np.array(corner), box[1], box[0])
        for row in range(m):
            for col in range(p):
                e = sum(Fraction(float(x[row, k])) * Fraction(float(W[col, k])) for k in range(n))
                assert Fraction(float(b[0][row, col])) <= e <= Fraction(float(b[1][row, col]))
        # the variance of every corner, exactly
        for row in range(m):
            xs = [Fraction(float(v)) for v in x[row]]
            mean = sum(xs) / n
            var = sum((v - mean) ** 2 for v in xs) / n
            vl, vh = iv.variance_bounds(box)
            assert Fraction(float(vl[row, 0])) <= var <= Fraction(float(vh[row, 0]))
    assert np.all(hi - lo < 10 * np.abs(r) @ np.abs(W).T + 1e-12)  # not vacuous
    # the variance's lower end is the box's distance to the diagonal: 0 when it meets it
    meet = (np.array([[0.0, 0.5, -1.0]]), np.array([[1.0, 2.0, 0.6]]))
    assert iv.variance_bounds(meet)[0][0, 0] == 0.0
    apart = (np.array([[0.0, 2.0]]), np.array([[1.0, 3.0]]))  # nearest: (1, 2), var 1/4
    assert 0.2499999 <= iv.variance_bounds(apart)[0][0, 0] <= 0.25


def mp_layer(x, p):
    """One post-LN BERT layer in mpmath (50 digits), ``x`` a list of rows."""
    T, d = len(x), len(x[0])
    nh = p["nh"]
    dh = d // nh

    def lin(rows, W, b):
        return [[sum(mpmath.mpf(float(W[o, k])) * r[k] for k in range(len(r)))
                 + mpmath.mpf(float(b[o])) for o in range(W.shape[0])] for r in rows]

    def ln(rows, g, b):
        out = []
        for r in rows:
            m = sum(r) / len(r)
            v = sum((t - m) ** 2 for t in r) / len(r)
            s = mpmath.sqrt(v + mpmath.mpf(p["eps"]))
            out.append([(t - m) / s * mpmath.mpf(float(g[k])) + mpmath.mpf(float(b[k]))
                        for k, t in enumerate(r)])
        return out

    q, k, v = lin(x, p["Wq"], p["bq"]), lin(x, p["Wk"], p["bk"]), lin(x, p["Wv"], p["bv"])
    ctx = [[mpmath.mpf(0)] * d for _ in range(T)]
    for h in range(nh):
        sl = range(h * dh, (h + 1) * dh)
        for i in range(T):
            s = [sum(q[i][c] * k[j][c] for c in sl) / mpmath.sqrt(dh) for j in range(T)]
            e = [mpmath.exp(t) for t in s]
            z = sum(e)
            for c in sl:
                ctx[i][c] = sum(e[j] / z * v[j][c] for j in range(T))
    a = lin(ctx, p["Wo"], p["bo"])
    h1 = ln([[a[i][c] + x[i][c] for c in range(d)] for i in range(T)], p["g1"], p["b1"])
    f = lin(h1, p["W1"], p["c1"])
    f = [[t * (1 + mpmath.erf(t / mpmath.sqrt(2))) / 2 for t in r] for r in f]
    f = lin(f, p["W2"], p["c2"])
    return ln([[f[i][c] + h1[i][c] for c in range(d)] for i in range(T)], p["g2"], p["b2"])


@pytest.mark.parametrize("seed", range(2))
def test_bert_layer_encloses_the_exact_layer_at_points_and_corners(seed):
    rng = np.random.default_rng(seed)
    d, nh, ff, T = 4, 2, 6, 3
    p = nr.random_layer_params(d, nh, ff, rng)
    c = rng.standard_normal((1, T, d))
    r = np.zeros_like(c)
    r[0, 1] = 0.05  # one position boxed, as a window's free site
    box = (c - r, c + r)
    _, out = iv.bert_layer(box, p)
    assert np.all(out[1] - out[0] < 50.0)  # not vacuous at this width
    pts = [np.where(np.array(cr)[None, None, :], box[1], box[0])
           for cr in itertools.product((0, 1), repeat=d)][:8] + [c]
    for x in pts:
        exact = mp_layer([[mpmath.mpf(float(t)) for t in row] for row in x[0]], p)
        for i in range(T):
            for k in range(d):
                assert mpmath.mpf(float(out[0][0, i, k])) <= exact[i][k]
                assert exact[i][k] <= mpmath.mpf(float(out[1][0, i, k]))
    # a point's enclosure is thin (rounding only) and holds the float64 forward
    _, pt = iv.bert_layer(iv.point(c), p)
    assert np.all(pt[1] - pt[0] < 1e-9)
    y = nr.layer_forward(c[0], p)
    assert np.all(pt[0][0] <= y + 1e-12) and np.all(y - 1e-12 <= pt[1][0])


def tiny_window():
    from glauber.testing.transformers import MaskedLMSpec

    spec = MaskedLMSpec(arch="bert", layers=1, hidden=8, heads=2, scale=0.3, eps=1e-5, seed=3,
                        tokens=("A", "C", "D"), context=(0, 1, 2, 1, 0), sites=(1, 2, 3))
    return spec.build()


def exact_oscillation(net_for, positions, vocab, n, q):
    """Delta by enumeration through the float64 numpy forward of every context."""
    D = np.zeros((n, n))
    for i in range(n):
        net = net_for(i)
        others = [s for s in range(n) if s != i]
        scores = {}
        for vals in itertools.product(range(q), repeat=n - 1):
            ids = net.tokens.copy()
            for s, v in zip(others, vals):
                ids[positions[s]] = vocab[v]
            x = nr.layer_norm(np.stack([sum(net.embed(t, int(a))) for t, a in enumerate(ids)]),
                              *net.emb_ln)
            for p in net.layers:
                x = nr.layer_forward(x, p)
            s_ = nr.head_scores_np(x[positions[i]][None], net.head)[0]
            scores[vals] = s_[:, None] - s_[None, :]
        for jj, j in enumerate(others):
            for vals in scores:
                for t in range(q):
                    alt = vals[:jj] + (t,) + vals[jj + 1:]
                    D[i, j] = max(D[i, j], float((scores[vals] - scores[alt]).max()))
    return D


def test_window_bound_holds_by_enumeration_and_points_are_tight_on_a_tiny_model():
    model = tiny_window()
    net_for, positions = wi.bert_networks(model)
    vocab = model.model.vocabulary.lookup.numpy()
    n, q = model.n, model.q
    context = model.default_states()[0]
    E = exact_oscillation(net_for, positions, vocab, n, q)
    off = ~np.eye(n, dtype=bool)
    # the library's float32 scores agree with the float64 forward
    s = model.scores(model.default_states(), np.array([0])).double().numpy()[0]
    ids = net_for(0).tokens
    x = nr.layer_norm(np.stack([sum(net_for(0).embed(t, int(a))) for t, a in enumerate(ids)]),
                      *net_for(0).emb_ln)
    x = nr.layer_forward(x, net_for(0).layers[0])
    assert np.abs(nr.head_scores_np(x[positions[0]][None], net_for(0).head)[0] - s).max() < 1e-4
    weight = np.asarray(model.oscillation_upper_bound().Delta)
    for variant, groups in (("box", 1), ("split-j", 1), ("points", q ** (n - 2))):
        D, widths, complete = wi.window_bounds(net_for, positions, vocab, context, variant,
                                               groups=groups, log=lambda m: None)
        assert np.all(D[off] >= E[off] - 1e-9), variant
        assert np.all(D[off] <= weight[off] * (1 + 1e-12)), variant  # clipped to it
        assert widths[0]["layer"] == 0 and len(widths) == 2
    assert complete
    assert np.all(D[off] <= E[off] + 1e-6)  # points: the enumeration, up to rounding
    assert wi.tau_cert(D) < wi.tau_cert(weight)


def test_tau_cert_solves_the_uniform_criterion():
    n, delta = 5, 3.0
    D = np.full((n, n), delta)
    # (n - 1) tanh(delta / (4 tau)) = 1
    want = delta / (4 * math.atanh(1 / (n - 1)))
    got = wi.tau_cert(D)
    assert want <= got <= want * (1 + 2e-3)
    assert wi.tau_cert(np.zeros((n, n))) == wi.TAU_LO
    with pytest.raises(ValueError):
        wi.window_bounds(None, [1], np.arange(2), [0], "nope", log=lambda m: None)
