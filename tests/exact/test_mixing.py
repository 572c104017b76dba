"""Tests of worst-start distance and mixing time by repeated squaring.

Oracles: exact rational arithmetic (fractions.Fraction) on chains of <= 7 states, closed forms for
two-state chains and for the heat-bath Ising pair (derived below), brute-force stepping, and the
monotonicity of d(t) (LPW 2nd ed. Exercise 4.2).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from glauber.errors import (
    ConvergenceError,
    DeviceUnavailableError,
    InvalidParameterError,
    InvalidProbabilityError,
    StateSpaceTooLargeError,
)
from glauber.exact import mixing
from glauber.exact.chain import ExactChain
from glauber.exact.mixing import (
    distance_curve,
    mixing_time,
    worst_start_distance,
    worst_start_tv,
)
from glauber.exact.stationary import gth_stationary
from glauber.testing import transition_matrices
from glauber.toy_models.base import FunctionModel

from ._support import exact_stationary


def rational_chain(seed: int, S: int) -> list[list[Fraction]]:
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 6, size=(S, S)) + np.eye(S, dtype=np.int64)  # positive diagonal: aperiodic
    w[np.arange(S), (np.arange(S) + 1) % S] += 1  # a cycle through all states: irreducible
    return [[Fraction(int(w[r, c]), int(w[r].sum())) for c in range(S)] for r in range(S)]


def fraction_matmul(A: list[list[Fraction]], B: list[list[Fraction]]) -> list[list[Fraction]]:
    return [[sum((a * b for a, b in zip(row, col)), Fraction(0)) for col in zip(*B)] for row in A]


def exact_distances(P: list[list[Fraction]], pi: list[Fraction], t_max: int) -> list[Fraction]:
    """d(0..t_max) exactly: max over rows of half the L1 distance to pi."""
    S = len(P)
    power = [[Fraction(int(r == c)) for c in range(S)] for r in range(S)]
    out = []
    for _ in range(t_max + 1):
        out.append(max(sum(abs(v - p) for v, p in zip(row, pi)) / 2 for row in power))
        power = fraction_matmul(power, P)
    return out


@given(seed=st.integers(0, 2**32 - 1), S=st.integers(2, 6), eps=st.sampled_from([0.1, 0.25, 0.4]))
@settings(max_examples=25, deadline=None)
def test_distance_and_mixing_time_match_exact_rational_arithmetic(
    seed: int, S: int, eps: float
) -> None:
    Pq = rational_chain(seed, S)
    piq = exact_stationary(Pq)
    d_exact = exact_distances(Pq, piq, 12)
    P = np.array([[float(v) for v in row] for row in Pq])
    pi = np.array([float(v) for v in piq])
    curve = distance_curve(P, pi, range(13))
    np.testing.assert_allclose(curve, [float(d) for d in d_exact], rtol=0, atol=1e-13)
    t_exact = next((t for t, d in enumerate(d_exact) if d <= Fraction(eps)), None)
    assume(t_exact is not None)
    assume(all(abs(float(d) - eps) > 1e-9 for d in d_exact))  # no float ties with eps
    assert mixing_time(P, pi, eps) == t_exact


@given(
    P=transition_matrices(max_states=30, spread=(0.0, 16.0), patterns=("dense",)),
    eps=st.floats(0.01, 0.9),
)
@settings(max_examples=30, deadline=None)
def test_mixing_time_matches_brute_force_stepping(P: np.ndarray, eps: float) -> None:
    S, pi = len(P), gth_stationary(P)
    power, t, history = np.eye(S), 0, []
    while True:
        d = 0.5 * np.abs(power - pi).sum(axis=1).max()
        history.append(d)
        if d <= eps:
            break
        power, t = power @ P, t + 1
        # The reference's own cap, not a failure of mixing_time: a nearly periodic or nearly
        # reducible draw can need more steps than a dense-power loop should take.
        assume(t < 20_000)
    assume(all(abs(h - eps) > 1e-9 for h in history))
    assert mixing_time(P, pi, eps) == t


@given(P=transition_matrices(max_states=20, spread=(0.0, 24.0), patterns=("dense",)))
@settings(max_examples=30, deadline=None)
def test_distance_is_non_increasing(P: np.ndarray) -> None:
    # LPW 2nd ed. Exercise 4.2: d(t+1) <= d(t).
    pi = gth_stationary(P)
    ts = list(range(0, 40)) + [64, 100, 1000, 10**6]
    curve = distance_curve(P, pi, ts)
    assert np.all(np.diff(curve) <= 1e-13)
    assert curve[0] == pytest.approx(1 - pi.min(), abs=1e-15)  # d(0) = 1 - min pi


@pytest.mark.parametrize("p,q", [(0.5, 0.25), (0.1, 0.7), (1e-3, 2e-3), (0.9, 0.95)])
def test_two_state_closed_form(p: float, q: float) -> None:
    # P = [[1-p, p], [q, 1-q]]: pi = (q, p)/(p+q) and P^t(x, .) - pi = (1-p-q)^t (delta_x - pi),
    # so d(t) = max(p, q)/(p+q) |1-p-q|^t for t >= 1 (LPW 2nd ed. Section 1.1).
    P = np.array([[1 - p, p], [q, 1 - q]])
    pi = np.array([q, p]) / (p + q)
    ts = np.array([1, 2, 3, 10, 100, 1000])
    expected = max(p, q) / (p + q) * np.abs(1 - p - q) ** ts
    # Subtracting pi leaves an absolute rounding error of ~1e-16 in d(t).
    np.testing.assert_allclose(distance_curve(P, pi, ts), expected, rtol=1e-9, atol=1e-15)
    for eps in (0.01, 0.25):
        t = math.ceil(math.log(eps * (p + q) / max(p, q)) / math.log(abs(1 - p - q)))
        assert mixing_time(P, pi, eps) == max(t, 1)


def ising_pair(coupling: float) -> FunctionModel:
    """Two ferromagnetic spins: s_i(a) = spin(a) * J * spin(x_other); tokens 0/1 = spins -1/+1."""

    def scores(x: np.ndarray, i: int) -> np.ndarray:
        f = coupling * (2.0 * x[:, 1 - i] - 1.0)
        return np.stack([-f, f], axis=1)

    return FunctionModel(2, 2, scores)


@pytest.mark.parametrize("coupling_over_tau", [0.5, 2.0, 7.1])
def test_slow_ising_pair_mixing_time_closed_form(coupling_over_tau: float) -> None:
    # Heat-bath Ising pair (states ++, +-, -+, --) at beta J = K: a site aligns with prob
    # a = e^K / (2 cosh K), anti-aligns with b = 1 - a. From ++ the magnetisation
    # mu_t(++) - mu_t(--) is multiplied by 1 - b per step and the aligned mass equals a after
    # one step, so ||P^t(++, .) - pi||_TV = (1-b)^t / 2; from +- the distance is b^t / 2 < that.
    # Hence d(t) = (1-b)^t / 2 for t >= 1 and t_mix(eps) = ceil(log(2 eps) / log(1 - b)).
    # At K = 7.1, b = 6.8e-7 and t_mix(1/4) ~ 1e6: about 40 dense products.
    tau = 1.0
    chain = ExactChain(ising_pair(coupling_over_tau * tau), tau)
    b = 1.0 / (1.0 + math.exp(2 * coupling_over_tau))
    for eps in (0.25, 0.1):
        t = math.ceil(math.log(2 * eps) / math.log1p(-b))
        assert chain.mixing_time(eps) == t
    ts = [1, 7, 1000, 123457]
    np.testing.assert_allclose(
        chain.distance_curve(ts),
        [0.5 * math.exp(t * math.log1p(-b)) for t in ts],
        rtol=1e-9,
        atol=1e-15,
    )
    if coupling_over_tau > 7:
        assert chain.mixing_time() > 10**6


@given(P=transition_matrices(max_states=25, spread=(0.0, 20.0), patterns=("dense",)))
@settings(max_examples=15, deadline=None)
def test_torch_cpu_backend_agrees_with_numpy(P: np.ndarray) -> None:
    pi = gth_stationary(P)
    ts = [0, 1, 2, 5, 33, 1000]
    np.testing.assert_allclose(
        distance_curve(P, pi, ts, backend="torch", device="cpu"),
        distance_curve(P, pi, ts),
        rtol=1e-12,
        atol=1e-14,
    )
    d_numpy = distance_curve(P, pi, range(200))
    assume(np.all(np.abs(d_numpy - 0.25) > 1e-9))
    assert mixing_time(P, pi, backend="torch", device="cpu") == mixing_time(P, pi)


def straightforward_mixing_time(P: np.ndarray, pi: np.ndarray, eps: float) -> int:
    """Doubling + bisection with full-size temporaries everywhere (the unblocked algorithm)."""

    def step(A: np.ndarray, B: np.ndarray) -> np.ndarray:
        C = A @ B
        return C / C.sum(1)[:, None]

    def dist(A: np.ndarray) -> float:
        return float(0.5 * abs(A - pi[None, :]).sum(1).max())

    if dist(np.eye(len(pi))) <= eps:
        return 0
    powers = [P]
    while dist(powers[-1]) > eps:
        powers.append(step(powers[-1], powers[-1]))
    k = len(powers) - 1
    if k == 0:
        return 1
    last_far, current = 2 ** (k - 1), powers[k - 1]
    for j in range(k - 2, -1, -1):
        candidate = step(current, powers[j])
        if dist(candidate) > eps:
            last_far, current = last_far + 2**j, candidate
    return last_far + 1


@given(
    P=transition_matrices(max_states=30, spread=(0.0, 24.0), patterns=("dense",)),
    rows_per_block=st.integers(1, 4),
    eps=st.floats(0.01, 0.9),
)
@settings(max_examples=30, deadline=None)
def test_row_blocked_algebra_equals_straightforward(
    P: np.ndarray, rows_per_block: int, eps: float
) -> None:
    # Several row blocks (1-4 rows each); each row's sum is formed as in the one-shot formula,
    # so the blocked distance, the in-place products and hence t_mix must be identical.
    S, pi = len(P), gth_stationary(P)
    P_before = P.copy()
    A = np.linalg.matrix_power(P, 3)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mixing, "BLOCK_ELEMENTS", rows_per_block * S)
        assert worst_start_tv(A, pi) == float(0.5 * np.abs(A - pi).sum(1).max())
        assert worst_start_tv(None, pi) == float(0.5 * np.abs(np.eye(S) - pi).sum(1).max())
        for backend in ("numpy", "torch"):
            assert mixing_time(P, pi, eps, backend, "cpu") == straightforward_mixing_time(
                P, pi, eps
            )
        At, pit = torch.from_numpy(A), torch.from_numpy(pi)
        ref = float(0.5 * (At - pit).abs().sum(1).max())
        assert worst_start_tv(At, pit) == pytest.approx(ref, rel=0, abs=1e-15)
        blocked = distance_curve(P, pi, [0, 1, 3, 50])
    np.testing.assert_array_equal(blocked, distance_curve(P, pi, [0, 1, 3, 50]))
    np.testing.assert_array_equal(P, P_before)  # the caller's matrix is never written


def test_mixing_time_zero_when_d0_is_below_eps() -> None:
    P = np.full((2, 2), 0.5)
    assert mixing_time(P, np.array([0.5, 0.5]), eps=0.6) == 0  # d(0) = 1/2
    assert mixing_time(P, np.array([0.5, 0.5]), eps=0.4) == 1  # d(1) = 0


@pytest.mark.parametrize("eps", [0.0, 1.0, -0.1, 1.5, float("nan"), True])
def test_bad_eps_raises(eps: float) -> None:
    with pytest.raises(InvalidProbabilityError):
        mixing_time(np.full((2, 2), 0.5), np.array([0.5, 0.5]), eps)


@pytest.mark.parametrize("t", [-1, 1.5, "3", True])
def test_bad_time_raises(t: object) -> None:
    with pytest.raises(InvalidParameterError):
        worst_start_distance(np.full((2, 2), 0.5), np.full(2, 0.5), t)  # type: ignore[arg-type]


def test_bad_backend_and_device_raise() -> None:
    P, pi = np.full((2, 2), 0.5), np.array([0.5, 0.5])
    with pytest.raises(InvalidParameterError, match="'torch'"):
        worst_start_distance(P, pi, 1, backend="jax")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="backend='torch'"):
        worst_start_distance(P, pi, 1, device="cuda")
    with pytest.raises(InvalidParameterError, match="pi"):
        worst_start_distance(P, np.array([1.0]), 1)
    if not torch.cuda.is_available():
        with pytest.raises(DeviceUnavailableError):
            worst_start_distance(P, pi, 1, backend="torch", device="cuda")


def test_dense_limit_raises() -> None:
    P = np.full((3, 3), 1 / 3)
    with pytest.raises(StateSpaceTooLargeError, match="max_dense_states"):
        mixing_time(P, np.full(3, 1 / 3), max_dense_states=2, method="squaring")
    with pytest.raises(StateSpaceTooLargeError, match="max_dense_states"):
        distance_curve(P, np.full(3, 1 / 3), [1], max_dense_states=2, method="squaring")


def test_reducible_chain_raises_convergence_error() -> None:
    with pytest.raises(ConvergenceError, match="raise tau"):
        mixing_time(np.eye(2), np.array([0.5, 0.5]))


@given(seed=st.integers(0, 2**32 - 1), t=st.integers(0, 12), k=st.integers(1, 4))
@settings(max_examples=20, deadline=None)
def test_distance_from_a_start_law_matches_the_dense_power(seed: int, t: int, k: int) -> None:
    # Oracle: mu_0 P^t by a dense matrix power (numpy), against pi from GTH; and from every
    # single start the largest distance is the worst-start d(t) (LPW 2nd ed., Section 4.5).
    from glauber.toy_models import RandomTableModel

    model = RandomTableModel(3, 2, rng=seed)
    chain = ExactChain(model, 1.0)
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, 2, size=(k, 3))
    P = chain.transition_matrix().toarray()
    mu = np.zeros(8)
    np.add.at(mu, chain.index_of(starts), 1.0 / k)
    pi = gth_stationary(P)
    want = 0.5 * np.abs(mu @ np.linalg.matrix_power(P, t) - pi).sum()
    assert chain.distance_from(starts, [t, 0])[0] == pytest.approx(want, abs=1e-12)
    singles = [chain.distance_from(s, [t])[0] for s in chain.states()]
    assert max(singles) == pytest.approx(chain.distance(t), abs=1e-12)


def test_distance_from_refuses_empty_starts_and_negative_times() -> None:
    from glauber.toy_models import RandomTableModel

    chain = ExactChain(RandomTableModel(2, 2, rng=0), 1.0)
    with pytest.raises(InvalidParameterError, match="empty"):
        chain.distance_from(np.zeros((0, 2), dtype=np.int64), [1])
    with pytest.raises(InvalidParameterError, match=">= 0"):
        chain.distance_from([0, 1], [-1])
