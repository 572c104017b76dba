"""Assumption 1 / Theorem 8 (low-temperature escape; true as printed) and the bottleneck bound
of Levin-Peres-Wilmer 2nd ed. Theorem 7.4 (non-reversible form) on exact toy chains."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from glauber.theory import (
    bottleneck_distance_lower_bound,
    bottleneck_tmix_lower_bound,
    sharper_escape_bound,
    theorem8_escape_bound,
    theorem8_tmix_lower_bound,
)
from glauber.toy_models import IsingModel, PlantedBasinModel, PottsModel
from glauber.toy_models.exact_chain import ExactChain

from ._support import any_models, not_mixed_before, seeds


@st.composite
def basin_models(draw):
    """Models with a self-reinforcing token 0 and the basin ``{#0 >= threshold}``."""
    kind = draw(st.sampled_from(["potts", "ising", "planted"]))
    if kind == "potts":  # complete-graph Potts: by colour symmetry mu(B) <= 1/3
        q = draw(st.integers(3, 4))
        n = draw(st.integers(3, 5 if q == 3 else 4))
        model = PottsModel(nx.complete_graph(n), q, coupling=draw(st.floats(0.5, 3.0)))
    elif kind == "ising":  # Curie-Weiss-type: by spin symmetry mu(B) < 1/2
        n = draw(st.integers(3, 8))
        model = IsingModel(nx.complete_graph(n), coupling=draw(st.floats(0.3, 2.0)))
    else:
        q = draw(st.integers(2, 3))
        n = draw(st.integers(3, 7 if q == 2 else 5))
        model = PlantedBasinModel.with_random_base(
            n, q, rng=draw(seeds), scale=draw(st.floats(0.0, 1.0)), token=0,
            strength=draw(st.floats(2.0, 10.0)),
        )
    threshold = draw(st.integers(n // 2 + 1, n))
    return model, threshold


@given(data=basin_models(), u=st.floats(0.5, 8.0))
@settings(max_examples=25, deadline=None)
def test_theorem8_escape_conductance_and_mixing_lower_bound(data, u):
    model, threshold = data
    mask = (ExactChain(model, 1.0).states() == 0).sum(axis=1) >= threshold
    margins = ExactChain(model, 1.0).margins(mask)  # scores at tau = 1
    assume(margins.holds and math.isfinite(margins.delta_star))
    d_star, q, n = margins.delta_star, model.q, model.n
    tau = d_star / u  # Delta*/tau = u
    chain = ExactChain(model, tau)
    escape = chain.escape_probabilities(mask)
    printed = theorem8_escape_bound(q, d_star, tau)
    sharper = sharper_escape_bound(n, margins.k, q, d_star, tau)
    assert sharper <= printed
    # Exact P(x, B^c) <= (k/n)(q - 1) e^{-Delta*/tau} <= q e^{-Delta*/tau} for every x in B.
    assert escape.max() <= sharper * (1 + 1e-9)
    assert escape.max() <= (margins.k / n) * margins.max_exit_tokens * math.exp(-u) * (1 + 1e-9)
    phi = chain.conductance(mask)
    assert phi <= printed * (1 + 1e-9) and phi <= escape.max() * (1 + 1e-12)
    pi_B = float(chain.stationary()[mask].sum())
    if pi_B <= 0.5:  # t_mix(1/4) >= L iff d(ceil(L) - 1) > 1/4 (no full t_mix: it can be ~1e20)
        assert not_mixed_before(chain, theorem8_tmix_lower_bound(q, d_star, tau))
        assert not_mixed_before(chain, bottleneck_tmix_lower_bound(pi_B, phi, 0.25))


def test_theorem8_potts_example_by_hand():
    # K_5 Potts, q = 3, J = 1, basin {#0 >= 4}. On the boundary (four 0s and one c != 0) a site
    # holding 0 sees three 0s and one c: its margin over c is J(3 - 1) = 2, over the third
    # colour 3J = 3, so Delta* = 2J = 2 (exit-causing tokens: any colour but 0).
    model = PottsModel(nx.complete_graph(5), 3, coupling=1.0)
    chain = ExactChain(model, tau=0.4)
    mask = (chain.states() == 0).sum(axis=1) >= 4
    m = chain.margins(mask)
    assert m.holds and m.delta_star == pytest.approx(2.0) and m.k == 4
    assert chain.stationary()[mask].sum() < 1 / 3
    bound = theorem8_tmix_lower_bound(3, 2.0, 0.4)  # e^5 / 12 ~ 12.4
    assert bound == pytest.approx(math.exp(5) / 12)
    assert chain.mixing_time(0.25) >= bound
    # Exact escape from a boundary state: one of its 4 zeros is picked (4/5) and moves to a
    # colour c' with p(c') = e^{s(c')/tau} / sum_a e^{s(a)/tau}, scores (3, 1, 0)J or (3, 0, 1)J.
    z = math.exp(3 / 0.4) + math.exp(1 / 0.4) + 1.0
    exact = 0.8 * (math.exp(1 / 0.4) + 1.0) / z
    assert chain.escape_probabilities(mask).max() == pytest.approx(exact, rel=1e-12)
    assert exact <= sharper_escape_bound(5, 4, 3, 2.0, 0.4)


@given(model=any_models(), seed=seeds, tau=st.floats(0.3, 3.0), data=st.data())
@settings(max_examples=20, deadline=None)
def test_lpw_7_4_bottleneck_lower_bound_for_random_sets(model, seed, tau, data):
    # d(t) >= 1 - pi(A) - t Phi(A) for every set A: stationarity alone gives
    # ||mu_A P^t - mu_A||_TV <= t Phi(A) (no reversibility: asymmetric models are included).
    chain = ExactChain(model, tau)
    rng = np.random.default_rng(seed)
    mask = rng.random(chain.num_states) < data.draw(st.floats(0.05, 0.95))
    assume(0 < mask.sum() < chain.num_states)
    pi_A = float(chain.stationary()[mask].sum())
    assume(1e-12 < pi_A < 1 - 1e-12)
    phi = chain.conductance(mask)
    ts = [0, 1, 2, 5, 10, 40]
    for t, d in zip(ts, chain.distance_curve(ts)):
        assert d >= bottleneck_distance_lower_bound(t, pi_A, phi) - 1e-12
