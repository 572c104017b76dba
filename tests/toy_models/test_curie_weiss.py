"""Curie–Weiss model and its exact lumped (birth–death) Glauber chain.

Oracles: the full 2^n-state heat-bath chain built here by brute force from the Gibbs weight
(alpha/n) sum_{i<j} s_i s_j + h sum_i s_i (a double loop, independent of the library); dense
matrix powers and eigenvalues; a high-precision (mpmath) Sturm-bisection for tiny gaps; and
published asymptotics: the contraction bound gap >= (1 - alpha)/n (LPW 2nd ed., Theorem 13.1 with
the one-step Hamming contraction 1 - (1 - alpha)/n), gap ~ (1 - alpha)/n (Ding, Lubetzky & Peres,
CMP 2009), cutoff at n log n / (2 (1 - alpha)) (Levin, Luczak & Peres, PTRF 2010, Theorem 1) and
the Arrhenius law gap ~ exp(-n Delta F) at alpha > 1 (Griffiths, Weng & Langer, Phys. Rev. 1966).
"""

from __future__ import annotations

import itertools
import math

import mpmath
import networkx as nx
import numpy as np
import pytest

from glauber.errors import (
    ConvergenceError,
    InvalidParameterError,
    InvalidProbabilityError,
    InvalidTemperatureError,
)
from glauber.toy_models import CurieWeissLumpedChain, CurieWeissModel, IsingModel

CASES = [  # (n, alpha, tau, h)
    (1, 0.7, 1.0, 0.3),
    (2, 1.5, 1.0, 0.0),
    (5, 0.5, 1.0, 0.0),
    (6, 2.0, 0.8, 0.2),
    (7, -1.0, 1.5, -0.4),
    (8, 1.2, 1.0, 0.0),
]


def configurations(n: int) -> np.ndarray:
    return np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.int64)


def brute_log_weight(x: np.ndarray, n: int, alpha: float, h: float) -> float:
    s = 2 * x - 1
    pairs = sum(s[i] * s[j] for i in range(n) for j in range(i + 1, n))
    return alpha / n * pairs + h * s.sum()


def brute_chain(n: int, alpha: float, tau: float, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Full heat-bath transition matrix over {0,1}^n and the number of plus spins per state."""
    xs = configurations(n)
    index = {tuple(x): r for r, x in enumerate(xs)}
    p = np.zeros((2**n, 2**n))
    for r, x in enumerate(xs):
        for i in range(n):
            options = []
            for a in (0, 1):
                y = x.copy()
                y[i] = a
                options.append((index[tuple(y)], brute_log_weight(y, n, alpha, h) / tau))
            top = max(w for _, w in options)
            z = sum(math.exp(w - top) for _, w in options)
            for col, w in options:
                p[r, col] += math.exp(w - top) / z / n
    return p, xs.sum(axis=1)


@pytest.mark.parametrize("n, alpha, tau, h", CASES)
def test_lumped_matrix_is_the_full_chain_lumped(n, alpha, tau, h):
    p_full, level = brute_chain(n, alpha, tau, h)
    lumped = CurieWeissLumpedChain(n, alpha, tau=tau, field=h).transition_matrix()
    assert lumped.shape == (n + 1, n + 1)
    lumped = lumped.toarray()
    for r in range(2**n):
        # every configuration of level k sends the same mass to each level l (lumpability)
        to_levels = np.bincount(level, weights=p_full[r], minlength=n + 1)
        np.testing.assert_allclose(to_levels, lumped[level[r]], atol=1e-13)


@pytest.mark.parametrize("n, alpha, tau, h", CASES)
def test_stationary_is_the_lumped_gibbs_law(n, alpha, tau, h):
    chain = CurieWeissLumpedChain(n, alpha, tau=tau, field=h)
    xs = configurations(n)
    w = np.array([math.exp(brute_log_weight(x, n, alpha, h) / tau) for x in xs])
    gibbs = np.bincount(xs.sum(axis=1), weights=w / w.sum(), minlength=n + 1)
    np.testing.assert_allclose(chain.stationary(), gibbs, rtol=1e-12)
    p = chain.transition_matrix().toarray()
    np.testing.assert_allclose(gibbs @ p, gibbs, atol=1e-14)
    np.testing.assert_array_equal(chain.magnetisation_levels(), 2 * np.arange(n + 1) - n)


@pytest.mark.parametrize("n, alpha, h", [(4, 1.3, 0.0), (6, 0.4, -0.5), (5, -2.0, 0.3)])
def test_model_matches_ising_on_the_complete_graph(n, alpha, h):
    cw = CurieWeissModel(n, alpha, field=h)
    ising = IsingModel(nx.complete_graph(n), coupling=alpha / n, field=h)
    xs = configurations(n)
    for i in range(n):
        np.testing.assert_allclose(cw.score_site(xs, i), ising.score_site(xs, i), atol=1e-13)
    brute = [brute_log_weight(x, n, alpha, h) for x in xs]
    np.testing.assert_allclose(cw.log_weight(xs), brute, atol=1e-12)
    np.testing.assert_allclose(ising.log_weight(xs), brute, atol=1e-12)


def brute_gibbs(n: int, alpha: float, tau: float, h: float) -> np.ndarray:
    w = np.array([brute_log_weight(x, n, alpha, h) / tau for x in configurations(n)])
    w = np.exp(w - w.max())
    return w / w.sum()


def tv(p: np.ndarray, q: np.ndarray) -> float:
    return 0.5 * float(np.abs(p - q).sum())


@pytest.mark.parametrize("n, alpha, tau, h", [(6, 1.5, 1.0, 0.1), (5, 0.6, 0.7, 0.0)])
def test_lumped_distance_versus_full_chain(n, alpha, tau, h):
    p_full, level = brute_chain(n, alpha, tau, h)
    chain = CurieWeissLumpedChain(n, alpha, tau=tau, field=h)
    pi_full = brute_gibbs(n, alpha, tau, h)
    lumped_pi = chain.stationary()
    for t in (0, 1, 3, 10, 40):
        pt = np.linalg.matrix_power(p_full, t)
        by_level = chain.level_distances(t)
        # all-minus (row 0) and all-plus (last row) starts are exchangeable: equality
        assert by_level[0] == pytest.approx(tv(pt[0], pi_full), abs=1e-12)
        assert by_level[n] == pytest.approx(tv(pt[-1], pi_full), abs=1e-12)
        full_worst = max(tv(row, pi_full) for row in pt)
        assert chain.distance(t) <= full_worst + 1e-12
        for k in range(n + 1):
            members = level == k
            # from one configuration of level k: a lower bound
            assert by_level[k] <= tv(pt[np.flatnonzero(members)[0]], pi_full) + 1e-12
            # from the uniform mixture over level k: equality
            mixture = pt[members].mean(axis=0)
            assert by_level[k] == pytest.approx(tv(mixture, pi_full), abs=1e-12)
        lumped_rows = np.linalg.matrix_power(chain.transition_matrix().toarray(), t)
        assert chain.distance(t) == pytest.approx(
            max(tv(row, lumped_pi) for row in lumped_rows), abs=1e-12)


@pytest.mark.parametrize("n, alpha, tau, h, eps", [
    (12, 0.7, 1.0, 0.0, 0.25), (9, 1.5, 1.0, 0.1, 0.25), (7, 3.0, 0.5, 0.0, 0.25),
    (10, -1.0, 2.0, 0.3, 0.1), (1, 0.0, 1.0, 0.0, 0.25), (4, 0.5, 1.0, 0.0, 0.9),
])
def test_mixing_time_is_the_first_time_within_eps(n, alpha, tau, h, eps):
    chain = CurieWeissLumpedChain(n, alpha, tau=tau, field=h)
    p = chain.transition_matrix().toarray()
    pi = chain.stationary()

    def d(t: int) -> float:
        return max(tv(row, pi) for row in np.linalg.matrix_power(p, t))

    t_mix = chain.mixing_time(eps)
    assert d(t_mix) <= eps
    assert t_mix == 0 or d(t_mix - 1) > eps


def test_lumped_mixing_time_is_a_lower_bound_on_the_full_one():
    n, alpha = 6, 1.4
    p_full, _ = brute_chain(n, alpha, 1.0, 0.0)
    pi = brute_gibbs(n, alpha, 1.0, 0.0)
    t_lumped = CurieWeissLumpedChain(n, alpha).mixing_time()
    pt = np.linalg.matrix_power(p_full, t_lumped - 1)
    assert max(tv(row, pi) for row in pt) > 0.25  # the full chain has not mixed either


def reversible_spectrum(p: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Eigenvalues of a pi-reversible P from the symmetric D^{1/2} P D^{-1/2}, ascending."""
    root = np.sqrt(pi)
    s = root[:, None] * p / root[None, :]
    return np.linalg.eigvalsh((s + s.T) / 2)


@pytest.mark.parametrize("n, alpha, tau, h", CASES)
def test_spectral_gap_against_dense_eigenvalues(n, alpha, tau, h):
    chain = CurieWeissLumpedChain(n, alpha, tau=tau, field=h)
    eig = reversible_spectrum(chain.transition_matrix().toarray(), chain.stationary())
    assert chain.spectral_gap() == pytest.approx(1.0 - eig[-2], rel=1e-9)
    assert eig.min() > -1e-12  # heat-bath Glauber: no negative eigenvalues
    # lumped eigenvalues are eigenvalues of the full chain: the full gap is at most the lumped gap
    p_full, _ = brute_chain(n, alpha, tau, h)
    full = reversible_spectrum(p_full, brute_gibbs(n, alpha, tau, h))
    assert 1.0 - full[-2] <= chain.spectral_gap() + 1e-12
    assert np.min(np.abs(full - eig[-2])) < 1e-9
    assert chain.relaxation_time() == pytest.approx(1.0 / chain.spectral_gap())


def mp_gap(n: int, alpha: float, dps: int = 60) -> mpmath.mpf:
    """Second-smallest eigenvalue of Pi^{1/2} (I - P) Pi^{-1/2} at high precision (h = 0, tau = 1).

    Symmetric tridiagonal: diagonal up_k + down_k, off-diagonal -sqrt(up_k down_{k+1});
    Sturm counts of the LDL^T pivots and bisection, all in mpmath.
    """
    with mpmath.workdps(dps):
        a, nn = mpmath.mpf(alpha), mpmath.mpf(n)

        def sig(u):
            return 1 / (1 + mpmath.exp(-u))

        up = [(nn - k) / nn * sig(2 * a / nn * (2 * k - nn + 1)) for k in range(n + 1)]
        down = [k / nn * sig(-2 * a / nn * (2 * k - nn - 1)) for k in range(n + 1)]
        diag = [up[k] + down[k] for k in range(n + 1)]
        off2 = [up[k] * down[k + 1] for k in range(n)]

        def below(x):
            count, d = 0, diag[0] - x
            count += d < 0
            for k in range(1, n + 1):
                d = diag[k] - x - off2[k - 1] / d
                count += d < 0
            return count

        lo, hi = mpmath.mpf(0), mpmath.mpf(2)
        for _ in range(200):  # the gap is inf{x : two eigenvalues lie below x}
            mid = mpmath.sqrt(lo * hi) if lo > 0 else hi / 2**40
            if below(mid) >= 2:
                hi = mid
            else:
                lo = mid
        return hi


@pytest.mark.parametrize("n", [30, 100, 160])
def test_tiny_gaps_have_high_relative_accuracy(n):
    # at alpha = 2 the gap is ~1e-5 (n = 30), ~1e-17 (n = 100), ~1e-26 (n = 160): a dense
    # eigen-solver cannot resolve 1 - lambda_2 below ~1e-15, the bidiagonal SVD can
    gap = CurieWeissLumpedChain(n, 2.0).spectral_gap()
    assert gap == pytest.approx(float(mp_gap(n, 2.0)), rel=1e-8)


def test_high_temperature_gap_is_order_one_over_n():
    alpha = 0.5
    scaled = []
    for n in (10, 50, 200, 1000, 2000):
        scaled.append(n * CurieWeissLumpedChain(n, alpha).spectral_gap())
        # Chen / LPW Theorem 13.1: a Hamming contraction 1 - (1 - alpha)/n gives the bound
        assert scaled[-1] >= 1.0 - alpha - 1e-12
    # Ding–Lubetzky–Peres: n * gap -> 1 - alpha
    assert scaled[-1] == pytest.approx(1.0 - alpha, abs=0.01)
    assert scaled == sorted(scaled, reverse=True)


def test_low_temperature_gap_decays_exponentially():
    alpha = 2.0
    m = 0.9
    for _ in range(200):  # mean-field magnetisation: m = tanh(alpha m)
        m = math.tanh(alpha * m)
    # rate: pi(k) ~ exp(n g(M/n)), g(m) = H((1+m)/2) + alpha m^2/2; barrier g(m*) - g(0)
    entropy_loss = (1 + m) / 2 * math.log(1 + m) + (1 - m) / 2 * math.log(1 - m)
    barrier = alpha * m * m / 2 - entropy_loss
    gaps = {n: CurieWeissLumpedChain(n, alpha).spectral_gap() for n in (50, 100, 150, 200)}
    assert gaps[50] > gaps[100] > gaps[150] > gaps[200] > 0.0
    rate = (math.log(gaps[100]) - math.log(gaps[200])) / 100
    assert rate == pytest.approx(barrier, rel=0.05)


def test_n_2000_is_exact_and_cheap():
    n, alpha = 2000, 0.5
    chain = CurieWeissLumpedChain(n, alpha)
    p = chain.transition_matrix()
    pi = chain.stationary()
    np.testing.assert_allclose(np.asarray(p.sum(axis=1)).ravel(), 1.0, atol=1e-14)
    np.testing.assert_allclose(p.T @ pi, pi, atol=1e-15)
    assert pi.min() >= 0.0 and pi.sum() == pytest.approx(1.0)
    # the TV from each start is non-increasing in t
    early, late = chain.level_distances(100), chain.level_distances(200)
    assert np.all(late <= early + 1e-12) and early.max() <= 1.0


def test_mixing_time_matches_the_cutoff_location():
    # Levin–Luczak–Peres: cutoff at n log n / (2 (1 - alpha)) with a window of order n (all-plus
    # start, which is exchangeable, so its lumped and full TVs coincide).
    n, alpha = 1000, 0.5
    t_mix = CurieWeissLumpedChain(n, alpha).mixing_time()
    assert t_mix == pytest.approx(n * math.log(n) / (2 * (1 - alpha)), rel=0.05)


def test_slow_chain_reports_not_mixed():
    chain = CurieWeissLumpedChain(60, 2.0)
    with pytest.raises(ConvergenceError, match="max_t"):
        chain.mixing_time(max_t=10_000)


def test_bad_parameters_are_rejected():
    with pytest.raises(InvalidParameterError):
        CurieWeissLumpedChain(0, 1.0)
    with pytest.raises(InvalidParameterError):
        CurieWeissLumpedChain(5, float("nan"))
    with pytest.raises(InvalidParameterError):
        CurieWeissLumpedChain(5, 1.0, field=float("inf"))
    with pytest.raises(InvalidTemperatureError):
        CurieWeissLumpedChain(5, 1.0, tau=0.0)
    chain = CurieWeissLumpedChain(5, 1.0)
    with pytest.raises(InvalidProbabilityError):
        chain.mixing_time(eps=1.0)
    with pytest.raises(InvalidParameterError):
        chain.level_distances(-1)
    with pytest.raises(InvalidParameterError):
        chain.mixing_time(max_t=0)
    with pytest.raises(InvalidParameterError):
        CurieWeissModel(0, 1.0)
    with pytest.raises(InvalidParameterError):
        CurieWeissModel(4, float("nan"))
