"""Exact rational references on chains of 8 states (n = 3 binary sites).

Models are given by positive integer weights, so every conditional is a rational number and the
statements can be checked with :class:`fractions.Fraction`: Proposition 4's rectangle ratio is
exactly 1 for a Gibbs model, and the same-site maximal coupling of Theorem 5 is built as an
explicit joint law whose expected Hamming distance is computed exactly.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.core.conditionals import log_conditionals
from glauber.core.enumeration import all_states, neighbour_indices
from glauber.exact.chain import ExactChain
from glauber.theory import rectangle_delta
from glauber.toy_models import FunctionModel

N, Q = 3, 2
S = Q**N
STATES = all_states(N, Q)
NB = neighbour_indices(N, Q)  # NB[i, x, a]: index of x with site i set to a
weights = st.integers(1, 9)


def gibbs_conditionals(W: list[int]) -> list[list[list[Fraction]]]:
    """``p[i][x][a] = W(x^(i->a)) / sum_b W(x^(i->b))`` for joint weights ``W`` (exact)."""
    return [
        [[Fraction(W[NB[i, x, a]], sum(W[NB[i, x, b]] for b in range(Q))) for a in range(Q)]
         for x in range(S)]
        for i in range(N)
    ]


def site_conditionals(V: list[list[list[int]]]) -> list[list[list[Fraction]]]:
    """``p[i][x][a] ∝ V[i][context][a]`` with the context = ``x`` with site ``i`` zeroed."""
    return [
        [[Fraction(V[i][NB[i, x, 0]][a], sum(V[i][NB[i, x, 0]])) for a in range(Q)]
         for x in range(S)]
        for i in range(N)
    ]


def float_model(p: list[list[list[Fraction]]]) -> FunctionModel:
    """The same conditionals as a score function: scores = log of the rational probabilities."""
    table = np.log(np.array([[[float(v) for v in row] for row in site] for site in p]))

    def score_fn(states: np.ndarray, site: int) -> np.ndarray:
        return table[site, states @ (Q ** np.arange(N - 1, -1, -1))]

    return FunctionModel(N, Q, score_fn, name="rational")


def rectangle_ratio(p, x: int, i: int, j: int, a_new: int, b_new: int) -> Fraction:
    """``exp(delta)`` of the rectangle, exactly: the ratio of the two paths' products."""
    a, b = STATES[x, i], STATES[x, j]
    y, w = NB[i, x, a_new], NB[j, x, b_new]
    path_y = (p[i][x][a_new] / p[i][x][a]) * (p[j][y][b_new] / p[j][y][b])
    path_w = (p[j][x][b_new] / p[j][x][b]) * (p[i][w][a_new] / p[i][w][a])
    return path_y / path_w


def float_deltas(model, tau: float = 1.0) -> dict[tuple[int, int, int, int, int], float]:
    lp = np.stack([np.asarray(log_conditionals(model, STATES, np.full(S, i), tau))
                   for i in range(N)])
    out = {}
    for x, i, j, a_new, b_new in product(range(S), range(N), range(N), range(Q), range(Q)):
        if i < j and a_new != STATES[x, i] and b_new != STATES[x, j]:
            y, w = NB[i, x, a_new], NB[j, x, b_new]
            out[(x, i, j, a_new, b_new)] = rectangle_delta(
                lp[i, x], lp[j, y], lp[j, x], lp[i, w],
                STATES[x, i], a_new, STATES[x, j], b_new,
            )
    return out


@given(W=st.lists(weights, min_size=S, max_size=S))
@settings(max_examples=15, deadline=None)
def test_gibbs_rectangle_delta_is_exactly_zero(W):
    p = gibbs_conditionals(W)
    deltas = float_deltas(float_model(p))
    assert len(deltas) == S * 3  # 8 states x 3 site pairs x 1 x 1 replacement (binary)
    for key in deltas:
        assert rectangle_ratio(p, *key) == 1  # exactly, in rationals
        assert abs(deltas[key]) <= 1e-13


@given(V=st.lists(st.lists(st.lists(weights, min_size=Q, max_size=Q), min_size=S, max_size=S),
                  min_size=N, max_size=N))
@settings(max_examples=15, deadline=None)
def test_incompatible_rectangle_delta_is_the_log_of_the_exact_ratio(V):
    p = site_conditionals(V)
    for key, delta in float_deltas(float_model(p)).items():
        ratio = rectangle_ratio(p, *key)
        assert delta == pytest.approx(math.log(ratio), abs=1e-12)


def coupled_expected_hamming(p, x: int, y: int) -> tuple[Fraction, list[dict[int, Fraction]]]:
    """Exact ``E[d_H(X_1, Y_1)]`` under the same-site maximal coupling, from its joint law.

    Site ``i`` (probability ``1/N``); maximal coupling of ``u = p_i(.|x)`` and ``v = p_i(.|y)``:
    ``(a, a)`` with mass ``min(u_a, v_a)``, and ``(a, b)`` with mass
    ``(u_a - m_a)(v_b - m_b) / (1 - sum m)`` (LPW 2nd ed. Proposition 4.7's construction).
    Also returns the two marginal laws of ``X_1`` and ``Y_1`` (dicts state -> probability).
    """
    expected = Fraction(0)
    law_x: dict[int, Fraction] = {}
    law_y: dict[int, Fraction] = {}
    for i in range(N):
        u, v = p[i][x], p[i][y]
        m = [min(u[a], v[a]) for a in range(Q)]
        overlap = sum(m)
        joint = {(a, a): m[a] for a in range(Q)}
        if overlap < 1:
            for a, b in product(range(Q), range(Q)):
                extra = (u[a] - m[a]) * (v[b] - m[b]) / (1 - overlap)
                joint[(a, b)] = joint.get((a, b), Fraction(0)) + extra
        for (a, b), mass in joint.items():
            if mass == 0:
                continue
            x1, y1 = NB[i, x, a], NB[i, y, b]
            weight = mass / N
            expected += weight * int((STATES[x1] != STATES[y1]).sum())
            law_x[x1] = law_x.get(x1, Fraction(0)) + weight
            law_y[y1] = law_y.get(y1, Fraction(0)) + weight
    return expected, [law_x, law_y]


def glauber_row(p, x: int) -> dict[int, Fraction]:
    """``P(x, .)`` exactly: ``(1/N) sum_i p_i(a | x_{-i})`` at ``x^(i->a)``."""
    row: dict[int, Fraction] = {}
    for i, a in product(range(N), range(Q)):
        z = NB[i, x, a]
        row[z] = row.get(z, Fraction(0)) + p[i][x][a] / N
    return row


@given(V=st.lists(st.lists(st.lists(weights, min_size=Q, max_size=Q), min_size=S, max_size=S),
                  min_size=N, max_size=N))
@settings(max_examples=10, deadline=None)
def test_one_step_hamming_matches_the_exact_coupling(V):
    p = site_conditionals(V)
    chain = ExactChain(float_model(p), 1.0)
    D = chain.dense_transition_matrix()
    for x in range(S):
        row = glauber_row(p, x)
        np.testing.assert_allclose(
            D[x], [float(row.get(z, 0)) for z in range(S)], rtol=1e-13, atol=0
        )
    for x, y in product(range(S), range(S)):
        expected, (law_x, law_y) = coupled_expected_hamming(p, x, y)
        assert law_x == {k: v for k, v in glauber_row(p, x).items() if v}  # a coupling of
        assert law_y == {k: v for k, v in glauber_row(p, y).items() if v}  # P(x,.), P(y,.)
        # The library's formula (1/n) sum_i [d_H - 1{x_i != y_i} + TV_i] in float64.
        assert chain.one_step_hamming(x, y) == pytest.approx(float(expected), abs=1e-13)
