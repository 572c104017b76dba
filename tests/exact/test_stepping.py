"""Tests of per-start mixing times by sparse point-mass stepping, and of the method choice.

Oracles: exact rational arithmetic (fractions.Fraction) on chains of <= 6 states, the two-state
closed form per start, brute-force dense powers row by row, the repeated-squaring algorithm
(an independent algorithm for the same quantity), and LPW 2nd ed. Exercise 4.2 (each start's
distance is non-increasing, so the first crossing is the mixing time from that start).
"""

from __future__ import annotations

import math
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from glauber.errors import (
    ConvergenceError,
    DeviceUnavailableError,
    InvalidParameterError,
    StateSpaceTooLargeError,
)
from glauber.exact import ExactChain, mixing
from glauber.exact.mixing import distance_curve, mixing_time, stepping_budget
from glauber.exact.stationary import gth_stationary
from glauber.exact.stepping import PointMassBlocks, crossing_times
from glauber.testing import sample, transition_matrices
from glauber.toy_models import IsingModel

from ._support import exact_stationary
from .test_mixing import fraction_matmul, rational_chain

METHODS = ("auto", "squaring", "stepping")


def exact_row_distances(
    P: list[list[Fraction]], pi: list[Fraction], t_max: int
) -> list[list[Fraction]]:
    """``d_x(t)`` for t = 0..t_max and every start x, exactly."""
    S = len(P)
    power = [[Fraction(int(r == c)) for c in range(S)] for r in range(S)]
    out = []
    for _ in range(t_max + 1):
        out.append([sum(abs(v - p) for v, p in zip(row, pi)) / 2 for row in power])
        power = fraction_matmul(power, P)
    return out


@given(seed=st.integers(0, 2**32 - 1), S=st.integers(2, 6), eps=st.sampled_from([0.1, 0.25, 0.4]))
@settings(max_examples=20, deadline=None)
def test_crossing_times_match_exact_rational_arithmetic(seed: int, S: int, eps: float) -> None:
    Pq = rational_chain(seed, S)
    piq = exact_stationary(Pq)
    rows = exact_row_distances(Pq, piq, 14)
    assume(all(abs(float(d) - eps) > 1e-9 for row in rows for d in row))  # no float ties
    expected = []
    for x in range(S):
        t_x = next((t for t, row in enumerate(rows) if row[x] <= Fraction(eps)), None)
        assume(t_x is not None)
        expected.append(t_x)
    P = np.array([[float(v) for v in row] for row in Pq])
    pi = np.array([float(v) for v in piq])
    assert crossing_times(P, pi, eps).tolist() == expected
    for method in METHODS:
        assert mixing_time(P, pi, eps, method=method) == max(expected)
    np.testing.assert_allclose(
        distance_curve(P, pi, range(15), method="stepping"),
        [float(max(row)) for row in rows],
        rtol=0,
        atol=1e-13,
    )


@pytest.mark.parametrize("p,q", [(0.5, 0.25), (0.1, 0.7), (1e-3, 2e-3), (0.9, 0.95)])
def test_two_state_crossing_times_closed_form(p: float, q: float) -> None:
    # P = [[1-p, p], [q, 1-q]]: P^t(x, .) - pi = (1-p-q)^t (delta_x - pi) (LPW 2nd ed. Section
    # 1.1), so d_0(t) = p/(p+q) |1-p-q|^t and d_1(t) = q/(p+q) |1-p-q|^t.
    P = np.array([[1 - p, p], [q, 1 - q]])
    pi = np.array([q, p]) / (p + q)
    lam = abs(1 - p - q)
    for eps in (0.01, 0.25):
        expected = [
            max(0, math.ceil(math.log(eps * (p + q) / a) / math.log(lam))) for a in (p, q)
        ]
        assert crossing_times(P, pi, eps).tolist() == expected


#: Most dense powers the reference of the many-blocks test steps before it gives up on a draw.
REFERENCE_STEPS = 20_000


@given(
    P=transition_matrices(max_states=30, spread=(0.0, 16.0), patterns=("dense",)),
    eps=st.floats(0.01, 0.9),
    width=st.integers(1, 7),
)
@settings(max_examples=30, deadline=None)
def test_crossing_times_match_dense_powers_with_many_blocks(
    P: np.ndarray, eps: float, width: int
) -> None:
    # block_bytes = 16 S width gives blocks of `width` starts; rows that cross are dropped
    # (compaction) part-way through, which must not change any start's crossing time.
    S, pi = len(P), gth_stationary(P)
    power, t, history, expected = np.eye(S), 0, [], np.full(S, -1)
    while (expected < 0).any():
        d = 0.5 * np.abs(power - pi).sum(axis=1)
        history.extend(d)
        expected[(expected < 0) & (d <= eps)] = t
        power, t = power @ P, t + 1
        # the reference steps dense powers one at a time: a chain slower than this (e.g. two
        # states with switching probabilities ~4e-4) is not compared, rather than failing here
        assume(t < REFERENCE_STEPS)
    assume(all(abs(h - eps) > 1e-9 for h in history))
    for backend in ("numpy", "torch"):
        got = crossing_times(sp.csr_matrix(P), pi, eps, backend, "cpu", block_bytes=16 * S * width)
        np.testing.assert_array_equal(got, expected)
    assert mixing_time(P, pi, eps, method="stepping") == expected.max()


@given(P=transition_matrices(max_states=25, spread=(0.0, 20.0), patterns=("dense",)))
@settings(max_examples=20, deadline=None)
def test_stepping_distance_curve_equals_squaring(P: np.ndarray) -> None:
    S, pi = len(P), gth_stationary(P)
    ts = [0, 1, 2, 5, 17, 40]
    squared = distance_curve(P, pi, ts, method="squaring")
    for backend in ("numpy", "torch"):
        stepped = distance_curve(
            P, pi, ts, backend, "cpu", method="stepping", block_bytes=16 * S * 3
        )
        np.testing.assert_allclose(stepped, squared, rtol=1e-10, atol=1e-14)


def test_auto_gives_up_stepping_on_a_slow_chain_and_squares() -> None:
    # Heat-bath Ising on the 6-cycle at beta = 3: t_mix(1/4) is in the hundreds of thousands,
    # far beyond the ski-rental budget, so "auto" must hand over to squaring (and agree).
    chain = ExactChain(IsingModel(nx.cycle_graph(6)), tau=1 / 3)
    P, pi = chain.transition_matrix(), chain.stationary()
    assert stepping_budget(P.shape[0], P.nnz) < 1000
    slow = mixing_time(P, pi, method="squaring")
    assert slow > 10**5
    assert mixing_time(P, pi, method="auto") == slow
    with pytest.raises(ConvergenceError, match="max_steps"):
        mixing_time(P, pi, method="stepping", max_steps=1000)


def test_auto_steps_above_the_dense_limit_and_exact_chain_follows() -> None:
    # With the dense limit lowered below the chain size, "auto" (and ExactChain, whose dense
    # matrix is then refused) must step and give the squaring answer.
    chain = ExactChain(IsingModel(nx.cycle_graph(6)), tau=2.0)
    ts = [0, 3, 10, 25]
    expected_t, expected_d = chain.mixing_time(method="squaring"), chain.distance_curve(ts)
    P, pi = chain.transition_matrix(), chain.stationary()
    with pytest.raises(StateSpaceTooLargeError, match="method='stepping'"):
        mixing_time(P, pi, method="squaring", max_dense_states=32)
    assert mixing_time(P, pi, max_dense_states=32) == expected_t
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mixing, "MAX_DENSE_STATES", 32)
        fresh = ExactChain(IsingModel(nx.cycle_graph(6)), tau=2.0)
        with pytest.raises(StateSpaceTooLargeError):
            fresh.dense_transition_matrix()
        assert fresh.mixing_time() == expected_t
        np.testing.assert_allclose(fresh.distance_curve(ts), expected_d, rtol=1e-10, atol=1e-14)


def test_stepping_budget_grows_with_the_dense_to_sparse_cost_ratio() -> None:
    budgets = [stepping_budget(S, 8 * S) for S in (64, 512, 4096, 65536)]
    assert budgets == sorted(budgets) and budgets[0] < budgets[-1]
    for S, nnz in ((4096, 13 * 4096), (65536, 17 * 65536)):
        t = stepping_budget(S, nnz)
        c = S**2 / nnz / mixing.DENSE_EFFICIENCY
        assert t >= 2 * c * math.log2(t)  # stepping stops only once squaring would be cheaper


def test_point_mass_blocks_cover_every_start_once() -> None:
    P = sample(transition_matrices(10, 10, spread=(4.0, 4.0), patterns=("dense",)), 1, seed=0)[0]
    pi = gth_stationary(P)
    blocks = PointMassBlocks(P, pi, block_bytes=16 * 10 * 3)
    spans = list(blocks.blocks())
    assert spans == [(0, 3), (3, 6), (6, 9), (9, 10)]
    D = np.hstack([blocks.point_masses(lo, hi) for lo, hi in spans])
    np.testing.assert_array_equal(D, np.eye(10))
    np.testing.assert_allclose(blocks.step(D), P.T, rtol=1e-15)
    np.testing.assert_allclose(blocks.distances(D), 0.5 * np.abs(np.eye(10) - pi).sum(1))


def test_bad_inputs_raise() -> None:
    P, pi = np.full((2, 2), 0.5), np.array([0.5, 0.5])
    with pytest.raises(InvalidParameterError, match="method"):
        mixing_time(P, pi, method="bisect")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="block_bytes"):
        crossing_times(P, pi, block_bytes=0)
    with pytest.raises(InvalidParameterError, match="backend='torch'"):
        crossing_times(P, pi, device="cuda")
    with pytest.raises(InvalidParameterError, match="pi"):
        crossing_times(P, np.array([1.0]))
    with pytest.raises(InvalidParameterError, match="'torch'"):
        crossing_times(P, pi, backend="jax")
    if not torch.cuda.is_available():
        with pytest.raises(DeviceUnavailableError):
            crossing_times(P, pi, backend="torch", device="cuda")
    with pytest.raises(ConvergenceError, match="max_steps"):
        crossing_times(np.eye(2), pi, max_steps=50)  # reducible: never mixes


def test_gth_reference_chain_all_methods_agree_on_torch() -> None:
    P = sample(transition_matrices(12, 12, spread=(12.0, 12.0), patterns=("dense",)), 1, seed=7)[0]
    pi = gth_stationary(P)
    answers = {
        (m, b): mixing_time(P, pi, 0.1, backend=b, device="cpu", method=m)
        for m in METHODS
        for b in ("numpy", "torch")
    }
    assert len(set(answers.values())) == 1, answers
