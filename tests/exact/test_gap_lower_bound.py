"""The proved gap bound of corrected Theorem 5 (glauber.theory.gap_bound.absolute_gap_lower_bound,
ExactChain.absolute_gap_lower_bound): every eigenvalue lambda != 1 of the random-scan kernel has
|lambda| <= 1 - (1 - rho(C))/n, reversible or not (docs/theory.md, "A proved gap bound for
non-reversible chains").

Oracles: the product-measure closed form (absolute gap exactly 1/n), numpy's eigenvalues of the
dense P of random non-reversible chains (complex spectra included), the project's bound checker
over random toy models and temperatures, and the matrix-free chain against the sparse one.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError
from glauber.exact import sparse
from glauber.exact.chain import ExactChain
from glauber.exact.window_chain import WindowChain
from glauber.testing import check_bound, exact, models
from glauber.theory.contraction import spectral_radius
from glauber.theory.gap_bound import absolute_gap_lower_bound
from glauber.toy_models import FunctionModel

from ..support import table_model


def _largest_other_modulus(P: np.ndarray) -> float:
    """max |lambda| over the eigenvalues of P but the one closest to 1 (numpy, dense)."""
    values = np.linalg.eigvals(P)
    keep = np.ones(len(values), dtype=bool)
    keep[np.argmin(np.abs(values - 1.0))] = False
    return float(np.abs(values[keep]).max())


@pytest.mark.parametrize("n, q", [(2, 3), (3, 2), (4, 3)])
def test_independent_sites_meet_the_bound_exactly(n, q) -> None:
    # a product measure: P = (1/n) sum_i Pi_i with commuting projections, eigenvalues 1 - |A|/n
    # over subsets A of the sites, so the absolute gap is exactly 1/n; C = 0 gives 1/n too
    bias = np.random.default_rng(n * q).standard_normal((n, q))
    model = FunctionModel(n, q, lambda x, i: np.tile(bias[i], (len(x), 1)))
    chain = ExactChain(model, 0.7)
    bound = chain.absolute_gap_lower_bound()
    assert 1 / n - 1e-12 <= bound <= 1 / n  # C = 0 enclosed against its rounding
    assert 1.0 - _largest_other_modulus(chain.dense_transition_matrix()) == pytest.approx(1 / n)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 4), q=st.integers(2, 4), seed=st.integers(0, 10**6),
       scale=st.floats(0.0, 2.0), tau=st.floats(0.3, 4.0))
def test_no_eigenvalue_of_a_non_reversible_chain_escapes_the_bound(n, q, seed, scale, tau):
    chain = ExactChain(table_model(n, q, seed, scale=scale), tau)
    P = chain.dense_transition_matrix()
    bound = chain.absolute_gap_lower_bound()
    assert 1.0 - _largest_other_modulus(P) >= bound - 1e-12  # numpy's eigenvalue rounding
    rho = spectral_radius(chain.influence_matrix())
    assert (bound > 0) == (rho < 1 - 1e-9) or abs(rho - 1) < 1e-6


def test_the_bound_holds_on_random_toys_and_temperatures() -> None:
    report = check_bound(lambda m, tau: exact(m, tau).absolute_gap_lower_bound(),
                         lambda m, tau: exact(m, tau).absolute_spectral_gap(), kind="lower",
                         models=models(max_states=81), max_examples=60, seed=3)
    assert report.holds, str(report)
    assert report.evaluated >= 40 and 0.0 < report.median_tightness <= 1.0


def test_complex_spectra_are_covered() -> None:
    # random scores at a high temperature: incompatible conditionals, a non-reversible
    # chain with non-real eigenvalues, and a certificate (rho(C) < 1)
    for seed in range(40):
        chain = ExactChain(table_model(3, 3, seed, scale=1.0), 4.0)
        values = np.linalg.eigvals(chain.dense_transition_matrix())
        if np.abs(values.imag).max() > 1e-6 and chain.absolute_gap_lower_bound() > 0:
            break
    else:
        pytest.fail("no non-real spectrum with a certificate among 40 seeds")
    assert not chain.is_reversible()
    assert 1.0 - _largest_other_modulus(chain.dense_transition_matrix()) >= (
        chain.absolute_gap_lower_bound())


def test_the_matrix_free_chain_gives_the_sparse_chains_bound(monkeypatch) -> None:
    model = table_model(3, 4, 7, scale=0.3)
    reference = ExactChain(model, 1.0)
    monkeypatch.setattr(sparse, "SPARSE_MAX_STATES", 32)
    chain = ExactChain(model, 1.0)
    assert isinstance(chain, WindowChain)
    assert chain.absolute_gap_lower_bound() == reference.absolute_gap_lower_bound() > 0
    assert reference.absolute_spectral_gap() >= chain.absolute_gap_lower_bound()


def test_rounding_enclosure_and_refusals() -> None:
    C = np.array([[0.0, 0.4], [0.4, 0.0]])
    assert absolute_gap_lower_bound(C, 0.1) < absolute_gap_lower_bound(C) <= 0.3
    assert 0.5 - 1e-9 < absolute_gap_lower_bound(np.array([[0.0, 1.0], [0.0, 0.0]])) <= 0.5
    assert absolute_gap_lower_bound([[0.0, 1.0], [1.0, 0.0]]) == 0.0
    with pytest.raises(InvalidParameterError):
        absolute_gap_lower_bound([[0.0, -0.1], [0.0, 0.0]])
    with pytest.raises(InvalidParameterError):
        absolute_gap_lower_bound(C, -1.0)
    with pytest.raises(InvalidParameterError, match="kernel='random'"):
        ExactChain(table_model(2, 2, 0), 1.0, kernel="sweep").absolute_gap_lower_bound()
    assert 1 - 1e-15 < absolute_gap_lower_bound(np.zeros((1, 1))) <= 1  # one site: P(x, .) = pi
