"""Symmetry reduction (glauber.exact.symmetry): the orbit chain against the full chain."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from glauber.exact.chain import ExactChain
from glauber.exact.symmetry import OrbitChain, table_defect, verified_generators
from glauber.toy_models import CurieWeissModel, IsingModel, PottsModel
from glauber.toy_models.base import FunctionModel

# Binary bracelets (necklaces up to rotation and reflection), OEIS A000029, and up to spin flip
# as well, OEIS A000011: the orbit counts of the Ising n-cycle's chain.
BRACELETS = {4: 6, 5: 8, 6: 13, 7: 18, 8: 30, 10: 78, 12: 224}
FLIP_BRACELETS = {4: 4, 5: 4, 6: 8, 7: 9, 8: 18, 10: 44, 12: 122}


def _lumping(chain: ExactChain, oc: OrbitChain) -> np.ndarray:
    L = np.zeros((chain.num_states, oc.num_orbits))
    L[np.arange(chain.num_states), oc.labels] = 1.0
    return L


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8, 10])
def test_ising_cycle_orbit_counts_are_bracelets(n):
    model = IsingModel(nx.cycle_graph(n))
    assert OrbitChain(model, 1.0, tokens=False).num_orbits == BRACELETS[n]
    assert OrbitChain(model, 1.0, tokens=True).num_orbits == FLIP_BRACELETS[n]


@pytest.mark.parametrize("model, tau", [
    (IsingModel(nx.cycle_graph(8), coupling=0.8), 1.5),
    (IsingModel(nx.grid_2d_graph(2, 4), coupling=1.0, field=0.3), 1.0),
    (PottsModel(nx.cycle_graph(5), q=3, coupling=1.2), 0.9),
    (CurieWeissModel(7, alpha=1.5), 1.0),
])
@pytest.mark.parametrize("tokens", [False, True])
def test_orbit_chain_is_the_exact_lumping(model, tau, tokens):
    chain = ExactChain(model, tau)
    oc = OrbitChain(model, tau, tokens=tokens)
    P, L = chain.dense_transition_matrix(), _lumping(chain, oc)
    PL = P @ L
    # strong lumpability: P(x, O') is the same for every x in an orbit, and equals Pbar
    np.testing.assert_allclose(PL, PL[oc.representatives][oc.labels], atol=1e-14)
    np.testing.assert_allclose(oc.transition_matrix().toarray(), PL[oc.representatives],
                               atol=1e-15)
    np.testing.assert_allclose(oc.stationary(), chain.stationary() @ L, rtol=1e-10)
    # the lumped gap is a gap of G-invariant eigenfunctions: never below the full chain's
    assert oc.spectral_estimate().gap >= chain.spectral_gap() * (1 - 1e-9)
    # exact distances from a symmetric start: the uniform law on an orbit
    orbit = oc.orbit_of(np.zeros(model.n, dtype=int))
    members = np.flatnonzero(oc.labels == orbit)
    mu = np.zeros(chain.num_states)
    mu[members] = 1 / members.size
    ts = [0, 1, 3, 10]
    full = []
    for t in range(11):
        if t in ts:
            full.append(0.5 * np.abs(mu - chain.stationary()).sum())
        mu = mu @ P
    np.testing.assert_allclose(oc.distance_from(orbit, ts), full, atol=1e-13)


def test_ising_cycle_gap_survives_site_reduction():
    # LPW Theorem 15.5: the gap (1 - tanh 2 beta)/n has the magnetisation as eigenfunction,
    # invariant under rotations and reflections: the site-only orbit chain keeps it exactly;
    # the spin flip sends it to its negative, so the flip-reduced chain loses it.
    n, beta = 12, 0.5
    model = IsingModel(nx.cycle_graph(n))
    exact = (1 - math.tanh(2 * beta)) / n
    assert OrbitChain(model, 1 / beta, tokens=False).spectral_estimate().gap == pytest.approx(
        exact, rel=1e-9)
    assert OrbitChain(model, 1 / beta, tokens=True).spectral_estimate().gap > 1.5 * exact


def test_generators_from_the_table_match_the_declared_ones():
    # A model without preserved_by is checked on its full table of log-conditionals.
    J = nx.to_numpy_array(nx.cycle_graph(6))

    def scores(x, i):
        f = (2.0 * x - 1.0) @ J[i]
        return np.stack([-f, f], axis=1)

    plain = FunctionModel(6, 2, scores)
    chain = ExactChain(plain, 1.0)
    gens = verified_generators(plain, chain, tokens=True)
    assert gens and all(table_defect(chain.log_conditionals(), g) <= 1e-12 for g in gens)
    oc = OrbitChain(plain, 1.0, tokens=True, chain=chain)
    assert oc.num_orbits == FLIP_BRACELETS[6]
    # a field on one site breaks every symmetry that moves it, and the flip
    broken = FunctionModel(6, 2, lambda x, i: scores(x, i) + (i == 0) * np.array([0.0, 0.7]))
    chain_b = ExactChain(broken, 1.0)
    oc_b = OrbitChain(broken, 1.0, tokens=True, chain=chain_b)
    # only the reflection through sites 0 and 3 survives; it fixes 2^4 states (Burnside)
    assert oc_b.num_orbits == (64 + 16) // 2


def test_orbit_bracket_bounds_the_full_chain():
    model = IsingModel(nx.cycle_graph(8), coupling=1.0)
    chain = ExactChain(model, 1.2)
    exact = chain.mixing_time(0.25)
    bracket = OrbitChain(model, 1.2, tokens=False).mixing_bracket(0.25)
    assert bracket.monotone and bracket.lower <= exact <= bracket.upper
    assert bracket.lower == chain.mixing_bracket(0.25).lower  # same extreme starts
    with pytest.raises(Exception, match="tokens=False"):
        OrbitChain(model, 1.2, tokens=True).mixing_bracket(0.25)
