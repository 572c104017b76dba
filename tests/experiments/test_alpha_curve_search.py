"""tau_no_cert in the alpha curve: searched and sampled, checked against the exact influence."""

from __future__ import annotations

import json

import pytest

from glauber.errors import InvalidParameterError
from glauber.exact import ExactChain
from glauber.experiments.alpha_curve import alpha_curve
from glauber.theory.contraction import spectral_radius
from glauber.toy_models.specs import parse_toy_spec

SPEC = "ising-complete:n=6,J=0.6"
TAUS = "0.5,1,2,4,8"


def test_exhaustive_toy_reports_the_exact_threshold(tmp_path):
    res = alpha_curve(SPEC, TAUS, tmp_path, progress=False, exact=False, search_budget=100)
    model = parse_toy_spec(SPEC)
    exact = [t for t in (0.5, 1, 2, 4, 8)
             if spectral_radius(ExactChain(model, t).influence_matrix()) >= 1.0]
    assert exact, "the fixture must cross rho = 1 on the grid"
    th = res["tau_no_cert"]
    assert th["exact"] == th["search"] == max(exact)  # the search ran on the exact table
    assert "sampled" not in th  # nothing was sampled: C was enumerated


def test_sampled_toy_thresholds_are_rigorous(tmp_path):
    # max_states=1 forces sampling and search (a third of the 6 x 2^5 = 192 distinct queries
    # that tabulate the chain): each reported tau must have exact rho >= 1
    res = alpha_curve(SPEC, TAUS, tmp_path, progress=False, exact=False, max_states=1,
                      contexts=2, search_budget=64)
    assert res["search_queries"] <= 64
    assert res["search_fraction"] == res["search_queries"] / 192
    model = parse_toy_spec(SPEC)
    th = res["tau_no_cert"]
    assert th["exact"] is None
    for key in ("sampled", "search"):
        if th[key] is not None:
            assert spectral_radius(ExactChain(model, th[key]).influence_matrix()) >= 1.0
    assert th["search"] is not None
    for row in res["rows"]:
        assert row["search_spectral_radius"] <= spectral_radius(
            ExactChain(model, row["tau"]).influence_matrix()) + 1e-12


def test_a_search_budget_above_the_tabulation_is_capped_there(tmp_path):
    # 192 distinct queries tabulate the chain, and with them the exact threshold is known: a
    # larger budget is capped at 192 (as certify caps it), the config says so, and the search
    # asks at most that many, the fraction reported against the 192
    res = alpha_curve(SPEC, TAUS, tmp_path / "out", progress=False, exact=False, max_states=1,
                      contexts=2, search_budget=193)
    config = json.loads((tmp_path / "out" / "alpha_curve.json").read_text())["config"]
    assert config["search_budget"] == 192
    assert 0 < res["search_queries"] <= 192
    assert res["search_fraction"] == res["search_queries"] / 192


def test_a_search_budget_of_zero_or_less_is_refused(tmp_path):
    # 0 means no search; a negative budget is a typed error naming the option
    with pytest.raises(InvalidParameterError, match=r"--search-budget must be an integer >= 1"):
        alpha_curve(SPEC, TAUS, tmp_path / "out", progress=False, exact=False,
                    search_budget=-1)
    assert not (tmp_path / "out").exists()
