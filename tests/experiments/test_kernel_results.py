"""The kernels section of docs/results.md: its data (one KernelSummary per kernel and
temperature, from one score table) and its rendering.

Oracles: the exact chain of the same kernel and temperature built independently
(``ExactChain(model, tau, kernel=...)``), the Metropolis-Hastings law's distance to its own
target (0 to rounding), and the block markers (splicing twice gives the same page).
"""

from __future__ import annotations

import json

import pytest

from glauber.exact.chain import ExactChain
from glauber.experiments import kernel_results
from glauber.toy_models.specs import parse_toy_spec

TOY = "potts-cycle:n=3,q=3,J=1.0"


def test_exact_item_matches_the_exact_chains() -> None:
    item = kernel_results.exact_item(TOY, kernels=("random", "sweep", "mh:pll"), taus=(0.7, 2.0),
                                     log=lambda _: None)
    assert item["kind"] == "toy" and item["states"] == 27 and len(item["rows"]) == 6
    model = parse_toy_spec(TOY)
    for row in item["rows"]:
        chain = ExactChain(model, row["tau"], kernel=row["kernel"])
        assert row["tmix"] == chain.mixing_time()
        assert row["mode_mass"] == pytest.approx(float(chain.stationary().max()), rel=1e-12)
        if row["kernel"] == "mh:pll":
            assert row["tv_to_pll_target"] < 1e-12 and 0 < row["acceptance"] <= 1
        if row["kernel"] == "sweep":  # a compatible model: every scan keeps the Gibbs law
            assert row["tv_to_random_scan"] < 1e-12


def test_section_is_rendered_from_the_json_and_registered(tmp_path) -> None:
    from glauber.experiments.results import section

    item = kernel_results.exact_item(TOY, kernels=("random", "mh:logits"), taus=(1.0,),
                                     log=lambda _: None)
    folder = tmp_path / "kernels"
    folder.mkdir()
    (folder / "exact.json").write_text(json.dumps({"items": [item]}))
    text = kernel_results.render(folder)
    assert text.startswith(f"```\n{kernel_results.COMMAND}\n```")
    assert f"**{TOY}** (27 states)" in text and "| mh:logits | 1 |" in text
    assert "(not run yet" in text  # no acceptance part yet
    s = section("kernels")
    assert s.render is kernel_results.render and s.refresh is kernel_results.refresh
    assert s.data == "kernels" and s.command == "glauber results --rerun kernels"


@pytest.mark.parametrize("k,n", [(0, 40), (40, 40), (1, 1), (37, 40), (5, 17)])
def test_clopper_pearson_matches_closed_forms_and_its_defining_tails(k, n) -> None:
    # Closed forms at the ends: k = 0 gives [0, 1 - (alpha/2)^(1/n)], k = n gives
    # [(alpha/2)^(1/n), 1]; elsewhere the defining equations of Clopper and Pearson (1934):
    # P(X >= k | lo) = alpha/2 and P(X <= k | hi) = alpha/2 for X ~ Binomial(n, p).
    from scipy.stats import binom

    lo, hi = kernel_results.clopper_pearson(k, n)
    if k == 0:
        assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / n), rel=1e-12)
    else:
        assert binom.sf(k - 1, n, lo) == pytest.approx(0.025, rel=1e-8)
    if k == n:
        assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / n), rel=1e-12)
    else:
        assert binom.cdf(k, n, hi) == pytest.approx(0.025, rel=1e-8)


def test_acceptance_table_states_the_rate_its_interval_and_the_proposals(tmp_path) -> None:
    a = {"overall": 0.925, "moved": 0.5, "proposed": 40, "site_rate_quartiles": [1.0, 1.0, 1.0]}
    item = {"label": "toy / chain", "n": 12, "mh:pll": a, "mh:logits": dict(a, overall=0.0)}
    text = kernel_results.acceptance_markdown([item])
    lo, hi = kernel_results.clopper_pearson(37, 40)
    assert f"| toy / chain | 12 | mh:pll | 0.925 [{lo:.2f}, {hi:.2f}] | 0.500 |" in text
    assert "| mh:logits | 0.000 [0.00, 0.09] |" in text and text.count("| 40 |") == 2


def test_tables_follow_the_declared_order_whatever_order_the_runs_saved(tmp_path) -> None:
    # a resumed run appends items in the order they finished: the page must not depend on it
    items = [{"label": label, "kind": "toy", "states": 27, "rows": []}
             for label in reversed(kernel_results.TOYS)]
    folder = tmp_path / "kernels"
    folder.mkdir()
    (folder / "exact.json").write_text(json.dumps({"items": items}))
    text = kernel_results.render(folder)
    first, second = (text.index(f"**{label}**") for label in kernel_results.TOYS)
    assert first < second
