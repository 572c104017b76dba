"""Tests of the exact quantities: influence, oscillation, margins, basins, spectrum, coupling.

Oracles: closed forms for Ising models (derived in comments, with sources), slow loops straight
from each definition, an explicit maximal coupling enumerated outcome by outcome, Kac's lemma,
LPW's conductance lower bound on t_mix, and Hypothesis properties over random models.
"""

from __future__ import annotations

import cmath
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import BasinError, InvalidParameterError, StateSpaceTooLargeError
from glauber.exact.basins import (
    bottleneck,
    conductance,
    expected_hitting_times,
)
from glauber.exact.chain import ExactChain
from glauber.exact.spectral import (
    absolute_spectral_gap,
    relaxation_time,
    spectral_gap,
)
from glauber.testing import ModelSpec, basins, states
from glauber.toy_models.base import FunctionModel

from ..support import score_tables, table_model
from ._support import ising_model


def graph_couplings(n: int, edges: list[tuple[int, int]], J: float = 1.0) -> np.ndarray:
    M = np.zeros((n, n))
    for u, v in edges:
        M[u, v] = M[v, u] = J
    return M


def pairs_differing_at(chain: ExactChain, j: int):
    """All ordered pairs of state indices (x, y) that differ exactly at site j."""
    for x, state in enumerate(chain.states()):
        for b in range(chain.q):
            if b != state[j]:
                other = state.copy()
                other[j] = b
                yield x, int(chain.index_of(other))


# ----------------------------------------------------------------------------- influence


def test_ising_path_influence_and_oscillation_closed_forms() -> None:
    # Heat-bath Ising, p(+ | f) = (1 + tanh(beta f))/2 with local field f; flipping a neighbour j
    # moves f by 2J, so TV = |tanh(beta f) - tanh(beta (f - 2J))|/2, largest for f symmetric about
    # 0. Degree-1 site (others sum to 0, f = +-J): c = tanh(beta J). Degree-2 site (the other
    # neighbour gives f in {0, 2J}): c = tanh(2 beta J)/2. (docs/theory.md, `dobrushin`, Dobrushin
    # for Ising, LPW 2nd ed. Theorem 15.1.) Oscillation: s_i(+-) shifts by +-2J, so Delta_ij =
    # 4|J_ij|.
    n, J, tau = 4, 0.7, 0.8
    beta = 1 / tau
    path = graph_couplings(n, [(0, 1), (1, 2), (2, 3)], J)
    chain = ExactChain(ising_model(path, np.zeros(n)), tau)
    C = chain.influence_matrix()
    end, middle = math.tanh(beta * J), math.tanh(2 * beta * J) / 2
    expected = np.array(
        [[0, end, 0, 0], [middle, 0, middle, 0], [0, middle, 0, middle], [0, 0, end, 0]]
    )
    np.testing.assert_allclose(C, expected, rtol=1e-13, atol=1e-15)
    D = chain.oscillation_matrix()
    np.testing.assert_allclose(D, 4 * J * (expected > 0), rtol=1e-13, atol=1e-15)


@given(model=score_tables(), tau=st.floats(0.2, 5.0))
@settings(max_examples=20, deadline=None)
def test_influence_and_oscillation_match_brute_force(model, tau: float) -> None:
    n = model.n
    chain = ExactChain(model, tau)
    p, s = chain.conditionals(), chain.scores()
    C_ref, D_ref = np.zeros((n, n)), np.zeros((n, n))
    for j in range(n):
        for x, y in pairs_differing_at(chain, j):
            for i in range(n):
                if i == j:
                    continue
                C_ref[i, j] = max(C_ref[i, j], 0.5 * np.abs(p[i, x] - p[i, y]).sum())
                d = s[i, x] - s[i, y]
                D_ref[i, j] = max(D_ref[i, j], d.max() - d.min())
    C, D = chain.influence_matrix(), chain.oscillation_matrix()
    np.testing.assert_allclose(C, C_ref, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(D, D_ref, rtol=1e-13, atol=1e-14)
    # Lemma 6 (true as printed) and the sharper tanh form (docs/theory.md, `tanh`).
    assert np.all(C <= D / (4 * tau) + 1e-12)
    assert np.all(C <= np.tanh(D / (4 * tau)) + 1e-12)
    # The oscillation is temperature-free.
    hotter = ExactChain(chain.model, 2.5 * tau)
    np.testing.assert_allclose(hotter.oscillation_matrix(), D, rtol=1e-14)


# ------------------------------------------------------------------------------ coupling


def coupled_expectation(chain: ExactChain, x: int, y: int) -> float:
    """E[d_H] by enumerating site i and the outcome pair (a, b) of an explicit maximal coupling:
    gamma(a, a) = min(p(a), p'(a)), and the residual masses coupled independently."""
    p, states, n = chain.conditionals(), chain.states(), chain.n
    total = 0.0
    for i in range(n):
        u, v = p[i, x], p[i, y]
        common = np.minimum(u, v)
        tv = 1.0 - common.sum()
        gamma = np.diag(common)
        if tv > 0:
            gamma = gamma + np.outer(u - common, v - common) / tv
        for a, b in itertools.product(range(chain.q), repeat=2):
            xs, ys = states[x].copy(), states[y].copy()
            xs[i], ys[i] = a, b
            total += gamma[a, b] * (xs != ys).sum() / n
    return total


@given(model=score_tables(), tau=st.floats(0.2, 5.0), data=st.data())
@settings(max_examples=25, deadline=None)
def test_one_step_hamming_matches_enumerated_maximal_coupling(
    model, tau: float, data: st.DataObject
) -> None:
    chain = ExactChain(model, tau)
    x = data.draw(states(model))
    y = data.draw(states(model))
    expected = coupled_expectation(chain, x, y)
    assert chain.one_step_hamming(x, y) == pytest.approx(expected, abs=1e-13)


@given(model=score_tables(27, scale=(1.5, 1.5)))
@settings(max_examples=15, deadline=None)
def test_worst_adjacent_pair_is_the_maximum_over_adjacent_pairs(model) -> None:
    n = model.n
    chain = ExactChain(model, 0.7)
    values = {
        (x, y, j): chain.one_step_hamming(x, y)
        for j in range(n)
        for x, y in pairs_differing_at(chain, j)
    }
    worst = chain.one_step_hamming_all_pairs_adjacent()
    assert worst.expected_distance == pytest.approx(max(values.values()), abs=1e-14)
    assert values[(worst.x_index, worst.y_index, worst.site)] == pytest.approx(
        worst.expected_distance, abs=1e-14
    )


def test_star_counterexample_to_row_sum_contraction() -> None:
    # docs/theory.md, `thm5-corrected`: hub 0 ignores the leaves (uniform conditional); each of the
    # 3 leaves copies the hub with probability (1 + delta)/2. Row sums of C: leaf rows delta, hub
    # row 0, so the paper's alpha = delta = 0.5 < 1. From a pair differing only at the hub, a leaf
    # update disagrees with probability TV = delta, the hub update with 0: E[d_H] = (1/4) * 3 * (1 +
    # delta) = 1.125 > 1 = d_H. Column sum of the hub is 3 delta = 1.5.
    delta = 0.5
    logit = math.log((1 + delta) / (1 - delta))

    def scores(x: np.ndarray, i: int) -> np.ndarray:
        if i == 0:
            return np.zeros((len(x), 2))
        return logit * np.stack([x[:, 0] == 0, x[:, 0] == 1], axis=1).astype(float)

    chain = ExactChain(FunctionModel(4, 2, scores), 1.0)
    C = chain.influence_matrix()
    np.testing.assert_allclose(C[1:, 0], delta, rtol=1e-13)
    assert C.sum(axis=1).max() == pytest.approx(delta)
    x = int(chain.index_of(np.array([0, 0, 0, 0])))
    y = int(chain.index_of(np.array([1, 0, 0, 0])))
    assert chain.one_step_hamming(x, y) == pytest.approx(3 * (1 + delta) / 4, rel=1e-13)
    worst = chain.one_step_hamming_all_pairs_adjacent()
    assert worst.site == 0 and worst.expected_distance == pytest.approx(1.125, rel=1e-13)


def test_one_step_hamming_rejects_bad_indices() -> None:
    chain = ExactChain(table_model(2, 2, 0, 1.0), 1.0)
    for bad in (-1, 4, 1.0, True):
        with pytest.raises(InvalidParameterError, match="index_of"):
            chain.one_step_hamming(bad, 0)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------- margins


def reference_margins(chain: ExactChain, mask: np.ndarray) -> tuple[float, float, int, int]:
    s, states, n, q = chain.scores(), chain.states(), chain.n, chain.q
    delta, gap, k, m = math.inf, math.inf, 0, 0
    for x in np.flatnonzero(mask):
        sites = 0
        for i in range(n):
            own = states[x, i]
            exits = []
            for a in range(q):
                y = states[x].copy()
                y[i] = a
                if a != own and not mask[int(chain.index_of(y))]:
                    exits.append(a)
            if exits:
                sites += 1
                m = max(m, len(exits))
                delta = min(delta, s[i, x, own] - max(s[i, x, a] for a in exits))
                gap = min(gap, s[i, x, own] - max(s[i, x, a] for a in range(q) if a != own))
        k = max(k, sites)
    return delta, gap, k, m


@given(model=score_tables(scale=(0.1, 4.0)), tau=st.floats(0.1, 3.0), data=st.data())
@settings(max_examples=30, deadline=None)
def test_margins_match_brute_force_and_bound_the_exact_escape(
    model, tau: float, data: st.DataObject
) -> None:
    n, q = model.n, model.q
    chain = ExactChain(model, tau)
    mask = data.draw(basins(model, kinds=("random",))).mask  # neither empty nor everything
    got = chain.margins(mask)
    delta, gap, k, m = reference_margins(chain, mask)
    assert got.delta_star == pytest.approx(delta, abs=1e-14)
    assert got.site_gap_min == pytest.approx(gap, abs=1e-14)
    assert (got.k, got.max_exit_tokens, got.basin_size) == (k, m, int(mask.sum()))
    assert got.argmax_holds == (gap >= 0) and got.holds == (gap >= 0 and delta > 0)
    # The per-state escape bound behind Theorem 8 needs only the exit margin:
    # P(x, B^c) <= (k/n) m e^{-delta/tau}; under Assumption 1 also <= |V| e^{-delta/tau}.
    escape = chain.escape_probabilities(mask)
    bound = k / n * m * math.exp(-delta / tau)
    assert np.all(escape <= bound * (1 + 1e-12))
    if got.holds:
        assert chain.conductance(mask) <= q * math.exp(-delta / tau) * (1 + 1e-12)
    # The reported worst (state, site) attains delta_star.
    i, x = got.worst_site, got.worst_state
    assert mask[x]
    own = chain.states()[x, i]
    exits = [
        a for a in range(q)
        if a != own and not mask[x + (a - own) * q ** (n - 1 - i)]
    ]
    assert chain.scores()[i, x, own] - max(chain.scores()[i, x, a] for a in exits) == got.delta_star


def test_margins_hand_example() -> None:
    # Ising pair, J = 2, h = 0, basin {++} (tokens 1,1). Exit-causing: both sites (flip to -);
    # s_i(+) - s_i(-) = 2 f = 2 J spin(other) = 4 at ++: Assumption 1 holds, Delta* = 4, k = 2.
    chain = ExactChain(ising_model(graph_couplings(2, [(0, 1)], 2.0), np.zeros(2)), 1.0)
    got = chain.margins(np.array([False, False, False, True]))
    assert (got.delta_star, got.holds, got.k, got.max_exit_tokens, got.boundary_states) == (
        4.0, True, 2, 1, 1
    )
    # Basin {+-}: site 0 holds + but the context (- at site 1) favours -: the margin is -4.
    got = chain.margins(np.array([False, False, True, False]))
    assert got.delta_star == -4.0 and not got.holds and not got.argmax_holds
    assert got.worst_state == 2


# -------------------------------------------------------------------------------- basins


@given(model=score_tables(), tau=st.floats(0.2, 3.0), data=st.data())
@settings(max_examples=25, deadline=None)
def test_conductance_and_escape_match_definition(model, tau: float, data: st.DataObject) -> None:
    n, q = model.n, model.q
    chain = ExactChain(model, tau)
    mask = data.draw(basins(model, kinds=("random",))).mask  # neither empty nor everything
    P, pi = chain.dense_transition_matrix(), chain.stationary()
    escape_ref = np.array(
        [sum(P[x, y] for y in range(q**n) if not mask[y]) for x in np.flatnonzero(mask)]
    )
    np.testing.assert_allclose(chain.escape_probabilities(mask), escape_ref, rtol=1e-12)
    phi_ref = sum(pi[x] * e for x, e in zip(np.flatnonzero(mask), escape_ref)) / pi[mask].sum()
    assert chain.conductance(mask) == pytest.approx(phi_ref, rel=1e-12)
    # Stationarity balances the flow out of S and into S (Q(S, S^c) = Q(S^c, S)).
    inflow = sum(pi[y] * P[y, x] for y in np.flatnonzero(~mask) for x in np.flatnonzero(mask))
    assert chain.conductance(mask) * pi[mask].sum() == pytest.approx(inflow, rel=1e-10)


def test_conductance_closed_form_and_errors() -> None:
    P = np.array([[0.5, 0.5], [0.25, 0.75]])
    pi = np.array([1 / 3, 2 / 3])
    assert conductance(P, pi, np.array([False, True])) == pytest.approx(0.25)
    for bad in (np.array([False, False]), np.array([True, True])):
        with pytest.raises(BasinError):
            conductance(P, pi, bad)
    for bad in (np.array([1, 0]), np.array([True, False, True])):
        with pytest.raises(InvalidParameterError, match="boolean mask"):
            conductance(P, pi, bad)
    chain = ExactChain(table_model(2, 2, 0, 1.0), 1.0)
    with pytest.raises(BasinError):
        chain.escape_probabilities(np.ones(4, dtype=bool))
    with pytest.raises(BasinError):
        chain.margins(np.zeros(4, dtype=bool))


@given(model=score_tables(16, max_sites=3), tau=st.floats(0.3, 3.0))
@settings(max_examples=20, deadline=None)
def test_bottleneck_ratio_by_subset_enumeration_and_lpw_7_4(model, tau: float) -> None:
    n, q = model.n, model.q
    chain = ExactChain(model, tau)
    result = chain.bottleneck()
    assert chain.bottleneck_ratio() == result.ratio
    assert chain.conductance(result.mask) == pytest.approx(result.ratio, rel=1e-12)
    # LPW 2nd ed. Theorem 7.4 (no reversibility needed): t_mix(1/4) >= 1 / (4 Phi_*).
    assert chain.mixing_time(0.25) >= 1 / (4 * result.ratio) - 1e-9
    S = q**n
    if S > 9:
        return
    P, pi = chain.dense_transition_matrix(), chain.stationary()
    best = math.inf
    for r in range(1, S):
        for subset in itertools.combinations(range(S), r):
            inside = np.zeros(S, dtype=bool)
            inside[list(subset)] = True
            if pi[inside].sum() <= 0.5 + 1e-12:
                flow = (pi[inside, None] * P[inside][:, ~inside]).sum()
                best = min(best, flow / pi[inside].sum())
    assert result.ratio == pytest.approx(best, rel=1e-12)


def test_bottleneck_admits_sets_of_mass_exactly_one_half_and_limits_size() -> None:
    P = np.array([[0.9, 0.1], [0.1, 0.9]])
    result = bottleneck(P, np.array([0.5, 0.5]))
    assert result.ratio == pytest.approx(0.1)
    chain = ExactChain(table_model(5, 2, 0, 1.0), 1.0)  # 32 states
    with pytest.raises(StateSpaceTooLargeError, match="conductance"):
        chain.bottleneck_ratio()


@given(model=score_tables(), tau=st.floats(0.2, 3.0), data=st.data())
@settings(max_examples=25, deadline=None)
def test_hitting_times_satisfy_kac_and_first_step_equations(
    model, tau: float, data: st.DataObject
) -> None:
    n, q = model.n, model.q
    chain = ExactChain(model, tau)
    P, pi = chain.dense_transition_matrix(), chain.stationary()
    a = data.draw(st.integers(0, q**n - 1))
    target = np.zeros(q**n, dtype=bool)
    target[a] = True
    h = chain.expected_hitting_times(target)
    assert h[a] == 0 and np.all(h[~target] >= 1)
    np.testing.assert_allclose(h[~target], 1 + (P @ h)[~target], rtol=1e-9)
    # Kac's lemma (LPW 2nd ed. Lemma 1.13 / Proposition 1.19): E_a[tau_a^+] = 1 / pi(a), and
    # tau_a^+ = 1 + (hitting time of a from the first step).
    assert 1 + P[a] @ h == pytest.approx(1 / pi[a], rel=1e-9)


def test_hitting_time_closed_form_and_errors() -> None:
    # Two states, P(0, 1) = p: the hitting time of {1} from 0 is geometric with mean 1/p.
    p = 1e-9
    P = np.array([[1 - p, p], [0.3, 0.7]])
    h = expected_hitting_times(P, np.array([False, True]))
    np.testing.assert_allclose(h, [1 / p, 0], rtol=1e-12)
    np.testing.assert_array_equal(expected_hitting_times(P, np.array([True, True])), [0, 0])
    with pytest.raises(BasinError):
        expected_hitting_times(P, np.array([False, False]))


def test_hitting_times_keep_relative_accuracy_on_a_nearly_reducible_chain() -> None:
    # A random table (n = 2, q = 3, seed 3, scale 3) at tau = 0.2: pi(3) ~ 1e-27, so the return
    # time to state 3 is ~1e27 (Kac); a pivoted sparse LU returned times off by a factor 1e9
    # and negative ones on such chains. Reference: the same first-step equations solved exactly
    # over the rationals (every float entry of P is a rational number), with 1 - P(x, x) taken
    # as the sum of the other entries of the row: the float diagonal rounds away the ~1e-27
    # flow to the target, so I - P itself is singular to working precision.
    chain = ExactChain(ModelSpec("random-table", n=2, q=3, seed=3, scale=3.0, bias=0.0).build(),
                       0.2)
    P, pi = chain.dense_transition_matrix(), chain.stationary()
    a = int(np.argmin(pi))
    assert pi[a] < 1e-20
    target = np.arange(9) == a
    h = chain.expected_hitting_times(target)
    rest = np.flatnonzero(~target)
    F = [[Fraction(float(v)) for v in row] for row in P]
    A = [[sum(F[r][y] for y in range(9) if y != r) if r == c else -F[r][c] for c in rest]
         + [Fraction(1)] for r in rest]
    for col in range(len(rest)):  # Gauss-Jordan over the rationals
        A[col] = [v / A[col][col] for v in A[col]]
        for r in range(len(rest)):
            if r != col and A[r][col] != 0:
                A[r] = [v - A[r][col] * w for v, w in zip(A[r], A[col])]
    np.testing.assert_allclose(h[rest], [float(row[-1]) for row in A], rtol=1e-12)
    assert 1 + P[a] @ h == pytest.approx(1 / pi[a], rel=1e-12)  # Kac


# ------------------------------------------------------------------------------ spectrum


@pytest.mark.parametrize("n", [3, 4, 5, 6])
@pytest.mark.parametrize("beta", [0.1, 0.4, 1.0])
def test_ising_cycle_relaxation_time(n: int, beta: float) -> None:
    # LPW 2nd ed. Theorem 15.5: heat-bath Ising on the n-cycle has t_rel = n / (1 - tanh(2 beta)).
    # Heat-bath Glauber is a mean of projections, so its spectrum is >= 0 and gamma_* = gamma.
    J = graph_couplings(n, [(u, (u + 1) % n) for u in range(n)])
    chain = ExactChain(ising_model(J, np.zeros(n)), 1 / beta)
    gap = (1 - math.tanh(2 * beta)) / n
    assert chain.spectral_gap() == pytest.approx(gap, rel=1e-10)
    assert chain.absolute_spectral_gap() == pytest.approx(gap, rel=1e-10)
    assert chain.relaxation_time() == pytest.approx(1 / gap, rel=1e-10)


@pytest.mark.parametrize("p,q", [(0.2, 0.3), (0.9, 0.8), (1e-6, 3e-6)])
def test_two_state_spectrum(p: float, q: float) -> None:
    # Eigenvalues 1 and 1 - p - q: gap p + q, absolute gap 1 - |1 - p - q|.
    P = np.array([[1 - p, p], [q, 1 - q]])
    pi = np.array([q, p]) / (p + q)
    assert spectral_gap(P, pi) == pytest.approx(p + q, rel=1e-9)
    assert absolute_spectral_gap(P, pi) == pytest.approx(1 - abs(1 - p - q), rel=1e-9)
    assert relaxation_time(P, pi) == pytest.approx(1 / (1 - abs(1 - p - q)), rel=1e-9)


@pytest.mark.parametrize("r", [0.1, 0.5, 0.9])
def test_non_reversible_cycle_spectrum(r: float) -> None:
    # P = (1 - r) I + r C on Z_3 (C the cyclic shift) is doubly stochastic and not reversible;
    # its eigenvalues are 1 - r + r w^k, w = e^{2 pi i / 3} (circulant), so the second largest
    # modulus is |1 - r + r w|.
    P = (1 - r) * np.eye(3) + r * np.roll(np.eye(3), 1, axis=1)
    pi = np.full(3, 1 / 3)
    expected = 1 - abs(1 - r + r * cmath.exp(2j * math.pi / 3))
    assert spectral_gap(P, pi) == pytest.approx(expected, rel=1e-12)
    assert absolute_spectral_gap(P, pi) == pytest.approx(expected, rel=1e-12)
