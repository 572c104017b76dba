"""Searched influence (Definition 2, Lemma 6) with witnesses: quality, bounds, recheck, errors."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.core.enumeration import table_queries
from glauber.errors import (
    InvalidModelError,
    InvalidParameterError,
    InvalidTemperatureError,
    SequenceLengthError,
    VocabularyError,
)
from glauber.estimators.influence import influence
from glauber.estimators.influence_search import (
    TARGETS,
    search_influence,
    search_influence_sweep,
)
from glauber.estimators.influence_threshold import rho_lower_bound, tau_no_cert
from glauber.estimators.score_cache import ScoreCache
from glauber.estimators.witnesses import recheck_witnesses, witness_table
from glauber.exact import ExactChain
from glauber.testing import models, sample, temperatures
from glauber.theory.contraction import spectral_radius
from glauber.toy_models import (
    AsymmetricIsingModel,
    CurieWeissModel,
    IsingModel,
    PlantedBasinModel,
    PottsModel,
)

from ..support import table_model
from ._reference import (
    CountingModel,
    TorchModel,
    conditional,
    exact_influence,
    raw_scores,
)


def model_temperature(model, rng: np.random.Generator) -> float:
    """The benchmark's temperature (benchmarks/influence_search.py): Corollary 7's threshold
    ``max_i sum_j Delta_ij / 4`` times ``U(0.3, 1.5)``, at least 0.05."""
    Delta = ExactChain(model, 1.0).oscillation_matrix()
    return max(float(rng.uniform(0.3, 1.5)) * float(Delta.sum(axis=1).max()) / 4.0, 0.05)


def test_quality_at_a_tenth_of_the_distinct_queries():
    # CI-sized version of benchmarks/influence_search.py on models where a tenth of the
    # n q^(n-1) distinct queries pays for a star at every site (q = 2, n = 8..11: 1.6 to 9
    # stars per site): 24 seeded draws of the pairwise families of glauber.testing, at each
    # model's own temperature scale. Measured (2026-12-03): 0.97 of the non-zero exact entries
    # reached to 95% and rho reached to 95% on 0.92 of the models with rho > 0; the search
    # before the additive surrogate reached 0.71 and 0.69 on the first 16 of them. The
    # thresholds (0.9 and 0.8) fail if the surrogate phase is lost.
    families = ("ising", "asym-ising", "curie-weiss", "potts", "planted")
    strategy = models(max_states=2048, families=families, min_sites=8)
    reached = total = 0
    rho_ok = []
    for k in range(24):
        model = sample(strategy, 2, seed=k)[-1]  # the first example is the minimal one
        tau = model_temperature(model, np.random.default_rng(k))
        exact = ExactChain(model, tau).influence_matrix()
        budget = table_queries(model.n, model.q) // 10
        entries = search_influence(model, tau, budget=budget, seed=k, target="entries")
        rho = search_influence(model, tau, budget=budget, seed=k, target="rho")
        assert max(entries.queries, rho.queries) <= budget
        off = ~np.eye(model.n, dtype=bool) & (exact > 1e-12)
        reached += int(np.sum(entries.C[off] >= 0.95 * exact[off]))
        total += int(off.sum())
        if spectral_radius(exact) > 1e-12:
            rho_ok.append(spectral_radius(rho.C) >= 0.95 * spectral_radius(exact))
    assert total > 500 and len(rho_ok) >= 15
    assert reached >= 0.9 * total
    assert np.mean(rho_ok) >= 0.8


ADDITIVE = [
    (AsymmetricIsingModel.random(8, rng=1, scale=1.0, asym=0.7, field=0.5), 1.0),
    (PottsModel(nx.gnp_random_graph(5, 0.7, seed=3), 3, coupling=1.3,
                field=0.6 * np.random.default_rng(3).standard_normal((5, 3))), 0.8),
    (PlantedBasinModel.with_random_base(6, 3, rng=2, scale=0.7, token=1, strength=3.0), 0.7),
    (CurieWeissModel(9, 1.8, field=0.3), 0.6),
    # a strong field: every TV is below 5e-8, so nothing may be judged on an absolute scale
    (CurieWeissModel(8, -0.17, field=1.0), 0.104),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("model,tau", ADDITIVE, ids=lambda v: getattr(v, "name", str(v)))
def test_additive_models_are_reached_with_a_star_and_a_cover_per_site(model, tau, target):
    # The scores of these models are additive in the one-hot context, so a star per site
    # (1 + (n - 1)(q - 1) queries) determines its surrogate exactly, and the surrogate's
    # enumeration finds Definition 2's supremum; realising it costs at most 2 (n - 1) more
    # queries per site (a context and one replacement per entry). With that budget
    # (12-22% of the tabulation here) every entry is reached to the cover's 98%
    # (docs/theory.md, Definition 2; glauber/estimators/additive_surrogate.py).
    n, q = model.n, model.q
    budget = n * (1 + (n - 1) * (q - 1)) + 2 * n * (n - 1)
    assert budget < table_queries(n, q) / 4
    exact = ExactChain(model, tau).influence_matrix()
    res = search_influence(model, tau, budget=budget, seed=0, target=target)
    assert res.queries <= budget
    off = ~np.eye(n, dtype=bool)
    assert np.all(res.C[off] >= (0.98 - 1e-9) * exact[off])
    assert np.all(res.C <= exact + 1e-12)


@settings(max_examples=40, deadline=None)
@given(model=models(max_states=256), tau=temperatures(0.1, 10.0), data=st.data(),
       target=st.sampled_from(TARGETS), seed=st.integers(0, 2**16))
def test_search_properties_on_every_family(model, tau, data, target, seed):
    # Over every family of glauber.testing (random tables, planted and restricted windows
    # included) and every budget up to a tabulation: the search never asks more distinct
    # queries than its budget (counted by the model itself), every value is realised (below
    # the exact supremum of Definition 2 / Lemma 6, by enumeration), every witness rechecks
    # against fresh queries, and the same seed gives the same result.
    budget = data.draw(st.integers(1, table_queries(model.n, model.q)), label="budget")
    counting = CountingModel(model)
    res = search_influence(counting, tau, budget=budget, seed=seed, target=target)
    assert sum(counting.calls) == res.queries <= budget
    assert res.query_fraction == res.queries / table_queries(model.n, model.q) <= 1.0
    chain = ExactChain(model, tau)
    assert np.all(res.C <= chain.influence_matrix() + 1e-12)
    assert np.all(res.Delta <= chain.oscillation_matrix() + 1e-9)
    assert recheck_witnesses(model, res).ok
    again = search_influence(model, tau, budget=budget, seed=seed, target=target)
    assert again.to_dict() == res.to_dict()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), nq=st.sampled_from([(3, 2), (4, 2), (5, 2), (3, 3), (4, 3)]),
       tau=st.floats(0.2, 5.0), data=st.data(), target=st.sampled_from(TARGETS))
def test_searched_entries_are_realised_lower_bounds(seed, nq, tau, data, target):
    # Every entry is the TV (or oscillation) of an explicit pair, so it cannot exceed the
    # supremum of Definition 2 / Lemma 6 (brute-force reference), and each witness, recomputed
    # here from two fresh model calls, gives exactly the stored value.
    n, q = nq
    budget = data.draw(st.integers(1, table_queries(n, q)), label="budget")
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
    # one local search per entry, then stop (nothing spends the rest of the budget)
    model = IsingModel(nx.path_graph(8), coupling=0.8)
    budget = table_queries(8, 2)
    res = search_influence(model, 1.0, budget=budget, restarts=1, scan=0.0, seed=0)
    assert res.queries < budget
    assert res.local_searches == model.n * (model.n - 1)


def test_walkers_that_stall_leave_no_budget_unspent():
    # The walkers of this model reach a state where every move they could make is cached
    # after 396 of its 405 distinct queries; the search used to stop there with budget left
    # and C[i, j] below 0.95 of the supremum at one entry. The rows left now go to the lines,
    # then to the unasked queries: at a budget of every query all 405 are asked, and the
    # harvest of a memo of every query is Definition 2's supremum itself
    # (test_a_memo_of_every_query_gives_the_exact_supremum).
    model = table_model(5, 3, seed=1)
    distinct = model.n * model.q ** (model.n - 1)
    res = search_influence(model, 1.0, budget=distinct, seed=0, target="entries")
    assert res.queries == distinct
    C, D = exact_influence(model, 1.0)
    np.testing.assert_allclose(res.C, C, atol=1e-12)
    np.testing.assert_allclose(res.Delta, D, atol=1e-10)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10**6), nq=st.sampled_from([(3, 3), (4, 2), (4, 3), (6, 2)]),
       target=st.sampled_from(["entries", "rho"]))
def test_a_budget_covering_every_query_spends_what_it_needs(seed, nq, target):
    # Budget for every distinct query (the most check_budget allows): the search stops only
    # once none is unasked.
    model = table_model(*nq, seed=seed)
    distinct = model.n * model.q ** (model.n - 1)
    res = search_influence(model, 0.7, budget=distinct, seed=seed, target=target)
    assert res.queries == distinct
    np.testing.assert_allclose(res.C, exact_influence(model, 0.7)[0], atol=1e-12)


def test_same_seed_same_result():
    model = table_model(5, 3, seed=4)
    a = search_influence(model, 0.8, budget=400, seed=9, target="rho")
    b = search_influence(model, 0.8, budget=400, seed=9, target="rho")
    assert a.to_dict() == b.to_dict()


def test_torch_model_matches_numpy():
    toy = table_model(5, 2, seed=2)
    a = search_influence(toy, 1.3, budget=60, seed=1)
    b = search_influence(TorchModel(toy), 1.3, budget=60, seed=1)
    np.testing.assert_allclose(b.C, a.C, atol=1e-12)
    assert recheck_witnesses(TorchModel(toy), b).ok


def test_ising_closed_form_is_reached():
    # Heat-bath Ising on the 6-cycle (degree 2): p(+ | f) = (1 + tanh(f / tau)) / 2 with
    # f = J (s_left + s_right); flipping one neighbour moves f by 2J, the largest change being
    # from f = 0 to 2J: c = tanh(2 J / tau) / 2 for neighbours, 0 otherwise (docs/theory.md).
    J, tau = 0.7, 1.2
    model = IsingModel(nx.cycle_graph(6), coupling=J)
    res = search_influence(model, tau, budget=table_queries(6, 2) // 2, seed=0)
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
    data = search_influence(model, 1.0, budget=60, seed=0).to_dict()
    data["witnesses"][0]["value"] += 0.01
    report = recheck_witnesses(model, data)
    assert not report.ok and report.failures == 1
    assert report.worst["stored"] == data["witnesses"][0]["value"]
    assert max(report.max_error_C, report.max_error_Delta) == pytest.approx(0.01, abs=1e-9)


def test_recheck_typed_errors():
    model = table_model(4, 3, seed=8)
    data = search_influence(model, 1.0, budget=100, seed=0).to_dict()
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
        with pytest.raises(InvalidParameterError, match="budget"):
            search_influence_sweep(model, [1.0], budget=budget)
    # above the n q^(n-1) = 4 x 2^3 = 32 distinct queries of a tabulation: the exact value is
    # cheaper, and the message says so and what to pass
    search_influence(model, 1.0, budget=32)
    for call in (lambda: search_influence(model, 1.0, budget=33),
                 lambda: search_influence_sweep(model, [0.5, 1.0], budget=33)):
        with pytest.raises(InvalidParameterError, match=r"tabulate.*budget <= 32"):
            call()
    with pytest.raises(InvalidParameterError, match=r"search_budget <= 32"):
        influence(model, 1.0, contexts=[[0, 1, 0, 1]], search_budget=33)
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
    results = search_influence_sweep(model, taus, budget=min(150, table_queries(n, q)),
                                     seed=seed)
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
    res = search_influence(model, 0.5, budget=60, seed=0)
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
        search_influence(Broken(), 1.0, budget=10)


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
    # C): by Perron-Frobenius monotonicity a principal block bounds rho from below. The block
    # gets 90% of a budget below n^2 (the rest goes to the lines of its best entries).
    block = [1, 4, 5, 7]
    model = _planted_block(8, block, coupling=0.9)
    tau = 0.8
    exact = ExactChain(model, tau).influence_matrix()
    cost = model.n + len(block) * (model.n - 1)  # the base queries and |S| columns

    def budget_for(rows: int) -> int:  # the least budget whose 90% pays for rows
        return -(-10 * rows // 9)

    budget = budget_for(cost)
    assert budget < model.n**2
    res = search_influence(model, tau, budget=budget, seed=0, target="rho")
    assert res.queries <= budget
    sub = exact[np.ix_(block, block)]
    assert spectral_radius(res.C) == pytest.approx(spectral_radius(sub), abs=1e-12)
    assert spectral_radius(sub) == pytest.approx(spectral_radius(exact), abs=1e-12)
    assert spectral_radius(sub) > 0.1
    np.testing.assert_allclose(res.C[np.ix_(block, block)], sub, atol=1e-12)
    # one column short of |S|: the cycle is not closed, rho of the path found is 0
    short = search_influence(model, tau, budget=budget_for(cost - model.n + 1), seed=0,
                             target="rho")
    assert spectral_radius(short.C) == pytest.approx(0.0, abs=1e-12)


def test_dense_block_scan_is_a_principal_block_of_largest_entropy():
    # A random score table (every site reads every other): the probed column moves every
    # site, so the block is the s sites of largest entropy at the start, every pair among
    # them asked: the non-zero entries of C are exactly S x S (off the diagonal) plus the
    # probed column, with s(s - 1) + (n - 1) - (s - 1) <= 0.9 budget - n (the last tenth goes
    # to the lines of the entries found: no new entry).
    model = table_model(8, 3, seed=21)
    start = np.random.default_rng(0).integers(3, size=(1, 8))
    budget = 27  # 90%: 24 = 8 base, 7 for the probed column, (s - 1)^2 = 9 more: s = 4
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


def test_a_sweep_that_asks_a_whole_tabulation_reports_the_exact_c_at_every_temperature():
    # Scores are tau-free: once the sweep has asked every one of the n q^(n-1) queries (its
    # frontier temperature spends what is left), each temperature re-reads the whole memo and
    # its C is Definition 2's, also at the low temperatures whose searches stopped early on
    # rho_lower >= 1 (docs/theory.md, "Searching Definition 2 at a budget").
    model = PottsModel(nx.cycle_graph(4), 3, coupling=1.2,
                       field=0.5 * np.random.default_rng(4).standard_normal((4, 3)))
    taus = [0.3, 0.6, 1.2, 5.0]
    sweep = search_influence_sweep(model, taus, budget=table_queries(4, 3), seed=0)
    assert sweep[0].no_certificate and not sweep[-1].no_certificate
    assert sum(r.queries for r in sweep) == table_queries(4, 3)
    for res in sweep:
        np.testing.assert_allclose(res.C, ExactChain(model, res.tau).influence_matrix(),
                                   rtol=0, atol=1e-12)
