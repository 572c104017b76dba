"""t_mix brackets (glauber.exact.brackets): every rigorous bound confronted with exact t_mix and
the exact worst-start distance curve on chains small enough for dense powers."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from glauber.errors import BracketOnlyError, ConvergenceError
from glauber.exact.brackets import coupling_trajectory
from glauber.exact.chain import ExactChain
from glauber.testing import models, temperatures
from glauber.toy_models import IsingModel, PottsModel
from glauber.toy_models.base import FunctionModel

FERRO = {"ising": {"coupling": (0.0, 2.0), "field": (-1.0, 1.0)}}


@settings(max_examples=20, deadline=None, database=None)
@given(models(max_states=128, families=FERRO, min_sites=2), temperatures(0.3, 4.0),
       st.sampled_from([0.05, 0.25, 0.4]))
def test_rigorous_bounds_hold_against_exact_tmix(model, tau, eps):
    chain = ExactChain(model, tau)
    assert chain.is_monotone() and chain.monotonicity_defect() == 0.0  # J >= 0: both agree
    try:
        exact = chain.mixing_time(eps)
    except ConvergenceError:  # numerically reducible at this temperature: no exact value
        assume(False)
    bracket = chain.mixing_bracket(eps, max_steps=20_000)
    assert bracket.monotone
    for claim in bracket.claims:
        if not claim.rigorous or claim.bound is None:
            continue
        kind = claim.details["kind"]
        assert (exact >= claim.bound if kind == "lower" else exact <= claim.bound
                if kind == "upper" else exact == claim.bound), (claim, exact)
    assert bracket.lower <= exact and (bracket.upper is None or exact <= bracket.upper)
    if bracket.exact is not None:
        assert bracket.exact == exact


@settings(max_examples=15, deadline=None, database=None)
@given(models(max_states=64, families=FERRO, min_sites=2), temperatures(0.3, 4.0))
def test_coupling_curves_sandwich_the_exact_distance(model, tau):
    # lower(t) <= d(t) <= upper(t) at every t: d(t) from dense powers of P over every start
    chain = ExactChain(model, tau)
    P, pi = chain.dense_transition_matrix(), chain.stationary()
    traj = coupling_trajectory(chain.transition_matrix(), pi, chain.num_states - 1, 0,
                               chain.states().sum(axis=1).astype(float), model.n, 1e-3,
                               max_steps=60)
    power = np.eye(chain.num_states)
    for t in range(traj.steps + 1):
        d = 0.5 * np.abs(power - pi).sum(axis=1).max()
        assert traj.lower[t] <= d + 1e-12 and d <= traj.upper[t] + 1e-12
        power = power @ P


def test_monotonicity_defect_separates_ferro_anti_and_potts():
    ferro = ExactChain(IsingModel(nx.cycle_graph(5), coupling=0.7, field=0.4), 1.0)
    anti = ExactChain(IsingModel(nx.cycle_graph(5), coupling=-0.7), 1.0)
    assert ferro.monotonicity_defect() == 0.0 and ferro.is_monotone()
    assert anti.monotonicity_defect() > 0.1 and not anti.is_monotone()
    # Potts with q = 3 is not monotone: raising a neighbour from colour 0 to 1 multiplies the
    # weight of colour 1 by e^J and divides that of 0 by it, which can raise the normaliser and so
    # lower P(x_i = 2): the conditional is not stochastically larger (defect ~0.05 here).
    # With no field every order of the colours is the natural one up to relabelling (the model
    # is symmetric under colour permutations), so no order gives a monotone coupling.
    potts = ExactChain(PottsModel(nx.path_graph(3), q=3, coupling=1.0), 1.0)
    assert potts.monotonicity_defect() > 0.01 and not potts.is_monotone()
    # a model without is_monotone() is decided on its table
    table = FunctionModel(3, 2, lambda x, i: np.stack([0 * x[:, 0], 0.5 * x.sum(1)], 1))
    assert ExactChain(table, 1.0).is_monotone()


def test_spectral_bounds_are_the_only_ones_for_potts_and_hold():
    chain = ExactChain(PottsModel(nx.cycle_graph(5), q=3, coupling=1.0), 0.8)
    bracket = chain.mixing_bracket(0.25)
    exact = chain.mixing_time(0.25)
    assert not bracket.monotone
    assert {c.details["source"] for c in bracket.claims} == {"spectral"}
    assert bracket.lower <= exact <= bracket.upper  # dense gap: both spectral ends rigorous


def test_collapsed_bracket_is_returned_as_exact(monkeypatch):
    # One spin at h = 0: P(x, .) = pi after one step, so d(0) = 1/2 and d(1) = 0, t_mix(1/4) = 1;
    # the coupling bounds are 1 then 0 (upper) and 1/2 then 0 (lower): they meet at 1.
    from glauber.exact import chain_mixing

    monkeypatch.setattr(chain_mixing, "EXACT_TMIX_MAX_STATES", 1)
    chain = ExactChain(IsingModel(nx.empty_graph(1)), 1.0)
    monkeypatch.setattr(ExactChain, "factored", property(lambda self: False))
    bracket = chain.mixing_bracket(0.25)
    assert bracket.exact == 1 and any(c.details["kind"] == "exact" for c in bracket.claims)
    assert chain.mixing_time(0.25) == 1  # above the exact limit: the met bracket is returned
    two = ExactChain(IsingModel(nx.path_graph(2)), 1.0)
    with pytest.raises(BracketOnlyError, match="6 <= t_mix"):  # exact t_mix 6, bracket 6..17
        two.mixing_time(0.25)


def test_bracket_summary_labels():
    chain = ExactChain(IsingModel(nx.cycle_graph(6)), 2.0)
    text = chain.mixing_bracket().summary()
    assert "t_mix(0.25)" in text
    assert pytest.approx(0.25) == chain.mixing_bracket().eps
