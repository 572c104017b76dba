"""Batched Glauber chains: correctness against the exact stationary law, batching, frozen sites."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from glauber.errors import (
    FrozenSitesError,
    InvalidParameterError,
    InvalidTemperatureError,
    NonFiniteScoresError,
    VocabularyError,
)
from glauber.estimators import glauber_chains
from glauber.toy_models import FunctionModel

from ..support import table_model
from ._reference import (
    CountingModel,
    NaNAfter,
    TorchModel,
    index,
    stationary,
    transition_matrix,
)


def _index_all(xs: np.ndarray, q: int) -> np.ndarray:
    return np.array([index(x, q) for x in xs])


@pytest.mark.parametrize("nq, seed, tau, backend", [
    ((3, 2), 1, 1.0, "numpy"),
    ((2, 3), 2, 0.7, "numpy"),
    ((3, 2), 3, 1.3, "torch"),
])
def test_long_run_distribution_is_stationary(nq, seed, tau, backend):
    n, q = nq
    toy = table_model(n, q, seed)
    P = transition_matrix(toy, tau)
    pi = stationary(P)  # pi P = pi on the enumerated chain
    t = 80
    x0 = np.zeros((4000, n), dtype=np.int64)
    # After t steps the law from state 0 is P^t(0, .); check it equals pi to 1e-6 first, so a
    # chi-square test against pi is a test of the sampler alone.
    assert 0.5 * np.abs(np.linalg.matrix_power(P, t)[0] - pi).sum() < 1e-6
    model = TorchModel(toy) if backend == "torch" else toy
    res = glauber_chains(model, tau, x0, n_steps=t, seed=seed)
    counts = np.bincount(_index_all(res.final_states, q), minlength=q**n)
    chi = stats.chisquare(counts, 4000 * pi)
    assert chi.pvalue > 1e-3


def test_each_chain_picks_its_own_site():
    # Token 1 is (numerically) certain at every site: one step from all-zeros sets exactly one 1,
    # at the site that chain drew. Sites must vary across chains and be uniform.
    n = 5
    model = FunctionModel(n, 2, lambda x, i: np.tile([0.0, 60.0], (len(x), 1)))
    res = glauber_chains(model, 1.0, np.zeros((3000, n), dtype=int), n_steps=1, seed=0)
    assert (res.final_states.sum(axis=1) == 1).all()
    sites = res.final_states.argmax(axis=1)
    assert stats.chisquare(np.bincount(sites, minlength=n)).pvalue > 1e-3
    frozen = glauber_chains(
        model, 1.0, np.zeros((3000, n), dtype=int), n_steps=1, seed=0, frozen=[0, 1]
    ).final_states.argmax(axis=1)
    assert set(np.unique(frozen)) == {2, 3, 4}


def test_one_scores_call_per_step():
    toy = table_model(3, 2, seed=0)
    counted = CountingModel(toy)
    glauber_chains(counted, 1.0, np.zeros((50, 3), dtype=int), n_steps=7, seed=0)
    assert counted.calls == [1] + [50] * 7  # one probe row, then one call per step
    counted = CountingModel(toy)
    glauber_chains(counted, 1.0, np.zeros((50, 3), dtype=int), n_steps=3, seed=0, batch_size=20)
    assert counted.calls == [1] + [20, 20, 10] * 3


def test_torch_states_stay_on_device():
    model = TorchModel(table_model(3, 2, seed=0))
    res = glauber_chains(model, 1.0, np.zeros((10, 3), dtype=int), n_steps=5, seed=0)
    assert [k for k, _ in model.calls] == ["numpy"] + ["torch"] * 5
    assert isinstance(res.final_states, np.ndarray) and res.final_states.dtype == np.int64


def test_non_finite_scores_are_reported_after_a_device_loop():
    x0 = np.zeros((4, 3), dtype=int)
    with pytest.raises(NonFiniteScoresError):
        glauber_chains(NaNAfter(3), 1.0, x0, n_steps=6, seed=0)
    with pytest.raises(NonFiniteScoresError):
        glauber_chains(NaNAfter(0), 1.0, x0, n_steps=6, seed=0)  # caught by the probe
    assert glauber_chains(NaNAfter(7), 1.0, x0, n_steps=6, seed=0).n_steps == 6


def test_init_states_are_not_modified():
    for model in (table_model(3, 2, seed=0), TorchModel(table_model(3, 2, seed=0))):
        x0 = np.zeros((8, 3), dtype=np.int64)
        glauber_chains(model, 1.0, x0, n_steps=20, seed=0)
        assert (x0 == 0).all()


def test_trajectory_recording_and_frozen_prefix():
    toy = table_model(4, 3, seed=2)
    x0 = np.random.default_rng(0).integers(3, size=(6, 4))
    res = glauber_chains(toy, 0.8, x0, n_steps=12, seed=3, record_every=1, frozen=[0])
    assert res.trajectory.shape == (13, 6, 4)
    np.testing.assert_array_equal(res.recorded_steps, np.arange(13))
    np.testing.assert_array_equal(res.trajectory[0], x0)
    np.testing.assert_array_equal(res.trajectory[-1], res.final_states)
    assert ((res.trajectory[1:] != res.trajectory[:-1]).sum(axis=2) <= 1).all()
    assert (res.trajectory[:, :, 0] == x0[:, 0]).all()
    sparse = glauber_chains(toy, 0.8, x0, n_steps=12, seed=3, record_every=5)
    assert sparse.recorded_steps.tolist() == [0, 5, 10]
    default = glauber_chains(toy, 0.8, x0, n_steps=12, seed=3)
    assert default.recorded_steps.tolist() == [0, 12]
    out = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert out["frozen"] == [True, False, False, False]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_same_seed_same_chains(backend):
    toy = table_model(3, 3, seed=1)
    model = TorchModel(toy) if backend == "torch" else toy
    x0 = np.zeros((20, 3), dtype=int)
    a = glauber_chains(model, 1.0, x0, n_steps=15, seed=9)
    b = glauber_chains(model, 1.0, x0, n_steps=15, seed=9)
    c = glauber_chains(model, 1.0, x0, n_steps=15, seed=10)
    np.testing.assert_array_equal(a.final_states, b.final_states)
    assert not np.array_equal(a.final_states, c.final_states)
    g1 = glauber_chains(model, 1.0, x0, n_steps=15, seed=np.random.default_rng(4))
    g2 = glauber_chains(model, 1.0, x0, n_steps=15, seed=np.random.default_rng(4))
    np.testing.assert_array_equal(g1.final_states, g2.final_states)


def test_sampler_errors():
    toy = table_model(3, 2, seed=0)
    x0 = np.zeros((2, 3), dtype=int)
    for tau in (0.0, -2.0, float("nan"), float("inf")):
        with pytest.raises(InvalidTemperatureError):
            glauber_chains(toy, tau, x0, n_steps=1)
    with pytest.raises(FrozenSitesError):
        glauber_chains(toy, 1.0, x0, n_steps=1, frozen=[0, 1, 2])
    with pytest.raises(FrozenSitesError):
        glauber_chains(toy, 1.0, x0, n_steps=1, frozen=np.ones(3, dtype=bool))
    with pytest.raises(InvalidParameterError):
        glauber_chains(toy, 1.0, x0, n_steps=1, frozen=[3])
    with pytest.raises(InvalidParameterError):
        glauber_chains(toy, 1.0, x0, n_steps=-1)
    with pytest.raises(InvalidParameterError):
        glauber_chains(toy, 1.0, x0[:0], n_steps=1)
    with pytest.raises(InvalidParameterError):
        glauber_chains(toy, 1.0, x0, n_steps=1, record_every=0)
    with pytest.raises(VocabularyError):
        glauber_chains(toy, 1.0, x0 + 2, n_steps=1)


class _FlaggedModel:
    """A toy that records its ``check_inputs`` flag at every scores() call (like HFMaskedLM)."""

    def __init__(self, base: FunctionModel) -> None:
        self.n, self.q, self.vocab = base.n, base.q, base.vocab
        self.base = base
        self.check_inputs = True
        self.seen: list[bool] = []

    def scores(self, states, sites):
        self.seen.append(self.check_inputs)
        return self.base.scores(states, sites)


def test_step_loops_skip_per_call_input_checks_and_restore_the_flag():
    from glauber.estimators import coupling_time

    model = _FlaggedModel(FunctionModel(3, 2, lambda x, i: np.stack([x.sum(1) * 0.3, -x.sum(1) * 0.2], 1)))
    glauber_chains(model, 1.0, np.zeros((4, 3), dtype=int), n_steps=5, seed=0)
    # one checked probe call finds the model's array library; the 5 steps run unchecked
    assert len(model.seen) == 6 and model.seen.count(True) <= 1
    assert model.check_inputs is True  # restored afterwards
    model.seen.clear()
    coupling_time(model, 1.0, np.zeros((2, 3), dtype=int), np.ones((2, 3), dtype=int), budget=5, seed=0)
    assert len(model.seen) >= 5 and model.seen.count(True) <= 1
    assert model.check_inputs is True
