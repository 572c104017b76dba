"""Stationary laws, conductances, reversibility and spectral gaps where float64 under- or overflows.

Oracles: the Gibbs law ``pi(s) ∝ exp(beta sum_edges s_u s_v)`` of the Ising model (Theorem 3,
exact in log space by a log-sum-exp over all states), LPW Theorem 15.5 for the cycle's
relaxation time ``n (1 + e^{4 beta}) / 2``, and the chain rebuilt in mpmath from the scores
(conditionals, kernel, Gibbs weights and eigenvalues at hundreds of digits).
"""

from __future__ import annotations

import warnings

import mpmath
import networkx as nx
import numpy as np
import pytest

from glauber.errors import PrecisionError, UnderflowError
from glauber.exact import ExactChain
from glauber.exact.stationary import gth_stationary, gth_stationary_reference, log_gth_stationary
from glauber.toy_models import IsingModel

TAU = 1 / 150  # issue reproducer: stationary entries of 6.8e-392


def gibbs_log_law(chain: ExactChain, graph: nx.Graph, beta: float) -> np.ndarray:
    """``log pi`` of the zero-field Ising Gibbs law, exactly normalised in log space."""
    spins = 2.0 * chain.states() - 1.0
    energy = sum(spins[:, u] * spins[:, v] for u, v in graph.edges)
    logw = beta * energy
    m = logw.max()
    return logw - (m + np.log(np.exp(logw - m).sum()))


@pytest.fixture(scope="module")
def cold_path():
    graph = nx.path_graph(4)
    return graph, ExactChain(IsingModel(graph, coupling=1.0), tau=TAU)


def test_log_stationary_is_the_gibbs_law_where_stationary_underflows(cold_path):
    graph, chain = cold_path
    exact = gibbs_log_law(chain, graph, 1 / TAU)
    got = chain.log_stationary()
    assert np.isfinite(got).all()
    assert exact.min() / np.log(10) < -391  # entries of 10^-391: below the smallest double
    np.testing.assert_allclose(got, exact, rtol=1e-13, atol=1e-11)
    with pytest.raises(UnderflowError, match="log_stationary"):
        chain.stationary()


@pytest.mark.parametrize("solve", [gth_stationary, gth_stationary_reference])
def test_gth_whose_ratios_overflow_raises_without_a_warning(solve):
    # A birth-death chain 0 <-> 1 <-> 2 with pi_1 / pi_0 = 1 and pi_2 / pi_1 = P(1, 2) / P(2, 1)
    # = (1/2) / 1e-310 ~ 5e309 (detailed balance), above the largest double: the eliminated
    # column P(1, 2) / s_2 overflows. Issue 33 saw 'overflow encountered in
    # divide' and 'invalid value encountered in multiply' (inf * 0 in the rank-1 update) here,
    # at certify(IsingModel(cycle(4)), tau) for tau in 0.0054..0.0056; it is an UnderflowError
    # naming the log-space solve, with no RuntimeWarning.
    a = 1e-310
    P = [[0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, a, 1.0 - a]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UnderflowError, match="log_gth_stationary"):
            solve(P)
    log_pi = log_gth_stationary(P)
    assert log_pi[2] - log_pi[0] == pytest.approx(np.log(0.5) - np.log(a), rel=1e-12)


@pytest.mark.parametrize("tau", [0.0054, 0.0055, 0.0056])
def test_certify_at_the_overflow_temperatures_prints_no_warning(tau):
    from glauber.certify import certify

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cert = certify(IsingModel(nx.cycle_graph(4)), tau, n_pairs=0)
    assert cert.exact is not None and cert.exact.tmix is None  # numerically reducible: typed


def test_stationary_is_unchanged_in_the_normal_range():
    chain = ExactChain(IsingModel(nx.path_graph(4), coupling=1.0), tau=1.0)
    pi = chain.stationary()
    assert np.array_equal(pi, chain.stationary_solution().pi)  # the GTH law itself
    np.testing.assert_allclose(np.log(pi), chain.log_stationary(), rtol=0, atol=1e-14)


def test_log_gth_matches_linear_gth_and_keeps_tiny_entries():
    rng = np.random.default_rng(0)
    P = rng.random((40, 40))
    P /= P.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(np.exp(log_gth_stationary(P)), gth_stationary(P), rtol=1e-13)
    # Birth-death chain 0 <-> 1 <-> 2: detailed balance gives pi_1 / pi_0 = a / (1 - a) and
    # pi_2 / pi_1 = a, so pi_2 = pi_0 a^2 / (1 - a) ~ 1e-600 (pi_0 = 1 - O(a)).
    a = 1e-300
    log_pi = log_gth_stationary([[1 - a, a, 0.0], [1 - a, 0.0, a], [0.0, 1.0, 0.0]])
    assert log_pi[2] == pytest.approx(2 * np.log(a), rel=1e-14)
    assert log_pi[1] == pytest.approx(np.log(a), rel=1e-14) and abs(log_pi[0]) < 1e-15


def _mp_conductance(graph, chain, mask, beta):
    """``Phi(S)`` from mpmath Gibbs weights and mpmath conditionals (no float64 anywhere)."""
    mp = mpmath.mp.clone()
    mp.dps = 60
    spins = 2 * chain.states() - 1
    n = chain.n

    def weight(s):
        return mp.exp(beta * sum(int(s[u] * s[v]) for u, v in graph.edges))

    def flip_prob(s, i):  # heat bath: p(-s_i | rest) = 1 / (1 + e^{2 beta s_i f_i})
        f = sum(int(s[j]) for j in graph.neighbors(i))
        return 1 / (1 + mp.exp(2 * beta * s[i] * f))

    w = [weight(s) for s in spins]
    mass = mp.fsum(w[x] for x in np.flatnonzero(mask))
    flow = mp.mpf(0)
    for x in np.flatnonzero(mask):
        for i in range(n):
            y = spins[x].copy()
            y[i] = -y[i]
            if not mask[chain.index_of((y + 1) // 2)]:
                flow += w[x] * flip_prob(spins[x], i) / n
    return flow / mass


def test_conductance_and_reversibility_of_the_cold_chain(cold_path):
    graph, chain = cold_path
    assert chain.is_reversible()  # Gibbs: Theorem 3 (it flipped to False on zeroed pi)
    states = chain.states()
    zero_mag = states.sum(axis=1) == 2  # holds the 10^-391 states
    rng = np.random.default_rng(1)
    tiny = chain.log_stationary() < -800  # the two 10^-391 states: 0 / 0 with float64 pi
    masks = [tiny, zero_mag, states.sum(axis=1) >= 3] + [
        rng.random(len(states)) < 0.5 for _ in range(6)
    ]
    for mask in masks:
        if mask.all() or not mask.any():
            continue
        got = chain.conductance(mask)
        assert np.isfinite(got) and got > 0
        assert got == pytest.approx(float(_mp_conductance(graph, chain, mask, 1 / TAU)), rel=1e-9)


def test_bottleneck_of_the_cold_chain_is_finite(cold_path):
    _, chain = cold_path
    b = chain.bottleneck()
    assert b.log_ratio is not None and np.isfinite(b.log_ratio)
    assert chain.bottleneck_ratio() == pytest.approx(chain.conductance(b.mask), rel=1e-12)


@pytest.mark.parametrize("beta", [1.0, 5.0, 12.0, 18.0])
def test_relaxation_time_matches_lpw_15_5_beyond_float64_resolution(beta):
    # Gaps down to 2.7e-32: float64 eigenvalues carry errors of ~1e-15 here; the gap is
    # recomputed in mpmath. LPW 2nd ed. Theorem 15.5: t_rel = n / (1 - tanh 2 beta)
    # = n (1 + e^{4 beta}) / 2.
    chain = ExactChain(IsingModel(nx.cycle_graph(4)), tau=1 / beta)
    exact = 4 * (1 + mpmath.exp(4 * mpmath.mpf(beta))) / 2
    assert chain.relaxation_time() == pytest.approx(float(exact), rel=1e-9)


def test_unresolvable_gap_on_a_large_chain_raises():
    chain = ExactChain(IsingModel(nx.cycle_graph(7)), tau=1 / 12)  # 128 states, gap ~ 3e-21
    with pytest.raises(PrecisionError, match="no relative accuracy"):
        chain.spectral_gap()


def test_cold_path_gap_against_an_independent_mpmath_chain(cold_path):
    graph, chain = cold_path
    mp = mpmath.mp.clone()
    mp.dps = 400
    beta = mp.mpf(150)
    spins = 2 * chain.states() - 1
    S, n = len(spins), chain.n
    logw = [beta * sum(int(s[u] * s[v]) for u, v in graph.edges) for s in spins]
    # symmetrised kernel sqrt(pi_x / pi_y) P(x, y), built from mpmath conditionals
    A = mp.matrix(S, S)
    for x in range(S):
        for i in range(n):
            f = sum(int(spins[x][j]) for j in graph.neighbors(i))
            p_flip = 1 / (1 + mp.exp(2 * beta * spins[x][i] * f))
            y = spins[x].copy()
            y[i] = -y[i]
            yi = int(chain.index_of((y + 1) // 2))
            A[x, yi] += p_flip / n * mp.exp((logw[x] - logw[yi]) / 2)
            A[x, x] += (1 - p_flip) / n
    eig = sorted(mp.eigsy(A, eigvals_only=True), reverse=True)
    assert chain.spectral_gap() == pytest.approx(float(1 - eig[1]), rel=1e-6)
