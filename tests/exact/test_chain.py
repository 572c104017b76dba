"""Tests of ExactChain: enumeration, conditionals, the kernel, pi and mixing end to end.

Oracles: slow per-state loops straight from the kernel's definition, exact rational arithmetic
(fractions.Fraction) for models whose conditionals are rational, the Gibbs law of Ising models
computed in log space (Theorem 3: compatible conditionals give a stationary Gibbs law), and
invariants over random models (Hypothesis, q**n <= 64).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from glauber.errors import (
    EstimateOnlyError,
    InvalidTemperatureError,
    NonPositiveConditionalError,
    StateSpaceTooLargeError,
    VocabularyError,
)
from glauber.exact.chain import ExactChain
from glauber.toy_models.base import FunctionModel

from ..support import score_tables, table_model
from ._support import exact_stationary, ising_model


def gibbs_log_pi(states: np.ndarray, J: np.ndarray, h: np.ndarray, tau: float) -> np.ndarray:
    """log pi(x) = (sum_{u<v} J_uv s_u s_v + sum_i h_i s_i)/tau - log Z, in log space."""
    s = 2.0 * states - 1.0
    log_w = (0.5 * np.einsum("bu,uv,bv->b", s, J, s) + s @ h) / tau
    return log_w - np.logaddexp.reduce(log_w)


def cycle_couplings(n: int, J: float) -> np.ndarray:
    M = np.zeros((n, n))
    for u in range(n):
        M[u, (u + 1) % n] = M[(u + 1) % n, u] = J
    return M


def reference_kernel(model: FunctionModel, tau: float) -> np.ndarray:
    """P(x, x') = (1/n) sum_i 1{x_{-i} = x'_{-i}} p_tau(x'_i | x_{-i}), one state at a time."""
    n, q = model.n, model.q
    states = list(itertools.product(range(q), repeat=n))
    index = {s: k for k, s in enumerate(states)}
    P = np.zeros((len(states), len(states)))
    for x in states:
        for i in range(n):
            s = model.scores(np.array([x]), np.array([i]))[0] / tau
            p = np.exp(s - s.max())
            p /= p.sum()
            for a in range(q):
                y = x[:i] + (a,) + x[i + 1 :]
                P[index[x], index[y]] += p[a] / n
    return P


def test_states_are_mixed_radix_with_site_0_most_significant() -> None:
    chain = ExactChain(table_model(3, 3, 0, 1.0), tau=1.0)
    states = chain.states()
    assert states.shape == (27, 3)
    assert states[:4].tolist() == [[0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 1, 0]]
    assert states[-1].tolist() == [2, 2, 2]
    assert [list(s) for s in itertools.product(range(3), repeat=3)] == states.tolist()
    np.testing.assert_array_equal(chain.index_of(states), np.arange(27))
    assert int(chain.index_of(np.array([1, 0, 2]))) == 9 + 2
    with pytest.raises(VocabularyError):
        chain.index_of(np.array([[0, 3, 0]]))


def test_state_space_limit() -> None:
    model = table_model(5, 3, 0, 1.0)  # 3**5 = 243 states
    with pytest.raises(StateSpaceTooLargeError) as info:
        ExactChain(model, 1.0, max_states=200)
    message = str(info.value)
    for part in ("q**n", "3**5", "243", "200", "max_states=243"):
        assert part in message
    assert ExactChain(model, 1.0, max_states=243).num_states == 243
    # Dense algorithms refuse chains over 4096 states before building anything dense (distances
    # and mixing times then default to sparse stepping: tests/exact/test_stepping.py; gaps to
    # Lanczos for reversible chains, tests/exact/test_sparse.py).
    big = ExactChain(table_model(13, 2, 0, 1.0), 1.0)
    squaring = [lambda: big.mixing_time(method="squaring"), lambda: big.distance(1, method="squaring")]
    for method in (lambda: big.spectral_gap(method="dense"), *squaring):
        with pytest.raises(StateSpaceTooLargeError, match="4096"):
            method()
    with pytest.raises(EstimateOnlyError, match="arnoldi"):  # not reversible: no Lanczos gap
        big.spectral_gap()


@pytest.mark.parametrize("tau", [0.0, -1.0, float("nan"), float("inf"), "1", None])
def test_bad_temperature_raises(tau: object) -> None:
    with pytest.raises(InvalidTemperatureError):
        ExactChain(table_model(2, 2, 0, 1.0), tau)  # type: ignore[arg-type]


def test_underflowing_conditional_raises_but_tiny_ones_are_kept() -> None:
    # Score gap g at tau = 1 gives a conditional e^{-g}/(1 + e^{-g}): g = 92 is ~1e-40 (legitimate
    # in float64), g = 800 underflows to exactly 0 (below the smallest subnormal, ~5e-324).
    def model(gap: float) -> FunctionModel:
        return FunctionModel(2, 2, lambda x, i: np.tile([gap, 0.0], (len(x), 1)))

    p = ExactChain(model(92.0), 1.0).conditionals()
    np.testing.assert_allclose(p[..., 1], math.exp(-92.0) / (1 + math.exp(-92.0)), rtol=1e-13)
    chain = ExactChain(model(800.0), 1.0)
    with pytest.raises(NonPositiveConditionalError, match="raise tau"):
        chain.conditionals()
    with pytest.raises(NonPositiveConditionalError):
        chain.transition_matrix()


@given(model=score_tables(), tau=st.floats(0.2, 5.0))
@settings(max_examples=30, deadline=None)
def test_kernel_matches_definition_and_pi_is_stationary(model, tau: float) -> None:
    n, q, scale = model.n, model.q, model.spec.params["scale"]
    chain = ExactChain(model, tau)
    P = chain.transition_matrix()
    np.testing.assert_allclose(P.toarray(), reference_kernel(model, tau), rtol=1e-12, atol=1e-15)
    assert np.abs(np.asarray(P.sum(axis=1)).ravel() - 1).max() < 1e-14
    pi = chain.stationary()
    assert pi.min() > 0 and abs(pi.sum() - 1) < 1e-14
    assert np.abs(pi @ P - pi).sum() < 1e-14
    assert chain.stationary_solution().residual_l1 < 1e-14
    # The sparse direct and Krylov solves guarantee their residuals; their forward error is
    # small when the chain is well conditioned (moderate scores over tau).
    for method in ("sparse", "iterative"):
        sol = chain.stationary_solution(method)
        assert sol.method == method and sol.residual_l1 <= 1e-9
        if scale / tau < 2:
            assert np.abs(sol.pi - pi).sum() < 1e-8
    p = chain.conditionals()
    assert p.shape == (n, q**n, q)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-14)


@given(model=score_tables(scale=(0.0, 2.0)), tau=st.floats(0.3, 5.0),
       eps=st.sampled_from([0.05, 0.25, 0.5]))
@settings(max_examples=20, deadline=None)
def test_mixing_time_matches_stepping_on_random_models(model, tau: float, eps: float) -> None:
    n, q = model.n, model.q
    chain = ExactChain(model, tau)
    P, pi = chain.dense_transition_matrix(), chain.stationary()
    power, curve = np.eye(q**n), []
    while not curve or curve[-1] > eps:
        curve.append(0.5 * np.abs(power - pi).sum(axis=1).max())
        power = power @ P
        assert len(curve) < 20000
    assume(all(abs(d - eps) > 1e-9 for d in curve))
    assert chain.mixing_time(eps) == len(curve) - 1
    assert chain.mixing_time(eps, backend="torch", device="cpu") == len(curve) - 1
    np.testing.assert_allclose(chain.distance_curve(range(len(curve))), curve, atol=1e-13)
    assert np.all(np.diff(curve) <= 1e-13)  # d is non-increasing (LPW Exercise 4.2)


def rational_model(n: int, q: int, seed: int) -> tuple[FunctionModel, np.ndarray]:
    """Scores log w with small integer weights w: at tau = 1 the conditionals are w / sum w."""
    w = np.random.default_rng(seed).integers(1, 6, size=(n, q**n, q))
    weights = q ** np.arange(n - 1, -1, -1)

    def scores(x: np.ndarray, i: int) -> np.ndarray:
        return np.log(w[i, x @ weights].astype(np.float64))

    return FunctionModel(n, q, scores), w


def fraction_kernel(n: int, q: int, w: np.ndarray) -> list[list[Fraction]]:
    states = list(itertools.product(range(q), repeat=n))
    index = {s: k for k, s in enumerate(states)}
    weights = [q ** (n - 1 - k) for k in range(n)]
    P = [[Fraction(0)] * len(states) for _ in states]
    for x in states:
        for i in range(n):
            context = sum(weights[k] * x[k] for k in range(n) if k != i)
            row = [int(v) for v in w[i, context]]
            for a in range(q):
                y = x[:i] + (a,) + x[i + 1 :]
                P[index[x]][index[y]] += Fraction(row[a], n * sum(row))
    return P


@pytest.mark.parametrize(
    "n,q,seed", [(1, 2, 0), (2, 2, 1), (3, 2, 2), (2, 2, 3), (1, 3, 4), (3, 2, 5)]
)
def test_end_to_end_against_exact_rational_arithmetic(n: int, q: int, seed: int) -> None:
    model, w = rational_model(n, q, seed)
    Pq = fraction_kernel(n, q, w)
    piq = exact_stationary(Pq)
    chain = ExactChain(model, 1.0)
    P_exact = np.array([[float(v) for v in row] for row in Pq])
    np.testing.assert_allclose(chain.transition_matrix().toarray(), P_exact, rtol=1e-14, atol=0)
    np.testing.assert_allclose(chain.stationary(), [float(v) for v in piq], rtol=1e-13)
    # d(t) exactly for t = 0..8, then t_mix for a few eps from the exact curve.
    S = len(Pq)
    power = [[Fraction(int(r == c)) for c in range(S)] for r in range(S)]
    d_exact = []
    for _ in range(9):
        d_exact.append(max(sum(abs(v - p) for v, p in zip(row, piq)) / 2 for row in power))
        power = [
            [sum((a * b for a, b in zip(row, col)), Fraction(0)) for col in zip(*Pq)]
            for row in power
        ]
    np.testing.assert_allclose(
        chain.distance_curve(range(9)), [float(d) for d in d_exact], atol=1e-14
    )
    for eps in (0.3, 0.1, 0.02):
        t_exact = next((t for t, d in enumerate(d_exact) if d <= Fraction(eps)), None)
        if t_exact is not None and all(abs(float(d) - eps) > 1e-9 for d in d_exact):
            assert chain.mixing_time(eps) == t_exact


@pytest.mark.parametrize("tau", [1.0, 0.25, 0.08])
def test_low_temperature_stationary_matches_gibbs_law_in_log_space(tau: float) -> None:
    # Ising on the 8-cycle with a field (Theorem 3: the Gibbs law is stationary). At tau = 0.08
    # the smallest entries are ~1e-90; GTH keeps relative accuracy on all of them.
    n = 8
    J = cycle_couplings(n, 1.0)
    h = np.linspace(0.1, 0.5, n)
    chain = ExactChain(ising_model(J, h), tau)
    pi = chain.stationary()
    log_pi = gibbs_log_pi(chain.states(), J, h, tau)
    if tau < 0.1:
        assert pi.min() < 1e-40
    assert pi.min() > 0
    np.testing.assert_allclose(pi, np.exp(log_pi), rtol=1e-10, atol=0)
    assert chain.is_reversible(rtol=1e-9)


def test_asymmetric_ising_is_not_reversible() -> None:
    # J_01 != J_10: the rectangle test of Proposition 4 gives |delta| = 4|J_01 - J_10| != 0, so no
    # joint is compatible and (Kolmogorov's criterion) the chain is not reversible.
    J = np.array([[0.0, 1.0, 0.3], [0.2, 0.0, 0.5], [0.3, 0.5, 0.0]])
    chain = ExactChain(ising_model(J, np.zeros(3)), 0.7)
    assert not chain.is_reversible(rtol=1e-6)
    assert ExactChain(ising_model((J + J.T) / 2, np.zeros(3)), 0.7).is_reversible()


def test_one_scores_call_per_site_and_caching() -> None:
    calls: list[int] = []
    base = table_model(3, 2, 7, 1.0)

    def counting(x: np.ndarray, i: int) -> np.ndarray:
        calls.append(len(x))
        return base.score_fn(x, i)

    chain = ExactChain(FunctionModel(3, 2, counting), 0.5)
    chain.transition_matrix()
    chain.stationary()
    chain.mixing_time()
    chain.influence_matrix()
    chain.oscillation_matrix()
    chain.one_step_hamming(0, 7)
    # One batched call per site over the 4 states with x_i = 0: a conditional does not see the
    # token it resamples, so the q states that differ only at site i share one query.
    assert calls == [4, 4, 4]
    assert chain.transition_matrix() is chain.transition_matrix()
    # Scores are tau-free: the chain at another temperature reuses the table (no new call).
    hot = chain.at(2.0)
    np.testing.assert_allclose(hot.transition_matrix().toarray(),
                               ExactChain(base, 2.0).transition_matrix().toarray(), atol=1e-15)
    assert calls == [4, 4, 4]
    assert "n=3" in repr(chain) and "tau=0.5" in repr(chain)


def test_mixing_time_stepping_stops_at_max_steps():
    import networkx as nx

    from glauber.errors import ConvergenceError
    from glauber.toy_models import IsingModel

    chain = ExactChain(IsingModel(nx.complete_graph(4), coupling=1.0), 1.0)  # t_mix = 1071
    t_mix = chain.mixing_time(0.25, method="stepping")
    assert t_mix > 5 and chain.mixing_time(0.25, method="stepping", max_steps=t_mix) == t_mix
    with pytest.raises(ConvergenceError):
        chain.mixing_time(0.25, method="stepping", max_steps=5)
