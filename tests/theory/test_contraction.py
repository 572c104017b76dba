"""Tests of the corrected Theorem 5 certificates (glauber.theory.contraction)."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError, InvalidProbabilityError
from glauber.testing import epsilons, influence_matrices
from glauber.theory import contraction

SETTINGS = settings(max_examples=40, deadline=None)


def _brute_force_curve(C: np.ndarray, t_max: int) -> np.ndarray:
    """f(t) = 1^T M^t 1 for t = 0..t_max by stepping u <- M u (the slow reference)."""
    n = C.shape[0]
    off = C.copy()
    np.fill_diagonal(off, 0.0)
    M = (1 - 1 / n) * np.eye(n) + off / n
    u = np.ones(n)
    out = np.empty(t_max + 1)
    for t in range(t_max + 1):
        out[t] = u.sum()
        u = M @ u
    return out


def _star(n: int, p: float) -> np.ndarray:
    """Hub 0 ignores the leaves; each leaf is influenced by the hub only, by p."""
    C = np.zeros((n, n))
    C[1:, 0] = p
    return C


def test_alphas_on_hand_example_ignore_diagonal() -> None:
    C = np.array([[9.0, 0.5, 0.1], [0.2, 9.0, 0.0], [0.3, 0.3, 9.0]])
    assert contraction.alpha_row(C) == pytest.approx(0.6)  # rows: 0.6, 0.2, 0.6
    assert contraction.alpha_col(C) == pytest.approx(0.8)  # columns: 0.5, 0.8, 0.1
    off = C - np.diag(np.diag(C))
    assert contraction.alpha_spectral(C) == pytest.approx(
        np.sqrt(np.linalg.eigvalsh(off.T @ off).max())
    )
    np.testing.assert_allclose(contraction.contraction_matrix(C), np.eye(3) * (2 / 3) + off / 3)


@SETTINGS
@given(influence_matrices(max_rho=3.0))
def test_spectral_radius_below_every_norm(C: np.ndarray) -> None:
    rho = contraction.spectral_radius(C)
    assert rho <= contraction.alpha_row(C) + 1e-9
    assert rho <= contraction.alpha_col(C) + 1e-9
    assert rho <= contraction.alpha_spectral(C) + 1e-9
    # ||C||_2 <= sqrt(||C||_1 ||C||_inf)
    assert (
        contraction.alpha_spectral(C)
        <= math.sqrt(contraction.alpha_row(C) * contraction.alpha_col(C)) + 1e-9
    )


def test_theorem5_formulas() -> None:
    # n/(1-a) (log n + log 1/eps) = 20 log 40 at n = 10, a = 1/2, eps = 1/4.
    assert contraction.theorem5_tmix_bound(10, 0.5, 0.25) == pytest.approx(20 * math.log(40))
    assert contraction.theorem5_tmix_bound(10, 0.5, 0.25, integer=True) == math.ceil(
        20 * math.log(40)
    )
    assert contraction.theorem5_tmix_bound(10, 1.0, 0.25) == math.inf
    assert contraction.theorem5_tmix_bound(10, 2.5, 0.25) == math.inf
    assert contraction.theorem5_contraction_factor(4, 0.2) == pytest.approx(0.8)


def test_matrix_power_closed_form_for_independent_sites() -> None:
    # C = 0: f(t) = n (1 - 1/n)^t; n = 4, eps = 1/4: 4 (3/4)^t <= 1/4 iff (3/4)^t <= 1/16,
    # t >= log 16 / log(4/3) = 9.64, so t = 10 (9 gives 0.300, 10 gives 0.225).
    assert contraction.matrix_power_certificate(np.zeros((4, 4)), 0.25) == 10
    # n = 1: one step resamples the only site from a fixed law.
    assert contraction.matrix_power_certificate(np.zeros((1, 1)), 0.25) == 1


@pytest.mark.parametrize("gap", [1e-1, 1e-3, 1e-5, 1e-7])
def test_matrix_power_on_circulant_with_constant_row_sums(gap: float) -> None:
    # Symmetric circulant C with row sums r = 1 - gap: 1 is an eigenvector, so
    # f(t) = n (1 - gap/n)^t and t* = ceil(log(n/eps) / -log(1 - gap/n)). At gap = 1e-7 and
    # n = 6 this is t* ~ 2e8: the algorithm uses ~2 log2 t products, not t.
    n, eps = 6, 0.25
    C = np.zeros((n, n))
    for i in range(n):
        C[i, (i + 1) % n] = C[i, (i - 1) % n] = (1 - gap) / 2
    expected = math.log(n / eps) / -math.log1p(-gap / n)
    got = contraction.matrix_power_certificate(C, eps)
    assert abs(got - math.ceil(expected)) <= max(1.0, 1e-7 * expected)
    cert = contraction.certify_contraction(C, eps)
    assert cert.tmix_row >= got - 1e-7 * expected


@SETTINGS
@given(influence_matrices(max_rho=0.9), epsilons())
def test_matrix_power_matches_brute_force_stepping(C: np.ndarray, eps: float) -> None:
    t = contraction.matrix_power_certificate(C, eps)
    assert isinstance(t, int) and t >= 1
    curve = _brute_force_curve(C, t)
    assert curve[t] <= eps * (1 + 1e-9)
    assert np.all(curve[:t] > eps * (1 - 1e-9))


def test_non_monotone_curve_is_scanned_exactly() -> None:
    # Column sums > 1: f rises from 4 to ~5.6 before falling, so bisection alone is unsafe.
    C = np.zeros((4, 4))
    C[1:, 0] = 3.0
    curve = _brute_force_curve(C, 300)
    assert curve[1] > curve[0]
    for eps in (0.9, 0.5, 0.25, 0.1):
        expected = int(np.argmax(curve <= eps))
        assert contraction.matrix_power_certificate(C, eps) == expected
        # Without the scan the value is still a valid certificate.
        assert curve[contraction.matrix_power_certificate(C, eps, scan_budget=1)] <= eps * (
            1 + 1e-9
        )


@SETTINGS
@given(influence_matrices(max_rho=0.95), epsilons())
def test_matrix_power_never_worse_than_norm_bounds(C: np.ndarray, eps: float) -> None:
    t = contraction.matrix_power_certificate(C, eps)
    n = C.shape[0]
    for a in (contraction.alpha_row(C), contraction.alpha_col(C), contraction.alpha_spectral(C)):
        assert t <= contraction.theorem5_tmix_bound(n, a, eps, integer=True)


@SETTINGS
@given(influence_matrices(max_rho=0.9), epsilons(), epsilons())
def test_matrix_power_monotone_in_eps(C: np.ndarray, e1: float, e2: float) -> None:
    lo, hi = sorted((e1, e2))
    assert contraction.matrix_power_certificate(C, lo) >= contraction.matrix_power_certificate(
        C, hi
    )


def test_matrix_power_infinite_without_spectral_contraction() -> None:
    assert (
        contraction.matrix_power_certificate([[0.0, 1.0], [1.0, 0.0]], 0.25) == math.inf
    )  # rho = 1
    assert (
        contraction.matrix_power_certificate([[0.0, 2.0], [1.0, 0.0]], 0.25) == math.inf
    )  # rho > 1
    # Nilpotent but huge: rho = 0 < 1 even though every alpha is 50.
    assert contraction.matrix_power_certificate([[0.0, 50.0], [0.0, 0.0]], 0.25) < math.inf


@SETTINGS
@given(influence_matrices(max_rho=2.0), st.integers(0, 30))
def test_coupling_distance_bound_matches_stepping(C: np.ndarray, t: int) -> None:
    assert contraction.coupling_distance_bound(C, t) == pytest.approx(
        _brute_force_curve(C, t)[t], rel=1e-9
    )


def test_star_counterexample_to_theorem5_as_printed() -> None:
    # Star on n = 3 sites, binary tokens: the hub's conditional ignores the leaves; each leaf
    # equals the hub with probability (1 + p)/2, so the leaf conditionals under the two hub
    # values are at TV p. A pair differing only at the hub, same site + maximal coupling:
    # picking the hub (1/3) makes them agree; picking a leaf (2/3) keeps the hub disagreement
    # and makes the leaf disagree with probability p. Exactly E[d_H] = (2/3)(1 + p).
    p = 0.9
    C = _star(3, p)
    exact = (2 / 3) * (1 + p)
    assert contraction.adjacent_pair_hamming_bound(C, 0) == pytest.approx(exact)
    assert exact > 1.0  # no contraction ...
    assert contraction.alpha_row(C) == pytest.approx(p)  # ... although the printed hypothesis holds
    cert = contraction.certify_contraction(C)
    assert cert.contraction_as_printed_holds and not cert.contraction_corrected_holds
    # The mixing bound itself survives (row sums are a valid certificate).
    assert cert.tmix_row < math.inf and cert.tmix_matrix_power <= cert.tmix_row


def test_certificate_fields_and_serialisation() -> None:
    C = _star(5, 0.6)
    cert = contraction.certify_contraction(C, eps=0.1)
    assert cert.n == 5 and cert.eps == 0.1
    finite = {
        "row": cert.tmix_row,
        "col": cert.tmix_col,
        "spectral": cert.tmix_spectral,
        "matrix_power": cert.tmix_matrix_power,
    }
    assert set(finite) == set(contraction.CERTIFICATE_NAMES)
    assert cert.best_bound == min(finite.values())
    assert finite[cert.best] == cert.best_bound
    assert cert.tmix_col == math.inf  # column sum 2.4 >= 1
    assert "Infinity" in json.dumps(cert.to_dict())  # not strict JSON ...
    text = json.dumps(cert.to_dict(json_safe=True), allow_nan=False)  # ... this is
    assert json.loads(text)["tmix_col"] == "inf"
    with pytest.raises(dataclasses.FrozenInstanceError):
        cert.best = "row"  # type: ignore[misc]


def test_certificate_with_no_valid_bound() -> None:
    cert = contraction.certify_contraction([[0.0, 1.0], [1.0, 0.0]])
    assert cert.best == "none" and cert.best_bound == math.inf


def test_errors() -> None:
    with pytest.raises(InvalidParameterError):
        contraction.alpha_row(np.ones((2, 3)))
    with pytest.raises(InvalidParameterError):
        contraction.alpha_col([[0.0, -0.1], [0.0, 0.0]])
    with pytest.raises(InvalidParameterError):
        contraction.spectral_radius([[0.0, math.nan], [0.0, 0.0]])
    with pytest.raises(InvalidParameterError):
        contraction.theorem5_tmix_bound(0, 0.5)
    with pytest.raises(InvalidParameterError):
        contraction.theorem5_contraction_factor(3, -0.1)
    with pytest.raises(InvalidParameterError):
        contraction.coupling_distance_bound(np.zeros((2, 2)), -1)
    with pytest.raises(InvalidParameterError):
        contraction.adjacent_pair_hamming_bound(np.zeros((2, 2)), 2)
    for eps in (0.0, 1.0, -0.5, math.nan):
        with pytest.raises(InvalidProbabilityError):
            contraction.matrix_power_certificate(np.zeros((2, 2)), eps)
        with pytest.raises(InvalidProbabilityError):
            contraction.certify_contraction(np.zeros((2, 2)), eps)
