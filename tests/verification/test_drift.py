"""Section 5.4's drift certificate: not rigorous as printed (exact counterexample), and the
corrected band certificate (glauber.theory.drift.band_drift_escape_bound) verified exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError
from glauber.exact.chain import ExactChain
from glauber.testing import models
from glauber.theory import band_drift_escape_bound, boundary_drift_as_printed
from glauber.toy_models import PlantedBasinModel
from glauber.toy_models.counterexamples import (
    boundary_drift_counterexample,
    exact_count_drift,
)

from ._support import absorbing_hit_within


def drift_from_kernel(chain: ExactChain, token: int) -> np.ndarray:
    """Reference drift ``sum_y P(x, y) (X(y) - X(x))`` straight from the transition matrix."""
    count = (chain.states() == token).sum(axis=1).astype(float)
    D = chain.dense_transition_matrix()
    return D @ count - count


def lumped_counterexample(n: int, b: int, keep=0.5, down_ratio=0.5, low=0.01):
    """The counterexample's count chain as a birth-death chain on ``0..n`` (reference).

    From ``k`` copies: up with ``(n - k)/n r(k)``, down with ``k/n (1 - r(k - 1))``, where
    ``r(c)`` is the builder's probability of the token given ``c`` other copies.
    """
    r = np.full(n, low)
    r[b:] = keep
    r[b - 1] = 1 - down_ratio * (n - b) * keep / b
    k = np.arange(n + 1)
    up = np.where(k < n, (n - k) / n * r[np.minimum(k, n - 1)], 0.0)
    down = np.where(k > 0, k / n * (1 - r[np.maximum(k - 1, 0)]), 0.0)
    return np.diag(1 - up - down) + np.diag(up[:-1], 1) + np.diag(down[1:], -1)


def test_boundary_drift_counterexample_is_exact():
    cx = boundary_drift_counterexample(n=8)
    chain = cx.chain()
    n, b, T = 8, int(cx.details["boundary"]), int(cx.details["horizon"])
    assert (b, T) == (7, 80)
    count = (chain.states() == 0).sum(axis=1)
    basin = count >= b
    drift = drift_from_kernel(chain, 0)
    np.testing.assert_allclose(exact_count_drift(chain, 0), drift, rtol=0, atol=1e-13)
    # Section 5.4's hypothesis holds: positive drift at EVERY boundary state (not a sample) ...
    boundary = count == b
    assert boundary.sum() == 8 and drift[boundary].min() > 0
    assert boundary_drift_as_printed(drift[boundary])
    assert cx.check.hypothesis_held and cx.check.details["hypothesis_value"] == pytest.approx(drift[boundary].min())
    # Closed form: drift = (1 - down_ratio) (n - b) keep / n = 0.5 * 1 * 0.5 / 8.
    assert drift[boundary] == pytest.approx(np.full(8, 0.5 * 0.5 / 8))
    # ... the levels below the boundary have negative drift ...
    assert drift[(count >= 1) & (count < b)].max() < -0.1
    # ... and the chain leaves B fast: exact P(leave B within T), dense reference.
    D = chain.dense_transition_matrix()
    leave = absorbing_hit_within(D, ~basin, T)
    assert leave[cx.x_index] == pytest.approx(cx.check.exact, rel=1e-10)
    assert cx.check.exact > 0.85 and cx.check.refuted and cx.check.bound == 0.5
    assert chain.states()[cx.x_index].tolist() == [0] * 7 + [1]
    # Expected exit time by first-step analysis, dense solve: h = 1 + P_BB h on B.
    h = np.linalg.solve(np.eye(basin.sum()) - D[np.ix_(basin, basin)], np.ones(basin.sum()))
    exit_time = h[np.flatnonzero(basin).tolist().index(cx.x_index)]
    assert exit_time == pytest.approx(cx.details["expected_exit_time"], rel=1e-9)
    assert exit_time < 40
    fall = absorbing_hit_within(D, count <= n // 2, T)[cx.x_index]
    assert fall == pytest.approx(cx.details["p_fall_within_horizon"], rel=1e-10)
    assert fall > 0.75
    # Not slow mixing at all: the exact worst-start t_mix(1/4) is 85 steps, a few exit times.
    assert chain.mixing_time(0.25) <= 3 * exit_time


def test_lumped_reference_matches_the_full_chain():
    cx = boundary_drift_counterexample(n=8)
    chain = cx.chain()
    count = (chain.states() == 0).sum(axis=1)
    D = chain.dense_transition_matrix()
    L = lumped_counterexample(8, 7)
    for k in range(9):  # every state of level k moves like the lumped chain from k
        rows = D[count == k]
        lumped_rows = np.stack([rows[:, count == m].sum(axis=1) for m in range(9)], axis=1)
        np.testing.assert_allclose(lumped_rows, np.broadcast_to(L[k], lumped_rows.shape),
                                   rtol=0, atol=1e-14)


@pytest.mark.parametrize("n", [20, 50, 100, 400])
def test_escape_is_not_exponential_in_n(n):
    # The lumped count chain (validated above) shows the family uniformly in n: positive drift
    # at the boundary b = ceil(0.9 n), yet the expected exit time stays bounded and the chain
    # leaves B within 10 n steps with probability -> 1, instead of exponentially rarely.
    b = math.ceil(0.9 * n)
    L = lumped_counterexample(n, b)
    k = np.arange(n + 1)
    drift = L @ k - k
    assert drift[b] > 0
    inside = k >= b
    h = np.linalg.solve(np.eye(inside.sum()) - L[np.ix_(inside, inside)], np.ones(inside.sum()))
    assert h[0] < 46  # from the boundary level b; increases to about 45 as n grows
    leave = absorbing_hit_within(L, ~inside, 10 * n)[b]
    assert leave > 0.95


def test_boundary_drift_counterexample_rejects_bad_parameters():
    with pytest.raises(InvalidParameterError, match="boundary"):
        boundary_drift_counterexample(n=8, boundary=8)
    with pytest.raises(InvalidParameterError, match="keep"):
        boundary_drift_counterexample(keep=1.0)
    with pytest.raises(InvalidParameterError, match="do not refute"):
        boundary_drift_counterexample(n=6, horizon=1)  # one step: leaving has prob < 1/2


#: Conditionals biased towards token 0, so the count of 0 drifts up on wide bands: random score
#: tables with a bias on token 0, and planted models whose token 0 reinforces itself.
DRIFTING = {
    "random-table": {"scale": (0.1, 1.5), "bias": (0.0, 6.0)},
    "planted": {"token": 0, "strength": (0.0, 8.0), "base": (-1.0, 6.0)},
}


@given(model=models(families=DRIFTING, min_sites=4, max_q=3), tau=st.floats(0.3, 3.0),
       data=st.data())
@settings(max_examples=30, deadline=None)
def test_band_drift_certificate_bounds_the_exact_escape_probability(model, tau, data):
    n = model.n
    a = data.draw(st.integers(0, n - 3), label="a")
    b = data.draw(st.integers(a + 2, n), label="b")
    T = data.draw(st.integers(1, 12), label="T")
    chain = ExactChain(model, tau)
    count = (chain.states() == 0).sum(axis=1)
    drift = drift_from_kernel(chain, 0)
    band = (count > a) & (count < b)
    eps = float(drift[band].min()) if band.any() else 1.0
    assume(eps > 0)  # the corrected hypothesis: drift >= eps on EVERY state of the band
    bound = band_drift_escape_bound(min(eps, 1.0), a, b, T, c=1.0)
    # Exact P(X_t <= a for some t <= T | X_0 = x), absorbing-chain algebra, worst x with X >= b.
    target = count <= a
    hit = chain.hitting_probability_within(target, T)
    np.testing.assert_allclose(
        hit, absorbing_hit_within(chain.dense_transition_matrix(), target, T), atol=1e-12
    )
    assert hit[count >= b].max() <= bound.bound + 1e-12


def test_band_drift_certificate_is_non_vacuous_and_valid_on_a_planted_chain():
    # Planted token with a strong base score: the count climbs at almost every level.
    model = PlantedBasinModel(10, 2, token=0, strength=2.0, base=[2.0, 0.0])
    chain = ExactChain(model, 1.0)
    count = (chain.states() == 0).sum(axis=1)
    drift = exact_count_drift(chain, 0)
    a, b, T = 0, 6, 10
    eps = float(drift[(count > a) & (count < b)].min())
    assert eps > 0.45
    bound = band_drift_escape_bound(eps, a, b, T)
    assert not bound.vacuous and bound.bound < 0.11
    hit = chain.hitting_probability_within(count <= a, T)
    # Valid, and (Hoeffding + a union bound) far from tight: the exact value is ~1e-9.
    assert 0 < hit[count >= b].max() <= 1e-6 < bound.bound
