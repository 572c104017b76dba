"""Proposition 1, Corollary 2 and Theorem 3 on exact toy chains (all true as printed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from glauber.exact.chain import ExactChain
from glauber.testing import models
from glauber.theory import (
    is_aperiodic,
    is_irreducible,
    is_markov_kernel,
    is_reversible,
    is_stationary,
)
from glauber.toy_models import AsymmetricIsingModel

from ._support import GIBBS, TEMPERATURES, gibbs_law, tau_near_threshold


@given(model=models(), tau=TEMPERATURES)
@settings(max_examples=25, deadline=None)
def test_proposition1_kernel_is_markov_irreducible_and_aperiodic(model, tau):
    chain = ExactChain(model, tau)
    P = chain.transition_matrix()
    D = P.toarray()
    # Proposition 1: a Markov kernel, by the library's check and by hand.
    assert is_markov_kernel(P)
    assert D.min() >= 0.0
    np.testing.assert_allclose(D.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # P(x, x) = (1/n) sum_i p(x_i | x_{-i}) > 0: every state has a self-loop, so aperiodic.
    assert np.all(np.diag(D) > 0.0)
    # Any state reaches any other in exactly n steps (rewrite site 0, 1, ..., n-1 in turn, or
    # stay), so the support of P^n is full: the kernel is primitive (irreducible + aperiodic).
    # Powers of the 0/1 support pattern avoid any underflow of tiny products.
    support = (D > 0.0).astype(np.float64)
    reach = np.eye(D.shape[0])
    for _ in range(model.n):
        reach = ((reach @ support) > 0.0).astype(np.float64)
    assert reach.all()
    assert is_irreducible(P) and is_aperiodic(P)


@given(model=models(), factor=st.floats(0.5, 3.0))
@settings(max_examples=15, deadline=None)
def test_corollary2_distance_decays_to_zero(model, factor):
    chain = ExactChain(model, tau_near_threshold(model, factor))
    t_mix = chain.mixing_time(0.25)
    ts = sorted({0, 1, 2, t_mix // 2, t_mix, t_mix + 1, 3 * t_mix, 7 * t_mix})
    d = chain.distance_curve(ts)
    assert np.all(np.diff(d) <= 1e-12)  # d is non-increasing (LPW 2nd ed. Exercise 4.2)
    # At an exact tie d(t) = 1/4 (a Potts pair far below its threshold reaches one) rounding
    # decides, as mixing_time documents: the crossing is checked to within the TV's accuracy.
    tie = 1e-14
    assert chain.distance(t_mix) <= 0.25 + tie
    assert t_mix == 0 or chain.distance(t_mix - 1) > 0.25 - tie
    # Submultiplicativity: d(l t_mix(1/4)) <= 2^-l (LPW 2nd ed. eq. (4.36)).
    ells = (1, 2, 3, 5, 25)
    for ell, value in zip(ells, chain.distance_curve([ell * t_mix for ell in ells])):
        assert value <= 2.0**-ell + 1e-12
    # P^t(x, .) -> mu_tau from every start: d(25 t_mix) <= 2^-25.


@given(model=models(families=GIBBS), tau=TEMPERATURES)
@settings(max_examples=25, deadline=None)
def test_theorem3_gibbs_law_is_stationary_and_reversible(model, tau):
    chain = ExactChain(model, tau)
    pi = gibbs_law(model, tau)  # closed form, independent of the chain's solver
    P = chain.transition_matrix()
    D = P.toarray()
    assert is_stationary(P, pi, atol=1e-11)
    assert is_reversible(P, pi)
    # Detailed balance entry by entry (Theorem 3's conclusion), relative to each flow.
    F = pi[:, None] * D
    np.testing.assert_allclose(F, F.T, rtol=1e-9, atol=0.0)
    # The chain's stationary solver (GTH) agrees with the Gibbs law to relative precision.
    np.testing.assert_allclose(chain.stationary(), pi, rtol=1e-8, atol=0.0)
    assert chain.is_reversible()


def _kolmogorov_log_ratio(D: np.ndarray, cycle: list[int]) -> float:
    """``log prod P(forward) - log prod P(backward)`` around a cycle of states."""
    forward = sum(math.log(D[u, v]) for u, v in zip(cycle, cycle[1:] + cycle[:1]))
    backward = sum(math.log(D[v, u]) for u, v in zip(cycle, cycle[1:] + cycle[:1]))
    return forward - backward


@given(model=models(families={"asym-ising": {"min_asym": 0.1}}), tau=TEMPERATURES,
       data=st.data())
@settings(max_examples=20, deadline=None)
def test_theorem3_asymmetric_ising_is_reversible_for_no_law(model, tau, data):
    J = model.J
    gaps = np.abs(J - J.T)
    i, j = (int(v) for v in np.unravel_index(np.argmax(gaps), J.shape))
    assume(gaps[i, j] > 1e-3)
    chain = ExactChain(model, tau)
    D = chain.dense_transition_matrix()
    n = model.n
    x = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    y, w = x.copy(), x.copy()
    y[i] = 1 - x[i]
    w[j] = 1 - x[j]
    z = y.copy()
    z[j] = 1 - x[j]
    cycle = [int(v) for v in chain.index_of(np.stack([x, y, z, w]))]
    # Kolmogorov's criterion (Kelly, Reversibility and Stochastic Networks, 1979, Thm 1.7): a
    # chain is reversible w.r.t. some law iff every cycle has equal forward and backward
    # products. Around the rectangle the log-ratio is Proposition 4's delta,
    # 4 s_i s_j (J_ji - J_ij) / tau (spins s = 2x - 1), which is not 0.
    s_i, s_j = 2 * x[i] - 1, 2 * x[j] - 1
    expected = 4.0 * s_i * s_j * (J[j, i] - J[i, j]) / tau
    assert _kolmogorov_log_ratio(D, cycle) == pytest.approx(expected, rel=1e-7, abs=1e-9)
    assert abs(expected) > 1e-4
    assert not chain.is_reversible()
    assert not is_reversible(chain.transition_matrix(), chain.stationary())


def test_symmetric_couplings_pass_kolmogorov_and_are_reversible():
    J = np.array([[0.0, 0.7, -0.3], [0.7, 0.0, 0.4], [-0.3, 0.4, 0.0]])
    chain = ExactChain(AsymmetricIsingModel(J, field=[0.2, -0.1, 0.0]), tau=0.8)
    D = chain.dense_transition_matrix()
    states = chain.states()
    for x in states:
        y, w = x.copy(), x.copy()
        y[0], w[2] = 1 - x[0], 1 - x[2]
        z = y.copy()
        z[2] = 1 - x[2]
        cycle = [int(v) for v in chain.index_of(np.stack([x, y, z, w]))]
        assert abs(_kolmogorov_log_ratio(D, cycle)) < 1e-12
    assert chain.is_reversible()
