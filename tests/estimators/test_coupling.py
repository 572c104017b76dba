"""Same-site maximal coupling and coupling times."""

from __future__ import annotations

import json

import numpy as np
import pytest

from glauber.core.arrays import to_numpy
from glauber.errors import (
    InvalidParameterError,
    InvalidTemperatureError,
    NonFiniteScoresError,
)
from glauber.estimators import coupling_time, maximal_coupling_step
from glauber.estimators.coupling import coupled_step
from glauber.estimators.random_draws import device_generator

from ..support import states, table_model
from ._reference import (
    CountingModel,
    NaNAfter,
    TorchModel,
    coupled_kernel,
    index,
    one_step_hamming,
)


def _within(mean: float, target: float, sd: float, z: float = 5.0) -> bool:
    return abs(mean - target) <= z * sd + 1e-12


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_maximal_coupling_marginals_and_disagreement(backend):
    p = np.array([0.5, 0.3, 0.2, 0.0])
    q = np.array([0.1, 0.3, 0.2, 0.4])
    tv = 0.5 * np.abs(p - q).sum()  # 0.4
    N = 100_000 if backend == "numpy" else 20_000
    with np.errstate(divide="ignore"):
        lp, lq = np.tile(np.log(p), (N, 1)), np.tile(np.log(q), (N, 1))
    if backend == "torch":
        import torch

        lp, lq = torch.as_tensor(lp), torch.as_tensor(lq)
    gen = device_generator(lp, 3)
    a, b = (to_numpy(v) for v in maximal_coupling_step(lp, lq, gen))
    for draws, law in ((a, p), (b, q)):
        freq = np.bincount(draws, minlength=4) / N
        assert all(_within(f, w, np.sqrt(w * (1 - w) / N)) for f, w in zip(freq, law))
    differ = (a != b).mean()
    assert _within(differ, tv, np.sqrt(tv * (1 - tv) / N))
    # where they agree the common value follows min(p, q) / (1 - tv)
    common = np.bincount(a[a == b], minlength=4) / N
    np.testing.assert_allclose(common, np.minimum(p, q), atol=5 * np.sqrt(0.25 / N))


def test_identical_laws_always_agree():
    lp = np.log(np.tile([0.2, 0.7, 0.1], (1000, 1)))
    a, b = maximal_coupling_step(lp, lp.copy(), np.random.default_rng(0))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_one_step_hamming_matches_exact_formula(backend):
    toy = table_model(4, 3, seed=5)
    model = TorchModel(toy) if backend == "torch" else toy
    rng = np.random.default_rng(1)
    pairs = [(rng.integers(3, size=4), rng.integers(3, size=4)) for _ in range(4)]
    N = 20_000 if backend == "numpy" else 4_000
    for k, (x, y) in enumerate(pairs):
        X, Y = np.tile(x, (N, 1)), np.tile(y, (N, 1))
        if backend == "torch":
            import torch

            X, Y = torch.as_tensor(X), torch.as_tensor(Y)
        gen = device_generator(X, k)
        X1, Y1 = coupled_step(model, 0.8, X, Y, gen)
        dh = to_numpy((X1 != Y1).sum(axis=1)).astype(float)
        want = one_step_hamming(toy, 0.8, x, y)
        assert _within(dh.mean(), want, dh.std() / np.sqrt(N) + 1e-3)


def test_one_step_hamming_agrees_with_exact_chain():
    from glauber.exact.chain import ExactChain

    toy = table_model(3, 3, seed=6)
    chain = ExactChain(toy, tau=1.1)
    xs = states(3, 3)
    for sx, sy in [(0, 26), (5, 7), (13, 13), (2, 20)]:
        assert chain.one_step_hamming(sx, sy) == pytest.approx(
            one_step_hamming(toy, 1.1, xs[sx], xs[sy]), abs=1e-12
        )


@pytest.mark.parametrize("backend, sync_every", [("numpy", 1), ("numpy", 7), ("torch", 5)])
def test_coupling_time_distribution_matches_exact_kernel(backend, sync_every):
    # P(T <= t) = P(X_t = Y_t) from the exact coupled kernel on pairs (the diagonal absorbs).
    toy = table_model(3, 2, seed=4)
    model = TorchModel(toy) if backend == "torch" else toy
    tau = 1.0
    K = coupled_kernel(toy, tau)
    xs = states(3, 2)
    x, y = np.array([0, 0, 0]), np.array([1, 1, 1])
    m = len(xs)
    start = np.zeros(m * m)
    start[index(x, 2) * m + index(y, 2)] = 1.0
    diag = np.arange(m) * m + np.arange(m)
    N = 3000 if backend == "numpy" else 1000
    res = coupling_time(model, tau, np.tile(x, (N, 1)), np.tile(y, (N, 1)), budget=40,
                        seed=2, sync_every=sync_every)
    dist = start
    for t in range(1, 41):
        dist = dist @ K
        if t in (2, 5, 10, 20, 40):
            p = dist[diag].sum()
            emp = (~res.censored & (res.times <= t)).mean()
            assert _within(emp, p, np.sqrt(p * (1 - p) / N))
    assert res.n_censored == int(res.censored.sum())


def test_coupling_time_basics_and_json():
    toy = table_model(3, 2, seed=4)
    same = coupling_time(toy, 1.0, np.zeros((5, 3), dtype=int), np.zeros((5, 3), dtype=int), 10)
    assert same.times.tolist() == [0] * 5 and same.median == 0.0
    # budget 1 cannot join pairs that differ at every site
    cens = coupling_time(toy, 1.0, np.zeros((4, 3), dtype=int), np.ones((4, 3), dtype=int), 1)
    assert cens.censored.all() and cens.n_censored == 4
    assert cens.median is None and cens.median_exceeds_budget
    assert cens.times.tolist() == [1] * 4
    out = json.loads(json.dumps(cens.to_dict(), allow_nan=False))
    assert out["median"] is None
    single = coupling_time(toy, 1.0, np.array([0, 0, 0]), np.array([1, 1, 1]), 200, seed=1)
    assert single.times.shape == (1,)


def test_coupling_time_reproducible_and_batched():
    toy = table_model(3, 3, seed=2)
    x0 = np.zeros((30, 3), dtype=int)
    y0 = np.full((30, 3), 2)
    a = coupling_time(toy, 0.9, x0, y0, 100, seed=7)
    b = coupling_time(toy, 0.9, x0, y0, 100, seed=7)
    np.testing.assert_array_equal(a.times, b.times)
    counted = CountingModel(toy)
    coupling_time(counted, 0.9, x0, y0, 100, seed=7, sync_every=1000)
    assert counted.calls[0] == 1 and set(counted.calls[1:]) == {60}  # both chains, one call/step
    np.testing.assert_array_equal(x0, 0)  # inputs untouched


def test_coupling_reports_non_finite_scores():
    x0, y0 = np.zeros((3, 3), dtype=int), np.ones((3, 3), dtype=int)
    with pytest.raises(NonFiniteScoresError):
        coupling_time(NaNAfter(4), 1.0, x0, y0, budget=50, sync_every=10)


def test_coupling_errors():
    toy = table_model(3, 2, seed=0)
    x0 = np.zeros((2, 3), dtype=int)
    with pytest.raises(InvalidParameterError):
        coupling_time(toy, 1.0, x0, x0, budget=0)
    with pytest.raises(InvalidParameterError):
        coupling_time(toy, 1.0, x0, x0[:1], budget=5)
    with pytest.raises(InvalidTemperatureError):
        coupling_time(toy, 0.0, x0, x0, budget=5)
