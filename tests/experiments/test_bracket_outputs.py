"""The bracket in alpha-curve, compare and the results section (glauber.experiments); the
exact alpha-curve case is in test_alpha_curve.py.

Oracles: the Ising cycle's closed-form bound (``rho = 2 tanh(1/tau)``: certified from
``1/atanh(1/2)``), the searched values it must dominate, and the results JSON itself.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from glauber.errors import InvalidParameterError
from glauber.experiments import brackets
from glauber.experiments.alpha_curve import alpha_curve
from glauber.experiments.compare import compare, compare_markdown
from glauber.experiments.results import SECTIONS, section


def test_alpha_curve_searched_rows_use_the_closed_form_and_the_witnesses(tmp_path):
    res = alpha_curve("ising-cycle:n=14", "1,2,4", tmp_path, contexts=1, progress=False,
                      search_budget=120)
    assert not res["exhaustive"]
    b = res["bracket"]
    assert b["upper_method"] == "closed-form" and b["lower_method"] == "search witnesses"
    assert 1 / math.atanh(0.5) < b["tau_cert"] <= (1 / math.atanh(0.5)) * 1.001
    for r in res["rows"]:
        assert r["rho_upper"] >= r["search_spectral_radius"]


def test_compare_reports_each_models_bracket(tmp_path):
    results = compare("ising-cycle:n=6,asym-ising:n=6", "1,4", tmp_path, rectangles=10,
                      pairs=1, budget=10, contexts=2, progress=False)
    from glauber.exact import ExactChain
    from glauber.models import resolve_model

    for r in results:
        assert r["bracket"]["tau_cert"] is not None
        model = resolve_model(r["model"])
        for t in r["per_tau"]:
            # against the exact C (the certificate's exhaustive radius is that of an enclosure
            # of C against rounding, a few ulps above it)
            C = ExactChain(model, t["tau"]).influence_matrix()
            assert t["rho_upper"] is not None
            assert t["rho_upper"] >= max(abs(np.linalg.eigvals(C)))
    assert "## The bracket" in compare_markdown(results)
    assert "## The bracket" in (tmp_path / "compare.md").read_text()


def test_results_section_renders_the_committed_shape(tmp_path):
    entry = {
        "kind": "full", "model": "m", "context": "c", "n": 120, "q": 20, "budget": 10,
        "rows": [{"tau": 1.0, "rho_lower": 2.0, "rho_search": 2.1, "rho_upper": 119.0,
                  "tmix_upper": "inf"}],
        "bracket": {"tau_no_cert": 2.5, "tau_cert": 2500.0, "ratio": 1000.0,
                    "upper_Delta_max": 143.7, "lower_rows": 10, "lower_seconds": 1.0,
                    "upper_seconds": 0.5, "grid": [1.0, 2500.0]},
    }
    (tmp_path / "antiberty-vh.json").write_text(json.dumps(entry))
    text = brackets.render(tmp_path)
    assert text.startswith("```\nglauber results --rerun bracket\n```")
    assert "| m / c | 120 | 2.5 | 2500 | 1e+03 | 143.7 |" in text
    # sqrt(n) Delta / 4 = sqrt(120) * 143.7 / 4 = 393.5 (the heuristic floor column)
    assert "| 394 |" in text


def test_the_bracket_is_a_section_of_the_generated_page():
    names = [s.name for s in SECTIONS]
    assert names.index("tau_no_cert") < names.index("bracket") < names.index("findings")
    s = section("bracket")
    assert s.data == "bracket" and s.command == "glauber results --rerun bracket"
    body = s.render(Path("docs/data/bracket"))  # the committed data, rendered
    assert "| antiberty / trastuzumab-vh | 120 |" in body
    assert f"## {s.title}\n\n{body}" in Path("docs/results.md").read_text(encoding="utf-8")


def test_an_unknown_entry_is_a_typed_error(tmp_path):
    with pytest.raises(InvalidParameterError, match="antiberty-vh"):
        brackets.run(tmp_path, ["no-such-entry"], log=lambda m: None)
