"""Rigorous claims of ``certify`` survive floating point: the reproducers of issue 19.

Oracles are closed forms evaluated in mpmath at 60 digits:

* the Ising path of 3 spins (LPW 2nd ed., Section 15.2): the middle spin sees two neighbours,
  each moving its field by ``2 J``, so ``alpha_row = tanh(2 J / tau)`` and Lemma 6's
  ``Delta = 4 J`` per neighbour;
* the *copy* chain: two sites over ``{0, 1}``, each scoring ``J`` for the other's token. Its
  conditional is ``sigmoid(+-J / tau)``, so ``c = tanh(J / (2 tau))`` (Definition 2) and
  ``Delta = 2 J``; ``M = I / 2 + C / 2`` has the eigenvector ``1`` with eigenvalue
  ``(1 + c) / 2``, so ``1^T M^t 1 = 2 ((1 + c) / 2)^t`` and the least ``t`` with
  ``1^T M^t 1 <= eps`` is ``ceil(log(2 / eps) / -log((1 + c) / 2))`` (docs/theory.md,
  `thm5-corrected`).
"""

from __future__ import annotations

import mpmath
import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.certify import certify
from glauber.estimators import influence
from glauber.toy_models import FunctionModel, IsingModel

MP = mpmath.mp.clone()
MP.dps = 60


def copy_model(J: float) -> FunctionModel:
    """Two sites over {0, 1}; each scores ``J`` for the token the other site holds."""

    def score(x, i):
        out = np.zeros((len(x), 2))
        out[np.arange(len(x)), x[:, 1 - i]] = J
        return out

    return FunctionModel(2, 2, score, name=f"copy(J={J:g})")


def copy_minimum(J: float, tau: float, eps: float = 0.25) -> int:
    """The least ``t`` with ``1^T M^t 1 <= eps`` for the copy chain's exact ``C``."""
    c = MP.tanh(MP.mpf(J) / (2 * MP.mpf(tau)))
    return int(MP.ceil(MP.log(2 / MP.mpf(eps)) / -MP.log((1 + c) / 2)))


def test_corollary7_is_not_below_the_exact_alpha_at_a_huge_temperature():
    # Delta was read off log-probabilities near -log 2: (max - min)(lp - ref) * tau dropped
    # about ulp(log 2) * tau = 3e-10 of Delta = 4, and the stated alpha_row bound
    # 6.666666666488297e-07 fell below the exact tanh(2 / 3e6) = 6.666666666665679e-07.
    cert = certify(IsingModel(nx.path_graph(3), coupling=1.0), 3e6, n_pairs=0)
    claim = cert.claim("cor7")
    assert claim.rigorous
    assert MP.mpf(claim.bound) >= MP.tanh(2 / MP.mpf(3e6))
    np.testing.assert_allclose(cert.influence.Delta[1, [0, 2]], 4.0, rtol=1e-15)


def test_corollary7_on_scores_of_1e_17_is_not_zero():
    # Scores of 1e-17 vanish against log 2 in a log-probability: the oscillation read off
    # log-probabilities was 0 and the claim said "alpha_row <= 0". Read off the scores it is
    # 2e-17, and alpha_row = tanh(5e-18) > 0 lies below the bound.
    cert = certify(copy_model(1e-17), 1.0, n_pairs=0, n_rectangles=4)
    claim = cert.claim("cor7")
    assert claim.rigorous and claim.bound > 0
    assert MP.mpf(claim.bound) >= MP.tanh(MP.mpf(1e-17) / 2)
    assert "<= 0 " not in claim.certifies


def test_matrix_power_certificate_is_not_below_the_exact_c_minimum():
    # rho(C) = 1 - 1e-9: the float64 C = 0.9999999989999999 lies 6e-17 below the exact c, which
    # moves t by 5e-8 relative; the certificate proved 1^T M^t 1 <= eps for the float C only and
    # stated t = 4,158,882,739 < 4,158,883,083, the exact-C minimum. With C enclosed against
    # the rounding of its TVs the stated t is never below it.
    tau = 0.04669316001731567
    cert = certify(copy_model(1.0), tau, n_pairs=0, n_rectangles=4)
    claim = cert.claim("thm5-corrected")
    exact_min = copy_minimum(1.0, tau)
    assert exact_min == 4_158_883_083
    assert claim.rigorous and claim.bound >= exact_min
    assert claim.bound <= exact_min * (1 + 1e-4)  # the enclosure costs little
    assert cert.exact.contraction.tmix_matrix_power >= exact_min


@settings(max_examples=25, deadline=None)
@given(log_gap=st.floats(-11.0, -7.0), J=st.floats(0.1, 10.0))
def test_near_critical_certificates_never_undercut_the_exact_c(log_gap, J):
    # c = 1 - 10^log_gap exactly in mpmath: tau = J / (2 atanh(c)), rounded to a float.
    tau = float(MP.mpf(J) / (2 * MP.atanh(1 - MP.mpf(10) ** log_gap)))
    res = influence(copy_model(J), tau, exhaustive=True)
    assert res.contraction.best_bound >= copy_minimum(J, tau)
    assert res.oscillation_contraction.best_bound >= copy_minimum(J, tau)


def test_an_enumerated_radius_within_rounding_of_one_proves_nothing():
    # c = tanh(50) = 1 - 4e-44 rounds to 1.0: the float C has rho = 1 and the claim said,
    # marked rigorous, "the exact spectral radius of C is 1 >= 1", while the exact one is below
    # 1 (a certificate exists, with t ~ 1e44). Only a rounding-safe rho_lower >= 1 proves that.
    cert = certify(copy_model(1.0), 0.01, n_pairs=0, n_rectangles=4)
    assert float(MP.tanh(MP.mpf(50))) == 1.0 and MP.tanh(MP.mpf(50)) < 1
    claim = cert.claim("thm5-corrected")
    assert not claim.hypothesis_held and not cert.influence.no_certificate
    assert not claim.rigorous and "within rounding of 1" in claim.certifies


def test_the_tolerance_of_enumerated_tvs_covers_their_rounding():
    # Scores near 1e9 at tau = 1: s / tau is rounded to ~1e-7, far above the fixed float64
    # witness tolerance of 1e-9 that rho_lower subtracted.
    def score(x, i):
        out = np.full((len(x), 2), 1e9)
        out[np.arange(len(x)), x[:, 1 - i]] += 1.0
        return out

    res = influence(FunctionModel(2, 2, score), 1.0, exhaustive=True)
    assert res.rounding > 1e-8 and res.tolerance >= res.rounding
    assert abs(res.C[0, 1] - float(MP.tanh(MP.mpf(0.5)))) <= res.rounding
