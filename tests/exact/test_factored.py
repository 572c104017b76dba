"""Tests of worst-start distances and mixing times through the factor ``M = B A`` of a Glauber
kernel (glauber.exact.factored).

Oracles: the dense transition matrix's powers row by row (brute force, an independent
computation of ``d(t) = max_x ||P^t(x, .) - pi||_TV``, LPW 2nd ed. Section 4.4), the repeated
squaring and the point-mass stepping of :mod:`glauber.exact.mixing` (independent algorithms
for ``t_mix``), exact rational arithmetic on a tiny chain, and the closed form of independent
sites.
"""

from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings

from glauber.errors import ConvergenceError, InvalidParameterError, StateSpaceTooLargeError
from glauber.exact import ExactChain
from glauber.exact.factored import FactoredGlauber, factorable
from glauber.exact.mixing import distance_curve, mixing_time
from glauber.exact.stepping import GlauberKernel
from glauber.testing import epsilons, models, temperatures
from glauber.toy_models import RandomTableModel

from ._support import exact_stationary


def dense_distances(chain: ExactChain, ts: list[int]) -> list[float]:
    """``d(t)`` from dense powers of ``P``, every row (brute force)."""
    P, pi = chain.dense_transition_matrix(), chain.stationary()
    return [0.5 * float(np.abs(np.linalg.matrix_power(P, t) - pi).sum(1).max()) for t in ts]


@given(model=models(max_states=400, min_sites=2), tau=temperatures(0.1, 10.0))
@settings(max_examples=40, deadline=None)
def test_factored_distances_equal_dense_powers(model, tau: float) -> None:
    chain = ExactChain(model, tau)
    ts = [0, 1, 2, 3, 5, 8, 21]
    np.testing.assert_allclose(chain.distance_curve(ts, method="factored"),
                               dense_distances(chain, ts), rtol=0, atol=1e-12)


@given(model=models(max_states=400, min_sites=2), tau=temperatures(0.1, 10.0), eps=epsilons())
@settings(max_examples=40, deadline=None)
def test_factored_mixing_time_equals_squaring_and_stepping(model, tau: float, eps: float) -> None:
    chain = ExactChain(model, tau)
    try:
        squaring = chain.mixing_time(eps, method="squaring")
    except ConvergenceError:  # numerically reducible (d(2^62) > eps): the oracle has no answer
        assume(False)
    ts = sorted({max(squaring - 1, 0), squaring})
    # no float ties at the crossing: the two algorithms may round d(t) = eps differently there
    assume(all(abs(d - eps) > 1e-9 for d in chain.distance_curve(ts, method="squaring")))
    assert chain.mixing_time(eps, method="factored") == squaring
    if squaring <= 200:  # stepping every start is slow beyond (it is checked against squaring
        assert chain.mixing_time(eps, method="stepping") == squaring  # in test_stepping)


def test_rational_two_site_chain() -> None:
    # Two sites over three tokens, conditionals with small rational entries: P built, solved
    # and powered in exact fractions; d(t) and t_mix(eps) against the factored floats.
    rng = np.random.default_rng(7)
    W = rng.integers(1, 6, size=(2, 3, 3))  # W[s, other site's token, new token]
    x0, x1 = np.divmod(np.arange(9), 3)
    weights = np.stack([W[0][x1], W[1][x0]])  # p_s(. | x_{-s}): a function of x_{-s} only
    kernel = GlauberKernel(weights / weights.sum(axis=2, keepdims=True))
    P = [[Fraction(0)] * 9 for _ in range(9)]
    for x in range(9):
        a, b = divmod(x, 3)
        for c in range(3):  # site 0 redrawn, or site 1, each with probability 1/2
            P[x][c * 3 + b] += Fraction(int(weights[0, x, c]), 2 * int(weights[0, x].sum()))
            P[x][a * 3 + c] += Fraction(int(weights[1, x, c]), 2 * int(weights[1, x].sum()))
    pi = exact_stationary(P)
    power = [[Fraction(int(r == c)) for c in range(9)] for r in range(9)]
    exact = []
    for _ in range(12):
        exact.append(max(sum(abs(v - p) for v, p in zip(row, pi)) / 2 for row in power))
        power = [[sum(power[r][k] * P[k][c] for k in range(9)) for c in range(9)]
                 for r in range(9)]
    pif = np.array([float(v) for v in pi])
    got = distance_curve(kernel, pif, range(12), method="factored")
    np.testing.assert_allclose(got, [float(v) for v in exact], rtol=0, atol=1e-14)
    for eps in (0.3, 0.1, 0.01):
        expected = next(t for t, d in enumerate(exact) if d <= Fraction(eps))
        assert mixing_time(kernel, pif, eps, method="factored") == expected


@pytest.mark.parametrize("n,q,p", [(2, 5, 0.0), (3, 7, 0.3), (2, 9, 0.9)])
def test_independent_sites_closed_form(n: int, q: int, p: float) -> None:
    # Every site redrawn from one law nu whatever the others are: after t random-scan steps
    # the sites picked so far follow nu and the others still hold x. The set U of picked sites
    # has probability sum_j (-1)^(|U| - j) C(|U|, j) (j / n)^t (inclusion-exclusion over the
    # sites of U never picked), so P^t(x, .) = sum_U P(U) (nu on U) x (delta_x off U), and
    # d(t) is its largest TV distance to pi = nu^n over every start x.
    nu = np.full(q, 1.0 / q) if p == 0 else np.r_[p, np.full(q - 1, (1 - p) / (q - 1))]
    kernel = GlauberKernel(np.broadcast_to(nu, (n, q**n, q)).copy())
    pi = functools.reduce(np.kron, [nu] * n)
    ts = list(range(12))
    expected = []
    for t in ts:
        worst = 0.0
        for x in itertools.product(range(q), repeat=n):
            law = np.zeros(q**n)
            for U in itertools.product([0, 1], repeat=n):
                k = sum(U)
                prob = sum((-1) ** (k - j) * math.comb(k, j) * (j / n) ** t for j in range(k + 1))
                law += prob * functools.reduce(
                    np.kron, [nu if U[s] else np.eye(q)[x[s]] for s in range(n)])
            worst = max(worst, 0.5 * float(np.abs(law - pi).sum()))
        expected.append(worst)
    got = distance_curve(kernel, pi, ts, method="factored")
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-13)


def test_metastable_window_mixing_time_beyond_any_step_cap() -> None:
    # A low-temperature random table: t_mix in the thousands, reached by squaring the factor;
    # the dense squaring of P agrees, and stepping with a small cap refuses.
    chain = ExactChain(RandomTableModel(2, 9, rng=4, scale=2.0), 0.1)
    assert chain.factored
    t = chain.mixing_time(0.25)
    assert t > 1000
    assert t == chain.mixing_time(0.25, method="squaring")


def test_auto_uses_the_factor_only_where_it_pays() -> None:
    assert factorable(3, 20) and factorable(2, 4)
    assert not factorable(3, 5) and not factorable(10, 2)
    assert not factorable(3, 20, max_elements=10**6)


def test_bad_inputs_raise() -> None:
    kernel = GlauberKernel(np.full((2, 16, 4), 0.25))
    with pytest.raises(InvalidParameterError, match="pi must have 16 entries"):
        FactoredGlauber(kernel, np.full(4, 0.25))
    with pytest.raises(InvalidParameterError, match="GlauberKernel"):
        mixing_time(np.eye(2) * 0.5 + 0.25, np.full(2, 0.5), method="factored")
    with pytest.raises(InvalidParameterError, match="numpy"):
        mixing_time(kernel, np.full(16, 1 / 16), method="factored", backend="torch")
    from glauber.exact import factored as module

    small_limit = module.FACTORED_MAX_ELEMENTS
    try:
        module.FACTORED_MAX_ELEMENTS = 10
        with pytest.raises(StateSpaceTooLargeError, match="FACTORED_MAX_ELEMENTS"):
            FactoredGlauber(kernel, np.full(16, 1 / 16))
    finally:
        module.FACTORED_MAX_ELEMENTS = small_limit


@given(model=models(max_states=256), tau=temperatures(0.3, 3.0))
@settings(max_examples=25, deadline=None)
def test_factor_has_the_absolute_gap_of_the_dense_kernel(model, tau) -> None:
    # P = A B and M = B A share their non-zero eigenvalues (P's others are 0): the factor's
    # absolute gap is the dense P's, computed independently by the dense eigensolver.
    from glauber.errors import PrecisionError
    from glauber.exact.factored import factor_matrix
    from glauber.exact.spectral import absolute_spectral_gap

    chain = ExactChain(model, tau)
    assume(chain.algebra == "dense" and model.n >= 2)
    try:
        from_factor = absolute_spectral_gap(factor_matrix(GlauberKernel(chain.site_rows())),
                                            None, reversible=False)
        dense = chain.absolute_spectral_gap()
    except PrecisionError:  # either refuses a gap it cannot resolve to relative accuracy (sound;
        assume(False)  # e.g. Ising n = 5 at tau 0.368, gap 1.4e-10: mpmath only up to 32 states)
    assert from_factor == pytest.approx(dense, rel=1e-6, abs=1e-12)


def test_absolute_gap_above_the_dense_limit_comes_from_the_factor() -> None:
    # 17^3 = 4913 states (sparse algebra, not reversible): before the factor route this was an
    # EstimateOnlyError; the oracle is ARPACK on the sparse P (Arnoldi, to its tolerance).
    import scipy.sparse.linalg as spla

    chain = ExactChain(RandomTableModel(3, 17, rng=3, scale=1.0), 1.0)
    assert chain.algebra == "sparse" and chain.factored and not chain.is_reversible()
    values = spla.eigs(chain.transition_matrix().T.tocsc(), k=6, which="LM", tol=1e-12,
                       return_eigenvectors=False)
    rest = np.delete(values, np.argmin(np.abs(values - 1)))
    assert chain.absolute_spectral_gap() == pytest.approx(1 - np.abs(rest).max(), rel=1e-6)
