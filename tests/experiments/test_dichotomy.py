"""The dichotomy section (glauber.experiments.dichotomy): cells against exact values, fits on
known laws, and the rendered block."""

from __future__ import annotations

import math

import numpy as np
import pytest

from glauber.exact.chain import ExactChain
from glauber.experiments import dichotomy
from glauber.experiments.dichotomy import (
    BEGIN,
    END,
    build_model,
    dichotomy_markdown,
    fits,
    run_cell,
    splice,
)


def test_fits_recognise_each_law():
    ns = np.arange(4, 21, 2)
    nlogn = [{"n": int(n), "tmix": 2.0 * n * math.log(n)} for n in ns]
    expo = [{"n": int(n), "tmix": 3.0 * math.exp(0.5 * n)} for n in ns]
    f = fits(nlogn)
    assert f["better"] == "n log n" and f["a"] == pytest.approx(2.0) and f["rel_nlogn"] < 1e-12
    g = fits(expo)
    assert g["better"] == "exp(c n)" and g["c"] == pytest.approx(0.5) and g["rel_exp"] < 1e-9
    assert fits(nlogn[:2]) == {"points": 2}


@pytest.mark.parametrize("family, n, tau", [("ising-cycle", 6, 1.0), ("ising-grid", 6, 1.0),
                                            ("potts-cycle", 4, 1.0)])
def test_cells_hold_exact_values_between_their_bounds(family, n, tau, monkeypatch):
    exact = ExactChain(build_model(family, n), tau).mixing_time(0.25)
    cell = run_cell(family, n, tau)
    assert cell["method"] == "exact" and cell["tmix"] == exact
    assert cell["thm5_bound"] >= exact  # corrected Theorem 5 is an upper bound (inf: none)
    if cell["thm8_lower"] is not None:
        assert cell["thm8_lower"] <= exact
    monkeypatch.setattr(dichotomy, "EXACT_STATES", 1)  # the bracket path on the same chain
    bracket = run_cell(family, n, tau)
    assert bracket["method"] == "bracket" and bracket["lower"] <= exact
    assert bracket["upper"] is None or exact <= bracket["upper"]


def test_orbit_route_for_large_cycles(monkeypatch):
    monkeypatch.setattr(dichotomy, "FULL_STATES", 16)
    cell = run_cell("ising-cycle", 6, 2.0)
    exact = ExactChain(build_model("ising-cycle", 6), 2.0).mixing_time(0.25)
    assert cell["method"] == "orbit-bracket" and cell["orbits"] == 13
    assert cell["lower"] <= exact <= cell["upper"]
    assert cell["gap"] == pytest.approx(cell["closed_form_gap"], rel=1e-9)  # LPW Theorem 15.5


def test_section_is_spliced_between_markers(tmp_path):
    cells = [run_cell("ising-cycle", 4, tau) for tau in (5.0, 2.0, 0.5)]
    block = dichotomy_markdown(cells, None, "cmd")
    assert block.startswith(BEGIN) and block.rstrip().endswith(END) and "| 4 | 16 |" in block
    doc = tmp_path / "results.md"
    doc.write_text("# Results\n\nintro\n", encoding="utf-8")
    splice(doc, block)
    splice(doc, block.replace("cmd", "cmd2"))  # a second run replaces, not appends
    text = doc.read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and "cmd2" in text and text.startswith("# Results")
