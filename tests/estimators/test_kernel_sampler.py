"""The batched sampler under every kernel, and the pseudo-log-likelihood.

Oracles: the exact law after ``t`` steps, ``start P^t`` (or ``start P_{tau_1} ... P_{tau_t}``
under annealing), from :class:`~glauber.exact.chain.ExactChain` (whose matrices
tests/exact/test_kernels.py checks against the kernels' definitions), by a chi-square test of
4,000 chains; the exact acceptance probability of a Metropolis-Hastings step from the
stationary law; closed forms (a one-site MH chain proposes from its own target: acceptance 1);
the PLL summed term by term from direct softmaxes of ``model.scores`` (toys) and from ``n``
separate one-row masked queries (MLMs).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from scipy import stats

from glauber.core.kernel_spec import parse_schedule
from glauber.errors import (
    FrozenSitesError,
    InvalidKernelError,
    InvalidProbabilityError,
    InvalidTemperatureError,
)
from glauber.estimators import glauber_chains, pseudo_log_likelihood
from glauber.exact.chain import ExactChain
from glauber.exact.kernels import annealed_law
from glauber.toy_models import FunctionModel

from ..support import states as all_states
from ..support import table_model
from ._reference import CountingModel, TorchModel, conditional, index

CHAINS = 4000


def _law(final: np.ndarray, q: int) -> np.ndarray:
    idx = np.array([index(x, q) for x in final])
    return np.bincount(idx, minlength=q ** final.shape[1])


def _chi_square_ok(counts: np.ndarray, law: np.ndarray) -> bool:
    keep = law * counts.sum() > 1e-9  # the test needs positive expected counts
    assert counts[~keep].sum() == 0
    expected = law[keep] / law[keep].sum() * counts.sum()
    return stats.chisquare(counts[keep], expected).pvalue > 1e-3


@pytest.mark.parametrize("kernel, eps, backend", [
    ("random", 0.3, "numpy"),
    ("sweep", 0.0, "numpy"),
    ("sweep", 0.2, "torch"),
    ("shuffled", 0.0, "numpy"),
    ("shuffled", 0.0, "torch"),
    ("mh:pll", 0.0, "numpy"),
    ("mh:pll", 0.0, "torch"),
    ("mh:logits", 0.25, "numpy"),
    ("mh:logits:sweep", 0.0, "torch"),
])
def test_law_after_t_steps_is_the_exact_one(kernel, eps, backend) -> None:
    """Few steps from one start: the sampler's law is start P^t, not just the stationary law."""
    toy = table_model(3, 2, seed=4, scale=1.5)
    tau, t = 0.8, 2
    chain = ExactChain(toy, tau, kernel=kernel, epsilon=eps)
    start = np.zeros(8)
    start[5] = 1.0
    law = chain.step_law(chain.step_law(start))
    x0 = np.tile(all_states(3, 2)[5], (CHAINS, 1))
    model = TorchModel(toy) if backend == "torch" else toy
    res = glauber_chains(model, tau, x0, t, seed=3, kernel=kernel, epsilon=eps)
    assert _chi_square_ok(_law(res.final_states, 2), law)
    assert res.kernel == {"kernel": kernel, "epsilon": eps}


def test_annealed_law_matches_the_exact_product() -> None:
    toy = table_model(3, 2, seed=8, scale=2.0)
    schedule = parse_schedule("geometric:3:0.4:4")
    start = np.zeros(8)
    start[0] = 1.0
    for kernel in ("random", "mh:pll"):
        chain = ExactChain(toy, 1.0, kernel=kernel)
        law = annealed_law(chain, schedule, start, 5)
        res = glauber_chains(toy, schedule, np.zeros((CHAINS, 3), dtype=np.int64), 5, seed=1,
                             kernel=kernel)
        assert _chi_square_ok(_law(res.final_states, 2), law)
        assert res.tau == pytest.approx(0.4) and res.schedule["spec"] == schedule.spec
    # two segments with step_offset give the same law as one run (the schedule resumes)
    chain = ExactChain(toy, 1.0, kernel="sweep")
    law = annealed_law(chain, schedule, start, 4)
    first = glauber_chains(toy, schedule, np.zeros((CHAINS, 3), dtype=np.int64), 2, seed=2,
                           kernel="sweep")
    second = glauber_chains(toy, schedule, first.final_states, 2, seed=5, kernel="sweep",
                            step_offset=2)
    assert _chi_square_ok(_law(second.final_states, 2), law)


def test_metropolis_acceptance_rate_is_the_exact_one() -> None:
    """From the stationary law, one MH step accepts with probability
    1 - sum_x pi(x) (1/n) sum_i [K_i(x, x) - r_i(x_i | x)] (the rejection mass)."""
    toy = table_model(3, 3, seed=2, scale=2.0)
    tau = 0.6
    chain = ExactChain(toy, tau, kernel="mh:pll")
    pi = chain.stationary()
    rows = chain.site_rows()
    r = np.exp(chain.log_conditionals())
    own = all_states(3, 3).T  # [n, S]
    stay = np.take_along_axis(rows, own[:, :, None], axis=2)[..., 0]
    proposed_own = np.take_along_axis(r, own[:, :, None], axis=2)[..., 0]
    reject = (pi * (stay - proposed_own).mean(axis=0)).sum()
    x0 = all_states(3, 3)[np.random.default_rng(0).choice(27, size=20000, p=pi)]
    res = glauber_chains(toy, tau, x0, 1, seed=4, kernel="mh:pll")
    acc = res.acceptance
    assert acc.proposed.sum() == 20000
    assert stats.binomtest(int(acc.accepted.sum()), 20000, 1 - reject).pvalue > 1e-3
    assert np.all((acc.per_site >= 0) & (acc.per_site <= 1))


@pytest.mark.parametrize("kernel", ["mh:pll", "mh:logits"])
def test_one_site_metropolis_accepts_everything(kernel) -> None:
    """n = 1: E_pll = -log p_1(x), E_logits = -s(x); both targets are p_tau, the proposal itself,
    so every ratio is 1 (exactly, up to rounding)."""
    toy = FunctionModel(1, 4, lambda x, i: np.tile([0.0, 1.0, -2.0, 3.0], (len(x), 1)))
    res = glauber_chains(toy, 0.7, np.zeros((500, 1), dtype=np.int64), 20, seed=0,
                         kernel=kernel)
    assert res.acceptance.overall == 1.0


def test_frozen_sites_are_never_proposed_and_not_in_the_energy() -> None:
    toy = table_model(3, 2, seed=6, scale=1.0)
    res = glauber_chains(toy, 1.0, np.zeros((50, 3), dtype=np.int64), 10, seed=0,
                         kernel="mh:logits", frozen=[1])
    assert res.acceptance.proposed[1] == 0 and np.isnan(res.acceptance.per_site[1])
    assert (res.final_states[:, 1] == 0).all()
    sweep = glauber_chains(toy, 1.0, np.zeros((5, 3), dtype=np.int64), 3, seed=0,
                           kernel="sweep", frozen=[0, 2])
    assert (sweep.final_states[:, [0, 2]] == 0).all()


def test_a_sweep_updates_every_free_site_once_per_step() -> None:
    """Token 1 is certain everywhere: one sweep from all zeros sets every free site."""
    certain = FunctionModel(4, 2, lambda x, i: np.tile([0.0, 60.0], (len(x), 1)))
    for kernel in ("sweep", "shuffled"):
        res = glauber_chains(certain, 1.0, np.zeros((3, 4), dtype=np.int64), 1, seed=0,
                             kernel=kernel, frozen=[2])
        assert res.final_states.tolist() == [[1, 1, 0, 1]] * 3


def test_same_seed_same_chains() -> None:
    toy = table_model(3, 3, seed=1)
    a = glauber_chains(toy, 1.0, np.zeros((7, 3), dtype=np.int64), 9, seed=5, kernel="mh:pll",
                       epsilon=0.1)
    b = glauber_chains(toy, 1.0, np.zeros((7, 3), dtype=np.int64), 9, seed=5, kernel="mh:pll",
                       epsilon=0.1)
    assert (a.final_states == b.final_states).all()
    assert a.to_dict()["acceptance"]["overall"] == b.acceptance.overall


@pytest.mark.parametrize("kwargs, error", [
    ({"kernel": "gibbs"}, InvalidKernelError),
    ({"kernel": "sweep", "epsilon": 2.0}, InvalidProbabilityError),
    ({"kernel": "sweep", "frozen": [0, 1, 2]}, FrozenSitesError),
])
def test_bad_input_is_refused_before_any_model_call(kwargs, error) -> None:
    toy = CountingModel(table_model(3, 2, seed=0))
    with pytest.raises(error):
        glauber_chains(toy, 1.0, np.zeros((2, 3), dtype=np.int64), 3, **kwargs)
    assert toy.calls == []


def test_schedule_with_a_bad_temperature_is_refused() -> None:
    with pytest.raises(InvalidTemperatureError):
        parse_schedule("linear:1:-1:10")


# ----------------------------------------------------------------------- pseudo-log-likelihood
def reference_pll(model, x: np.ndarray, tau: float) -> float:
    return float(sum(np.log(conditional(model, x, k, tau)[x[k]]) for k in range(model.n)))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_pll_is_the_sum_of_log_conditionals(backend) -> None:
    toy = table_model(4, 3, seed=3, scale=2.0)
    xs = all_states(4, 3)[::7]
    model = TorchModel(toy) if backend == "torch" else toy
    for tau in (1.0, 0.5):
        got = pseudo_log_likelihood(model, xs, tau=tau, batch_size=5)
        expected = [reference_pll(toy, x, tau) for x in xs]
        np.testing.assert_allclose(got, expected, rtol=1e-6 if backend == "torch" else 1e-12)
    norm = pseudo_log_likelihood(model, xs[0], normalise=True)
    assert norm.shape == (1,) and norm[0] == pytest.approx(reference_pll(toy, xs[0], 1.0) / 4,
                                                           rel=1e-6)


def test_pll_queries_are_sub_batched_and_built_lazily() -> None:
    """64 states of 350 sites: no call exceeds batch_size rows, and the (state, site) grid of
    64 x 350 rows (62 MB as int64) is never built: peak memory stays far below it."""
    n = 350
    weights = np.random.default_rng(0).standard_normal((n, 2))
    cheap = FunctionModel(n, 2, lambda x, i: np.tile(weights[i], (len(x), 1)))
    counting = CountingModel(cheap)
    xs = np.random.default_rng(1).integers(0, 2, size=(64, n))
    tracemalloc.start()
    pll = pseudo_log_likelihood(counting, xs, batch_size=256)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert counting.calls[0] == 1  # the probe that finds the model's array library
    assert sum(counting.calls[1:]) == 64 * n and max(counting.calls) <= 256
    assert peak < 16 * 2**20
    log_p = weights - np.logaddexp.reduce(weights, axis=1, keepdims=True)
    np.testing.assert_allclose(pll, log_p[np.arange(n), xs].sum(axis=1), rtol=1e-12)


# ------------------------------------------------------------------------------ coupled pairs
@pytest.mark.parametrize("kernel", ["sweep", "shuffled", "mh:pll", "mh:logits"])
def test_coupled_pairs_have_the_kernel_as_marginals(kernel) -> None:
    """Each chain of a coupled pair runs the kernel (its law after t steps is start P^t), and a
    pair that starts together stays together."""
    from glauber.estimators.kernel_steps import KernelStepper
    from glauber.estimators.step_conditionals import FiniteGuard

    toy = table_model(3, 2, seed=12, scale=1.5)
    tau, t = 0.9, 2
    chain = ExactChain(toy, tau, kernel=kernel)
    law_x = np.zeros(8)
    law_x[0] = 1.0
    law_y = np.zeros(8)
    law_y[7] = 1.0
    for _ in range(t):
        law_x, law_y = chain.step_law(law_x), chain.step_law(law_y)
    P = CHAINS
    x = np.concatenate([np.zeros((P, 3), dtype=np.int64), np.ones((P, 3), dtype=np.int64)])
    stepper = KernelStepper(toy, chain.kernel, np.arange(3), x, np.random.default_rng(0), 4096,
                            FiniteGuard(toy), paired=True)
    for _ in range(t):
        stepper.step(x, tau)
    assert _chi_square_ok(_law(x[:P], 2), law_x) and _chi_square_ok(_law(x[P:], 2), law_y)
    same = np.zeros((2 * 50, 3), dtype=np.int64)
    same[:, 1] = 1
    stepper = KernelStepper(toy, chain.kernel, np.arange(3), same, np.random.default_rng(1), 4096,
                            FiniteGuard(toy), paired=True)
    for _ in range(5):
        stepper.step(same, tau)
    assert (same[:50] == same[50:]).all()


def test_coupling_time_runs_every_kernel() -> None:
    from glauber.estimators import coupling_time

    toy = table_model(3, 2, seed=2, scale=0.5)
    x0, y0 = np.zeros((6, 3), dtype=np.int64), np.ones((6, 3), dtype=np.int64)
    for kernel in ("sweep", "shuffled", "mh:pll"):
        res = coupling_time(toy, 2.0, x0, y0, 200, seed=0, kernel=kernel, epsilon=0.1)
        assert res.n_censored == 0  # a fast chain: every pair meets well within the budget
