"""Metropolis-Hastings on the PLL energy (``mh:pll``): acceptance against exact fractions.

Oracle, independent of glauber: a toy whose conditionals are ratios of integer weights,
``p_1(a | x_{-i}) = W[i, x_{-i}, a] / sum_b W[i, x_{-i}, b]``, so that at ``tau = 1/k`` the
proposal ``p_tau ∝ W^k``, the PLL target ``exp(-E / tau) = prod_k p_1(x_k | x_{-k})^k`` and the
acceptance probability ``min(1, R)`` of every proposal are exact :class:`fractions.Fraction` s.
One step of 40,000 chains from one start: each outcome ``x -> x(i -> a)`` has probability
``(1/n) p_tau(a | x_{-i}) min(1, R)`` (binomial test per outcome), each site's acceptance count
is binomial with the exact mean acceptance, a rejected proposal leaves the state (and its
cached energy) unchanged, and the cached energy is the float64 PLL of the state.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import torch
from scipy import stats

from glauber.estimators import glauber_chains
from glauber.toy_models import FunctionModel

N, Q = 3, 3
CHAINS = 40_000
START = (0, 2, 1)


def weights(seed: int) -> np.ndarray:
    """Integer weights ``W[i, context index, a]`` in 1..9 (the context has ``x_i = 0``)."""
    return np.random.default_rng(seed).integers(1, 10, size=(N, Q ** N, Q))


POWERS = Q ** np.arange(N - 1, -1, -1)


def masked_index(x, i: int) -> int:
    y = list(x)
    y[i] = 0
    return int(np.dot(y, POWERS))


def toy(W: np.ndarray) -> FunctionModel:
    log_w = np.log(W.astype(np.float64))
    return FunctionModel(N, Q, lambda x, i: log_w[i, x @ POWERS], name="integer-weights")


class Float32Torch:
    """The toy's scores as torch float32 tensors (an MLM's precision)."""

    def __init__(self, model: FunctionModel) -> None:
        self.model, self.n, self.q, self.vocab = model, model.n, model.q, model.vocab

    def scores(self, states, sites):
        x, s = (v.cpu().numpy() if isinstance(v, torch.Tensor) else np.asarray(v)
                for v in (states, sites))
        return torch.as_tensor(self.model.scores(x, s), dtype=torch.float32)


def p_exact(W, x, i: int, k: int) -> list[Fraction]:
    """``p_tau(. | x_{-i})`` at ``tau = 1/k``: ``W^k`` normalised."""
    w = [int(v) ** k for v in W[i, masked_index(x, i)]]
    return [Fraction(v, sum(w)) for v in w]


def target_exact(W, x, k: int) -> Fraction:
    """``exp(-E_pll(x) / tau) = prod_j p_1(x_j | x_{-j})^k``."""
    out = Fraction(1)
    for j in range(N):
        out *= p_exact(W, x, j, 1)[x[j]] ** k
    return out


def acceptance_exact(W, x, i: int, a: int, k: int) -> Fraction:
    y = list(x)
    y[i] = a
    p = p_exact(W, x, i, k)  # the same context x_{-i} = y_{-i} both ways
    ratio = target_exact(W, y, k) * p[x[i]] / (target_exact(W, x, k) * p[a])
    return min(Fraction(1), ratio)


def one_step(model, tau: float, seed: int):
    x0 = np.tile(START, (CHAINS, 1))
    if isinstance(model, Float32Torch):
        x0 = torch.as_tensor(x0)
    return glauber_chains(model, tau, x0, 1, seed=seed, kernel="mh:pll")


@pytest.mark.parametrize("k", [1, 2])  # tau = 1 and tau = 1/2
@pytest.mark.parametrize("backend", ["numpy", "torch-float32"])
def test_each_proposal_is_accepted_with_the_exact_probability(k, backend):
    W = weights(seed=10 + k)
    model = toy(W) if backend == "numpy" else Float32Torch(toy(W))
    res = one_step(model, 1.0 / k, seed=k)
    final = res.final_states
    changed = final != np.asarray(START)
    assert changed.sum(axis=1).max() <= 1  # a rejected proposal changes nothing
    exact_stay = Fraction(1)
    ratios = []
    for i, a in itertools.product(range(N), range(Q)):
        if a == START[i]:
            continue
        r = p_exact(W, START, i, k)[a]
        acc = acceptance_exact(W, START, i, a, k)
        ratios.append(acc)
        prob = Fraction(1, N) * r * acc
        exact_stay -= prob
        count = int((changed[:, i] & (final[:, i] == a)).sum())
        assert stats.binomtest(count, CHAINS, float(prob)).pvalue > 1e-4, (i, a, count, prob)
    assert any(acc < 1 for acc in ratios), "no proposal is ever rejected: the test is weak"
    stays = int((~changed.any(axis=1)).sum())
    assert stats.binomtest(stays, CHAINS, float(exact_stay)).pvalue > 1e-4
    # per site: accepted ~ Binomial(proposed, sum_a p_tau(a) min(1, R)) (own token: R = 1)
    acc = res.acceptance
    assert int(acc.proposed.sum()) == CHAINS
    for i in range(N):
        p = p_exact(W, START, i, k)
        mean = sum((p[a] * (acceptance_exact(W, START, i, a, k) if a != START[i] else 1)
                    for a in range(Q)), Fraction(0))
        assert stats.binomtest(int(acc.accepted[i]), int(acc.proposed[i]),
                               float(mean)).pvalue > 1e-4, i


def float64_energy(model, states: np.ndarray) -> np.ndarray:
    """``E_pll`` in float64 from the scores the model returns (float32 ones cast exactly)."""
    out = np.zeros(len(states))
    for j in range(N):
        sites = np.full(len(states), j)
        if isinstance(model, Float32Torch):
            s = model.scores(torch.as_tensor(states), torch.as_tensor(sites)).double().numpy()
        else:
            s = np.asarray(model.scores(states, sites), dtype=np.float64)
        lse = np.log(np.exp(s - s.max(1, keepdims=True)).sum(1)) + s.max(1)
        out -= s[np.arange(len(states)), states[:, j]] - lse
    return out


@pytest.mark.parametrize("backend", ["numpy", "torch-float32"])
def test_the_cached_energy_is_the_float64_pll_of_the_state(backend):
    """Accepted or rejected, the energy the next acceptance uses is E_pll of the state held, in
    float64 (a float32 log-softmax is off by ~1e-7 relative, which this tolerance refuses)."""
    W = weights(seed=3)
    model = toy(W) if backend == "numpy" else Float32Torch(toy(W))
    x0 = np.random.default_rng(1).integers(0, Q, size=(400, N))
    run = glauber_chains(model, 0.7, torch.as_tensor(x0) if backend != "numpy" else x0, 5,
                         seed=2, kernel="mh:pll")
    expected = float64_energy(model, run.final_states)
    assert np.allclose(run.final_energy, expected, rtol=1e-12, atol=1e-12), \
        np.abs(run.final_energy - expected).max()
