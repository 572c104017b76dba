"""The sparse path of ExactChain: CSR kernels, the joint stationary law, Lanczos and Arnoldi gaps,
the dispatch of "auto", and the typed refusals (docs/performance.md, "Exact chains at scale")."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from glauber.core.enumeration import neighbour_indices
from glauber.errors import (
    BracketOnlyError,
    EstimateOnlyError,
    InvalidParameterError,
    PrecisionError,
    StateSpaceTooLargeError,
)
from glauber.exact import chain_mixing
from glauber.exact.chain import ExactChain
from glauber.exact.krylov import arnoldi_gap_estimate, lanczos_gap
from glauber.exact.sparse import (
    fiber_defect,
    glauber_csr,
    stationary_tv_error_bound,
    symmetrised_csr,
)
from glauber.testing import models, temperatures
from glauber.theory.kernels import flow_defect
from glauber.toy_models import AsymmetricIsingModel, IsingModel, PottsModel
from glauber.toy_models.base import FunctionModel


def _coo_reference(p: np.ndarray) -> sp.csr_matrix:
    """The kernel built the plain way: one COO entry per (site, state, token), duplicates summed."""
    n, S, q = p.shape
    rows = np.broadcast_to(np.arange(S)[None, :, None], p.shape)
    return sp.coo_matrix(((p / n).ravel(), (rows.ravel(), neighbour_indices(n, q).ravel())),
                         shape=(S, S)).tocsr()


@settings(max_examples=25, deadline=None, database=None)
@given(models(max_states=256), temperatures(0.2, 5.0))
def test_csr_kernels_match_the_plain_construction(model, tau):
    chain = ExactChain(model, tau)
    p, lp = chain.conditionals(), chain.log_conditionals()
    P = glauber_csr(p)
    assert P.has_sorted_indices and P.nnz == chain.num_states * (model.n * (model.q - 1) + 1)
    ref = _coo_reference(p)
    assert abs(P - ref).max() <= 1e-15
    Q = P.copy()
    Q.has_sorted_indices = False
    Q.sort_indices()
    np.testing.assert_array_equal(Q.indices, P.indices)  # columns really were sorted
    A = symmetrised_csr(lp)
    assert abs(A - A.T).max() == 0.0
    dense = ref.toarray()
    off = np.sqrt(dense * dense.T)  # sqrt(P(x,y) P(y,x)) off the diagonal, P(x,x) on it
    np.fill_diagonal(off, np.diag(dense))
    np.testing.assert_allclose(A.toarray(), off, rtol=1e-12, atol=1e-300)


@settings(max_examples=25, deadline=None, database=None)
@given(models(max_states=128), temperatures(0.2, 5.0), st.integers(0, 2**31 - 1))
def test_fiber_defect_is_the_flow_defect_over_every_move(model, tau, seed):
    chain = ExactChain(model, tau)
    rng = np.random.default_rng(seed)
    for log_pi in (chain.log_stationary(), rng.normal(size=chain.num_states)):
        x, y, lf, lb = chain._log_moves()
        assert fiber_defect(log_pi, chain.log_conditionals()) == pytest.approx(
            flow_defect(log_pi[x] + lf, log_pi[y] + lb), rel=1e-9, abs=1e-14)


def test_joint_law_is_exact_and_checked():
    # Ising with a field on a 3x4 grid at low temperature: smallest mass ~1e-40; log-space GTH
    # (1024-state limit) is the reference on a 2x5 grid, the joint must agree to rounding.
    model = IsingModel(nx.grid_2d_graph(2, 5), coupling=1.0, field=0.3)
    chain = ExactChain(model, 0.1)
    ref = chain.log_stationary("gth")
    joint = chain.sparse_stationary("joint")
    assert joint.solution.method == "joint" and joint.defect <= 1e-12
    np.testing.assert_allclose(joint.log_pi, ref, rtol=0, atol=1e-9)
    assert ref.min() < np.log(1e-40)
    # a log_weight that is not the chain's joint is rejected: "auto" solves instead
    wrong = FunctionModel(4, 2, lambda x, i: np.stack([0 * x[:, 0], 1.0 + x.sum(1)], 1))
    wrong.log_weight = lambda s: np.zeros(len(s))
    chain = ExactChain(wrong, 1.0)
    assert chain.stationary_solution("auto").method == "gth"
    with pytest.raises(InvalidParameterError, match="log_weight"):
        chain.sparse_stationary("joint")


def test_auto_goes_sparse_above_4096_states_and_reports_it():
    # Ising on the 13-cycle (8192 states): Lanczos against LPW Theorem 15.5,
    # t_rel = n / (1 - tanh(2 beta)) for heat-bath Ising on the n-cycle.
    n, beta = 13, 0.4
    chain = ExactChain(IsingModel(nx.cycle_graph(n)), 1 / beta)
    assert chain.algebra == "sparse"
    assert chain.stationary_solution().method == "joint"
    est = chain.spectral_estimate()
    exact = (1 - math.tanh(2 * beta)) / n
    assert est.method == "lanczos" and not est.rigorous
    assert abs(est.gap - exact) <= est.error_bound <= 1e-9
    assert exact <= est.gap_upper and est.gap_lower <= exact
    assert chain.spectral_gap() == est.gap
    assert chain.relaxation_time() == pytest.approx(n / (1 - math.tanh(2 * beta)), rel=1e-9)
    small = ExactChain(IsingModel(nx.cycle_graph(6)), 1 / beta)
    assert small.algebra == "dense" and small.spectral_estimate().method == "dense"


@settings(max_examples=20, deadline=None, database=None)
@given(models(max_states=256, compatible=True, min_sites=3), temperatures(0.3, 5.0))
def test_lanczos_agrees_with_the_dense_eigensolver(model, tau):
    chain = ExactChain(model, tau)
    try:
        dense = chain.spectral_gap("dense")
    except PrecisionError:  # below what float64 resolves: nothing to compare with
        return
    assume(chain.num_states >= 8 and dense >= 1e-4)
    est = lanczos_gap(symmetrised_csr(chain.log_conditionals()), chain.log_stationary(),
                      float(np.abs(chain.log_conditionals()).max()), k=2)
    assert dense <= est.gap_upper * (1 + 1e-6)  # rigorous side (dense is accurate to 1e-6)
    assert abs(est.gap - dense) <= est.error_bound + 1e-6 * dense


def test_non_reversible_large_chains_get_a_labelled_estimate_or_an_error(monkeypatch):
    rng = np.random.default_rng(3)
    model = AsymmetricIsingModel.random(13, rng, scale=0.6, asym=1.0)  # 8192 states
    chain = ExactChain(model, 1.0)
    assert not chain.is_reversible()
    for ask in (chain.spectral_gap, chain.absolute_spectral_gap, chain.relaxation_time,
                lambda: chain.spectral_estimate("lanczos")):
        with pytest.raises(EstimateOnlyError, match="arnoldi"):
            ask()
    est = chain.spectral_estimate()
    assert est.method == "arnoldi" and not est.rigorous and "estimate" in est.label
    assert est.gap_upper is None and est.error_bound is None
    # a t_mix request above the exact limit on a model that is neither monotone nor reversible:
    # the bracket of the exact influence matrix (above) and of a few starts (below)
    monkeypatch.setattr(chain_mixing, "EXACT_TMIX_MAX_STATES", 64)
    with pytest.raises(BracketOnlyError, match="rigorous bounds") as info:
        chain.mixing_time()
    with pytest.raises(BracketOnlyError, match="mixing_bracket"):
        chain.distance(3)
    bracket = chain.mixing_bracket()
    assert info.value.bracket == bracket and not bracket.monotone
    claims = {c.details["source"]: c for c in bracket.claims}
    assert set(claims) == {"influence", "starts", "start-pairs"}
    # C has spectral radius >= 1 here: no certificate, so the solved law's error is unbounded
    # and the starts' distances to it prove nothing; their distances to each other need no
    # law (tests/exact/test_window.py checks that bound against dense powers)
    assert bracket.upper is None and claims["starts"].bound == 0
    assert bracket.lower == claims["start-pairs"].bound


def test_arnoldi_matches_the_dense_absolute_gap_on_a_small_non_reversible_chain():
    model = AsymmetricIsingModel.random(6, np.random.default_rng(1), scale=0.8, asym=1.0)
    chain = ExactChain(model, 1.0)
    est = arnoldi_gap_estimate(chain.transition_matrix(), chain.stationary(), k=4)
    assert est.absolute_gap == pytest.approx(chain.absolute_spectral_gap(), rel=1e-8)


def test_above_the_sparse_limit_says_which_limit_and_what_fits():
    with pytest.raises(StateSpaceTooLargeError) as info:
        ExactChain(IsingModel(nx.cycle_graph(21)), 1.0)
    message = str(info.value)
    for part in ("2097152", "SPARSE_MAX_STATES = 2**20", "n <= 20 sites fit at q = 2", "GiB"):
        assert part in message
    with pytest.raises(StateSpaceTooLargeError, match="n <= 12 sites fit at q = 3"):
        ExactChain(PottsModel(nx.cycle_graph(13), q=3), 1.0)


def test_stationary_error_bound_holds_for_perturbed_laws():
    # ||pi~ - pi||_TV <= 2 ||pi~ P - pi~||_1 t_mix(1/4), on an exact chain and random pi~
    chain = ExactChain(IsingModel(nx.cycle_graph(6), field=0.2), 1.0)
    P, pi, t = chain.transition_matrix(), chain.stationary(), chain.mixing_time(0.25)
    rng = np.random.default_rng(0)
    for scale in (1e-8, 1e-4, 1e-2):
        other = np.abs(pi * (1 + scale * rng.normal(size=pi.size)))
        other /= other.sum()
        residual = float(np.abs(other @ P - other).sum())
        tv = 0.5 * float(np.abs(other - pi).sum())
        assert tv <= stationary_tv_error_bound(residual, t)


def test_a_gap_lanczos_proves_below_its_floor_carries_a_true_upper_bound():
    # Heat-bath Ising on the 13-cycle (8192 states: the Lanczos path) at beta = 5: the gap is
    # (1 - tanh(2 beta)) / n = 3.17e-10 (LPW 2nd ed., Theorem 15.5), below LANCZOS_GAP_FLOOR
    # = 1e-9. The typed error carries gap_upper, which must not lie below the true gap: the
    # window tables turn it into the lower bound t_mix >= log 2 / log(1 / (1 - gap_upper)).
    from glauber.errors import GapBelowFloorError
    from glauber.exact.krylov import LANCZOS_GAP_FLOOR
    from glauber.toy_models.specs import parse_toy_spec

    chain = ExactChain(parse_toy_spec("ising-cycle:n=13,J=1.0"), 0.2)
    exact = (1 - math.tanh(2 * 5.0)) / 13
    with pytest.raises(GapBelowFloorError) as caught:
        chain.absolute_spectral_gap()
    assert exact <= caught.value.gap_upper < LANCZOS_GAP_FLOOR
    assert caught.value.gap_upper == pytest.approx(exact, rel=0.01)


def test_a_gap_below_the_floor_still_bounds_t_mix_from_below():
    # Ising on the 13-cycle at beta = 5: the gap (1 - tanh 10) / 13 = 3.17e-10 (LPW Theorem
    # 15.5) is below Lanczos' floor, and its rigorous gap_upper still gives LPW Theorem 12.5's
    # lower bound, which must lie below the one the closed-form gap gives.
    from glauber.toy_models.specs import parse_toy_spec

    chain = ExactChain(parse_toy_spec("ising-cycle:n=13,J=1.0"), 0.2)
    bracket = chain.mixing_bracket(0.25, max_steps=100, method="sparse")
    spectral = [c for c in bracket.claims if c.details["source"] == "spectral"]
    assert spectral and spectral[0].rigorous
    closed_form = (13 / (1 - math.tanh(10.0)) - 1) * math.log(2.0)
    assert 0.99 * closed_form <= bracket.lower <= closed_form
