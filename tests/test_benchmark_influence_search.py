"""Smoke test of benchmarks/influence_search.py: its query count, its rows, its bounds."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import influence_search as bench  # noqa: E402
from glauber.estimators.influence import influence  # noqa: E402
from glauber.toy_models import FunctionModel  # noqa: E402


class Counting:
    """A toy that counts the rows it is asked."""

    def __init__(self, model) -> None:
        self.model, self.rows = model, 0
        self.n, self.q, self.vocab = model.n, model.q, model.vocab

    def scores(self, states, sites):
        self.rows += len(states)
        return self.model.scores(states, sites)


def test_exhaustive_count_is_what_influence_asks():
    for n, q in ((3, 2), (4, 3), (2, 4)):
        tokens = np.arange(q)
        model = Counting(FunctionModel(
            n, q, lambda x, i, t=tokens: np.cos(x.sum(axis=1, keepdims=True) + t)))
        influence(model, 1.0, exhaustive=True, batch_size=7)
        assert model.rows == bench.exhaustive_queries(n, q)


def test_benchmark_runs_and_reports_fractions(monkeypatch):
    monkeypatch.setattr(bench, "MAX_STATES", 256)  # small models: a quick run
    res = bench.run(models=4, seed=1, hard=False)
    assert [r["target"] for r in res["rows"]] == [">= 0.9", ">= 0.9"]
    for r in res["rows"]:
        assert 0.0 <= r["measured"] <= 1.0 and r["met"] in (True, False)
    for m in res["budgets"]["exhaustive"]["per_model"]:
        assert m["search"]["queries"] <= m["budget"]
        assert {m["family"] for m in res["budgets"]["exhaustive"]["per_model"]} == set(
            bench.FAMILIES)
