"""Theorem 5 (high-temperature contraction): refuted as printed, corrected and verified; path
coupling (Bubley-Dyer; Levin-Peres-Wilmer 2nd ed. Theorem 14.6, Corollary 14.8)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.core.enumeration import all_states, neighbour_indices
from glauber.errors import InvalidParameterError
from glauber.exact.chain import ExactChain
from glauber.testing import models
from glauber.theory import (
    adjacent_pair_hamming_bound,
    alpha_col,
    alpha_row,
    certify_contraction,
    coupling_distance_bound,
    influence_matrix_bound,
    path_coupling_distance_bound,
    path_coupling_tmix_bound,
    rate_from_contraction_factor,
    theorem5_contraction_factor,
    theorem5_tmix_bound,
)
from glauber.toy_models.counterexamples import (
    theorem5_counterexample,
    theorem5_gibbs_star_counterexample,
)

from ._support import ASYM_ISING, mixes_by, tau_near_threshold

EPS = 0.25


def adjacent_pair_expectations(chain: ExactChain) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact ``E[d_H(X_1, Y_1)]`` of every adjacent pair under the same-site maximal coupling.

    Reference formula: site ``i`` is picked with probability ``1/n``; the maximal coupling of
    the two conditionals at ``i`` disagrees with probability ``1 - sum_a min(p_a, r_a)``; the
    other sites keep their (dis)agreement. For a pair differing only at ``j`` this gives
    ``(n - 1 + sum_{i != j} (1 - sum_a min(p_a, r_a))) / n``.

    Returns ``(x, y, site, expectation)`` arrays over all ordered pairs ``x < y``.
    """
    n, q = chain.n, chain.q
    cond = chain.conditionals()
    nb = neighbour_indices(n, q)
    states = all_states(n, q)
    xs, ys, js, values = [], [], [], []
    for j in range(n):
        for b in range(q):
            y = nb[j, :, b]
            keep = states[:, j] < b  # each unordered pair once
            x_idx, y_idx = np.flatnonzero(keep), y[keep]
            overlap = np.minimum(cond[:, x_idx, :], cond[:, y_idx, :]).sum(axis=-1)  # [n, P]
            disagree = 1.0 - overlap
            disagree[j] = 0.0  # site j's conditional ignores its own token: it is coupled
            xs.append(x_idx)
            ys.append(y_idx)
            js.append(np.full(x_idx.size, j))
            values.append((n - 1 + disagree.sum(axis=0)) / n)
    return (np.concatenate(xs), np.concatenate(ys), np.concatenate(js), np.concatenate(values))


def chain_near_threshold(model, factor: float) -> ExactChain:
    """The exact chain of ``model`` at ``factor`` times Corollary 7's threshold temperature."""
    return ExactChain(model, tau_near_threshold(model, factor))


#: Theorem 5's corrected certificates are checked on toys around Corollary 7's threshold.
NEAR_THRESHOLD = given(model=models(), factor=st.floats(0.3, 3.0))


@NEAR_THRESHOLD
@settings(max_examples=25, deadline=None)
def test_corrected_theorem5_every_certificate_bounds_the_exact_mixing_time(model, factor):
    chain = chain_near_threshold(model, factor)
    C = chain.influence_matrix()
    certs = [certify_contraction(C, EPS), certify_contraction(
        influence_matrix_bound(chain.oscillation_matrix(), chain.tau), EPS
    )]  # from the exact C and from the (sharper Lemma 6) oscillation bound on C
    bounds = [
        b for cert in certs
        for b in (cert.tmix_row, cert.tmix_col, cert.tmix_spectral, cert.tmix_matrix_power)
        if math.isfinite(b)
    ]
    # d(t) <= 1^T M^t 1 (beta_{t+1} <= M beta_t) holds at every t, certified or not.
    for t in (0, 1, 2, 5, 20, 80):
        assert chain.distance(t) <= coupling_distance_bound(C, t) + 1e-12
    # t_mix(eps) <= B iff d(B) <= eps (checked at B: bounds can be attained, e.g. by
    # independent sites, where d(B) = eps up to rounding).
    for bound in bounds:
        assert mixes_by(chain, bound, EPS), (bound, certs)
    if bounds:
        assert certs[0].best_bound <= certs[1].best_bound  # exact C is never worse


@NEAR_THRESHOLD
@settings(max_examples=25, deadline=None)
def test_corrected_theorem5_one_step_contraction_on_adjacent_pairs(model, factor):
    chain = chain_near_threshold(model, factor)
    C = chain.influence_matrix()
    xs, ys, js, values = adjacent_pair_expectations(chain)
    # Corrected: E[d_H] <= 1 - 1/n + (1/n) sum_i c_ij <= 1 - (1 - alpha_col)/n, for every pair.
    column_bound = np.array([adjacent_pair_hamming_bound(C, j) for j in range(chain.n)])
    assert np.all(values <= column_bound[js] + 1e-12)
    assert values.max() <= theorem5_contraction_factor(chain.n, alpha_col(C)) + 1e-12
    # ... and the bound at site j is attained by some pair when one pair attains every c_ij
    # (always for n = 2); in general the max over pairs is between the row and column forms.
    worst = chain.one_step_hamming_all_pairs_adjacent()
    assert worst.expected_distance == pytest.approx(values.max(), abs=1e-12)
    for k in np.linspace(0, xs.size - 1, 5).astype(int):
        assert chain.one_step_hamming(int(xs[k]), int(ys[k])) == pytest.approx(
            values[k], abs=1e-12
        )


@pytest.mark.parametrize("build", [theorem5_counterexample, theorem5_gibbs_star_counterexample])
def test_theorem5_as_printed_is_refuted_and_the_correction_holds(build):
    cx = build()
    chain = cx.chain()
    n = chain.n
    C = chain.influence_matrix()
    x, y = chain.states()[cx.x_index], chain.states()[cx.y_index]
    assert np.flatnonzero(x != y).tolist() == [0]  # an adjacent pair differing at the hub
    # The printed hypothesis holds: row sums < 1 ...
    assert alpha_row(C) == pytest.approx(cx.check.details["hypothesis_value"]) and alpha_row(C) < 1.0
    # ... yet the exact one-step expected Hamming distance exceeds the printed contraction,
    # and even exceeds 1 = d_H(x, y): the pair moves apart on average.
    observed = chain.one_step_hamming(cx.x_index, cx.y_index)
    printed = theorem5_contraction_factor(n, alpha_row(C)) * 1
    assert observed == pytest.approx(cx.check.exact, abs=1e-12)
    assert observed == pytest.approx(cx.details["closed_form"], rel=1e-12)
    assert observed > printed + 0.1 and observed > 1.0 and cx.check.refuted
    assert cx.check.bound == pytest.approx(printed)
    # Corrected statement: the column-sum bound holds, here with equality.
    assert observed <= adjacent_pair_hamming_bound(C, 0) + 1e-12
    assert observed == pytest.approx(adjacent_pair_hamming_bound(C, 0), rel=1e-12)
    assert alpha_col(C) > 1.0  # so no one-step contraction is claimed by the correction
    # The t_mix bound with the row sum (and every other valid certificate) still holds.
    t_mix = chain.mixing_time(EPS)
    assert t_mix <= theorem5_tmix_bound(n, alpha_row(C), EPS)
    cert = certify_contraction(C, EPS)
    for bound in (cert.tmix_row, cert.tmix_col, cert.tmix_spectral, cert.tmix_matrix_power):
        assert t_mix <= bound
    assert math.isfinite(cert.tmix_row) and math.isinf(cert.tmix_col)
    assert t_mix == cx.details["tmix_exact"]
    assert cx.to_dict()["check"]["holds"] is False


def test_copy_star_influences_closed_form():
    # Hub uniform, leaves copy the hub with score s: TV between the two leaf conditionals is
    # (e^s - 1)/(e^s + q - 1) (q = 2: tanh(s/2)); nothing else influences anything.
    for q, strength, tau in ((2, 4.0, 1.0), (3, 3.0, 0.7)):
        cx = theorem5_counterexample(n=5, q=q, strength=strength, tau=tau)
        C = cx.chain().influence_matrix()
        e = math.exp(strength / tau)
        expected = np.zeros((5, 5))
        expected[1:, 0] = (e - 1) / (e + q - 1)
        np.testing.assert_allclose(C, expected, rtol=1e-12, atol=1e-15)
    assert math.tanh(2.0) == pytest.approx(
        theorem5_counterexample(q=2, strength=4.0).check.details["hypothesis_value"], rel=1e-12
    )


def test_counterexample_builders_reject_parameters_without_a_violation():
    with pytest.raises(InvalidParameterError, match="n >= 3"):
        theorem5_counterexample(n=2)
    with pytest.raises(InvalidParameterError, match="do not refute"):
        theorem5_gibbs_star_counterexample(leaves=4, hub_field=0.0)  # hub row sum > 1


@given(n=st.integers(3, 6), q=st.integers(2, 3), strength=st.floats(1.0, 6.0),
       tau=st.floats(0.3, 3.0))
@settings(max_examples=15, deadline=None)
def test_copy_star_family_refutes_whenever_the_closed_form_says_so(n, q, strength, tau):
    if q**n > 256:
        q = 2
    e = math.exp(strength / tau)
    r = (e - 1) / (e + q - 1)
    closed = (n - 1) * (1 + r) / n
    # closed - (1 - (1 - r)/n) = (n - 2) r / n > 0: the printed bound fails for every n >= 3,
    # and the pair moves apart (E[d_H] > 1) exactly when (n - 1) r > 1.
    cx = theorem5_counterexample(n=n, q=q, strength=strength, tau=tau)
    assert cx.check.refuted and cx.check.hypothesis_held
    assert cx.check.exact == pytest.approx(closed, rel=1e-12)
    assert (cx.check.exact > 1.0) == ((n - 1) * r > 1.0)
    assert cx.details["tmix_exact"] <= cx.details["tmix_bound_row"]


# --------------------------------------------------------------------------- path coupling
@given(model=models(families={**ASYM_ISING, "random-table": {"scale": (0.05, 0.6)}}, max_q=2),
       factor=st.floats(0.5, 3.0))
@settings(max_examples=20, deadline=None)
def test_path_coupling_bound_from_exact_adjacent_pair_expectations(model, factor):
    chain = chain_near_threshold(model, factor)
    _, _, _, values = adjacent_pair_expectations(chain)
    kappa = float(values.max())
    assert kappa == pytest.approx(chain.one_step_hamming_all_pairs_adjacent().expected_distance)
    if kappa >= 1.0:
        return  # no contraction on adjacent pairs: path coupling certifies nothing
    rate = rate_from_contraction_factor(kappa)
    # LPW Theorem 14.6 with the Hamming path metric (diameter n): d(t) <= n e^{-rate t}.
    for t in (1, 3, 10, 30, 100):
        assert chain.distance(t) <= path_coupling_distance_bound(t, rate, chain.n) + 1e-12
    # Corollary 14.8.
    assert mixes_by(chain, path_coupling_tmix_bound(rate, chain.n, EPS), EPS)
    # The column-sum contraction factor is a valid (weaker) adjacent-pair factor.
    column_factor = theorem5_contraction_factor(chain.n, alpha_col(chain.influence_matrix()))
    assert kappa <= column_factor + 1e-12
