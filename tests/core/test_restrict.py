"""`restrict`: chosen sites of a full-length state, the rest frozen (toy models).

Oracles:

- closed forms: the Ising (Potts) model with sites frozen is the Ising (Potts) model of the
  induced subgraph whose fields absorb the frozen neighbours, ``h'_i = h_i + sum_{j frozen}
  J_ij s_j`` (``h'_i(a) = h_i(a) + sum_{j frozen} J_ij 1{x_j = a}`` for Potts): the local field
  of a window site is its full local field split into window and frozen neighbours
  (docs/theory.md, "Notation": ``s_i(a; x_{-i})`` depends on ``x_{-i}`` only);
- exact enumeration: for a compatible model (Theorem 3, docs/theory.md) the Glauber chain on the
  chosen sites is the Glauber chain of the conditional law ``pi(. | x_frozen)``, so its exact
  stationary law is that conditional, read off the full chain's exact stationary law;
- restricting to all sites (in order) is the model itself.

Bad input is refused with a typed error before the model is asked anything (a model whose
``scores`` raises). The score-table cache of a restricted model resumes an interrupted build,
costs nothing the second time and keeps one table per context and sites.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.core import restrict
from glauber.core.enumeration import all_states, state_index
from glauber.errors import (
    GlauberError,
    InvalidParameterError,
    ResumeMismatchError,
    SequenceLengthError,
    StateSpaceTooLargeError,
    VocabularyError,
)
from glauber.exact import ExactChain
from glauber.exact.score_table import score_table, table_queries
from glauber.testing import graphs, models, temperatures
from glauber.toy_models import IsingModel, PottsModel, RandomJointModel

from ..support import CountingModel as Counting

SETTINGS = settings(max_examples=40, deadline=None, database=None)


@st.composite
def windows(draw: st.DrawFn, n: int, q: int) -> tuple[np.ndarray, np.ndarray]:
    """A context in ``V^n`` and 1..n distinct sites in any order."""
    context = np.array(draw(st.lists(st.integers(0, q - 1), min_size=n, max_size=n)))
    sites = draw(st.permutations(range(n)))[: draw(st.integers(1, n))]
    return context, np.array(sites, dtype=np.int64)


def window_scores(model, states: np.ndarray) -> np.ndarray:
    """``[k, B, q]``: the scores of every window site at every state."""
    k = states.shape[1]
    return np.stack([np.asarray(model.scores(states, np.full(len(states), s))) for s in range(k)])


def induced(graph: nx.Graph, sites: np.ndarray, weights: dict) -> nx.Graph:
    """The subgraph on ``sites``, node ``sites[s]`` renamed ``s`` (so window order is site order),
    each edge carrying its coupling as attribute ``J``."""
    rename = {int(v): s for s, v in enumerate(sites)}
    sub = nx.Graph()
    sub.add_nodes_from(range(len(sites)))
    for (u, v), j in weights.items():
        if u in rename and v in rename:
            sub.add_edge(rename[u], rename[v], J=j)
    return sub


@SETTINGS
@given(graphs(min_nodes=2, max_nodes=7), st.data())
def test_restricted_ising_is_ising_on_the_induced_subgraph_with_boundary_fields(graph, data):
    n = graph.number_of_nodes()
    weights = {e: data.draw(st.floats(-2, 2)) for e in graph.edges}
    h = np.array(data.draw(st.lists(st.floats(-2, 2), min_size=n, max_size=n)))
    full = IsingModel(graph, coupling=weights or 0.0, field=h)
    context, sites = data.draw(windows(n, 2))
    frozen = np.setdiff1d(np.arange(n), sites)
    spin = 2.0 * context - 1.0
    boundary = h[sites] + full.J[np.ix_(sites, frozen)] @ spin[frozen]
    reference = IsingModel(induced(graph, sites, weights), coupling="J", field=boundary)
    states = all_states(len(sites), 2)
    got = window_scores(restrict(full, context, sites), states)
    np.testing.assert_allclose(got, window_scores(reference, states), rtol=0, atol=1e-12)


@SETTINGS
@given(graphs(min_nodes=2, max_nodes=5), st.data())
def test_restricted_potts_is_potts_on_the_induced_subgraph_with_boundary_fields(graph, data):
    n, q = graph.number_of_nodes(), 3
    weights = {e: data.draw(st.floats(-2, 2)) for e in graph.edges}
    h = np.array(data.draw(st.lists(st.floats(-2, 2), min_size=n * q, max_size=n * q)))
    h = h.reshape(n, q)
    full = PottsModel(graph, q, coupling=weights or 0.0, field=h)
    context, sites = data.draw(windows(n, q))
    frozen = np.setdiff1d(np.arange(n), sites)
    onehot = np.eye(q)[context[frozen]]  # [frozen, q]
    boundary = h[sites] + full.J[np.ix_(sites, frozen)] @ onehot
    reference = PottsModel(induced(graph, sites, weights), q, coupling="J", field=boundary)
    states = all_states(len(sites), q)
    got = window_scores(restrict(full, context, sites), states)
    np.testing.assert_allclose(got, window_scores(reference, states), rtol=0, atol=1e-12)


@settings(max_examples=25, deadline=None, database=None)
@given(models(max_states=256, compatible=True), temperatures(0.2, 5.0), st.data())
def test_restricted_stationary_law_is_the_conditional_of_the_joint(model, tau, data):
    n, q = model.n, model.q
    context, sites = data.draw(windows(n, q))
    window = restrict(model, context, sites)
    pi = ExactChain(model, tau).stationary()
    # pi(w | x_frozen = context_frozen): full states equal to the context off the window
    full_states = np.tile(context, (q ** len(sites), 1))
    full_states[:, sites] = all_states(len(sites), q)
    conditional = pi[state_index(full_states, q)]
    conditional = conditional / conditional.sum()
    got = ExactChain(window, tau).stationary()
    np.testing.assert_allclose(got, conditional, rtol=1e-9, atol=1e-13)


@settings(max_examples=25, deadline=None, database=None)
@given(models(max_states=256), st.data())
def test_restricting_to_every_site_in_order_is_the_identity(model, data):
    context = np.array(data.draw(st.lists(st.integers(0, model.q - 1), min_size=model.n,
                                          max_size=model.n)))
    window = restrict(model, context, np.arange(model.n))
    states = all_states(model.n, model.q)
    assert window.n == model.n and window.q == model.q
    np.testing.assert_array_equal(window_scores(window, states), window_scores(model, states))
    np.testing.assert_array_equal(window.embed(states), states)


# --------------------------------------------------------------------------------- bad input
class NoForward:
    """A model that must not be asked: every ``scores`` call fails the test."""

    def __init__(self, n: int | None, q: int, max_sites: int | None = None) -> None:
        self.n, self.q, self.vocab = n, q, tuple(range(q))
        self.name = "no-forward"
        if max_sites is not None:
            self.max_sites = max_sites

    def scores(self, states, sites):
        raise AssertionError("the model was asked before the input was checked")


BAD_SITES = [
    ([], InvalidParameterError, "empty"),
    ([5], InvalidParameterError, "outside the context's positions 0..4"),
    ([-1], InvalidParameterError, "outside"),
    ([1, 3, 1], InvalidParameterError, "distinct"),
    ([1.5], InvalidParameterError, "integer"),
    ([True], InvalidParameterError, "integer"),
    (["a"], InvalidParameterError, "integer"),
    ([[1], [2, 3]], InvalidParameterError, "integer"),
]


@pytest.mark.parametrize("sites, error, match", BAD_SITES)
def test_bad_sites_are_refused_before_any_forward(sites, error, match):
    with pytest.raises(error, match=match):
        restrict(NoForward(5, 3), [0, 1, 2, 0, 1], sites)


BAD_CONTEXTS = [
    (NoForward(5, 3), [0, 1, 2, 0], SequenceLengthError, r"with_length\(4\)"),
    (NoForward(5, 3), [[0, 1, 2, 0, 1]], SequenceLengthError, "one non-empty"),
    (NoForward(None, 3), [], SequenceLengthError, "one non-empty"),
    (NoForward(None, 3, max_sites=4), [0, 1, 2, 0, 1], SequenceLengthError, "at most 4"),
    (NoForward(5, 3), [0, 1, 3, 0, 1], VocabularyError, "0..2"),
    (NoForward(5, 3), [0, 1, -1, 0, 1], VocabularyError, "0..2"),
    (NoForward(5, 3), [0, 1, 0.5, 0, 1], VocabularyError, "integer"),
    (NoForward(5, 3), list("ABCDE"), VocabularyError, "encode"),
]


@pytest.mark.parametrize("model, context, error, match", BAD_CONTEXTS)
def test_bad_contexts_are_refused_before_any_forward(model, context, error, match):
    with pytest.raises(error, match=match):
        restrict(model, context, [1])


def test_a_window_above_the_exact_limit_is_refused_before_any_forward():
    # 20^6 states: over the matrix-free limit of 20^5 (a 5-site window, 3.2 million states,
    # now fits: glauber.exact.window_chain)
    window = restrict(NoForward(10, 20), np.zeros(10, dtype=int), [2, 3, 4, 5, 6, 7])
    with pytest.raises(StateSpaceTooLargeError, match="over the matrix-free limit"):
        ExactChain(window, 1.0)
    with pytest.raises(StateSpaceTooLargeError, match="over the limit max_states = 8000"):
        ExactChain(restrict(NoForward(10, 21), np.zeros(10, dtype=int), [2, 3, 4]), 1.0,
                   max_states=8000)


def test_every_refusal_is_a_glauber_error():
    for error in {e for _, e, _ in BAD_SITES} | {e for *_, e, _ in BAD_CONTEXTS}:
        assert issubclass(error, GlauberError) and issubclass(error, ValueError)


# ---------------------------------------------------------------------------- score tables
FULL = RandomJointModel(5, 3, rng=7)
CONTEXT = np.array([0, 2, 1, 1, 0])
SITES = [3, 0, 2]  # 27 window states, 3 * 9 = 27 rows per build


def reference_table() -> np.ndarray:
    return score_table(restrict(FULL, CONTEXT, SITES), cache=False)


def test_interrupted_build_resumes_and_leaves_no_corrupt_file(tmp_path, monkeypatch):
    monkeypatch.setenv("GLAUBER_CACHE", str(tmp_path))
    # batch 4 rows: 3 calls per site; the 5th call (inside site 1) is interrupted
    failing = Counting(FULL, fail_on=5)
    with pytest.raises(KeyboardInterrupt):
        score_table(restrict(failing, CONTEXT, SITES), batch_size=4)
    (folder,) = (tmp_path / "score_tables").iterdir()
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.*")) == [
        "manifest.json", "site_0/shard_00000.npz"]  # one shard a site: 9 rows
    assert np.load(folder / "site_0" / "shard_00000.npz")["scores"].shape == (9, 3)

    resumed = Counting(FULL)
    table = score_table(restrict(resumed, CONTEXT, SITES), batch_size=4)
    assert resumed.rows == 2 * 9 < table_queries(3, 3) == 27  # site 0 read back
    np.testing.assert_array_equal(table, reference_table())

    again = Counting(FULL)
    np.testing.assert_array_equal(score_table(restrict(again, CONTEXT, SITES)), table)
    assert again.rows == again.calls == 0  # a second build costs nothing


def test_a_torn_shard_is_recomputed_and_a_foreign_one_refused(tmp_path):
    first = Counting(FULL)
    score_table(restrict(first, CONTEXT, SITES), cache=tmp_path)
    (folder,) = tmp_path.iterdir()
    (folder / "site_1" / "shard_00000.npz").write_bytes(b"PK\x03\x04 torn")  # killed mid-copy
    second = Counting(FULL)
    table = score_table(restrict(second, CONTEXT, SITES), cache=tmp_path)
    assert second.rows == 9  # only the torn shard's rows are asked for again
    np.testing.assert_array_equal(table, reference_table())
    # a shard of another table (another model key) copied in is refused, not mixed in
    other = tmp_path / "other"
    score_table(restrict(Counting(FULL, key="another"), CONTEXT, SITES), cache=other)
    (foreign,) = other.iterdir()
    (folder / "site_2" / "shard_00000.npz").write_bytes(
        (foreign / "site_2" / "shard_00000.npz").read_bytes())
    with pytest.raises(ResumeMismatchError, match="belongs to another table"):
        score_table(restrict(Counting(FULL), CONTEXT, SITES), cache=tmp_path)


def test_tables_are_keyed_by_model_context_and_sites(tmp_path):
    def key(model_key: str, context, sites) -> str:
        return restrict(Counting(FULL, key=model_key), np.array(context), sites).cache_key

    base = key("m", CONTEXT, SITES)
    assert base == key("m", CONTEXT.copy(), list(SITES))
    others = [key("m2", CONTEXT, SITES), key("m", [0, 2, 1, 1, 1], SITES),
              key("m", CONTEXT, [0, 2, 3]), key("m", CONTEXT, [3, 0])]
    assert len({base, *others}) == 5
    # a frozen site's value changes the table: the two builds do not share a folder
    a, b = Counting(FULL), Counting(FULL)
    t_a = score_table(restrict(a, CONTEXT, SITES), cache=tmp_path)
    t_b = score_table(restrict(b, np.array([0, 1, 1, 1, 2]), SITES), cache=tmp_path)
    assert a.rows == b.rows == 27 and len(list(tmp_path.iterdir())) == 2
    assert not np.array_equal(t_a, t_b)
    # the context's tokens at the window's own sites never reach the model (each query
    # overwrites them): contexts that differ only there share one table, asked for once
    inside = CONTEXT.copy()
    inside[SITES[0]] = (inside[SITES[0]] + 1) % FULL.q
    assert key("m", inside, SITES) == base
    c = Counting(FULL)
    t_c = score_table(restrict(c, inside, SITES), cache=tmp_path)
    assert c.rows == 0 and len(list(tmp_path.iterdir())) == 2
    np.testing.assert_array_equal(t_c, t_a)
    # a model without a key is never cached
    plain = restrict(FULL, CONTEXT, SITES)
    assert plain.cache_key is None


def test_a_temperature_sweep_costs_one_build(tmp_path):
    counting = Counting(FULL)
    chain = ExactChain(restrict(counting, CONTEXT, SITES), 1.0, cache=tmp_path)
    chain.stationary()
    for tau in (0.25, 0.5, 2.0, 4.0, 8.0):
        chain.at(tau).mixing_time(0.25)
    assert counting.rows == table_queries(3, 3)
