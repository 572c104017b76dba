"""Textbook oracles (Levin-Peres-Wilmer, Markov Chains and Mixing Times, 2nd ed., 2017) on exact
heat-bath Ising chains: cycle relaxation time, Dobrushin's bound, Curie-Weiss."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.exact.chain import ExactChain
from glauber.testing import graphs
from glauber.theory import (
    alpha_row,
    bottleneck_distance_lower_bound,
    curie_weiss_fast_bound,
    curie_weiss_tmix_bound,
    dobrushin_ising_bound,
    dobrushin_ising_tmix_bound,
    ising_cycle_relaxation_time,
)
from glauber.toy_models import CurieWeissLumpedChain, CurieWeissModel, IsingModel

from ._support import mixes_by, tv_from_each_start


@given(n=st.integers(3, 8), beta=st.floats(0.01, 1.5))
@settings(max_examples=20, deadline=None)
def test_ising_cycle_relaxation_time_lpw_theorem_15_5(n, beta):
    # LPW Theorem 15.5: heat-bath Ising on the n-cycle has t_rel = n / (1 - tanh(2 beta)), and
    # the magnetisation f(s) = sum_i s_i is an eigenfunction with eigenvalue
    # 1 - (1 - tanh 2 beta)/n: E[s_i' | s] = tanh(beta (s_{i-1} + s_{i+1})) = tanh(2 beta) times
    # the neighbour average, because the neighbour sum is -2, 0 or 2.
    chain = ExactChain(IsingModel(nx.cycle_graph(n), coupling=1.0), tau=1.0 / beta)
    expected = n / (1.0 - math.tanh(2 * beta))
    assert chain.relaxation_time() == pytest.approx(expected, rel=1e-8)
    assert ising_cycle_relaxation_time(n, beta) == pytest.approx(expected, rel=1e-12)
    f = (2 * chain.states() - 1).sum(axis=1).astype(float)
    eigenvalue = 1.0 - (1.0 - math.tanh(2 * beta)) / n
    np.testing.assert_allclose(chain.dense_transition_matrix() @ f, eigenvalue * f, atol=1e-11)


@given(graph=graphs(2, 8), x=st.floats(0.05, 0.95))
@settings(max_examples=20, deadline=None)
def test_dobrushin_ising_bound_lpw_theorem_15_1(graph, x):
    # LPW Theorem 15.1: if Delta tanh(beta) < 1, d(t) <= n (1 - c/n)^t with c = 1 - Delta tanh beta.
    n = graph.number_of_nodes()
    max_degree = max((d for _, d in graph.degree), default=0)
    beta = math.atanh(x / max(max_degree, 1))  # Delta tanh(beta) = x < 1 (or beta free)
    chain = ExactChain(IsingModel(graph, coupling=1.0), tau=1.0 / beta)
    # The exact row sums are at most Delta tanh(beta): the Dobrushin hypothesis.
    assert alpha_row(chain.influence_matrix()) <= max_degree * math.tanh(beta) + 1e-12
    for t in (0, 1, 3, 10, 30, 100):
        assert chain.distance(t) <= dobrushin_ising_bound(n, max_degree, beta, t) + 1e-12
    assert mixes_by(chain, dobrushin_ising_tmix_bound(n, max_degree, beta, 0.25))


def _lump(D: np.ndarray, k: np.ndarray, n: int) -> np.ndarray:
    return np.stack([D[:, k == m].sum(axis=1) for m in range(n + 1)], axis=1)


@given(n=st.integers(2, 8), alpha=st.floats(0.0, 3.0), field=st.floats(-0.5, 0.5),
       tau=st.floats(0.5, 2.0))
@settings(max_examples=15, deadline=None)
def test_curie_weiss_full_chain_lumps_to_the_birth_death_chain(n, alpha, field, tau):
    # LPW Section 15.2 (the complete graph): by exchangeability the number k of + spins is a
    # Markov chain. Every state of level k moves to each level like the lumped chain from k.
    full = ExactChain(CurieWeissModel(n, alpha, field=field), tau)
    lumped = CurieWeissLumpedChain(n, alpha, tau=tau, field=field)
    k = full.states().sum(axis=1)
    D = full.dense_transition_matrix()
    L = lumped.transition_matrix().toarray()
    np.testing.assert_allclose(_lump(D, k, n), L[k], rtol=0, atol=1e-14)
    pi = full.stationary()
    np.testing.assert_allclose(
        [pi[k == m].sum() for m in range(n + 1)], lumped.stationary(), rtol=1e-9, atol=1e-300
    )
    # From the exchangeable starts (all minus, all plus) the TV distances agree exactly.
    for t in (1, 4, 15):
        per_start = tv_from_each_start(D, pi, t)
        levels = lumped.level_distances(t)
        assert per_start[0] == pytest.approx(levels[0], abs=1e-12)
        assert per_start[-1] == pytest.approx(levels[n], abs=1e-12)
        assert full.distance(t) >= levels.max() - 1e-12  # the lumped distance is a lower bound


@given(n=st.integers(2, 8), alpha=st.floats(0.0, 0.95))
@settings(max_examples=15, deadline=None)
def test_curie_weiss_high_temperature_bound_lpw_theorem_15_4(n, alpha):
    # alpha < 1: every row sum is (n - 1) x (influence of one neighbour) <= (n-1) tanh(alpha/n)
    # < alpha, so Dobrushin's bound applies with c = 1 - alpha.
    chain = ExactChain(CurieWeissModel(n, alpha), tau=1.0)
    assert alpha_row(chain.influence_matrix()) <= (n - 1) * math.tanh(alpha / n) + 1e-12
    for t in (1, 5, 20, 60):
        assert chain.distance(t) <= curie_weiss_fast_bound(n, alpha, t) + 1e-12
    assert mixes_by(chain, curie_weiss_tmix_bound(n, alpha, 0.25))


@pytest.mark.parametrize("n", [5, 7])
def test_curie_weiss_low_temperature_bottleneck_full_chain(n):
    # alpha > 1: the set A = {sum s < 0} (mass exactly 1/2 for odd n, by spin symmetry) is a
    # bottleneck. LPW Theorem 7.4: d(t) >= 1/2 - t Phi(A), so t_mix(1/4) >= 1 / (4 Phi(A)).
    alpha = 3.0
    full = ExactChain(CurieWeissModel(n, alpha), tau=1.0)
    k = full.states().sum(axis=1)
    A = 2 * k - n < 0
    assert full.stationary()[A].sum() == pytest.approx(0.5, abs=1e-12)
    phi = full.conductance(A)
    # Phi(A) of the full chain is the lumped chain's (A is a union of levels): boundary flow
    # pi(k0) P(k0, k0 + 1) / (1/2) at the last level k0 = (n - 1)/2 below zero magnetisation.
    lumped = CurieWeissLumpedChain(n, alpha)
    k0 = (n - 1) // 2
    assert phi == pytest.approx(lumped.stationary()[k0] * lumped.up[k0] / 0.5, rel=1e-10)
    for t in (1, 10, 100):
        assert full.distance(t) >= bottleneck_distance_lower_bound(t, 0.5, phi) - 1e-12
    assert full.mixing_time(0.25) >= 1.0 / (4.0 * phi)


def test_curie_weiss_low_temperature_is_exponentially_slow_in_n():
    # Through the lumped chain (exact for large n): the bottleneck conductance decays
    # exponentially in n at alpha > 1, and the lumped t_mix (a lower bound on the full chain's)
    # obeys LPW 7.4; at alpha < 1 the lumped t_mix stays below the O(n log n) bound.
    phis = []
    for n in (21, 41, 81):
        chain = CurieWeissLumpedChain(n, 1.5)
        pi = chain.stationary()
        k0 = (n - 1) // 2
        phi = pi[k0] * chain.up[k0] / pi[: k0 + 1].sum()
        phis.append(phi)
        assert chain.mixing_time(0.25) >= (1 - 0.5 - 0.25) / phi
    assert phis[1] / phis[0] < 0.2 and phis[2] / phis[1] < phis[1] / phis[0]
    for n in (21, 81):
        assert CurieWeissLumpedChain(n, 0.5).mixing_time(0.25) <= curie_weiss_tmix_bound(n, 0.5)
