"""Issue reproducers at the edges of float64: each gives a correct answer or a typed error.

Oracles: mpmath at 50 digits for the closed forms (LPW 2nd ed. Theorems 15.1, 15.4, 15.5,
14.6 and 7.4, as stated in docs/theory.md), and the definitions of the inputs (an integer
state space, a vocabulary axis).
"""

from __future__ import annotations

import math

import mpmath
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.core.enumeration import all_states
from glauber.errors import (
    ConvergenceError,
    InvalidParameterError,
    NonFiniteScoresError,
    NonRealScoresError,
    PrecisionError,
    SequenceLengthError,
    StateSpaceTooLargeError,
)
from glauber.exact import ExactChain
from glauber.theory import (
    bottleneck_distance_lower_bound,
    bottleneck_tmix_lower_bound,
    curie_weiss_fast_bound,
    dobrushin_ising_bound,
    ising_cycle_relaxation_time,
    ising_neighbour_influence,
    lemma6_bound,
    path_coupling_distance_bound,
    theorem8_escape_bound,
    theorem8_tmix_lower_bound,
    tv_distance,
)
from glauber.theory.escape import (
    log_bottleneck_tmix_lower_bound,
    log_theorem8_escape_bound,
    log_theorem8_tmix_lower_bound,
)
from glauber.toy_models import AsymmetricIsingModel, FunctionModel, IsingModel

mp = mpmath.mp.clone()
mp.dps = 50


def constant_scores(row):
    return FunctionModel(2, 2, lambda x, i: np.tile(np.asarray(row), (len(x), 1)))


@pytest.mark.parametrize("model, tau", [
    (IsingModel(nx.cycle_graph(4)), 5e-324),  # 2 / 5e-324 overflows
    (constant_scores([1e308, 0.0]), 0.5),  # 1e308 / 0.5 overflows
])
def test_overflowing_scores_over_tau_raise_a_typed_error(model, tau):
    with pytest.raises(NonFiniteScoresError, match="overflow"):
        ExactChain(model, tau).conditionals()


@pytest.mark.parametrize("row, match", [([1 + 1j, 0.0], "complex"), (["1", "0"], "<U1")])
def test_complex_and_string_scores_are_refused(row, match):
    with pytest.raises(NonRealScoresError, match=match):
        ExactChain(constant_scores(row), 1.0).conditionals()


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 50), beta=st.floats(0.0, 170.0))
def test_cycle_relaxation_time_is_accurate_at_every_beta(n, beta):
    # LPW Theorem 15.5: n / (1 - tanh 2 beta) = n (1 + e^{4 beta}) / 2
    exact = n * (1 + mp.exp(4 * mp.mpf(beta))) / 2
    assert ising_cycle_relaxation_time(n, beta) == pytest.approx(float(exact), rel=1e-13)


def test_cycle_relaxation_time_issue_reproducer_and_overflow():
    assert ising_cycle_relaxation_time(5, 20.0) == pytest.approx(
        float(5 * (1 + mp.exp(80)) / 2), rel=1e-14)
    with pytest.raises(PrecisionError, match="beyond the largest float64"):
        ising_cycle_relaxation_time(5, 200.0)


@pytest.mark.parametrize("bound, args", [
    (dobrushin_ising_bound, (10, 2, 0.1)),
    (curie_weiss_fast_bound, (10, 0.5)),
])
def test_decay_bounds_take_astronomical_times(bound, args):
    assert bound(*args, 10**400) == 0.0
    # and agree with the 50-digit value where it is representable
    for t in (0, 1, 100, 10**5):
        n = args[0]
        c = 1 - args[1] * mp.tanh(args[2]) if bound is dobrushin_ising_bound else 1 - mp.mpf(
            args[1])
        assert bound(*args, t) == pytest.approx(float(n * (1 - c / n) ** t), rel=1e-12)


def test_path_coupling_and_bottleneck_bounds_take_astronomical_times():
    assert path_coupling_distance_bound(10**400, 0.1, 5.0) == 0.0
    assert path_coupling_distance_bound(10**5, 1e-4, 5.0) == pytest.approx(5.0 * math.exp(-10))
    assert bottleneck_distance_lower_bound(10**400, 0.1, 0.01) == -math.inf  # d(t) >= -inf
    assert bottleneck_distance_lower_bound(10**400, 0.1, 0.0) == pytest.approx(0.9)


def test_degree_one_billion_influence_is_a_closed_form():
    # even degree: tanh(2 beta) / 2; odd: tanh(beta) (no array of 10**9 neighbour sums)
    assert ising_neighbour_influence(0.5, 10**9) == pytest.approx(math.tanh(1.0) / 2)
    assert ising_neighbour_influence(0.5, 10**9 + 1) == pytest.approx(math.tanh(0.5))


def test_numpy_integers_do_not_wrap_the_state_count():
    with pytest.raises(StateSpaceTooLargeError):
        all_states(np.int64(40), np.int64(4))  # 4**40 wraps to 0 in int64


@pytest.mark.parametrize("call", [
    lambda: lemma6_bound("1.0", 1.0),
    lambda: lemma6_bound(["abc"], 1.0),
    lambda: AsymmetricIsingModel([["0", "1"], ["1", "0"]]),
    lambda: tv_distance([0.5, 0.5], [1.0]),
    lambda: tv_distance([0.5, 0.5], ["0.5", "0.5"]),
])
def test_strings_and_mismatched_shapes_raise_input_errors(call):
    with pytest.raises(InvalidParameterError):
        call()


def test_tv_distance_still_broadcasts_batches():
    np.testing.assert_allclose(tv_distance([0.5, 0.5], [[0.5, 0.5], [1.0, 0.0]]), [0.0, 0.5])


def test_index_of_refuses_states_of_the_wrong_length():
    chain = ExactChain(IsingModel(nx.cycle_graph(4)), 1.0)
    for bad in ([1, 0, 1], [[1, 0, 1, 1, 1]]):
        with pytest.raises(SequenceLengthError):
            chain.index_of(np.array(bad))
    assert int(chain.index_of(np.array([1, 0, 1, 1]))) == 11


def test_oscillation_overflow_is_a_typed_error():
    model = FunctionModel(2, 2, lambda x, i: np.where(x[:, [1 - i]] == np.arange(2), 1e308,
                                                      -1e308))
    with pytest.raises(NonFiniteScoresError, match="oscillation"):
        ExactChain(model, 1e300).oscillation_matrix()


def test_unreachable_eps_is_blamed_on_rounding_not_reducibility():
    chain = ExactChain(IsingModel(nx.cycle_graph(4)), 1.0)
    with pytest.raises(ConvergenceError) as info:
        chain.mixing_time(1e-300)
    assert "rounding" in str(info.value) and "reducible" not in str(info.value)


def test_theorem8_bounds_are_never_zero_or_infinite():
    # e^{-4000}: the escape bound underflows, yet it is a positive upper bound
    bound = theorem8_escape_bound(2, 4.0, 1e-3)
    assert 0.0 < bound < 1e-320
    assert log_theorem8_escape_bound(2, 4.0, 1e-3) == pytest.approx(math.log(2) - 4000)
    # e^{4000} / 8 overflows: the largest float is still a lower bound on t_mix, inf is not
    assert theorem8_tmix_lower_bound(2, 4.0, 1e-3) == np.finfo(np.float64).max
    assert log_theorem8_tmix_lower_bound(2, 4.0, 1e-3) == pytest.approx(4000 - math.log(8))
    assert bottleneck_tmix_lower_bound(0.5, 5e-324) == np.finfo(np.float64).max
    assert log_bottleneck_tmix_lower_bound(0.5, -4000.0) == pytest.approx(math.log(0.25) + 4000)
