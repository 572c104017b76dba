"""Proposition 4 (the rectangle test) on exact toy chains: true as printed.

Every rectangle ``(x, i, j, A', B')`` of a chain is enumerated and its ``delta`` computed by
:func:`glauber.theory.rectangle.rectangle_delta` from the chain's exact log-conditionals.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.core.conditionals import log_conditionals
from glauber.core.enumeration import all_states, neighbour_indices
from glauber.exact.chain import ExactChain
from glauber.testing import models
from glauber.theory import rectangle_delta

from ._support import ASYM_ISING, GIBBS, TEMPERATURES


def all_rectangle_deltas(model, tau: float) -> dict[tuple[int, int], np.ndarray]:
    """``delta`` of every rectangle, keyed by the site pair ``(i, j)``, ``i < j``.

    Each value has shape ``[q**n, q, q]``: start state ``x`` and replacements ``A'`` (at ``i``)
    and ``B'`` (at ``j``); rectangles with ``A' = x_i`` or ``B' = x_j`` are degenerate (0).
    """
    n, q = model.n, model.q
    states = all_states(n, q)
    S = states.shape[0]
    lp = np.stack(
        [np.asarray(log_conditionals(model, states, np.full(S, i), tau)) for i in range(n)]
    )  # [n, S, q]
    nb = neighbour_indices(n, q)  # nb[i, x, a] = index of x with site i set to a
    x = np.arange(S)[:, None, None]
    a_new = np.arange(q)[None, :, None]
    b_new = np.arange(q)[None, None, :]
    out = {}
    shape = (S, q, q)
    idx_x = np.broadcast_to(x, shape)
    current = np.broadcast_to(states[:, None, None, :], shape + (n,))
    for i in range(n):
        idx_y = np.broadcast_to(nb[i][x, a_new], shape)  # [S, q(A'), q]
        for j in range(i + 1, n):
            idx_w = np.broadcast_to(nb[j][x, b_new], shape)  # [S, q, q(B')]
            out[(i, j)] = rectangle_delta(
                lp[i][idx_x],  # x -> y at site i
                lp[j][idx_y],  # y -> z at site j
                lp[j][idx_x],  # x -> w at site j
                lp[i][idx_w],  # w -> z at site i
                current[..., i],
                np.broadcast_to(a_new, shape),
                current[..., j],
                np.broadcast_to(b_new, shape),
            )
    return out


@given(model=models(families=GIBBS), tau=TEMPERATURES)
@settings(max_examples=20, deadline=None)
def test_proposition4_gibbs_rectangles_all_vanish(model, tau):
    # Compatible => every edge log-ratio is log pi(target)/pi(source): both paths telescope.
    deltas = all_rectangle_deltas(model, tau)
    worst = max(float(np.abs(d).max()) for d in deltas.values()) if deltas else 0.0
    assert worst <= 1e-10 * max(1.0, 1.0 / tau)


@given(model=models(families=ASYM_ISING), tau=TEMPERATURES)
@settings(max_examples=20, deadline=None)
def test_proposition4_asymmetric_ising_closed_form(model, tau):
    # Flipping both spins: delta = 4 s_i s_j (J_ji - J_ij) / tau (docs/theory.md, `prop4`, derived
    # in glauber.theory.rectangle from the four edge log-ratios), whatever the field and the rest.
    J = model.J
    states = all_states(model.n, 2)
    s = 2 * states - 1
    for (i, j), d in all_rectangle_deltas(model, tau).items():
        flips = d[np.arange(len(states)), 1 - states[:, i], 1 - states[:, j]]
        expected = 4.0 * s[:, i] * s[:, j] * (J[j, i] - J[i, j]) / tau
        np.testing.assert_allclose(flips, expected, rtol=1e-9, atol=1e-10)
        # Replacing a token by itself is a degenerate rectangle with delta 0.
        assert np.abs(d[np.arange(len(states)), states[:, i], :]).max() <= 1e-10
    # Hence the largest |delta| at tau = 1 is 4 max |J_ij - J_ji|: zero iff J is symmetric.
    largest = max((np.abs(d).max() for d in all_rectangle_deltas(model, 1.0).values()), default=0.0)
    assert largest == pytest.approx(4.0 * np.abs(J - J.T).max(), abs=1e-10)


@given(model=models(), tau=TEMPERATURES)
@settings(max_examples=20, deadline=None)
def test_proposition4_delta_scales_as_one_over_tau(model, tau):
    at_one = all_rectangle_deltas(model, 1.0)
    at_tau = all_rectangle_deltas(model, tau)
    for key, d1 in at_one.items():
        np.testing.assert_allclose(at_tau[key], d1 / tau, rtol=1e-9, atol=1e-10)


@given(data=st.data())
@settings(max_examples=10, deadline=None)
def test_kolmogorov_cycle_products_equal_exp_delta(data):
    # The rectangle's delta is the log of the Kolmogorov ratio of the 4-cycle x -> y -> z -> w:
    # P(x,y)P(y,z)P(z,w)P(w,x) / (P(x,w)P(w,z)P(z,y)P(y,x)) = exp(delta), since
    # P(x,y)/P(y,x) = p(A'|x_{-i}) / p(A|x_{-i}). Checked against the exact transition matrix.
    model = data.draw(models())
    tau = data.draw(TEMPERATURES)
    D = ExactChain(model, tau).dense_transition_matrix()
    nb = neighbour_indices(model.n, model.q)
    states = all_states(model.n, model.q)
    for (i, j), d in all_rectangle_deltas(model, tau).items():
        x = data.draw(st.integers(0, len(states) - 1))
        a = data.draw(st.integers(0, model.q - 1).filter(lambda v: v != states[x, i]))
        b = data.draw(st.integers(0, model.q - 1).filter(lambda v: v != states[x, j]))
        y, w = nb[i, x, a], nb[j, x, b]
        z = nb[j, y, b]
        log_ratio = (
            np.log(D[x, y]) + np.log(D[y, z]) + np.log(D[z, w]) + np.log(D[w, x])
            - np.log(D[x, w]) - np.log(D[w, z]) - np.log(D[z, y]) - np.log(D[y, x])
        )
        assert abs(log_ratio - d[x, a, b]) <= 1e-8 * max(1.0, abs(log_ratio))
