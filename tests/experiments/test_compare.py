"""The toy-vs-MLM comparison: toy oracles and one tiny MLM smoke test."""

from __future__ import annotations

import json

import numpy as np
import pytest

from glauber.certify import certify
from glauber.errors import InvalidParameterError, UnknownModelError
from glauber.experiments.common import context_states
from glauber.experiments.compare import compare
from glauber.toy_models.specs import parse_toy_spec


def test_symmetric_toy_is_compatible_and_asymmetric_is_not(tmp_path):
    res = compare("ising-cycle:n=6,asym-ising:n=6,seed=2", "1,3", tmp_path, contexts=4,
                  rectangles=40, pairs=4, budget=300, progress=False)
    sym, asym = res
    assert sym["rectangle"]["compatible_within_atol"]
    assert sym["rectangle"]["max_abs_delta"] < 1e-9
    # Both tokens flip in a binary rectangle: |delta| = 4 |J_ij - J_ji| (docs/theory.md, `prop4`).
    J = parse_toy_spec("asym-ising:n=6,seed=2").J
    assert asym["rectangle"]["max_abs_delta"] <= 4 * np.abs(J - J.T).max() + 1e-9
    assert asym["rectangle"]["n_above_atol"] > 0
    for model in res:
        assert model["drift_band_complete"]  # 2**6 states: the band is enumerated
        for t in model["per_tau"]:
            assert t["influence_exact"] and t["exact_tmix"] is not None
            if t["best"] != "none":
                assert t["exact_tmix"] <= t["best_bound"]
    md = (tmp_path / "compare.md").read_text()
    assert sym["name"] in md and asym["name"] in md
    assert json.loads((tmp_path / "compare.json").read_text())["models"][0]["n"] == 6


def test_compare_runs_the_certify_pipeline(tmp_path):
    """One pipeline: a compare row holds the numbers of certify() on the same contexts."""
    (res,) = compare("planted:n=6,q=2", "3", tmp_path, contexts=4, rectangles=10, pairs=2,
                     budget=50, progress=False)
    model = parse_toy_spec("planted:n=6,q=2")
    cert = certify(model, 3.0, context_states(model, 4, 0), seed=0, n_rectangles=10,
                   n_contexts=4, n_pairs=2, budget=50, horizon=50)
    row = res["per_tau"][0]
    assert row["best"] != "none"  # a finite bound at this temperature
    assert res["drift_band"] == list(cert.drift_band.band)
    assert row["drift_min"] == cert.drift_band.band_min_drift
    assert row["alpha_row"] == cert.influence.alpha_row
    assert row["best_bound"] == cert.influence.contraction.best_bound
    assert row["exact_tmix"] == cert.exact.tmix
    assert row["coupling_median"] == cert.coupling.median


@pytest.mark.mlm
def test_autoregressive_control_smoke(tmp_path):
    (res,) = compare("tiny-gpt2-control", "1", tmp_path, length=3, contexts=1, rectangles=4,
                     pairs=1, budget=2, progress=False)
    assert res["rectangle"]["compatible_within_atol"] and not res["toy"]
    assert not res["per_tau"][0]["influence_exact"]


def test_bad_input(tmp_path):
    with pytest.raises(InvalidParameterError):
        compare("", "1", tmp_path)
    with pytest.raises(UnknownModelError):
        compare("ising-cycle:n=4,nonsense-model", "1", tmp_path)
    with pytest.raises(InvalidParameterError):
        compare("ising-cycle:n=4", "1", tmp_path, budget=0)


def test_length_applies_to_toys_that_do_not_fix_their_n(tmp_path):
    # --length used to be ignored for every toy specification: ising-cycle ran at its default
    # n = 8. It now sets n where the specification does not; an explicit n= keeps its own.
    res = compare("ising-cycle,ising-path:n=3", "2", tmp_path, length=4, contexts=2,
                  rectangles=4, pairs=1, budget=20, progress=False)
    assert [(r["name"], r["n"]) for r in res] == [("ising-cycle:n=4,J=1.0,h=0.0", 4),
                                                  ("ising-path:n=3,J=1.0,h=0.0", 3)]
    assert compare("ising-cycle", "2", tmp_path / "default", contexts=2, rectangles=4, pairs=1,
                   budget=20, progress=False)[0]["n"] == 8  # the family's own n


def test_length_is_refused_where_it_cannot_apply(tmp_path):
    from glauber.errors import SequenceLengthError

    with pytest.raises(SequenceLengthError, match="its sites set its length"):
        compare(["ising-cycle:n=6@0,1,1,0,0,1[2-4]"], "1", tmp_path, length=3)
    with pytest.raises(InvalidParameterError, match="has no length n"):
        compare("ising-grid", "1", tmp_path, length=4)
