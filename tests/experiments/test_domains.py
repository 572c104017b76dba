"""The reaction models beside the antibody models in docs/results.md (glauber.experiments.domains,
and the reaction entries of the windows and bracket sections), on hand-made data.

Oracles: the inputs themselves (which model lies inside the paper's 0.64-0.80) and arithmetic
done by hand (22^3 = 10,648 states, 3 * 22^2 = 1,452 rows); no model is loaded.
"""

from __future__ import annotations

import json

import pytest

from glauber.core.io import write_json_atomic
from glauber.errors import InvalidParameterError, MissingDependencyError
from glauber.experiments import brackets, domains, windows

ALPHABET = list("cC()O12=N.n3F") + ["Cl", ">>", "~", "-", "4", "[C@H]", "S", "[O-]", "[K+]"]


def _row(label, mean, n_above=300):
    model, context = domains.SEQUENCES[label]
    return {"label": label, "model": model, "context": context, "n": 54, "q": 576,
            "rectangles": 300, "topk": 50, "seed": 0, "mean_abs_delta": mean,
            "sd_abs_delta": 0.5, "median_abs_delta": mean, "max_abs_delta": 4.0,
            "n_above_bound": n_above, "seconds": 10.0}


@pytest.mark.parametrize("means, word", [((0.7, 0.75), "inside"), ((1.5, 2.0), "outside"),
                                         ((0.7, 2.0), "partly inside (rxnmapper / reaction)")])
def test_the_rectangle_table_says_where_chemistry_lies_against_the_paper(means, word):
    rows = [_row("sapiens-vh / trastuzumab-vh", 0.9), _row("rxnmapper / reaction", means[0]),
            _row("rxnfp / reaction", means[1])]
    text = domains.rectangles_markdown({"rows": rows, "missing": []})
    assert f"| rxnmapper / reaction | 54 | 576 | {means[0]:.3g} ± 0.5 |" in text
    assert f": {word} the paper's 0.64–0.8 for five English MLMs" in text


def test_a_model_that_cannot_load_is_listed_and_a_rerun_resumes(monkeypatch):
    asked = []

    def entry(label):
        asked.append(label)
        if label.startswith("rxnfp"):
            raise MissingDependencyError("pip install --no-deps rxnfp==0.1.0")
        return _row(label, 1.0)

    monkeypatch.setattr(domains, "rectangle_entry", entry)
    saved = []
    have = {"rows": [_row("sapiens-vh / trastuzumab-vh", 0.9)]}
    domains.run_rectangles(have, lambda d: saved.append(json.loads(json.dumps(d))), print)
    assert asked == ["sapiens-vl / trastuzumab-vl", "sceptr / sceptr-example",
                     "rxnmapper / reaction", "rxnfp / reaction"]
    final = saved[-1]
    assert [r["label"] for r in final["rows"]] == [
        "sapiens-vh / trastuzumab-vh", "sapiens-vl / trastuzumab-vl", "sceptr / sceptr-example",
        "rxnmapper / reaction"]
    assert final["missing"] == ["rxnfp / reaction: pip install --no-deps rxnfp==0.1.0"]
    assert "Missing: rxnfp / reaction" in domains.rectangles_markdown(final)


def test_the_windows_section_says_what_a_reaction_window_is(tmp_path):
    write_json_atomic(tmp_path / "domains.json",
                      {"rows": [_row("rxnmapper / reaction", 1.2)], "missing": []})
    result = {"label": "rxnmapper / reaction", "kind": "mlm", "model": "rxnmapper",
              "chain": "reaction", "sites": [44, 45, 46], "positions": [45, 46, 47],
              "window": "S c 1", "chain_length": 54, "alphabet": ALPHABET,
              "alphabet_mass": [0.99, 0.5, 0.98], "build_seconds": 60.0, "score_spread": 9.0,
              "rows": []}
    write_json_atomic(tmp_path / "exact.json", {"cap": 20, "results": [result]})
    block = windows.render(tmp_path)
    assert "### Rectangle test on whole sequences" in block
    assert "positions 45–47 (S c 1" in block and "of the 54-token reaction" in block
    assert "an alphabet A of 22 tokens" in block and "22^3 = 10,648 states" in block
    assert "score table of 1,452 rows" in block and "([O-] [K+])" in block
    assert "rxnmapper 0.990, 0.500, 0.980" in block


def test_a_reaction_bracket_window_names_its_alphabet(tmp_path):
    entry = {"kind": "window", "model": "rxnfp", "context": "reaction", "sites": "45-47",
             "n": 3, "q": 22, "budget": 300, "alphabet": ALPHABET,
             "rows": [{"tau": 1.0, "rho_weights": 2.0, "rho_exact": 1.5, "rho_search": 1.4,
                       "C_weights_max": 1.0, "C_exact_max": 0.9, "C_search_max": 0.8,
                       "tmix_weights": "inf", "tmix_exact_bound": "inf"}],
             "brackets": {k: {"tau_no_cert": 2.0, "tau_cert": 2.1, "ratio": 1.05, "grid": [1.0]}
                          for k in ("weights", "exact", "search")}}
    (tmp_path / "rxnfp-reaction.json").write_text(json.dumps(entry))
    text = brackets.render(tmp_path)
    assert "| rxnfp / reaction 45-47 (|A| = 22) | 1 | 2 | 1.5 |" in text
    assert "over an alphabet A of 22 tokens, 10,648 states, 1,452 rows" in text


def test_an_alphabet_is_only_the_reaction_windows():
    with pytest.raises(InvalidParameterError, match="use 'reaction'"):
        brackets.window("antiberty", "trastuzumab-vh", "98-100", frequent=20)


# ---------------------------------------------------------------- SCEPTR beside the others
@pytest.mark.parametrize("value, words", [
    (0.05, "below every one"), (2.0, "above every one"),
    (0.3, "between sapiens-vh (0.1) and rxnmapper (0.4)")])
def test_place_names_the_nearest_neighbours(value, words):
    assert domains.place(value, {"sapiens-vh": 0.1, "rxnmapper": 0.4, "rxnfp": 0.5}) == words


@pytest.mark.parametrize("tcr, antiberty, where_antibody, where_chem", [
    (0.2, 0.17, "above every one", "below every one"),
    (0.1, 0.17, "between sapiens-vh (0.05) and antiberty (0.17)", "below every one"),
    (0.45, None, "above every one", "between rxnmapper (0.35) and rxnfp (0.5)"),
])
def test_the_tcr_sentence_places_sceptr_among_the_antibody_and_reaction_models(
        tcr, antiberty, where_antibody, where_chem):
    rows = [_row("sapiens-vh / trastuzumab-vh", 0.05), _row("sceptr / sceptr-example", tcr, 290),
            _row("rxnmapper / reaction", 0.35), _row("rxnfp / reaction", 0.5)]
    text = domains.rectangles_markdown({"rows": rows, "missing": []}, antiberty_full=antiberty)
    assert f"| sceptr / sceptr-example | 54 | 576 | {tcr:.3g} ± 0.5 |" in text
    assert f"SCEPTR gives mean |δ| = {tcr:.2f} (290 of 300 rectangles" in text
    assert f"among the antibody models on their whole chains it is {where_antibody}" in text
    assert f"among the reaction models {where_chem}" in text
    assert "below the paper's 0.64–0.8" in text


def test_without_the_tcr_row_there_is_no_tcr_sentence():
    rows = [_row("sapiens-vh / trastuzumab-vh", 0.05), _row("rxnmapper / reaction", 0.35)]
    assert "SCEPTR" not in domains.rectangles_markdown({"rows": rows, "missing": []}, 0.17)


def test_the_tcr_windows_are_cdr3b_residues_as_the_command_line_counts():
    # positions count from 1 over the TCR's residues, loop after loop, as --sites counts them
    from glauber.mlm_backend.sequences import SCEPTR_EXAMPLE_TCR

    residues = SCEPTR_EXAMPLE_TCR.replace("/", "")
    cdr3b = SCEPTR_EXAMPLE_TCR.split("/")[-1]
    start = len(residues) - len(cdr3b) + 1  # 44
    entries = [("windows", *windows.TCR_WINDOWS["sceptr / sceptr-example"]),
               *(("bracket", *brackets.WINDOWS[k]) for k in brackets.WINDOWS
                 if k.startswith("sceptr"))]
    assert len(entries) == 4
    for _, model, context, sites in entries:
        assert (model, context) == ("sceptr", "sceptr-example")
        lo, hi = (int(v) for v in sites.split("-"))
        assert start <= lo <= hi <= len(residues)
        assert residues[lo - 1:hi] == cdr3b[lo - start:hi - start + 1]
    assert {s for *_, s in entries} == {"50-52", "50-53", "50-54"}
    assert residues[49:54] == "QGDNE"


def test_a_tcr_exact_window_is_labelled_by_its_positions_and_residues(tmp_path):
    row = {"tau": 1.0, "notes": [], "tmix": 9, "tmix_lower_bound": 5, "tmix_cap": 20,
           "certificate": "matrix_power", "certificate_bound": 40.0, "absolute_gap": 0.2,
           "alpha_row": 0.9, "alpha_col": 0.8, "spectral_radius": 0.7, "mode_state": "QGD",
           "max_stationary_mass": 0.3, "perfect_traps": 1, "best_trap_state": "QGD",
           "best_trap_delta_star": 1.5, "best_trap_escape_bound": 4.0,
           "best_trap_exact_escape": 0.3, "rectangles_mean_abs_delta": 0.25}
    result = {"label": "sceptr / sceptr-example", "kind": "mlm", "model": "sceptr",
              "chain": "sceptr-example", "sites": [49, 50, 51], "positions": [50, 51, 52],
              "window": "QGD", "chain_length": 57, "build_seconds": 2.0, "score_spread": 6.0,
              "rows": [row]}
    write_json_atomic(tmp_path / "exact.json", {"cap": 20, "results": [result]})
    block = windows.render(tmp_path)
    assert "for SCEPTR three sites of the CDR3B of its example TCR, positions 44–57" in block
    assert "| sceptr / sceptr-example 50–52 (QGD) | 1 | 9 | 0.2 |" in block
    assert "sceptr / sceptr-example: t_mix(1/4) = 9 at tau = 1" in block
    assert "sceptr / sceptr-example 2 s" in block


def test_a_five_site_bracket_window_says_it_is_matrix_free(tmp_path):
    def entry(sites, n):
        return {"kind": "window", "model": "sceptr", "context": "sceptr-example",
                "sites": sites, "n": n, "q": 20, "budget": 300,
                "rows": [{"tau": 1.0, "rho_weights": n - 1.0, "rho_exact": 0.5,
                          "rho_search": 0.4, "C_weights_max": 1.0, "C_exact_max": 0.3,
                          "C_search_max": 0.2, "tmix_weights": "inf", "tmix_exact_bound": 30}],
                "brackets": {k: {"tau_no_cert": 0.3, "tau_cert": 0.31, "ratio": 1.03,
                                 "grid": [0.25]} for k in ("weights", "exact", "search")}}
    (tmp_path / "sceptr-cdr3b.json").write_text(json.dumps(entry("50-52", 3)))
    assert "5 sites" not in brackets.render(tmp_path)
    (tmp_path / "sceptr-cdr3b-5.json").write_text(json.dumps(entry("50-54", 5)))
    text = brackets.render(tmp_path)
    assert "5 sites: 3,200,000 states, 800,000 rows, the matrix-free chain" in text
    assert "| sceptr / sceptr-example 50-54 | 1 | 4 | 0.5 | 0.4 |" in text


def _full(model, context, n, no_cert, cert, delta):
    return {"kind": "full", "model": model, "context": context, "n": n, "q": 20, "budget": 4000,
            "rows": [], "bracket": {"tau_no_cert": no_cert, "tau_cert": cert,
                                    "ratio": cert / no_cert, "upper_Delta_max": delta,
                                    "grid": [0.25]}}


def _win(model, sites, n, no_cert, weights_cert, context="c"):
    b = {"exact": {"tau_no_cert": no_cert, "tau_cert": no_cert * 1.001, "ratio": 1.001,
                   "grid": [0.015625]},
         "weights": {"tau_no_cert": no_cert, "tau_cert": weights_cert,
                     "ratio": weights_cert / no_cert, "grid": [0.015625]}}
    b["search"] = b["exact"]
    return {"kind": "window", "model": model, "context": context, "sites": sites, "n": n,
            "q": 20, "rows": [], "brackets": b}


@pytest.mark.parametrize("sceptr_lows, rising, words", [
    ((0.5, 0.8, 1.1), True, "rising with the window as the antibody windows' do"),
    ((0.5, 0.4, 1.1), False, "not monotone in the window's size, unlike the antibody windows'"),
])
def test_the_tcr_paragraph_reads_every_number_and_comparison_from_the_data(
        sceptr_lows, rising, words):
    data = {"antiberty-vh": _full("antiberty", "trastuzumab-vh", 120, 4.4, 4274.0, 143.7),
            "rxnfp": _full("rxnfp", "reaction", 54, 4.0, 1409.0, 106.4),
            "sceptr": _full("sceptr", "sceptr-example", 57, 2.0, 1000.0, 35.0),
            "antiberty-vh-cdr3": _win("antiberty", "98-100", 3, 1.5, 65.0, "trastuzumab-vh"),
            "antiberty-vh-cdr3-4": _win("antiberty", "97-100", 4, 2.4, 100.0),
            "rxnfp-reaction": _win("rxnfp", "45-47", 3, 5.4, 45.0, "reaction")}
    for k, v in zip((3, 4, 5), sceptr_lows):
        data[brackets.TCR_WINDOWS[k]] = _win("sceptr", f"50-{49 + k}", k, v, 20.0)
    text = brackets.tcr_paragraph(data)
    assert text.startswith("**SCEPTR beside the antibody and reaction models.**")
    assert "On the whole TCR (n = 57) the search proves no certificate up to tau_no_cert = 2, " \
           "below every one of the other full sequences" in text
    assert "(Delta = 35, below every one) certifies from tau_cert = 1000 (about (n − 1) " \
           "Delta / 4 = 490:" in text
    assert "ratio 500, between rxnfp / reaction (3.5e+02) and antiberty / trastuzumab-vh " \
           "(9.7e+02)." in text
    assert ("tau_no_cert = 0.5 (3 sites), "
            f"{sceptr_lows[1]:g} (4 sites), 1.1 (5 sites), {words} from 3 to 4 sites "
            "(AntiBERTy VH 1.5 → 2.4)") in text
    assert ("3-site window's tau_no_cert lies below every one of the other 3-site windows; its "
            "weight bound alone certifies 40 times above it (between rxnfp / reaction 45-47 "
            "(8.3) and antiberty / trastuzumab-vh 98-100 (43))") in text
    assert brackets.tcr_paragraph({k: v for k, v in data.items()
                                   if not k.startswith("sceptr")}) == ""


@pytest.mark.parametrize("tcr_tmix, words", [(7, "below every one"), (30, "above every one"),
                                             (10, "between antiberty / trastuzumab VL (8) and "
                                                  "antiberty / trastuzumab VH (23)")])
def test_the_tcr_exact_sentence_places_its_tmix_among_the_other_windows(tcr_tmix, words):
    def result(label, tmix, certified_from):
        return {"label": label, "window": "QGD", "rows": [
            {"tau": t, "tmix": tmix, "certificate": "none" if t < certified_from else "row"}
            for t in (0.5, 1.0, 2.0)]}

    results = [result("antiberty / trastuzumab VH", 23, 2.0),
               result("antiberty / trastuzumab VL", 8, 1.0),
               result("sceptr / sceptr-example", tcr_tmix, 1.0), result("potts-cycle:n=3", 1, 0.5)]
    text = windows.tcr_exact_sentence(results, taus=(1.0,))
    assert text == (f"**SCEPTR's CDR3B window** (QGD) mixes in t_mix(1/4) = {tcr_tmix} steps at "
                    f"tau = 1 ({words} of the antibody and reaction windows); Theorem 5 "
                    "certifies it from tau = 1, as antiberty / trastuzumab VL.\n")
    assert windows.tcr_exact_sentence(results[:2]) == ""
