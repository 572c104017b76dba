"""The bracket tau_no_cert < tau_cert (glauber.estimators.influence_bracket).

Oracles: thresholds known in closed form (a zero-field Ising cycle: the closed-form bound
``C = tanh(1/tau)`` on each edge has ``rho = 2 tanh(1/tau)``, so ``tau_cert = 1/atanh(1/2)``;
synthetic radius functions with a known crossing), the exact influence of :class:`ExactChain`
(each side's claim checked at its own temperature), and the realised values a search found.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from glauber.errors import InvalidParameterError
from glauber.estimators import (
    UpperBoundSource,
    WitnessCurve,
    influence_bracket,
    search_influence_sweep,
)
from glauber.estimators.influence_bracket import bracket_thresholds, exact_lower, fixed_lower
from glauber.estimators.influence_threshold import rho_lower_bound
from glauber.estimators.score_cache import MemoisedModel
from glauber.exact import ExactChain
from glauber.toy_models import IsingModel
from glauber.toy_models.random_table import RandomTableModel


def test_thresholds_of_known_crossings_within_the_bisection_tolerance():
    up = lambda t: 3.0 / t  # noqa: E731  < 1 from tau = 3
    low = lambda t: 0.5 / t  # noqa: E731  >= 1 up to tau = 0.5
    grid = [2.0**k for k in range(-4, 6)]
    cert, no, evals = bracket_thresholds(up, low, grid, rtol=1e-4)
    assert 3.0 < cert <= 3.0 * (1 + 1e-4)
    assert 0.5 * (1 - 1e-4) <= no <= 0.5
    assert up(cert) < 1.0 and low(no) >= 1.0  # each reported temperature was checked
    assert all(t in evals for t in grid)
    # nothing certifies: None on either side
    assert bracket_thresholds(lambda t: 2.0, lambda t: 0.0, grid)[:2] == (None, None)
    with pytest.raises(InvalidParameterError):
        bracket_thresholds(up, low, grid, rtol=0.0)


def test_ising_cycle_closed_form_threshold():
    source = UpperBoundSource(IsingModel(nx.cycle_graph(40)))  # 2^40 states: closed form
    b = influence_bracket(source, 1.0, rtol=1e-6)
    exact = 1.0 / math.atanh(0.5)
    assert exact < b.tau_cert <= exact * (1 + 1e-6) + 1e-9
    assert b.upper_monotone and b.upper_method == "closed-form"
    assert b.tau_no_cert is None and b.lower_method == "none"
    assert not b.certified_at_tau and b.tmix_bound is None  # tau = 1 < 1.82
    assert "no lower side" in b.note
    # the requested tau is reported on both sides even where the grid search never looked
    far = influence_bracket(source, 0.01)
    at = far.grid.index(0.01)
    assert far.rho_upper[at] >= 1.0 and math.isnan(far.rho_lower[at])


def test_exact_window_bracket_is_tight_and_each_side_holds_at_its_temperature():
    model = RandomTableModel(3, 4, 0)
    source = UpperBoundSource(model)
    b = influence_bracket(source, 1.0, lower=exact_lower(source), lower_method="exact")
    assert b.tau_no_cert < b.tau_cert <= b.tau_no_cert * (1 + 3e-3)  # both exact: ratio ~ 1
    for tau, holds in ((b.tau_cert, lambda r: r < 1.0), (b.tau_no_cert, lambda r: r >= 1.0)):
        C = ExactChain(model, tau).influence_matrix()
        assert holds(float(np.max(np.abs(np.linalg.eigvals(C)))))
    if b.certified_at_tau:
        assert ExactChain(model, 1.0).mixing_time(0.25) <= b.tmix_bound


def test_witness_curve_values_are_realised_at_every_temperature():
    model = RandomTableModel(4, 3, 1)
    memo = MemoisedModel(model)
    sweep = search_influence_sweep(memo, [0.5, 1.0, 2.0], budget=60, seed=0)
    curve = WitnessCurve(memo.cache, [w for r in sweep for w in r.witnesses])
    assert curve.rows == 0  # the witnesses' scores were memoised by the search
    for tau in (0.3, 0.7, 1.0, 5.0):
        exact = ExactChain(model, tau).influence_matrix()
        assert np.all(curve.C(tau) <= exact + 1e-12)
        assert curve(tau) <= rho_lower_bound(exact) + 1e-9
    at_one = [r for r in sweep if r.tau == 1.0][0]
    assert np.all(curve.C(1.0) >= at_one.C - 1e-12)  # the union holds the search's own values


def test_fixed_lower_claims_one_temperature_only():
    source = UpperBoundSource(IsingModel(nx.cycle_graph(30)))
    b = influence_bracket(source, 2.0, lower=fixed_lower(2.0, 1.5), lower_method="sampled")
    assert b.tau_no_cert == 2.0
    b = influence_bracket(source, 2.0, lower=fixed_lower(2.0, 0.5), lower_method="sampled")
    assert b.tau_no_cert is None


def test_no_upper_bound_is_reported_not_raised():
    b = influence_bracket(None, 1.0, lower=fixed_lower(1.0, 2.0), upper_missing="no structure")
    assert b.tau_cert is None and b.upper_method == "none" and b.upper_C is None
    assert b.tau_no_cert == 1.0 and "no structure" in b.note


def test_memoised_model_asks_each_query_once():
    model = RandomTableModel(3, 3, 2)
    memo = MemoisedModel(model)
    x = np.array([[0, 1, 2], [1, 1, 2], [0, 1, 2]])
    first = memo.scores(x, np.array([0, 0, 1]))
    np.testing.assert_array_equal(first, model.scores(x, np.array([0, 0, 1])))
    assert memo.cache.queries == 2  # rows 0 and 1 agree off site 0
    memo.scores(x, np.array([0, 0, 1]))
    assert memo.cache.queries == 2 and memo.name == model.name
