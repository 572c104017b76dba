"""Rectangle test (Proposition 4) and the Arnold–Press statistic."""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from glauber.errors import (
    InvalidParameterError,
    InvalidTemperatureError,
    VocabularyError,
)
from glauber.estimators import arnold_press_statistic, rectangle_test
from glauber.toy_models import AsymmetricIsingModel, IsingModel, PottsModel

from ..support import states, table_model
from ._reference import TorchModel, asym_ising, conditional


def _asym_J(n: int, seed: int) -> np.ndarray:
    J = np.random.default_rng(seed).normal(size=(n, n))
    np.fill_diagonal(J, 0.0)
    return J


def _brute_delta(model, tau, x, i, j, a2, b2) -> float:
    """Proposition 4's delta straight from its definition (reference conditionals)."""
    y, w = x.copy(), x.copy()
    y[i], w[j] = a2, b2
    a, b = x[i], x[j]

    def lr(state, site, old, new):
        p = conditional(model, state, site, tau)
        return np.log(p[new]) - np.log(p[old])

    return (lr(x, i, a, a2) + lr(y, j, b, b2)) - (lr(x, j, b, b2) + lr(w, i, a, a2))


def test_gibbs_ising_rectangles_vanish():
    # Proposition 4: a compatible (Gibbs) model has delta = 0 in every rectangle.
    model = IsingModel(nx.cycle_graph(5), coupling=0.8, field=0.3)
    xs = states(5, 2)
    res = rectangle_test(model, xs, tau=0.7, n_rectangles=200, seed=1)
    assert res.max_abs_delta < 1e-12
    assert res.compatible_within_atol and res.n_above_atol == 0
    assert res.p_value_abs > 0.5


def test_gibbs_potts_topk_rectangles_vanish():
    model = PottsModel(nx.path_graph(4), q=4, coupling=1.3)
    xs = np.random.default_rng(0).integers(4, size=(20, 4))
    res = rectangle_test(model, xs, tau=1.0, n_rectangles=100, k=2, seed=3)
    assert res.max_abs_delta < 1e-12


@pytest.mark.parametrize("tau", [1.0, 0.5, 3.0])
def test_asymmetric_ising_closed_form(tau):
    # q = 2: the only replacement flips a spin, so both spins flip and
    # delta = 4 s_i s_j (J_ji - J_ij) / tau (docs/theory.md, `prop4`; derivation in
    # glauber.theory.rectangle.asymmetric_ising_rectangle_delta: -2/tau times
    # [s_i(g_i + J_ij s_j) + s_j(g_j - J_ji s_i) - s_j(g_j + J_ji s_i) - s_i(g_i - J_ij s_j)]).
    J = _asym_J(5, 7)
    model = asym_ising(J, h=np.linspace(-1, 1, 5))
    xs = states(5, 2)
    res = rectangle_test(model, xs, tau=tau, n_rectangles=150, seed=2)
    r = res.rectangles
    assert np.all(r.a_prime != r.a) and np.all(r.b_prime != r.b)
    si, sj = 2 * r.a - 1, 2 * r.b - 1
    expected = 4 * si * sj * (J[r.site_j, r.site_i] - J[r.site_i, r.site_j]) / tau
    np.testing.assert_allclose(r.delta, expected, atol=1e-10)
    assert res.n_above_atol == res.n_rectangles
    assert res.p_value_abs < 1e-10


def test_delta_scales_as_one_over_tau():
    model = table_model(3, 3, seed=4)
    xs = states(3, 3)
    d1 = rectangle_test(model, xs, tau=1.0, n_rectangles=60, k=2, seed=5).rectangles
    d3 = rectangle_test(model, xs, tau=2.5, n_rectangles=60, k=2, seed=5).rectangles
    # top-k order is tau-invariant, so the same seed draws the same rectangles
    np.testing.assert_array_equal(d1.a_prime, d3.a_prime)
    np.testing.assert_array_equal(d1.b_prime, d3.b_prime)
    np.testing.assert_allclose(d3.delta, d1.delta / 2.5, rtol=1e-10, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    nq=st.sampled_from([(2, 2), (3, 2), (4, 2), (2, 3), (3, 3), (2, 4), (4, 3)]),
    tau=st.floats(0.2, 5.0),
    mode=st.sampled_from(["topk", "uniform"]),
)
def test_rectangles_match_definition(seed, nq, tau, mode):
    n, q = nq
    model = table_model(n, q, seed)
    xs = states(n, q)
    res = rectangle_test(model, xs, tau=tau, n_rectangles=8, replacements=mode, k=2, seed=seed)
    r = res.rectangles
    for t in range(8):
        x = xs[r.state_index[t]].copy()
        assert x[r.site_i[t]] == r.a[t] and x[r.site_j[t]] == r.b[t]
        assert r.site_i[t] != r.site_j[t]
        assert r.a_prime[t] != r.a[t] and r.b_prime[t] != r.b[t]
        want = _brute_delta(model, tau, x, r.site_i[t], r.site_j[t], r.a_prime[t], r.b_prime[t])
        assert r.delta[t] == pytest.approx(want, abs=1e-9)
        if mode == "topk":  # A' among the top-2 tokens of p(. | x_{-i}) other than A
            p = conditional(model, x, r.site_i[t], tau)
            others = [a for a in np.argsort(-p, kind="stable") if a != r.a[t]][: min(2, q - 1)]
            assert r.a_prime[t] in others


def test_summary_statistics_and_json():
    model = table_model(3, 3, seed=9)
    res = rectangle_test(model, states(3, 3), n_rectangles=40, k=2, seed=0)
    d = res.rectangles.delta
    assert res.mean_abs_delta == pytest.approx(np.abs(d).mean())
    assert res.median_abs_delta == pytest.approx(np.median(np.abs(d)))
    assert res.sd_delta == pytest.approx(np.std(d, ddof=1))
    out = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert len(out["rectangles"]["delta"]) == 40


def test_p_values_on_a_closed_form_sample():
    """The p-values of the summary, recomputed from the closed-form deltas of an asymmetric
    Ising model (docs/theory.md, `prop4`) with the t statistic written out by hand and scipy's
    Student t and Wilcoxon distributions."""
    J = _asym_J(8, 11)
    model = asym_ising(J)
    res = rectangle_test(model, states(8, 2), tau=1.0, n_rectangles=15, seed=1)
    r = res.rectangles
    si, sj = 2 * r.a - 1, 2 * r.b - 1
    d = 4 * si * sj * (J[r.site_j, r.site_i] - J[r.site_i, r.site_j])  # the known sample
    m = len(d)
    t_signed = d.mean() / (d.std(ddof=1) / math.sqrt(m))
    assert res.p_value_t == pytest.approx(2 * stats.t.sf(abs(t_signed), m - 1), rel=1e-9)
    absd = np.abs(d)
    t_abs = (absd.mean() - res.atol) / (absd.std(ddof=1) / math.sqrt(m))
    assert res.p_value_abs == pytest.approx(stats.t.sf(t_abs, m - 1), rel=1e-9, abs=1e-300)
    # Wilcoxon signed-rank of the drawn deltas (rounding breaks the closed form's ties, so the
    # ranks are those of the deltas themselves), against its exact null distribution counted by
    # hand: W+ = sum of the ranks of the positive deltas is a sum of a uniform random subset of
    # {1..m}; two-sided p = 2 min(P(W+ <= w), P(W+ >= w)), capped at 1.
    assert len(np.unique(np.abs(r.delta))) == m  # no ties: ranks 1..m, the exact test applies
    w_plus = int(stats.rankdata(np.abs(r.delta))[r.delta > 0].sum())
    ways = np.zeros(m * (m + 1) // 2 + 1)
    ways[0] = 1.0
    for rank in range(1, m + 1):  # subsets of {1..rank} by their sum
        ways[rank:] = ways[rank:] + ways[:-rank].copy()
    null = ways / 2**m
    exact_p = min(1.0, 2 * min(null[: w_plus + 1].sum(), null[w_plus:].sum()))
    assert res.p_value_wilcoxon == pytest.approx(exact_p, rel=1e-9)
    # A sample of one sign: the exact two-sided Wilcoxon p-value of m distinct positive values
    # is 2 / 2^m (only the all-positive sign pattern is as extreme, on either side).
    assert stats.wilcoxon(np.arange(1.0, 9.0)).pvalue == pytest.approx(2 / 2**8)


def test_same_seed_same_result():
    model = table_model(3, 2, seed=1)
    a = rectangle_test(model, states(3, 2), n_rectangles=30, seed=11).rectangles
    b = rectangle_test(model, states(3, 2), n_rectangles=30, seed=11).rectangles
    np.testing.assert_array_equal(a.delta, b.delta)
    np.testing.assert_array_equal(a.state_index, b.state_index)


@pytest.mark.parametrize("mode", ["topk", "uniform"])
def test_torch_backend_matches_numpy(mode):
    toy = table_model(3, 3, seed=2)
    xs = states(3, 3)
    a = rectangle_test(toy, xs, tau=0.8, n_rectangles=25, replacements=mode, k=2, seed=4)
    b = rectangle_test(
        TorchModel(toy), xs, tau=0.8, n_rectangles=25, replacements=mode, k=2, seed=4
    )
    np.testing.assert_array_equal(a.rectangles.a_prime, b.rectangles.a_prime)
    np.testing.assert_allclose(a.rectangles.delta, b.rectangles.delta, atol=1e-12)


def test_batching_does_not_change_the_result():
    toy = table_model(3, 3, seed=2)
    a = rectangle_test(toy, states(3, 3), n_rectangles=25, seed=4, batch_size=7)
    b = rectangle_test(toy, states(3, 3), n_rectangles=25, seed=4, batch_size=1000)
    np.testing.assert_allclose(a.rectangles.delta, b.rectangles.delta, atol=1e-13)


def test_rectangle_errors():
    model = table_model(3, 2, seed=0)
    xs = states(3, 2)
    for tau in (0.0, -1.0, float("nan")):
        with pytest.raises(InvalidTemperatureError):
            rectangle_test(model, xs, tau=tau)
    with pytest.raises(InvalidParameterError):
        rectangle_test(model, xs, replacements="best")
    with pytest.raises(InvalidParameterError):
        rectangle_test(model, xs[:0])
    with pytest.raises(VocabularyError):
        rectangle_test(model, xs + 5)
    with pytest.raises(InvalidParameterError):
        rectangle_test(table_model(1, 3, seed=0), np.zeros((1, 1), dtype=int))


# ---------------------------------------------------------------- Arnold–Press statistic


def test_arnold_press_zero_for_gibbs():
    model = PottsModel(nx.cycle_graph(4), q=3, coupling=1.1, field=np.array([0.2, -0.4, 0.0]))
    for x in states(4, 3)[::7]:
        res = arnold_press_statistic(model, x, 0, 1, tau=0.6, K=3)
        assert res.statistic < 1e-12 and res.max_abs < 1e-12
    ising = IsingModel(nx.complete_graph(4), coupling=0.7)
    assert arnold_press_statistic(ising, np.array([1, 0, 1, 1]), 2, 3, K=2).statistic < 1e-12


def test_arnold_press_closed_form_asymmetric_ising():
    # K = 2 on spins: R's 2x2 contrast is -delta = +-4 (J_ij - J_ji)/tau, and the double-centred
    # matrix of a 2x2 matrix with contrast c has every entry +-c/4, so the statistic is
    # |J_ij - J_ji| / tau.
    J = _asym_J(4, 3)
    model = AsymmetricIsingModel(J)
    for tau in (1.0, 0.4):
        for i, j in [(0, 1), (2, 3), (3, 0)]:
            res = arnold_press_statistic(model, np.array([0, 1, 1, 0]), i, j, tau=tau, K=2)
            assert res.statistic == pytest.approx(abs(J[i, j] - J[j, i]) / tau, rel=1e-10)
            assert res.statistic > 0


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), tau=st.floats(0.3, 3.0))
def test_arnold_press_contrasts_are_rectangles(seed, tau):
    # Every 2x2 contrast of R equals minus a rectangle delta on the K x K slice.
    model = table_model(3, 3, seed)
    x = states(3, 3)[seed % 27].copy()
    res = arnold_press_statistic(model, x, 0, 2, tau=tau, K=3)
    E = res.interaction
    ti, tj = res.tokens_i, res.tokens_j
    for a, a2 in [(0, 1), (1, 2)]:
        for b, b2 in [(0, 2), (1, 2)]:
            base = x.copy()
            base[0], base[2] = ti[a], tj[b]
            want = _brute_delta(model, tau, base, 0, 2, ti[a2], tj[b2])
            contrast = E[a, b] - E[a2, b] - E[a, b2] + E[a2, b2]
            assert -contrast == pytest.approx(want, abs=1e-9)
    assert res.statistic == pytest.approx(
        arnold_press_statistic(model, x, 0, 2, tau=1.0, K=3).statistic / tau, rel=1e-9
    )


def test_arnold_press_torch_and_errors():
    toy = table_model(3, 3, seed=5)
    x = np.array([0, 2, 1])
    a = arnold_press_statistic(toy, x, 0, 1, K=3)
    b = arnold_press_statistic(TorchModel(toy), x, 0, 1, K=3)
    assert a.statistic == pytest.approx(b.statistic, abs=1e-12)
    json.dumps(a.to_dict(), allow_nan=False)
    with pytest.raises(InvalidParameterError):
        arnold_press_statistic(toy, x, 1, 1)
    with pytest.raises(InvalidParameterError):
        arnold_press_statistic(toy, x, 0, 1, K=1)
    with pytest.raises(InvalidParameterError):
        arnold_press_statistic(toy, x, 0, 3)


def test_arnold_press_refuses_more_than_one_state():
    # A 2-D state used to be flattened: [[0, 1], [1, 0]] on a 4-site model read as the one state
    # 0, 1, 1, 0, and a column [n, 1] as a row. Only (n,) and (1, n) are one state.
    model = table_model(4, 2, seed=1)
    one = np.array([0, 1, 1, 0])
    expected = arnold_press_statistic(model, one, 0, 1, K=2).statistic
    assert arnold_press_statistic(model, one[None, :], 0, 1, K=2).statistic == expected
    for bad in (one.reshape(2, 2), one.reshape(4, 1), np.stack([one, one]), one.reshape(1, 2, 2)):
        with pytest.raises(InvalidParameterError, match="one state"):
            arnold_press_statistic(model, bad, 0, 1, K=2)
