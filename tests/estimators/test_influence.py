"""Influence coefficients (Definition 2) and oscillations (Lemma 6)."""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.core.enumeration import all_states
from glauber.errors import (
    InvalidParameterError,
    InvalidTemperatureError,
    StateSpaceTooLargeError,
)
from glauber.estimators import influence
from glauber.theory.contraction import certify_contraction
from glauber.toy_models import IsingModel

from ..support import score_tables, states, table_model
from ._reference import TorchModel, exact_influence

#: Random score tables with q <= 4, 2 to 5 sites and at most 81 states.
TABLES = score_tables(81, (1.0, 1.0), min_sites=2, max_sites=5)


@settings(max_examples=20, deadline=None)
@given(model=TABLES, tau=st.floats(0.2, 5.0))
def test_exhaustive_equals_exact_supremum(model, tau):
    C, D = exact_influence(model, tau)
    res = influence(model, tau, exhaustive=True)
    np.testing.assert_allclose(res.C, C, atol=1e-12)
    np.testing.assert_allclose(res.Delta, D, atol=1e-10)
    assert not res.is_lower_bound and res.exhaustive


@settings(max_examples=20, deadline=None)
@given(
    model=TABLES,
    seed=st.integers(0, 10_000),
    tau=st.floats(0.2, 5.0),
    n_ctx=st.integers(1, 4),
    reps=st.integers(1, 3),
)
def test_sampled_influence_is_a_lower_bound(model, seed, tau, n_ctx, reps):
    n, q = model.n, model.q
    C, D = exact_influence(model, tau)
    ctx = np.random.default_rng(seed).integers(q, size=(n_ctx, n))
    res = influence(model, tau, contexts=ctx, n_replacements=reps, seed=seed)
    assert res.is_lower_bound
    assert np.all(res.C <= C + 1e-12) and np.all(res.Delta <= D + 1e-10)
    assert res.lemma6_consistent and res.tanh_consistent
    assert res.n_replacements == min(reps, q - 1)


@pytest.mark.parametrize("J, tau", [(1.0, 1.0), (0.5, 2.0), (0.3, 0.4)])
def test_ising_cycle_closed_form(J, tau):
    # Heat-bath Ising on the 5-cycle (degree 2): p(+ | f) = (1 + tanh(f / tau)) / 2 with f = J
    # (s_left + s_right). Flipping one neighbour moves f by 2J; the other neighbour's spin S = +-J,
    # so c = (tanh(2J/tau) - tanh(0)) / 2 = tanh(2 J / tau) / 2 (docs/theory.md, `dobrushin`,
    # Dobrushin for Ising; Levin–Peres–Wilmer §15.1). Scores are spin * f, so the oscillation is 2 *
    # 2J.
    model = IsingModel(nx.cycle_graph(5), coupling=J)
    res = influence(model, tau, exhaustive=True)
    adj = nx.to_numpy_array(nx.cycle_graph(5), nodelist=range(5)) > 0
    np.testing.assert_allclose(res.C[adj], math.tanh(2 * J / tau) / 2, rtol=1e-12)
    np.testing.assert_allclose(res.C[~adj], 0.0, atol=1e-15)
    np.testing.assert_allclose(res.Delta[adj], 4 * J, rtol=1e-12)
    assert res.alpha_row == pytest.approx(math.tanh(2 * J / tau), rel=1e-12)
    # Corollary 7's hypothesis: row sum of Delta = 8 J < 4 tau.
    assert res.corollary7 == (8 * J < 4 * tau)


def test_certificate_fields_come_from_theory():
    model = table_model(3, 3, seed=8)
    res = influence(model, 2.0, exhaustive=True, eps=0.1)
    # exhaustive: the certificates are of the enclosure C + rounding of the computed TVs
    assert 0.0 < res.rounding < 1e-12
    cert = certify_contraction(res.C, 0.1, entry_error=res.rounding)
    assert res.contraction == cert and cert.entry_error == res.rounding
    assert res.alpha_col == cert.alpha_col and res.spectral_radius == cert.spectral_radius
    np.testing.assert_allclose(res.lemma6, res.Delta / 8.0)
    np.testing.assert_allclose(res.tanh, np.tanh(res.Delta / 8.0))
    out = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert out["is_lower_bound"] is False and len(out["C"]) == 3


def test_reproducible_and_batch_invariant():
    model = table_model(4, 3, seed=1)
    ctx = np.random.default_rng(0).integers(3, size=(3, 4))
    a = influence(model, 1.0, contexts=ctx, seed=5, batch_size=11)
    b = influence(model, 1.0, contexts=ctx, seed=5, batch_size=4096)
    np.testing.assert_allclose(a.C, b.C, atol=1e-14)
    np.testing.assert_allclose(a.Delta, b.Delta, atol=1e-12)


def test_torch_backend_matches_numpy():
    toy = table_model(3, 3, seed=6)
    ctx = states(3, 3)[::4]
    a = influence(toy, 0.7, contexts=ctx, n_replacements=2, seed=1)
    b = influence(TorchModel(toy), 0.7, contexts=ctx, n_replacements=2, seed=1)
    np.testing.assert_allclose(a.C, b.C, atol=1e-12)
    np.testing.assert_allclose(a.Delta, b.Delta, atol=1e-10)


def test_all_states_is_mixed_radix():
    np.testing.assert_array_equal(all_states(3, 2), states(3, 2))
    with pytest.raises(StateSpaceTooLargeError):
        all_states(20, 4, max_states=1000)


def test_influence_errors():
    model = table_model(3, 2, seed=0)
    with pytest.raises(InvalidTemperatureError):
        influence(model, 0.0, exhaustive=True)
    with pytest.raises(InvalidParameterError):
        influence(model, 1.0)  # neither contexts nor exhaustive
    with pytest.raises(InvalidParameterError):
        influence(model, 1.0, contexts=np.zeros((0, 3), dtype=int))
    with pytest.raises(StateSpaceTooLargeError):
        influence(model, 1.0, exhaustive=True, max_states=4)
    with pytest.raises(InvalidParameterError):
        influence(table_model(1, 3, seed=0), 1.0, exhaustive=True)


@pytest.mark.parametrize("nq, seed, tau", [((3, 3), 12, 0.9), ((4, 2), 3, 0.3), ((2, 4), 5, 2.0)])
def test_agrees_with_exact_chain(nq, seed, tau):
    from glauber.exact.chain import ExactChain

    model = table_model(*nq, seed=seed)
    chain = ExactChain(model, tau=tau)
    res = influence(model, tau, exhaustive=True)
    np.testing.assert_allclose(res.C, chain.influence_matrix(), atol=1e-12)
    np.testing.assert_allclose(res.Delta, chain.oscillation_matrix(), atol=1e-10)
