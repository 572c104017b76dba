"""The clock family: its closed forms, and its record reaching the command line, glauber.testing
and ``glauber verify --examples`` (a family added by its module, one line of the package
``__init__`` and this test)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings

from glauber.core.enumeration import all_states
from glauber.errors import VocabularyError
from glauber.exact.chain import ExactChain
from glauber.testing import exact, models, sample
from glauber.toy_models import ClockModel, IsingModel, ModelSpec, parse_toy_spec


def test_two_angles_are_the_ising_model_with_the_field_reversed():
    # cos(pi (a - b)) = s_a s_b for spins s = 2x - 1, and cos(pi a) = -s_a: clock(J, h) on two
    # angles is Ising(J, -h) (module docstring), so the exact chains agree.
    graph = nx.cycle_graph(5)
    clock = ClockModel(graph, 2, coupling=0.7, field=0.3)
    ising = IsingModel(graph, coupling=0.7, field=-0.3)
    states = all_states(5, 2)
    for site in range(5):
        np.testing.assert_allclose(clock.score_site(states, site),
                                   ising.score_site(states, site), rtol=0, atol=1e-15)
    a, b = ExactChain(clock, 0.8), ExactChain(ising, 0.8)
    assert a.mixing_time(0.25) == b.mixing_time(0.25)
    np.testing.assert_allclose(a.stationary(), b.stationary(), rtol=1e-12)


def test_four_angles_are_two_independent_ising_models_at_half_the_coupling():
    # cos(theta_a - theta_b) = (sigma_a sigma_b + rho_a rho_b) / 2 with the angle a = 0, 1, 2, 3
    # (0, 90, 180, 270 degrees) as the spin pair (sigma, rho) = (+,+), (+,-), (-,-), (-,+): the
    # stationary law is the product of two Ising laws with coupling J / 2 (module docstring).
    graph = nx.path_graph(3)
    tau, J = 0.9, 1.4
    clock = ExactChain(ClockModel(graph, 4, coupling=J), tau).stationary()
    ising = ExactChain(IsingModel(graph, coupling=J / 2), tau).stationary()
    sigma = {0: 1, 1: 1, 2: 0, 3: 0}  # token 1 of the Ising model is spin +1
    rho = {0: 1, 1: 0, 2: 0, 3: 1}
    for index, x in enumerate(all_states(3, 4)):
        s = int("".join(str(sigma[int(v)]) for v in x), 2)
        r = int("".join(str(rho[int(v)]) for v in x), 2)
        assert clock[index] == pytest.approx(ising[s] * ising[r], rel=1e-12)


def test_the_gibbs_law_is_stationary_and_the_chain_reversible():
    model = ClockModel(nx.cycle_graph(4), 3, coupling={(0, 1): 1.0, (1, 2): -0.5, (2, 3): 2.0,
                                                       (0, 3): 0.25}, field=[0.5, 0.0, -1.0, 0.2])
    chain = ExactChain(model, 0.7)
    weights = np.exp(model.log_weight(all_states(4, 3)) / 0.7)  # Theorem 3: pi ∝ exp(E / tau)
    np.testing.assert_allclose(chain.stationary(), weights / weights.sum(), rtol=1e-12)
    assert chain.is_reversible()


def test_scores_by_hand():
    model = ClockModel(nx.path_graph(3), 3, coupling=[2.0, 1.0][0], field=1.0)
    c = np.cos(2 * np.pi / 3)  # cos 120 degrees = -1/2
    # site 1 between tokens 0 and 2: a = 0 -> 2 (1 + c) + 1, a = 1 -> 2 (c + c) + c,
    # a = 2 -> 2 (c + 1) + c
    expected = [2 * (1 + c) + 1, 2 * (2 * c) + c, 2 * (c + 1) + c]
    np.testing.assert_allclose(model.score_site(np.array([[0, 0, 2]]), 1)[0], expected)
    with pytest.raises(VocabularyError):
        ClockModel(nx.path_graph(3), 1)


def test_the_command_line_names_it():
    model = parse_toy_spec("clock-cycle:n=5,q=4,J=0.5")
    assert isinstance(model, ClockModel) and (model.n, model.q) == (5, 4)
    assert model.name == "clock-cycle:n=5,q=4,J=0.5,h=0.0"
    assert parse_toy_spec(model.name).name == model.name


@settings(max_examples=15, deadline=None, database=None)
@given(models(max_states=64, families="clock"))
def test_drawn_clock_models_are_compatible_and_rebuild_from_their_spec(model):
    assert model.spec.family == "clock" and model.spec.compatible
    assert exact(model, 1.0).is_reversible()
    again = eval(repr(model.spec), {"ModelSpec": ModelSpec}).build()
    states = all_states(model.n, model.q)
    for site in range(model.n):
        np.testing.assert_array_equal(again.score_site(states, site),
                                      model.score_site(states, site))


def test_restricted_windows_and_verify_examples_draw_it():
    from glauber.verification.random_battery import GROUPS, build_random_battery

    assert list(GROUPS)[-1] == "clock"  # registered last: the other groups keep their draws
    bases = {m.spec.params["base"].family
             for m in sample(models(max_states=64, families="restricted"), 200, seed=3)}
    assert "clock" in bases
    battery = [inst for inst in build_random_battery(1) if inst.family == "clock"]
    assert len(battery) == 2 and all(isinstance(inst.model, ClockModel) for inst in battery)
    assert battery[0].model is battery[1].model and battery[0].tau > battery[1].tau  # high, low
