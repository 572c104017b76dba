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
    assert asked == ["sapiens-vl / trastuzumab-vl", "rxnmapper / reaction", "rxnfp / reaction"]
    final = saved[-1]
    assert [r["label"] for r in final["rows"]] == [
        "sapiens-vh / trastuzumab-vh", "sapiens-vl / trastuzumab-vl", "rxnmapper / reaction"]
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
