"""The matrix-free chain of a 5-site window (glauber.exact.window, glauber.exact.window_chain),
exercised on small chains with the sparse limit lowered.

Oracles: the explicit sparse ``P`` (glauber_csr of the expanded conditionals), dense GTH, the
existing influence matrix of the expanded table, and the exact worst-start ``t_mix`` by dense
squaring (the bracket must contain it).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import (
    BracketOnlyError,
    InvalidParameterError,
    ResourceLimitError,
    StateSpaceTooLargeError,
    StationaryResidualError,
)
from glauber.exact import mixing, sparse, window
from glauber.exact.chain import ExactChain
from glauber.exact.influence import influence_matrix
from glauber.exact.score_table import TabulatedModel, compact_score_table
from glauber.exact.stationary import gth_stationary
from glauber.exact.window import (
    WindowOperator,
    compact_influence_matrix,
    compact_log_conditionals,
    window_stationary,
)
from glauber.exact.window_chain import WindowChain

from ..support import table_model


def _pair(n: int, q: int, seed: int, scale: float, tau: float
          ) -> tuple[ExactChain, WindowOperator, np.ndarray]:
    model = table_model(n, q, seed, scale=scale)
    compact = np.exp(compact_log_conditionals(compact_score_table(model), tau))
    return ExactChain(model, tau), WindowOperator(compact), compact


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 4), q=st.integers(2, 6), seed=st.integers(0, 10**6),
       scale=st.floats(0.0, 3.0), tau=st.floats(0.3, 3.0))
def test_the_matrix_free_operator_is_the_sparse_kernel(n, q, seed, scale, tau) -> None:
    if q**n > 1296:
        return
    chain, op, compact = _pair(n, q, seed, scale, tau)
    P = chain.transition_matrix()
    v = np.random.default_rng(seed).random((q**n, 2))
    np.testing.assert_allclose(op.right(v), P @ v, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(op.left(v), (v.T @ P).T, rtol=1e-12, atol=1e-15)
    nu = op.classes(v[:, 0])
    np.testing.assert_allclose(op.factor_left(nu), op.classes(op.spread(nu)), rtol=1e-15)
    np.testing.assert_allclose(op.spread(np.full(op.R, 1.0 / op.R)).sum(), 1.0, rtol=1e-13)
    np.testing.assert_array_equal(compact_influence_matrix(compact), influence_matrix(
        chain.conditionals()))
    if q**n <= 256:
        np.testing.assert_allclose(op.dense(), P.toarray(), rtol=1e-12, atol=1e-16)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 3), q=st.integers(2, 5), seed=st.integers(0, 10**6),
       scale=st.floats(0.0, 2.0), tau=st.floats(0.5, 3.0))
def test_the_stationary_law_is_the_gth_law(n, q, seed, scale, tau) -> None:
    chain, op, _ = _pair(n, q, seed, scale, tau)
    found = window_stationary(op)
    gth = gth_stationary(chain.dense_transition_matrix())
    assert found.solution.residual_l1 <= window.WINDOW_RESIDUAL_TOL
    assert found.factor_residual <= 10 * window.WINDOW_RESIDUAL_TOL
    np.testing.assert_allclose(found.solution.pi, gth, atol=1e-10)


def test_an_unsolved_law_is_refused_with_its_residual(monkeypatch) -> None:
    _, op, _ = _pair(3, 4, 1, 2.0, 0.4)
    monkeypatch.setattr(window, "WINDOW_SOLVER_ITERATIONS", (1, 1))
    with pytest.raises(StationaryResidualError, match="metastable") as info:
        window.window_stationary(op, tol=1e-300)
    assert info.value.residual > 0


@pytest.fixture
def low_limit(monkeypatch):
    """Every chain above 32 states is matrix-free."""
    monkeypatch.setattr(sparse, "SPARSE_MAX_STATES", 32)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6), scale=st.sampled_from([0.1, 0.3, 1.0]),
       tau=st.sampled_from([0.7, 1.0, 2.0]), eps=st.sampled_from([0.1, 0.25]))
def test_the_bracket_holds_the_exact_mixing_time(seed, scale, tau, eps) -> None:
    model = table_model(3, 5, seed, scale=scale)  # 125 states: small enough to square
    reference = ExactChain(model, tau)
    exact = mixing.mixing_time(reference.dense_transition_matrix(), reference.stationary(), eps)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sparse, "SPARSE_MAX_STATES", 32)
        chain = ExactChain(model, tau)
    assert isinstance(chain, WindowChain) and chain.algebra == "matrix-free"
    bracket = chain.mixing_bracket(eps)
    assert bracket.lower <= exact
    assert bracket.upper is None or exact <= bracket.upper
    assert {c.details["source"] for c in bracket.claims} == {"influence", "starts",
                                                              "start-pairs"}
    np.testing.assert_allclose(chain.stationary(), reference.stationary(), atol=1e-10)
    np.testing.assert_array_equal(chain.influence_matrix(), reference.influence_matrix())
    assert chain.influence_rounding() == reference.influence_rounding()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_without_a_certificate_the_pairs_of_starts_still_bound_tmix(seed) -> None:
    # strong scores at a low temperature: C has no Theorem 5 certificate, so pi's error (the
    # certificate's t_mix(1/4) times the residual) is unbounded and the starts' distances to pi
    # give 0; two starts' distance to each other needs no pi (dbar(t) <= 2 d(t))
    model, tau, eps = table_model(3, 5, seed, scale=3.0), 0.5, 0.25
    reference = ExactChain(model, tau)
    P, pi = reference.dense_transition_matrix(), reference.stationary()
    exact = mixing.mixing_time(P, pi, eps)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sparse, "SPARSE_MAX_STATES", 32)
        chain = ExactChain(model, tau)
    bracket = chain.mixing_bracket(eps)
    claims = {c.details["source"]: c for c in bracket.claims}
    assert claims["influence"].bound is None and claims["starts"].bound == 0
    # oracle: dense powers of P from the same starts, the last t with two of them > 2 eps apart
    starts = claims["start-pairs"].details["starts"]
    laws, last = np.eye(P.shape[0])[starts], -1
    for t in range(exact + 1):
        apart = max(0.5 * np.abs(laws[a] - laws[b]).sum()
                    for a in range(len(starts)) for b in range(a + 1, len(starts)))
        last = t if apart > 2 * eps else last
        laws = laws @ P
    assert 1 <= claims["start-pairs"].bound == last + 1 <= exact
    assert bracket.lower == claims["start-pairs"].bound and bracket.upper is None


def test_the_chain_answers_as_the_sparse_one(low_limit) -> None:
    model = table_model(3, 4, 7, scale=0.3)
    chain = ExactChain(model, 1.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sparse, "SPARSE_MAX_STATES", 2**20)
        reference = ExactChain(model, 1.0)
    assert type(reference) is ExactChain and isinstance(chain, WindowChain)
    starts = np.array([[0, 1, 2], [3, 3, 3]])
    np.testing.assert_allclose(chain.distance_from(starts, [0, 1, 4]),
                               reference.distance_from(starts, [0, 1, 4]), atol=1e-12)
    mu = np.full(64, 1 / 64)
    np.testing.assert_allclose(chain.step_law(mu), reference.step_law(mu), atol=1e-15)
    assert chain.is_reversible() == reference.is_reversible() is False
    estimate = chain.spectral_estimate()
    assert not estimate.rigorous
    assert estimate.absolute_gap == pytest.approx(reference.absolute_spectral_gap(), rel=1e-6)
    table = chain.tabulated()
    x = np.array([[0, 1, 2], [3, 0, 1]])
    for site in range(3):
        sites = np.full(2, site)
        np.testing.assert_array_equal(table.scores(x, sites), model.scores(x, sites))
    assert table.compact and TabulatedModel(model, reference.scores()).compact is False
    warmer = chain.at(2.0)
    assert isinstance(warmer, WindowChain) and warmer.compact_scores() is chain.compact_scores()
    with pytest.raises(BracketOnlyError) as info:
        chain.mixing_time(0.25)
    assert info.value.bracket.lower >= 1
    for refused in (chain.scores, chain.conditionals, chain.transition_matrix,
                    chain.absolute_spectral_gap, chain.rectangles):
        with pytest.raises(StateSpaceTooLargeError, match="matrix-free"):
            refused()
    with pytest.raises(InvalidParameterError):
        chain.stationary("gth")


def test_a_metastable_law_gives_the_upper_end_only(low_limit, monkeypatch) -> None:
    chain = ExactChain(table_model(3, 4, 7, scale=0.3), 1.0)
    monkeypatch.setattr("glauber.exact.window_chain.window_stationary",
                        lambda op: window.window_stationary(op, tol=1e-300))
    bracket = chain.mixing_bracket(0.25)
    assert bracket.lower == 0 and bracket.upper is not None
    assert any("metastable" in c.caveat for c in bracket.claims)
    with pytest.raises(StationaryResidualError):
        chain.stationary()


def test_a_chain_that_does_not_fit_is_a_typed_error(low_limit, monkeypatch) -> None:
    model = table_model(3, 4, 0)
    with pytest.raises(StateSpaceTooLargeError, match="max_states = 40"):
        ExactChain(model, 1.0, max_states=40)
    monkeypatch.setattr("glauber.exact.window_chain.WINDOW_MAX_STATES", 50)
    with pytest.raises(StateSpaceTooLargeError, match="WINDOW_MAX_STATES = 50"):
        ExactChain(model, 1.0)
    monkeypatch.setattr("glauber.exact.window_chain.WINDOW_MAX_STATES", 20**5)
    monkeypatch.setattr("glauber.core.memory.available_memory", lambda: 1000)
    monkeypatch.setattr(window, "available_memory", lambda: 1000)
    with pytest.raises(ResourceLimitError, match=r"64 states.*planned"):
        ExactChain(model, 1.0)
    assert not window.window_fits(3, 4)
