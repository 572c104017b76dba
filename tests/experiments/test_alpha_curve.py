"""alpha(tau) curves: closed forms on the Ising cycle, score reuse, thresholds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.estimators.influence import influence
from glauber.experiments.alpha_curve import (
    CachedScores,
    alpha_curve,
    certificate_thresholds,
)
from glauber.toy_models.specs import parse_toy_spec


def test_ising_cycle_alpha_is_tanh_two_beta(tmp_path):
    # Heat-bath Ising on a cycle (degree 2): the influence of a neighbour is tanh(2 beta J)/2
    # (docs/theory.md, `dobrushin`; LPW Theorem 15.1 discussion: the target's one other neighbour
    # cannot cancel), so every row and column sums to tanh(2 J / tau); Corollary 7's Delta_ij = 4 J
    # per neighbour gives the threshold tau > 2 * 4 J / 4 = 2 J.
    res = alpha_curve("ising-cycle:n=5,J=0.5", "0.5,1,3", tmp_path, progress=False)
    assert res["exhaustive"]
    for r in res["rows"]:
        expected = math.tanh(2 * 0.5 / r["tau"])
        for key in ("alpha_row", "alpha_col", "alpha_spectral", "spectral_radius"):
            assert r[key] == pytest.approx(expected, rel=1e-9)
        assert r["exact_tmix"] is not None and r["exact_tmix"] <= r["tmix_matrix_power"]
    assert res["corollary7_tau"] == pytest.approx(1.0)
    assert res["thresholds"] == {"row": 0.5, "col": 0.5, "spectral": 0.5, "matrix_power": 0.5}
    # One score table (n q^(n-1) model rows) serves every temperature of the grid.
    assert res["model_rows"] == 5 * 2 ** 4
    assert (tmp_path / "alpha_curve.png").exists() and (tmp_path / "alpha_curve.csv").exists()
    # The bracket: exact C, so the proved radius is the exact tanh(2 beta J) up to rounding,
    # below 1 at every tau (no temperature is ruled out), and its t_mix bound holds.
    for r in res["rows"]:
        # above the closed form (the certificate's exhaustive radius is that of an enclosure of
        # C against rounding, a few ulps above the exact one, so it is no oracle here)
        assert r["rho_upper"] >= math.tanh(1 / r["tau"])
        assert r["rho_upper"] == pytest.approx(math.tanh(1 / r["tau"]), rel=1e-9)
        assert r["exact_tmix"] <= r["tmix_upper"]
    b = res["bracket"]
    assert b["tau_no_cert"] is None and b["lower_method"] == "exact (table)"
    assert b["tau_cert"] is not None and b["upper_C"] is not None


def test_thresholds_need_every_larger_tau():
    rows = [{"tau": t, "alpha_row": a, "alpha_col": 2.0, "alpha_spectral": 0.5,
             "spectral_radius": "inf"}
            for t, a in [(0.5, 0.9), (1.0, 1.2), (2.0, 0.8), (4.0, 0.4)]]
    th = certificate_thresholds(rows)
    assert th == {"row": 2.0, "col": None, "spectral": 0.5, "matrix_power": None}


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6), taus=st.lists(st.floats(0.2, 5.0), min_size=2, max_size=3))
def test_cached_scores_change_nothing(seed, taus):
    model = parse_toy_spec(f"asym-ising:n=4,seed={seed % 50}")
    cached = CachedScores(model)
    ctx = np.random.default_rng(seed).integers(2, size=(3, 4))
    for tau in taus:
        a = influence(cached, tau, contexts=ctx, seed=seed)
        b = influence(model, tau, contexts=ctx, seed=seed)
        np.testing.assert_array_equal(a.C, b.C)
    assert cached.hits > 0


def test_model_rows_count_the_search_as_well_as_the_sampling(tmp_path):
    # A chain too large to enumerate here (max_states=16 < 2^6): C is sampled on 2 contexts and
    # searched with 100 rows; the model rows reported are both, the search's counted apart.
    res = alpha_curve("ising-cycle:n=6,J=0.5", "1,2", tmp_path, contexts=2, max_states=16,
                      exact=False, progress=False, search_budget=100)
    assert not res["exhaustive"]
    searched = sum(r["search_queries"] for r in res["rows"])
    assert 0 < searched <= 100 and res["search_rows"] == searched
    assert res["model_rows"] > searched  # the sampled contexts' rows come on top
