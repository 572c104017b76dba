"""benchmarks/influence_search.py: its uniform baselines, its counting bound, a small run."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import influence_search as bench  # noqa: E402
from glauber.core.enumeration import table_queries  # noqa: E402
from glauber.exact import ExactChain  # noqa: E402

from .support import table_model  # noqa: E402


@pytest.mark.parametrize("n,q", [(3, 2), (3, 3), (4, 2), (2, 5)])
def test_every_query_read_gives_the_exact_influence(n, q):
    # every context of every site asked: the pairs read are all of Definition 2's pairs
    chain = ExactChain(table_model(n, q, seed=n + q), 0.8)
    everything = [np.ones(q ** (n - 1), dtype=bool) for _ in range(n)]
    np.testing.assert_allclose(bench.sampled_influence(chain.conditionals(), everything),
                               chain.influence_matrix(), atol=1e-12)


def test_sampled_influence_reads_only_pairs_of_asked_contexts():
    # one site, two contexts that differ at one site: exactly that pair's TV, nothing else
    n, q, tau = 3, 3, 0.7
    model = table_model(n, q, seed=1)
    chain = ExactChain(model, tau)
    asked = [np.zeros(q ** (n - 1), dtype=bool) for _ in range(n)]
    asked[0][[0 * q + 1, 2 * q + 1]] = True  # site 0: (x_1, x_2) = (0, 1) and (2, 1)
    C = bench.sampled_influence(chain.conditionals(), asked)
    x, y = np.array([0, 0, 1]), np.array([0, 2, 1])
    p = chain.conditionals()[0]
    weights = q ** np.arange(n - 1, -1, -1)
    want = 0.5 * np.abs(p[x @ weights] - p[y @ weights]).sum()
    expected = np.zeros((n, n))
    expected[0, 1] = want
    np.testing.assert_allclose(C, expected, atol=1e-15)


@pytest.mark.parametrize("draw", [bench.uniform_queries, bench.uniform_stars])
def test_uniform_methods_ask_exactly_the_budget(draw):
    for n, q, budget in ((3, 2, 1), (4, 3, 20), (2, 7, 14), (5, 2, 80)):
        asked = draw(n, q, budget, np.random.default_rng(budget))
        assert sum(int(a.sum()) for a in asked) == budget <= table_queries(n, q)


def test_counting_bound_is_the_most_any_query_set_realises():
    # Brute force on n = 3, q = 2 (12 queries): over every set of B queries, the most non-zero
    # entries realised (an entry (i, j) needs two asked contexts at i differing at j) is at
    # most the counting bound, and equals it on a dense model (every entry non-zero).
    n, q = 3, 2
    exact = ExactChain(table_model(n, q, seed=3), 1.0).influence_matrix()
    assert np.all(exact[~np.eye(n, dtype=bool)] > 0)
    per_site = q ** (n - 1)
    queries = [(i, c) for i in range(n) for c in range(per_site)]
    for budget in range(1, 7):
        best = 0
        for subset in itertools.combinations(queries, budget):
            asked = [np.zeros(per_site, dtype=bool) for _ in range(n)]
            for i, c in subset:
                asked[i][c] = True
            realised = 0
            for i in range(n):
                idx = np.flatnonzero(asked[i])
                others = [j for j in range(n) if j != i]
                for p, j in enumerate(others):  # contexts differ at j: their digit p differs
                    bit = q ** (n - 2 - p)
                    if any((a ^ b) == bit for a in idx for b in idx):
                        realised += 1
            best = max(best, realised)
        assert best == bench.counting_bound(exact, budget)


def test_benchmark_runs_and_respects_its_bounds(monkeypatch):
    monkeypatch.setattr(bench, "MAX_STATES", 256)  # small models: a quick run
    res = bench.run(models_per_family=2, seed=1, fractions=(0.03, 0.1),
                    families=("ising", "random-table", "planted"))
    assert len(res["per_model"]) == 6
    for m in res["per_model"]:
        for b in m["budgets"].values():
            assert b["search"]["queries"] <= b["budget"] <= m["table"]
            for method in bench.METHODS:  # nothing realises more than the counting bound
                assert b[method]["reached"] <= b["counting_bound"] <= b[method]["entries"]
    checked = [r for r in res["rows"] if r["target"]]
    assert len(checked) == 2 and all(r["met"] in (True, False) for r in checked)
    for r in res["rows"]:
        assert 0.0 <= r["measured"] <= 1.0
    assert {"all", "family ising", "n >= 3"} <= set(res["summary"][0.1])
    # the checked rows are the targets on n >= 3, and where_lost says which side of each it is
    s = res["summary"][0.1]["n >= 3"]
    assert [r["measured"] for r in checked] == [s["search"]["entry_fraction"],
                                                 s["search"]["rho_fraction"]]
    first = bench.where_lost(res).splitlines()[1]
    for key, name in (("entry_fraction", "entries"), ("rho_fraction", "rho")):
        side = "met" if s["search"][key] >= bench.TARGETS[key] else "lost"
        assert f"{name} {s['search'][key]:.3f} ({side} against {bench.TARGETS[key]})" in first


def test_any_method_ceiling_counts_the_bounded_models_only():
    # Three models with rho(c) > 0, two of them bounded (statement 4): the expected ceiling
    # counts the unbounded one as reached, and p_target is the tail of independent successes,
    # checked against enumerating every success pattern.
    def model(rho_exact, ceiling=None, entries=2):
        b = {"search": {"entries": entries}}
        if ceiling is not None:
            b["ceiling"] = {"entries": [ceiling[0]] * entries, "rho": ceiling[1]}
        return {"rho_exact": rho_exact, "budgets": {0.1: b}}

    models = [model(0.5), model(0.3, (0.2, 0.1)), model(0.4, (0.6, 0.5))]
    out = bench.ceiling(models, models, entries=6, fraction=0.1)
    assert out["models"] == 2
    assert out["entry_fraction"] == pytest.approx(1 - (2 * 0.8 + 2 * 0.4) / 6)
    assert out["rho_fraction"] == pytest.approx(1 - (0.9 + 0.5) / 3)
    need = int(np.ceil(bench.TARGET * 3 - 1e-9)) - 1  # successes the bounded two must give
    brute = sum(np.prod([p if s else 1 - p for p, s in zip((0.1, 0.5), pattern)])
                for pattern in itertools.product((0, 1), repeat=2) if sum(pattern) >= need)
    assert out["p_target"] == pytest.approx(brute)
