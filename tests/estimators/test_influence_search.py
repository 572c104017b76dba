"""Searched influence (Definition 2, Lemma 6) with witnesses: quality, bounds, recheck, errors."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import (
    InvalidModelError,
    InvalidParameterError,
    InvalidTemperatureError,
    SequenceLengthError,
    VocabularyError,
)
from glauber.estimators.influence_search import search_influence, search_influence_sweep
from glauber.estimators.influence_threshold import rho_lower_bound, tau_no_cert
from glauber.estimators.score_cache import ScoreCache
from glauber.estimators.witnesses import recheck_witnesses, witness_table
from glauber.exact import ExactChain
from glauber.theory.contraction import spectral_radius
from glauber.toy_models import AsymmetricIsingModel, IsingModel, PlantedBasinModel, PottsModel

from ..support import table_model
from ._reference import (
    CountingModel,
    TorchModel,
    asym_ising,
    conditional,
    exact_influence,
    raw_scores,
)


def exhaustive_queries(n: int, q: int) -> int:
    """Rows ``influence(..., exhaustive=True)`` asks: ``q^n n (1 + (q - 1)(n - 1))``."""
    return q**n * n * (1 + (q - 1) * (n - 1))


def fixed_models() -> list[tuple[object, float]]:
    """A fixed set of toy models, one or two per family, at temperatures near their thresholds."""
    rng = np.random.default_rng(7)
    J = rng.standard_normal((8, 8))
    np.fill_diagonal(J, 0.0)
    graph = nx.gnp_random_graph(5, 0.7, seed=3)
    return [
        (IsingModel(nx.cycle_graph(8), coupling=0.6), 1.0),
        (asym_ising(0.5 * J, rng.standard_normal(8)), 1.5),
        (PottsModel(graph, 3, coupling={e: 1.2 for e in graph.edges},
                    field=0.5 * rng.standard_normal((5, 3))), 1.0),
        (PlantedBasinModel.with_random_base(6, 3, rng=1, scale=0.5, token=1, strength=4.0), 0.8),
        (table_model(6, 2, seed=11), 0.7),
        (table_model(4, 3, seed=12), 0.7),
    ]


def test_quality_on_fixed_models_at_a_tenth_of_exhaustive():
    # The thresholds: >= 90% of the (non-zero) exact entries reached to 95%, and
    # rho(searched C) >= 0.95 rho(exact C) in >= 90% of the models (here: in all of them).
    reached = total = 0
    for model, tau in fixed_models():
        exact = ExactChain(model, tau).influence_matrix()
        budget = exhaustive_queries(model.n, model.q) // 10
        res = search_influence(model, tau, budget=budget, seed=0)
        off = ~np.eye(model.n, dtype=bool) & (exact > 1e-12)
        reached += int(np.sum(res.C[off] >= 0.95 * exact[off]))
        total += int(off.sum())
        assert spectral_radius(res.C) >= 0.95 * spectral_radius(exact), model.name
        assert res.queries <= budget
    assert reached >= 0.9 * total


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), nq=st.sampled_from([(3, 2), (4, 2), (5, 2), (3, 3), (4, 3)]),
       tau=st.floats(0.2, 5.0), budget=st.integers(1, 400), target=st.sampled_from(["entries", "rho"]))
def test_searched_entries_are_realised_lower_bounds(seed, nq, tau, budget, target):
    # Every entry is the TV (or oscillation) of an explicit pair, so it cannot exceed the
    # supremum of Definition 2 / Lemma 6 (brute-force reference), and each witness, recomputed
    # here from two fresh model calls, gives exactly the stored value.
    n, q = nq
    model = table_model(n, q, seed)
    C, D = exact_influence(model, tau)
    res = search_influence(model, tau, budget=budget, seed=seed, target=target)
    assert np.all(res.C <= C + 1e-12) and np.all(res.Delta <= D + 1e-10)
    assert res.is_lower_bound
    # every pair offered to C is offered to Delta, so the sharp Lemma 6 holds between them
    assert np.all(res.C <= np.tanh(res.Delta / (4 * tau)) + 1e-12)
    for w in res.witnesses:
        x = np.array(w.context)
        y = x.copy()
        y[w.j] = w.replacement
        if w.quantity == "C":
            value = 0.5 * np.abs(conditional(model, x, w.i, tau) - conditional(model, y, w.i, tau)).sum()
        else:
            d = raw_scores(model, x, w.i) - raw_scores(model, y, w.i)
            value = d.max() - d.min()
        assert value == pytest.approx(w.value, abs=1e-12)
    np.testing.assert_array_equal(witness_table(res.witnesses, "C", n), res.C)
    np.testing.assert_array_equal(witness_table(res.witnesses, "Delta", n), res.Delta)


def test_budget_is_counted_in_rows_and_never_exceeded():
    base = table_model(6, 3, seed=1)
    for budget in (1, 7, 36, 100, 1000):
        model = CountingModel(base)
        res = search_influence(model, 1.0, budget=budget, batch_size=50, seed=3)
        assert sum(model.calls) == res.queries <= budget
        assert max(model.calls, default=0) <= 50
    # a model answered from a shared cache costs nothing the second time
    model = CountingModel(base)
    cache = ScoreCache(model)
    first = search_influence(model, 1.0, budget=300, cache=cache, seed=0)
    calls = sum(model.calls)
    assert calls == first.queries == cache.queries
    again = search_influence(model, 1.0, budget=300, cache=cache, seed=0)
    assert np.all(again.C >= first.C)  # recorded grids are re-read for free
    assert sum(model.calls) == calls + again.queries


def test_search_stops_early_when_restarts_are_spent():
    model = IsingModel(nx.path_graph(4), coupling=0.8)
    res = search_influence(model, 1.0, budget=10_000, restarts=1, scan=0.0, seed=0)
    assert res.queries < 10_000
    assert res.local_searches == model.n * (model.n - 1)


def test_walkers_that_stall_leave_no_budget_unspent():
    # The walkers of this model reach a state where every move they could make is cached
    # after 396 of its 405 distinct queries; the search used to stop there with 697 rows of
    # budget left and C[i, j] below 0.95 of the supremum at one entry. The rows left now go
    # to the unasked queries: all 405 are asked, and the harvest of a memo of every query is
    # Definition 2's supremum itself (test_a_memo_of_every_query_gives_the_exact_supremum).
    model = table_model(5, 3, seed=1)
    distinct = model.n * model.q ** (model.n - 1)
    res = search_influence(model, 1.0, budget=1093, seed=0, target="entries")
    assert res.queries == distinct
    C, D = exact_influence(model, 1.0)
    np.testing.assert_allclose(res.C, C, atol=1e-12)
    np.testing.assert_allclose(res.Delta, D, atol=1e-10)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10**6), nq=st.sampled_from([(3, 3), (4, 2), (4, 3), (6, 2)]),
       target=st.sampled_from(["entries", "rho"]))
def test_a_budget_covering_every_query_spends_what_it_needs(seed, nq, target):
    # Budget for every distinct query and more: the search stops only once none is unasked.
    model = table_model(*nq, seed=seed)
    distinct = model.n * model.q ** (model.n - 1)
    res = search_influence(model, 0.7, budget=3 * distinct, seed=seed, target=target)
    assert res.queries == distinct
    np.testing.assert_allclose(res.C, exact_influence(model, 0.7)[0], atol=1e-12)


def test_same_seed_same_result():
    model = table_model(5, 3, seed=4)
    a = search_influence(model, 0.8, budget=500, seed=9, target="rho")
    b = search_influence(model, 0.8, budget=500, seed=9, target="rho")
    assert a.to_dict() == b.to_dict()


def test_torch_model_matches_numpy():
    toy = table_model(5, 2, seed=2)
    a = search_influence(toy, 1.3, budget=200, seed=1)
    b = search_influence(TorchModel(toy), 1.3, budget=200, seed=1)
    np.testing.assert_allclose(b.C, a.C, atol=1e-12)
    assert recheck_witnesses(TorchModel(toy), b).ok


def test_ising_closed_form_is_reached():
    # Heat-bath Ising on the 6-cycle (degree 2): p(+ | f) = (1 + tanh(f / tau)) / 2 with
    # f = J (s_left + s_right); flipping one neighbour moves f by 2J, the largest change being
    # from f = 0 to 2J: c = tanh(2 J / tau) / 2 for neighbours, 0 otherwise (docs/theory.md).
    J, tau = 0.7, 1.2
    model = IsingModel(nx.cycle_graph(6), coupling=J)
    res = search_influence(model, tau, budget=exhaustive_queries(6, 2) // 10, seed=0)
    for i in range(6):
        for j in range(6):
            want = np.tanh(2 * J / tau) / 2 if (i - j) % 6 in (1, 5) else 0.0
            assert res.C[i, j] == pytest.approx(want, abs=1e-12)


def test_json_round_trip_and_recheck():
    model = table_model(5, 3, seed=5)
    res = search_influence(model, 0.9, budget=400, seed=2)
    data = json.loads(json.dumps(res.to_dict()))
    report = recheck_witnesses(model, data)
    assert report.ok and report.failures == 0
    assert report.n_witnesses == len(res.witnesses) > 0
    assert report.max_error_C <= 1e-12 and report.max_error_Delta <= 1e-10


def test_recheck_reports_a_tampered_value():
    model = table_model(5, 2, seed=6)
    data = search_influence(model, 1.0, budget=300, seed=0).to_dict()
    data["witnesses"][0]["value"] += 0.01
    report = recheck_witnesses(model, data)
    assert not report.ok and report.failures == 1
    assert report.worst["stored"] == data["witnesses"][0]["value"]
    assert max(report.max_error_C, report.max_error_Delta) == pytest.approx(0.01, abs=1e-9)


def test_recheck_typed_errors():
    model = table_model(4, 3, seed=8)
    data = search_influence(model, 1.0, budget=200, seed=0).to_dict()
    bad = json.loads(json.dumps(data))
    bad["witnesses"][0]["context"][1] = 3  # q = 3: outside the vocabulary
    with pytest.raises(VocabularyError):
        recheck_witnesses(model, bad)
    bad = json.loads(json.dumps(data))
    bad["witnesses"][0]["replacement"] = -1
    with pytest.raises(VocabularyError):
        recheck_witnesses(model, bad)
    bad = json.loads(json.dumps(data))
    bad["witnesses"][0]["context"] = bad["witnesses"][0]["context"][:-1]
    with pytest.raises(SequenceLengthError):
        recheck_witnesses(model, bad)
    bad = json.loads(json.dumps(data))
    bad["witnesses"][0]["j"] = bad["witnesses"][0]["i"]
    with pytest.raises(InvalidParameterError):
        recheck_witnesses(model, bad)
    with pytest.raises(InvalidParameterError, match="witnesses"):
        recheck_witnesses(model, {"tau": 1.0})
    with pytest.raises(InvalidModelError, match="scores"):
        recheck_witnesses(object(), data)


def test_search_typed_errors():
    model = table_model(4, 2, seed=0)
    for budget in (0, -1, 1.5, True):
        with pytest.raises(InvalidParameterError, match="budget"):
            search_influence(model, 1.0, budget=budget)
    with pytest.raises(InvalidModelError, match="scores"):
        search_influence(object(), 1.0, budget=10)

    class NoLength:
        n, q = None, 3

        def scores(self, states, sites):
            raise AssertionError("queried")

    with pytest.raises(InvalidModelError, match="positive integer"):
        search_influence(NoLength(), 1.0, budget=10)
    with pytest.raises(InvalidParameterError, match="target"):
        search_influence(model, 1.0, budget=10, target="rows")
    with pytest.raises(InvalidParameterError, match="scan"):
        search_influence(model, 1.0, budget=10, scan=1.5)
    with pytest.raises(InvalidTemperatureError):
        search_influence(model, 0.0, budget=10)
    with pytest.raises(VocabularyError):
        search_influence(model, 1.0, budget=10, starts=[[0, 1, 2, 0]])
    with pytest.raises(SequenceLengthError):
        search_influence(model, 1.0, budget=10, starts=[[0, 1, 0]])
    with pytest.raises(InvalidParameterError, match="n >= 2"):
        search_influence(table_model(1, 2, seed=0), 1.0, budget=10)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 6), tol=st.floats(0.0, 0.1))
def test_rho_lower_bound_is_below_the_spectral_radius(seed, n, tol):
    rng = np.random.default_rng(seed)
    C = rng.random((n, n)) * (rng.random((n, n)) < 0.6)
    low = np.maximum(C - tol, 0.0)
    np.fill_diagonal(low, 0.0)
    rho = spectral_radius(low)
    bound = rho_lower_bound(C, tol)
    assert bound <= rho + 1e-12
    assert bound >= rho * (1 - 1e-9) - 1e-12


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), nq=st.sampled_from([(4, 2), (6, 2), (3, 3), (4, 3)]),
       scale=st.floats(0.5, 3.0))
def test_no_certificate_is_rigorous(seed, nq, scale):
    # rho(searched C) >= 1 (less rounding) implies rho(exact C) >= 1 (Perron-Frobenius).
    n, q = nq
    model = table_model(n, q, seed, scale=scale)
    taus = [0.25, 0.5, 1.0, 2.0]
    results = search_influence_sweep(model, taus, budget=150, seed=seed)
    for res in results:
        if res.no_certificate:
            assert spectral_radius(ExactChain(model, res.tau).influence_matrix()) >= 1.0
    found = tau_no_cert(results)
    flagged = [r.tau for r in results if r.no_certificate]
    assert found == (max(flagged) if flagged else None)


def test_sweep_shares_queries_across_temperatures():
    base = table_model(5, 3, seed=3, scale=2.0)
    model = CountingModel(base)
    results = search_influence_sweep(model, [0.5, 1.0, 2.0], budget=200, seed=0)
    assert sum(model.calls) == sum(r.queries for r in results) <= 600
    assert [r.tau for r in results] == [0.5, 1.0, 2.0]
    # each search re-reads the pairs of the earlier ones: the witnesses found at tau = 0.5,
    # recomputed at tau = 1 here, are lower bounds the search at tau = 1 already holds
    for w in results[0].witnesses:
        if w.quantity == "C":
            x = np.array(w.context)
            y = x.copy()
            y[w.j] = w.replacement
            tv = 0.5 * np.abs(conditional(base, x, w.i, 1.0) - conditional(base, y, w.i, 1.0)).sum()
            assert results[1].C[w.i, w.j] >= tv - 1e-12


def test_a_memo_of_every_query_gives_the_exact_supremum():
    # Every (state, site) query answered: the memo-wide harvest compares every pair that
    # differs at one site, which is Definition 2's supremum itself (no query left to ask).
    model = table_model(4, 3, seed=21)
    n, q = model.n, model.q
    states = np.array(np.meshgrid(*[np.arange(q)] * n, indexing="ij")).reshape(n, -1).T
    cache = ScoreCache(model)
    for i in range(n):
        cache.fetch(states, np.full(len(states), i), batch_size=1000)
    assert cache.queries == n * q ** (n - 1)  # site i's own token is masked: one query each
    C, D = exact_influence(model, 0.6)
    res = search_influence(model, 0.6, budget=1, cache=cache)
    assert res.queries == 0
    np.testing.assert_allclose(res.C, C, atol=1e-12)
    np.testing.assert_allclose(res.Delta, D, atol=1e-10)


class Float32Torch(TorchModel):
    """A toy answering in torch float32, as a masked LM does."""

    def scores(self, states, sites):
        return super().scores(states, sites).float()


def test_float32_scores_get_the_float32_tolerance():
    model = Float32Torch(table_model(5, 2, seed=3))
    res = search_influence(model, 0.5, budget=300, seed=0)
    assert res.tolerance == pytest.approx(2e-4)  # 1e-4 max(1, 1/tau)
    report = recheck_witnesses(model, res.to_dict())
    assert report.ok and report.tolerance_C == pytest.approx(2e-4)
    assert res.rho_lower <= res.spectral_radius


def test_non_finite_scores_are_a_typed_error():
    from glauber.errors import NonFiniteScoresError

    class Broken:  # a bare protocol model: nothing validates its scores but the search
        n, q, vocab = 3, 2, (0, 1)

        def scores(self, states, sites):
            return np.full((len(states), 2), np.nan)

    with pytest.raises(NonFiniteScoresError):
        search_influence(Broken(), 1.0, budget=20)


def _planted_block(n: int, block: list[int], coupling: float) -> AsymmetricIsingModel:
    """Asymmetric Ising on ``n`` sites: the sites of ``block`` form a directed cycle (each
    reads only the one before it, with ``coupling``), every other site has no coupling and a
    field of 40 (its conditional a near point mass: entropy ~ 1e-34)."""
    J = np.zeros((n, n))
    for a, b in zip(block, block[1:] + block[:1]):
        J[b, a] = coupling
    field = np.full(n, 40.0)
    field[block] = 0.0
    return AsymmetricIsingModel(J, field=field)


def test_block_scan_below_one_context_equals_the_exact_principal_block():
    # Below n^2 rows the scan covers a principal block of the first context. This model is
    # sparse (each site of the planted cycle S reads one other site; the rest are near point
    # masses), so the block grows breadth-first from the site of largest entropy, one probed
    # column (n - 1 rows) per site: |S| columns cover C_SS. Each site of S reads one site only,
    # so the TV of one pair is the supremum (Definition 2) at every context, and rho(searched
    # C) must equal rho of the exact principal submatrix C_SS (ExactChain), which is rho(exact
    # C): by Perron-Frobenius monotonicity a principal block bounds rho from below.
    block = [1, 4, 5, 7]
    model = _planted_block(8, block, coupling=0.9)
    tau = 0.8
    exact = ExactChain(model, tau).influence_matrix()
    budget = model.n + len(block) * (model.n - 1)  # the base queries and |S| columns
    assert budget < model.n**2
    res = search_influence(model, tau, budget=budget, seed=0, target="rho")
    assert res.queries <= budget
    sub = exact[np.ix_(block, block)]
    assert spectral_radius(res.C) == pytest.approx(spectral_radius(sub), abs=1e-12)
    assert spectral_radius(sub) == pytest.approx(spectral_radius(exact), abs=1e-12)
    assert spectral_radius(sub) > 0.1
    np.testing.assert_allclose(res.C[np.ix_(block, block)], sub, atol=1e-12)
    # one column short of |S|: the cycle is not closed, rho of the path found is 0
    short = search_influence(model, tau, budget=budget - model.n + 1, seed=0, target="rho")
    assert spectral_radius(short.C) == pytest.approx(0.0, abs=1e-12)


def test_dense_block_scan_is_a_principal_block_of_largest_entropy():
    # A random score table (every site reads every other): the probed column moves every
    # site, so the block is the s sites of largest entropy at the start, every pair among
    # them asked: the non-zero entries of C are exactly S x S (off the diagonal) plus the
    # probed column, with s(s - 1) + (n - 1) - (s - 1) <= budget - n.
    model = table_model(8, 3, seed=21)
    start = np.random.default_rng(0).integers(3, size=(1, 8))
    budget = 8 + 7 + 9  # base, the probed column, (s - 1)^2 = 9 more: s = 4
    res = search_influence(model, 0.7, budget=budget, starts=start, seed=0, target="rho")
    assert res.queries <= budget
    logp = np.log(np.stack([conditional(model, start[0], i, 0.7) for i in range(8)]))
    entropy = -(np.exp(logp) * logp).sum(axis=1)
    top = np.sort(np.argsort(-entropy, kind="stable")[:4])
    j0 = int(np.argmax(entropy))
    want = np.zeros((8, 8), dtype=bool)
    want[np.ix_(top, top)] = True
    want[:, j0] = True
    np.fill_diagonal(want, False)
    np.testing.assert_array_equal(res.C > 0, want)


def test_block_scan_on_a_large_chain_is_realised_and_rechecks():
    # n = 40 sites, 600 rows (below one context's n^2 = 1,600): the scan still yields a
    # non-empty C (a block grown over 14 probed columns after the 40 base queries: the model
    # is sparse), every value realised by a witness that two fresh queries reproduce; same
    # seed, same result.
    n = 40
    rng = np.random.default_rng(5)
    graph = nx.random_regular_graph(4, n, seed=2)
    model = PottsModel(graph, 3, coupling={e: float(rng.uniform(0.5, 2)) for e in graph.edges},
                       field=0.5 * rng.standard_normal((n, 3)))
    start = rng.integers(3, size=(1, n))
    res = search_influence(model, 1.0, budget=600, starts=start, seed=3, target="rho")
    assert 0 < res.queries <= 600
    assert np.count_nonzero(res.C) > 0 and res.spectral_radius > 0
    report = recheck_witnesses(model, res)
    assert report.ok and report.n_witnesses == len(res.witnesses) > 0
    again = search_influence(model, 1.0, budget=600, starts=start, seed=3, target="rho")
    assert again.to_dict() == res.to_dict()
