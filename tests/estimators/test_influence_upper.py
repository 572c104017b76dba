"""Rigorous upper bounds on influence (glauber.estimators.influence_upper) on toy models.

Oracles: the exact influence and oscillation matrices of :class:`ExactChain` (enumeration of
every pair of states, an independent implementation), the exact ``t_mix`` of the chain, and the
Ising closed forms (Levin–Peres–Wilmer Theorem 15.1: a neighbour's influence is ``tanh(beta)``
for odd degree). Property: upper >= exact >= searched, entrywise, over every toy family.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glauber.core.enumeration import table_queries
from glauber.errors import InvalidTemperatureError, UnboundableModelError
from glauber.estimators import influence_upper_bound, search_influence
from glauber.exact import ExactChain
from glauber.testing import models, temperatures
from glauber.theory.floating import softmax_tv_rounding
from glauber.toy_models import FunctionModel, IsingModel, PottsModel
from glauber.toy_models.asym_ising import AsymmetricIsingModel
from glauber.toy_models.curie_weiss import CurieWeissModel

SETTINGS = settings(max_examples=25, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
PAIRWISE = {"ising": {}, "potts": {}, "asym-ising": {}, "curie-weiss": {}}


def _exact(model, tau):
    chain = ExactChain(model, tau)
    return chain.influence_matrix(), chain.oscillation_matrix()


@SETTINGS
@given(models(max_states=128), temperatures(0.05, 20.0), st.integers(0, 2**16))
def test_upper_dominates_exact_dominates_searched(model, tau, seed):
    C, D = _exact(model, tau)
    ub = influence_upper_bound(model, tau)
    tol = softmax_tv_rounding(50.0, tau, model.q)  # the exact C's own float64 rounding
    assert np.all(ub.C >= C - tol), model.spec
    assert np.all(ub.Delta >= D), model.spec
    # a budget is distinct queries, at most the n q^(n-1) that tabulate the model
    found = search_influence(model, tau, budget=min(64, table_queries(model.n, model.q)),
                             seed=seed)
    assert np.all(found.C <= C + found.tolerance), model.spec
    assert ub.is_upper_bound and ub.spectral_radius >= found.rho_lower
    assert ub.alpha_row >= float(C.sum(axis=1).max()) - model.n * tol


@SETTINGS
@given(models(max_states=64, families=PAIRWISE), temperatures(0.05, 20.0))
def test_closed_forms_dominate_the_exact_values(model, tau):
    C, D = _exact(model, tau)
    ub = influence_upper_bound(model, tau, tabulate=False)
    assert ub.method == "closed-form"
    assert np.all(ub.Delta >= D), model.spec
    # tight at zero-field odd-degree Ising sites: within the exact C's own float64 rounding
    assert np.all(ub.C >= C - softmax_tv_rounding(50.0, tau, model.q)), model.spec
    # the closed-form oscillation is exact up to the scores' rounding
    np.testing.assert_allclose(ub.Delta, D, rtol=1e-9, atol=1e-9)


def test_tabulated_bound_is_the_exact_value_and_proves_the_exact_tmix():
    model = PottsModel(nx.path_graph(4), q=3, coupling=0.8)
    for tau in (0.5, 1.0, 3.0):
        C, _ = _exact(model, tau)
        ub = influence_upper_bound(model, tau)
        assert "tabulated" in ub.method
        assert np.all(ub.C >= C) and np.all(ub.C <= C + 2 * ub.tolerance + 1e-15)
        if ub.certified:
            assert ExactChain(model, tau).mixing_time(0.25) <= ub.tmix_bound


def test_ising_closed_form_is_the_dobrushin_influence_at_odd_degree():
    # a star's leaves have degree 1 (odd): their influence from the hub is exactly tanh(beta)
    tau = 0.7
    ub = influence_upper_bound(IsingModel(nx.star_graph(3)), tau, tabulate=False)
    assert ub.C[1, 0] >= math.tanh(1 / tau)
    assert ub.C[1, 0] == pytest.approx(math.tanh(1 / tau), rel=1e-14)
    assert ub.C[1, 2] == 0.0  # not neighbours: no influence, proved


def test_large_pairwise_models_are_bounded_without_enumeration():
    # 2^60 states: only the closed form applies; Curie-Weiss with alpha < 1 certifies at
    # tau = 1 (rho = (n - 1) tanh(alpha / n) < alpha).
    ub = influence_upper_bound(CurieWeissModel(60, alpha=0.5), 1.0)
    assert ub.method == "closed-form" and ub.certified
    assert ub.spectral_radius == pytest.approx(59 * math.tanh(0.5 / 60), rel=1e-9)
    ub = influence_upper_bound(AsymmetricIsingModel.random(40, rng=1, scale=0.01), 1.0)
    assert ub.method == "closed-form" and ub.certified


def test_extremes_of_temperature_and_scale():
    model = IsingModel(nx.cycle_graph(5), coupling=1e6)
    tiny = influence_upper_bound(model, 1e-300, tabulate=False)
    assert np.all(tiny.C[~np.eye(5, dtype=bool)] <= 1.0) and not tiny.certified
    huge = influence_upper_bound(model, 1e300, tabulate=False)
    C, _ = _exact(model, 1e300)
    assert np.all(huge.C >= C) and huge.certified
    # tabulated at a temperature far below the scores (p down to e^-400): the bound stays one
    model = IsingModel(nx.cycle_graph(5), coupling=1.0, field=0.3)
    low = influence_upper_bound(model, 0.01)
    C, _ = _exact(model, 0.01)
    assert np.all(low.C >= C) and "tabulated" in low.method


@pytest.mark.parametrize("tau", [0.0, -1.0, math.nan, math.inf])
def test_bad_temperatures_are_typed_errors(tau):
    with pytest.raises(InvalidTemperatureError):
        influence_upper_bound(IsingModel(nx.path_graph(3)), tau)


def test_a_model_without_structure_is_refused_with_what_to_change():
    big = FunctionModel(20, 3, lambda x, i: np.zeros((len(x), 3)))
    with pytest.raises(UnboundableModelError, match="closed form.*window"):
        influence_upper_bound(big, 1.0)
    small = FunctionModel(3, 2, lambda x, i: np.zeros((len(x), 2)))
    with pytest.raises(UnboundableModelError, match="closed form"):
        influence_upper_bound(small, 1.0, tabulate=False)


def test_a_tabulated_source_keeps_each_temperature_and_gives_copies(monkeypatch):
    # oracle: the definition over every ordered pair of tokens at j (the TV and oscillation of
    # the full [b, b'] square), written here independently of the source's pair loop
    from glauber.estimators.influence_upper import UpperBoundSource
    from glauber.toy_models import RandomTableModel

    model = RandomTableModel(3, 4, rng=5, scale=2.0)
    source = UpperBoundSource(model, tabulate=True)
    for tau in (0.5, 2.0):
        C, tol = source.tabulated_C(tau)
        want = np.zeros((3, 3))
        D = np.zeros((3, 3))
        for i in range(3):
            for j in range(3):
                if i == j:
                    continue
                k = 3 - i - j  # the third site
                for xk in range(4):
                    for b in range(4):
                        for c in range(4):
                            x, y = np.zeros(3, int), np.zeros(3, int)
                            x[k] = y[k] = xk
                            x[j], y[j] = b, c
                            sx = model.scores(x[None], [i])[0]
                            sy = model.scores(y[None], [i])[0]
                            px = np.exp(sx / tau - np.logaddexp.reduce(sx / tau))
                            py = np.exp(sy / tau - np.logaddexp.reduce(sy / tau))
                            want[i, j] = max(want[i, j], 0.5 * np.abs(px - py).sum())
                            d = sx - sy
                            D[i, j] = max(D[i, j], d.max() - d.min())
        assert np.all(C >= want) and np.all(C <= want + 2 * tol + 1e-15)
        assert np.all(source.Delta >= D) and np.allclose(source.Delta, D, rtol=1e-12)
    calls = []
    monkeypatch.setattr(source, "_tabulated_C",
                        lambda tau: calls.append(tau) or (np.eye(3), 0.0))
    first, _ = source.tabulated_C(2.0)  # kept from above: not recomputed
    first[0, 1] = 7.0  # a caller's change does not reach the kept value
    again, _ = source.tabulated_C(2.0)
    assert calls == [] and again[0, 1] != 7.0
    source.tabulated_C(3.0)
    assert calls == [3.0]
