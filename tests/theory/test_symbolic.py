"""Tests of the sympy derivations (glauber.theory.symbolic)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import sympy as sp

from glauber.errors import StateSpaceTooLargeError, VocabularyError
from glauber.theory import symbolic
from glauber.theory.rectangle import asymmetric_ising_rectangle_delta


def test_lemma6_constant_is_one_quarter() -> None:
    assert symbolic.lemma6_constant() == sp.Rational(1, 4)


def test_lemma6_slope_is_sigmoid_derivative() -> None:
    slope, w = symbolic.lemma6_slope()
    assert sp.simplify(slope - sp.diff(1 / (1 + sp.exp(-w)), w)) == 0


def test_symmetric_two_point_law_is_the_maximiser_with_tanh_value() -> None:
    critical, theta = symbolic.two_point_tv_critical_points()
    assert len(critical) == 1 and sp.simplify(critical[0] + theta / 2) == 0
    tv, theta = symbolic.symmetric_two_point_tv()
    assert sp.simplify((tv - sp.tanh(theta / 4)).rewrite(sp.exp)) == 0
    # and the numbers agree with a direct two-point computation
    for value in (0.1, 1.0, 7.0):
        p = 1 / (1 + np.exp(-value / 2))
        assert float(tv.subs(theta, value)) == pytest.approx(p - (1 - p))


def test_asymmetric_ising_rectangle_from_symbolic_conditionals() -> None:
    delta, s = symbolic.asymmetric_ising_rectangle_delta_symbolic()
    expected = 4 * s["A"] * s["B"] * (s["J_ji"] - s["J_ij"]) / s["tau"]
    assert sp.simplify(delta - expected) == 0
    assert s["g_i"] not in delta.free_symbols and s["g_j"] not in delta.free_symbols
    for a, b in itertools.product((-1, 1), repeat=2):
        spins = delta.subs({s["A"]: a, s["B"]: b})
        assert sp.simplify(sp.Abs(spins) - 4 * sp.Abs(s["J_ij"] - s["J_ji"]) / s["tau"]) == 0
        # cross-check with the numeric closed form
        J = np.array([[0.0, 0.3], [-1.1, 0.0]])
        value = spins.subs({s["J_ij"]: 0.3, s["J_ji"]: -1.1, s["tau"]: 0.7})
        assert float(value) == pytest.approx(asymmetric_ising_rectangle_delta(J, 0, 1, 0.7, a, b))


@pytest.mark.parametrize("n, q", [(2, 2), (3, 2), (2, 3)])
def test_gibbs_conditionals_give_detailed_balance_and_stationarity(n: int, q: int) -> None:
    assert symbolic.detailed_balance_residual(n, q).is_zero_matrix
    assert symbolic.stationarity_residual(n, q).is_zero_matrix


def test_symbolic_kernel_matches_numeric_gibbs_sampler_and_check_can_fail() -> None:
    n, q = 2, 3
    P, pi, energies, tau = symbolic.gibbs_glauber_kernel_symbolic(n, q)
    rng = np.random.default_rng(0)
    values = {e: float(v) for e, v in zip(energies, rng.normal(size=len(energies)))}
    values[tau] = 0.8
    Pn = np.array(P.subs(values).evalf(), dtype=float)
    En = np.array([values[e] for e in energies])
    np.testing.assert_allclose(Pn.sum(axis=1), 1.0)
    # numeric reference: pick a site, resample from exp(-E/tau) restricted to the site's line
    ref = np.zeros((q**n, q**n))
    for x in range(q**n):
        digits = [x // q, x % q]
        for i in range(n):
            line = []
            for a in range(q):
                d = list(digits)
                d[i] = a
                line.append(d[0] * q + d[1])
            w = np.exp(-En[line] / 0.8)
            ref[x, line] += w / w.sum() / n
    np.testing.assert_allclose(Pn, ref, atol=1e-12)
    # Detailed balance fails for a wrong law (uniform), so the zero residual is informative.
    wrong = sp.diag(*([sp.Rational(1, q**n)] * q**n)) * P
    assert not (wrong - wrong.T).subs(values).evalf().is_zero_matrix


def test_limits() -> None:
    with pytest.raises(StateSpaceTooLargeError):
        symbolic.gibbs_glauber_kernel_symbolic(4, 3)
    with pytest.raises(VocabularyError):
        symbolic.gibbs_glauber_kernel_symbolic(2, 1)
