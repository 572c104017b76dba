"""Scan contraction and Theorem 8 per pass (glauber.theory.systematic_scan), and the site updates
(glauber.theory.site_updates).

Oracles: explicit products over ``itertools.permutations`` (the shuffled matrix), exact chains of
random models (``d(t)`` of the sweep and the shuffled scan against ``1^T E^t 1`` and
``n alpha_row^t``, the exact per-pass escape probability against ``k (q-1) e^{-Delta*/tau}``),
the linear epsilon mixture, and detailed balance of the Metropolis-Hastings kernel written out
with fractions-free closed forms.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError, StateSpaceTooLargeError
from glauber.exact.chain import ExactChain
from glauber.exact.influence import influence_matrix
from glauber.testing import basins, influence_matrices, models, temperatures
from glauber.theory.contraction import alpha_row
from glauber.theory.site_updates import (
    log_acceptance,
    mixture_influence,
    mixture_log_probs,
)
from glauber.theory.systematic_scan import (
    dobrushin_scan_distance_bound,
    dobrushin_scan_tmix_bound,
    scan_certificate,
    scan_distance_bound,
    scan_escape_bound,
    scan_influence_matrix,
    shuffled_influence_matrix,
    site_update_matrix,
)

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def test_site_update_and_sweep_matrices_closed_form() -> None:
    C = np.array([[0.0, 0.2, 0.3], [0.1, 0.0, 0.0], [0.0, 0.5, 0.0]])
    E1 = site_update_matrix(C, 1)
    assert E1.tolist() == [[1.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.0, 1.0]]
    # sweep 0, 1, 2 on beta = e_j, by hand: b0 <- .2 b1 + .3 b2; b1 <- .1 b0; b2 <- .5 b1
    for j in range(3):
        b = np.eye(3)[j].copy()
        b[0] = 0.2 * b[1] + 0.3 * b[2]
        b[1] = 0.1 * b[0]
        b[2] = 0.5 * b[1]
        np.testing.assert_allclose(scan_influence_matrix(C)[:, j], b, atol=1e-15)


@SETTINGS
@given(C=influence_matrices(max_sites=5))
def test_shuffled_matrix_is_the_average_over_orders(C) -> None:
    n = C.shape[0]
    orders = list(itertools.permutations(range(n)))
    expected = sum(scan_influence_matrix(C, list(o)) for o in orders) / len(orders)
    np.testing.assert_allclose(shuffled_influence_matrix(C), expected, rtol=1e-12, atol=1e-15)


@SETTINGS
@given(C=influence_matrices(max_sites=6))
def test_row_sums_below_one_contract_the_sup_norm(C) -> None:
    """alpha_row < 1 => ||E_sigma beta||_inf <= alpha_row ||beta||_inf for every beta >= 0."""
    a = alpha_row(C)
    assume(a < 1.0)
    E = scan_influence_matrix(C)
    assert np.abs(E).sum(axis=1).max() <= a + 1e-12  # the l-infinity operator norm
    n = C.shape[0]
    for t in (1, 3):
        assert scan_distance_bound(E, t) <= dobrushin_scan_distance_bound(a, n, t) * (1 + 1e-12)


def test_certificate_is_the_first_crossing_and_valid() -> None:
    E = scan_influence_matrix(np.array([[0.0, 0.6], [0.7, 0.0]]))
    t = scan_certificate(E, 0.25)
    assert scan_distance_bound(E, t) <= 0.25 < scan_distance_bound(E, t - 1)
    assert scan_certificate(np.array([[1.0, 0.0], [0.0, 0.5]]), 0.25) is None  # rho = 1
    # not monotone: 1^T E^t 1 = 2, 2, 0: the certificate still holds where it is returned
    E = np.array([[0.0, 2.0], [0.0, 0.0]])
    t = scan_certificate(E, 0.25)
    assert scan_distance_bound(E, t) <= 0.25


def test_dobrushin_scan_tmix_bound_closed_form() -> None:
    assert dobrushin_scan_tmix_bound(0.5, 4, 0.25) == 4  # 4 * 2^-4 = 1/4
    assert dobrushin_scan_tmix_bound(0.0, 9, 0.25) == 1
    with pytest.raises(InvalidParameterError):
        dobrushin_scan_tmix_bound(1.0, 4, 0.25)
    with pytest.raises(StateSpaceTooLargeError):
        shuffled_influence_matrix(np.zeros((17, 17)))


@SETTINGS
@given(model=models(max_states=64, max_q=3), tau=temperatures(0.3, 6.0),
       scan=st.sampled_from(["sweep", "shuffled"]))
def test_pass_distance_is_bounded_by_the_influence_matrix_power(model, tau, scan) -> None:
    """The theorem on exact chains: d(t) <= 1^T E^t 1 (sweep: E_sigma; shuffled: E_bar), and
    d(t) <= n alpha_row^t, t_mix within both certificates, when alpha_row < 1."""
    assume(model.n <= 5)
    chain = ExactChain(model, tau, kernel=scan)
    C = chain.influence_matrix()
    E = scan_influence_matrix(C) if scan == "sweep" else shuffled_influence_matrix(C)
    ts = [1, 2, 4, 7]
    for t, d in zip(ts, chain.distance_curve(ts)):
        assert d <= scan_distance_bound(E, t) + 1e-12
    a = alpha_row(C)
    if a < 1.0:
        for t, d in zip(ts, chain.distance_curve(ts)):
            assert d <= dobrushin_scan_distance_bound(a, model.n, t) + 1e-12
        t_mix = chain.mixing_time(0.25)
        assert t_mix <= scan_certificate(E, 0.25) <= dobrushin_scan_tmix_bound(a, model.n)


#: Models with a self-reinforcing token 0 (as in tests/verification/test_escape.py), where the
#: count basins {#0 >= b > n/2} meet Assumption 1.
SELF_REINFORCING = {
    "potts": {"graphs": ("complete",), "coupling": (0.5, 3.0), "coupling_modes": ("uniform",),
              "field_modes": ("zero",)},
    "planted": {"token": 0, "strength": (2.0, 10.0), "base": (-2.0, 2.0)},
}


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), model=models(max_states=64, families=SELF_REINFORCING, min_sites=3,
                                    max_q=3), u=st.floats(0.5, 8.0))
def test_theorem8_per_pass(data, model, u) -> None:
    """Under Assumption 1 a pass (sweep or shuffled) leaves the basin with probability at most
    k (q - 1) e^{-Delta*/tau}; a Metropolis-Hastings step at most (k/n)(q - 1) e^{-Delta*/tau}
    (its moves are Glauber moves thinned by the acceptance)."""
    mask = data.draw(basins(model, kinds=("count",), token=0, min_fraction=0.5)).mask
    m = ExactChain(model, 1.0).margins(mask)  # scores at tau = 1
    assume(m.holds and math.isfinite(m.delta_star))
    tau = m.delta_star / u
    bound = scan_escape_bound(m.k, model.q, m.delta_star, tau)
    assert bound == pytest.approx(m.k * (model.q - 1) * math.exp(-u), rel=1e-12)
    for scan in ("sweep", "shuffled"):
        chain = ExactChain(model, tau, kernel=scan)
        assert chain.escape_probabilities(mask).max() <= bound * (1 + 1e-9)
    for kernel in ("mh:pll", "mh:logits"):
        mh = ExactChain(model, tau, kernel=kernel)
        assert mh.escape_probabilities(mask).max() <= bound / model.n * (1 + 1e-9)


# ------------------------------------------------------------------------------- site updates
@SETTINGS
@given(eps=st.floats(0.0, 1.0), seed=st.integers(0, 2**16))
def test_mixture_log_probs_is_the_linear_mixture(eps, seed) -> None:
    log_p = np.log(np.random.default_rng(seed).dirichlet(np.ones(5), size=3))
    expected = np.log((1 - eps) * np.exp(log_p) + eps / 5)
    np.testing.assert_allclose(mixture_log_probs(log_p, eps), expected, rtol=1e-12, atol=1e-14)
    got = mixture_log_probs(torch.from_numpy(log_p), eps)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-14)


@SETTINGS
@given(model=models(max_states=27, max_q=3), tau=temperatures(0.3, 4.0),
       eps=st.floats(0.0, 1.0))
def test_mixture_scales_influences_exactly(model, tau, eps) -> None:
    chain = ExactChain(model, tau, kernel="random", epsilon=eps)
    np.testing.assert_allclose(influence_matrix(chain.site_rows()),
                               mixture_influence(chain.influence_matrix(), eps),
                               rtol=1e-9, atol=1e-14)


@SETTINGS
@given(st.lists(st.floats(-30.0, 30.0), min_size=4, max_size=4))
def test_acceptance_satisfies_detailed_balance(values) -> None:
    """pi(x) r(a) a(x -> y) = pi(y) r(x_i) a(y -> x): min(pi(x) r(a), pi(y) r(x_i)) both ways."""
    log_pi_x, log_pi_y, log_r_a, log_r_own = values
    forward = log_pi_x + log_r_a + float(log_acceptance(log_pi_x, log_pi_y, log_r_a, log_r_own))
    backward = log_pi_y + log_r_own + float(log_acceptance(log_pi_y, log_pi_x, log_r_own, log_r_a))
    assert forward == pytest.approx(backward, rel=1e-12, abs=1e-12)
    assert forward == pytest.approx(min(log_pi_x + log_r_a, log_pi_y + log_r_own), abs=1e-12)
