"""The in-context results module (glauber.experiments.windows) on small chains with exact oracles."""

import numpy as np
import pytest

from glauber.exact import mixing
from glauber.exact.chain import ExactChain
from glauber.exact.score_table import TabulatedModel, score_table
from glauber.experiments import windows
from glauber.theory.contraction import certify_contraction
from glauber.toy_models.specs import parse_toy_spec


@pytest.mark.parametrize("a", [0.05, 0.1, 0.2, 0.3, 0.45])
def test_spectral_lower_bound_is_tight_on_the_symmetric_two_state_chain(a):
    # P = [[1-a, a], [a, 1-a]]: d(t) = |1 - 2a|^t / 2 exactly (LPW 2nd ed., Section 4.2 and
    # Theorem 12.5's argument), so the bound equals t_mix(1/4), computed here by the dense
    # squaring algorithm as the independent oracle.
    P = np.array([[1 - a, a], [a, 1 - a]])
    exact = mixing.mixing_time(P, np.array([0.5, 0.5]), 0.25)
    assert windows.spectral_lower_bound(2 * a) == exact


@pytest.mark.parametrize("seed", range(4))
def test_spectral_lower_bound_never_exceeds_exact_tmix_on_incompatible_chains(seed):
    from glauber.toy_models import RandomTableModel

    for tau in (0.5, 1.0, 2.0):
        chain = ExactChain(RandomTableModel(3, 3, rng=seed, scale=2.0), tau)
        bound = windows.spectral_lower_bound(chain.absolute_spectral_gap())
        assert bound <= chain.mixing_time(0.25)


def test_capped_tmix_equals_exact_tmix_and_gives_up_at_the_cap():
    chain = ExactChain(parse_toy_spec("potts-cycle:n=3,q=4,J=1.0"), 1.0)
    exact = chain.mixing_time(0.25)
    assert windows.capped_tmix(chain, 0.25, cap=exact) == exact
    assert windows.capped_tmix(chain, 0.25, cap=exact - 1) is None


def test_exact_rows_agree_with_the_chain_at_each_temperature():
    model = parse_toy_spec("potts-cycle:n=3,q=4,J=1.0")
    rows, timing = windows.exact_rows(model, taus=(0.5, 2.0), cap=10_000)
    assert timing["build_seconds"] >= 0
    for row in rows:
        chain = ExactChain(model, row["tau"])
        cert = certify_contraction(chain.influence_matrix(), 0.25)
        assert row["tmix"] == chain.mixing_time(0.25)
        assert row["alpha_row"] == pytest.approx(cert.alpha_row, rel=1e-12)
        assert row["spectral_radius"] == pytest.approx(cert.spectral_radius, rel=1e-12)
        assert row["max_stationary_mass"] == pytest.approx(chain.stationary().max(), rel=1e-9)
        assert row["reversible"]  # Potts is a Gibbs chain (Theorem 3)
        assert row["rectangles_mean_abs_delta"] < 1e-9  # compatible: every delta is 0


def test_window_sites_are_the_cdr3_windows():
    from glauber.mlm_backend.sequences import TRASTUZUMAB_VH, TRASTUZUMAB_VL

    assert windows.window_sites("trastuzumab_vh", "SRWGGDGFYAMDY", 3) == [99, 100, 101]
    assert TRASTUZUMAB_VH[99:102] == "GGD"
    sites = windows.window_sites("trastuzumab_vl", "QQHYTTPPT", 2)
    assert TRASTUZUMAB_VL[sites[0]:sites[-1] + 1] == "HYT"


def _rect(mean):
    part = {"mean_abs_delta": mean, "sd_abs_delta": 0.1, "median_abs_delta": mean,
            "max_abs_delta": 2 * mean, "n_above_bound": 10, "n_rectangles": 10}
    return part


def test_the_section_renders_its_command_and_headline_from_its_data(tmp_path):
    from glauber.core.io import write_json_atomic

    rows = [{"length": length, "model": "antiberty", "contexts": [], "seconds": 1.0,
             "context": _rect(c), "fragment": _rect(f), "paired_mean_difference": c - f}
            for length, c, f in ((12, 0.5, 2.0), ("full", 0.1, 0.1))]
    write_json_atomic(tmp_path / "rectangles.json", {"rows": rows})
    block = windows.render(tmp_path)
    assert block.startswith("```\nglauber results --rerun windows\n```\n")
    assert "mean |δ| = 0.50 at tau = 1" in block and "give 2.00" in block
    assert "| 12 | 0.5 ± 0.1 |" in block and "Exact window chains" not in block  # no exact.json


def test_rows_without_a_float64_stationary_law_keep_what_needs_none():
    # Potts triangle, q = 20, tau = 0.006: the least likely states have mass near
    # exp(-3 / 0.006) ~ 1e-217, below what 8000-state float64 solves trust, while every
    # conditional stays positive; the row keeps the certificate, a lower bound on t_mix (the
    # cap + 1: the underflow proves nothing about the gap) and the tau-free traps (Theorem 8's
    # bound at this tau), from the float64 law.
    # The model is the Potts triangle's score table, without its log-joint: with the joint the
    # sparse path has the law exactly (tests/certify/test_exact_limits.py), as a masked LM has not.
    gibbs = parse_toy_spec("potts-cycle:n=3,q=20,J=1.0")
    model = TabulatedModel(gibbs, score_table(gibbs))
    rows, _ = windows.exact_rows(model, taus=(1.0, 0.006), cap=5)
    full, partial = rows
    assert any("float64 law" in n for n in partial["notes"]) and partial["reversible"] is None
    assert "[1]" in windows.exact_markdown([{"label": "potts", "kind": "toy", "rows": rows}])
    assert partial["tmix"] is None and partial["tmix_lower_bound"] > 5
    assert partial["perfect_traps"] == full["perfect_traps"] == 20  # the monochrome states
    assert partial["best_trap_delta_star"] == full["best_trap_delta_star"]
    assert 0 < partial["best_trap_exact_escape"] <= partial["best_trap_escape_bound"]
    cert = certify_contraction(ExactChain(model, 0.006).influence_matrix(), 0.25)
    assert partial["alpha_row"] == pytest.approx(cert.alpha_row, rel=1e-12)


def test_an_unavailable_gap_gives_no_spectral_lower_bound(monkeypatch):
    # A regression: any PrecisionError whose message said "below" (an underflowing stationary
    # law: "entries below 1e-200") was read as "gap below the sparse floor 1e-6", and the row
    # claimed t_mix >= 693,146 on the AntiBERTy VH window at tau = 0.25, whose exact t_mix is
    # 55,170. Only GapBelowFloorError (Lanczos's proved gap_upper) gives a spectral bound.
    from glauber.errors import UnderflowError

    def underflow(self, method="auto"):
        raise UnderflowError("the stationary law has entries below 1e-200")

    monkeypatch.setattr(ExactChain, "absolute_spectral_gap", underflow)
    label = "potts-cycle:n=3,q=4,J=1.0"
    exact = ExactChain(windows.chain_model(label), 1.0).mixing_time(0.25)
    rows, _ = windows.exact_rows(windows.chain_model(label), taus=(1.0,), cap=10_000)
    assert rows[0]["tmix"] == exact and rows[0]["absolute_gap"] is None
    assert rows[0]["tmix_lower_bound"] is None


def test_a_gap_proved_below_the_floor_bounds_tmix_from_its_upper_bound(monkeypatch):
    from glauber.errors import GapBelowFloorError

    def below(self, method="auto"):
        raise GapBelowFloorError("the gap is at most 1e-10", 1e-10)

    monkeypatch.setattr(ExactChain, "absolute_spectral_gap", below)
    rows, _ = windows.exact_rows(parse_toy_spec("ising-cycle:n=4"), taus=(1.0,), cap=5)
    assert rows[0]["tmix"] is None and rows[0]["absolute_gap"] is None
    assert rows[0]["tmix_lower_bound"] == windows.spectral_lower_bound(1e-10) > 10**9


def test_refine_steps_open_rows_again_up_to_the_new_cap(tmp_path):
    from glauber.core.io import write_json_atomic

    label = "potts-cycle:n=3,q=4,J=1.0"
    chain = ExactChain(windows.chain_model(label), 1.0)
    exact = chain.mixing_time(0.25)
    cap = exact - 2  # above the spectral lower bound, below t_mix: stepping gives up
    assert windows.spectral_lower_bound(chain.absolute_spectral_gap()) <= cap
    rows, _ = windows.exact_rows(windows.chain_model(label), taus=(1.0,), cap=cap)
    assert rows[0]["tmix"] is None and rows[0]["tmix_lower_bound"] == cap + 1
    path = tmp_path / "exact.json"
    write_json_atomic(path, {"cap": cap, "results": [{"label": label, "rows": rows}]})
    windows.refine_tmix(path, exact, lambda msg: None)
    row = windows._load(path)["results"][0]["rows"][0]
    assert row["tmix"] == exact and row["tmix_cap"] == exact
