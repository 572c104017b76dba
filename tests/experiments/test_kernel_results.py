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
