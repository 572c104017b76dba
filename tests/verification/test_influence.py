"""Definition 2, Lemma 6 (and its sharper tanh form) and Corollary 7 on exact toy chains."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.exact.chain import ExactChain
from glauber.testing import graphs, models
from glauber.theory import (
    alpha_row,
    corollary7_alpha_bound,
    corollary7_holds,
    influence_matrix_bound,
    lemma6_bound,
    tanh_bound,
    tv_distance,
)
from glauber.toy_models import IsingModel


def brute_force_influence(chain: ExactChain) -> np.ndarray:
    """Definition 2 by a plain double loop over all pairs differing at one site (slow)."""
    n, cond, states = chain.n, chain.conditionals(), chain.states()
    C = np.zeros((n, n))
    for x in range(len(states)):
        for y in range(x + 1, len(states)):
            differ = np.flatnonzero(states[x] != states[y])
            if differ.size == 1:
                j = differ[0]
                tv = tv_distance(cond[:, x, :], cond[:, y, :])
                C[:, j] = np.maximum(C[:, j], tv)
    np.fill_diagonal(C, 0.0)
    return C


@given(model=models(), factor=st.floats(0.25, 4.0))
@settings(max_examples=30, deadline=None)
def test_lemma6_tanh_and_corollary7_on_exact_influences(model, factor):
    Delta = ExactChain(model, 1.0).oscillation_matrix()  # scores at tau = 1
    # Temperatures around Corollary 7's threshold max_i sum_j Delta_ij = 4 tau.
    tau = max(factor * Delta.sum(axis=1).max() / 4.0, 0.05)
    chain = ExactChain(model, tau)
    C = chain.influence_matrix()
    if chain.num_states <= 64:
        np.testing.assert_allclose(C, brute_force_influence(chain), rtol=0, atol=1e-14)
    sharp, printed = tanh_bound(Delta, tau), lemma6_bound(Delta, tau)
    assert np.all(C <= sharp + 1e-12)  # sharper Lemma 6: c_ij <= tanh(Delta_ij / (4 tau))
    assert np.all(sharp <= printed + 1e-15)  # ... which implies Lemma 6 as printed
    assert np.all(C <= influence_matrix_bound(Delta, tau) + 1e-12)
    # Corollary 7: the bound on alpha, and its conclusion alpha < 1 under its hypothesis.
    a = alpha_row(C)
    assert a <= corollary7_alpha_bound(Delta, tau, sharp=True) + 1e-12
    assert corollary7_alpha_bound(Delta, tau, sharp=True) <= corollary7_alpha_bound(
        Delta, tau
    ) + 1e-12
    if corollary7_holds(Delta, tau):
        assert a < 1.0


def test_corollary7_hypothesis_is_met_and_missed_in_the_sampled_range():
    # The property above exercises both branches: at factor < 1 the hypothesis holds.
    model = IsingModel(nx.cycle_graph(5), coupling=1.0)
    Delta = ExactChain(model, 1.0).oscillation_matrix()
    assert corollary7_holds(Delta, 0.9 * Delta.sum(axis=1).max() / 4.0) is False
    assert corollary7_holds(Delta, 1.1 * Delta.sum(axis=1).max() / 4.0) is True


@given(graph=graphs(2, 8), beta=st.floats(0.05, 2.0), J=st.sampled_from([-1.0, 0.5, 1.0]))
@settings(max_examples=25, deadline=None)
def test_ising_influences_are_the_dobrushin_closed_forms(graph, beta, J):
    # Levin-Peres-Wilmer 2nd ed. Section 15.1 (heat bath, zero field): one neighbour moves the
    # field by 2 J; the influence is max_S |tanh(beta J (S+1)) - tanh(beta J (S-1))| / 2 over the
    # sum S of the other neighbours: tanh(beta |J|) when S = 0 is possible (odd degree), else
    # tanh(2 beta |J|) / 2 (S = +-1). Non-neighbours have influence 0.
    n = graph.number_of_nodes()
    chain = ExactChain(IsingModel(graph, coupling=J), tau=1.0 / beta)
    C = chain.influence_matrix()
    Delta = chain.oscillation_matrix()
    b = beta * abs(J)
    expected = np.zeros((n, n))
    for i in graph.nodes:
        for j in graph.neighbors(i):
            expected[i, j] = math.tanh(b) if graph.degree(i) % 2 else math.tanh(2 * b) / 2
    np.testing.assert_allclose(C, expected, rtol=1e-12, atol=1e-15)
    # The oscillation of the score difference (-2J s_j, +2J s_j) is 4 |J| on every edge, so the
    # tanh bound is tanh(beta |J|): attained exactly at odd-degree targets (a symmetric two-point
    # law), strict at even-degree ones.
    adjacency = nx.to_numpy_array(graph, nodelist=range(n)) > 0
    np.testing.assert_allclose(Delta, 4.0 * abs(J) * adjacency, rtol=1e-12, atol=1e-12)
    bound = tanh_bound(Delta, 1.0 / beta)
    odd = np.array([graph.degree(i) % 2 == 1 for i in range(n)])
    np.testing.assert_allclose(C[odd], bound[odd], rtol=1e-12, atol=1e-15)
    even_edges = adjacency & ~odd[:, None]
    assert np.all(C[even_edges] < bound[even_edges])
