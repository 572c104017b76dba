"""Assumption 1 / Theorem 8 (low-temperature escape; true as printed) and the bottleneck bound
of Levin-Peres-Wilmer 2nd ed. Theorem 7.4 (non-reversible form) on exact toy chains."""

from __future__ import annotations

import math

import networkx as nx
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from glauber.exact.chain import ExactChain
from glauber.testing import basins, models
from glauber.theory import (
    bottleneck_distance_lower_bound,
    bottleneck_tmix_lower_bound,
    sharper_escape_bound,
    theorem8_escape_bound,
    theorem8_tmix_lower_bound,
)
from glauber.toy_models import PottsModel

from ._support import not_mixed_before

#: Models with a self-reinforcing token 0: complete-graph Potts and Ising with one positive
#: coupling and no field (by colour / spin symmetry mu(B) <= 1/q for the basins below), and
#: planted models with token 0 and a positive strength.
SELF_REINFORCING = {
    "potts": {"graphs": ("complete",), "coupling": (0.5, 3.0), "coupling_modes": ("uniform",),
              "field_modes": ("zero",)},
    "ising": {"graphs": ("complete",), "coupling": (0.3, 2.0), "coupling_modes": ("uniform",),
              "field_modes": ("zero",)},
    "planted": {"token": 0, "strength": (2.0, 10.0), "base": (-2.0, 2.0)},
}


@given(model=models(families=SELF_REINFORCING, min_sites=3, max_q=4), data=st.data(),
       u=st.floats(0.5, 8.0))
@settings(max_examples=25, deadline=None)
def test_theorem8_escape_conductance_and_mixing_lower_bound(model, data, u):
    # The basin {#0 >= b} with b > n/2.
    mask = data.draw(basins(model, kinds=("count",), token=0, min_fraction=0.5)).mask
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


@given(model=models(), tau=st.floats(0.3, 3.0), data=st.data())
@settings(max_examples=20, deadline=None)
def test_lpw_7_4_bottleneck_lower_bound_for_random_sets(model, tau, data):
    # d(t) >= 1 - pi(A) - t Phi(A) for every set A: stationarity alone gives
    # ||mu_A P^t - mu_A||_TV <= t Phi(A) (no reversibility: asymmetric models are included).
    chain = ExactChain(model, tau)
    mask = data.draw(basins(model, kinds=("random",))).mask  # neither empty nor everything
    pi_A = float(chain.stationary()[mask].sum())
    assume(1e-12 < pi_A < 1 - 1e-12)
    phi = chain.conductance(mask)
    ts = [0, 1, 2, 5, 10, 40]
    for t, d in zip(ts, chain.distance_curve(ts)):
        assert d >= bottleneck_distance_lower_bound(t, pi_A, phi) - 1e-12
