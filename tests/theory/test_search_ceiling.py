"""Statement 4 of docs/theory.md, "Searching Definition 2 at a budget": on i.i.d. rows no search
beats the ceiling. Oracles: brute force over every vertex set and every ordering, and the real
search run on every relabelling of the contexts of a random table."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError
from glauber.estimators.influence_search import search_influence
from glauber.exact import ExactChain
from glauber.theory.contraction import spectral_radius
from glauber.theory.search_ceiling import (
    first_edge_law,
    iid_rows_ceiling,
    independent_set_counts,
)
from glauber.toy_models import RandomTableModel


@st.composite
def graphs(draw: st.DrawFn, max_vertices: int = 7) -> np.ndarray:
    N = draw(st.integers(1, max_vertices))
    bits = draw(st.lists(st.booleans(), min_size=N * N, max_size=N * N))
    A = np.triu(np.array(bits, dtype=bool).reshape(N, N), 1)
    return A | A.T


@settings(max_examples=60, deadline=None)
@given(graphs())
def test_independent_set_counts_by_brute_force(A: np.ndarray) -> None:
    N = A.shape[0]
    brute = [sum(1 for S in itertools.combinations(range(N), k)
                 if not A[np.ix_(S, S)].any()) for k in range(N + 2)]
    assert independent_set_counts(A, N + 1) == brute


@settings(max_examples=40, deadline=None)
@given(graphs(max_vertices=6))
def test_first_edge_law_is_the_law_of_the_first_prefix_with_an_edge(A: np.ndarray) -> None:
    N = A.shape[0]
    hits = np.zeros(N + 2)
    orders = list(itertools.permutations(range(N)))
    for order in orders:
        for s in range(N + 2):
            prefix = list(order[:s])
            hits[s] += bool(A[np.ix_(prefix, prefix)].any())
    np.testing.assert_allclose(first_edge_law(A, N + 1), hits / len(orders), atol=1e-15)


def _relabelled(model: RandomTableModel, perms: tuple[tuple[int, ...], ...]) -> RandomTableModel:
    """The same table with the contexts of each site permuted (``n = 2``)."""
    q = model.q
    out = RandomTableModel(2, q, 0)
    table = model.table.reshape(2, q, q, q)  # site, x_0, x_1, token
    out.table = np.stack([table[0][:, list(perms[0])],        # site 0 reads x_1
                          table[1][list(perms[1])]]).reshape(model.table.shape)
    return out


@pytest.mark.parametrize("seed, budget", [(3, 3), (11, 4)])
def test_the_search_never_beats_the_ceiling_over_every_relabelling(seed: int,
                                                                  budget: int) -> None:
    """Over the uniform relabelling of each site's contexts (which leaves the multiset of rows,
    hence ``c`` and the ceiling, unchanged) the search's success frequencies are exact
    probabilities, and statement 4 bounds them."""
    q, tau, r = 4, 0.7, 0.95
    base = RandomTableModel(2, q, seed, scale=1.5)
    P = ExactChain(base, tau).conditionals().reshape(2, q, q, q)
    ceiling = iid_rows_ceiling([P[0][0], P[1][:, 0]], budget, r)
    relabellings = list(itertools.product(itertools.permutations(range(q)), repeat=2))
    entries, rho = np.zeros(2), 0
    for perms in relabellings:
        model = _relabelled(base, perms)
        exact = ExactChain(model, tau).influence_matrix()
        for target in ("entries", "rho"):
            C = search_influence(model, tau, budget=budget, seed=0, target=target).C
            if target == "entries":
                entries += [C[0, 1] >= r * exact[0, 1] - 1e-12, C[1, 0] >= r * exact[1, 0] - 1e-12]
            else:
                rho += spectral_radius(C) >= r * spectral_radius(exact) - 1e-12
    total = len(relabellings)
    assert np.all(entries / total <= np.array(ceiling.entries) + 1e-12)
    assert rho / total <= ceiling.rho + 1e-12
    assert ceiling.rho < 1.0  # the bound says something on these tables


def test_the_ceiling_of_an_entry_is_attained_by_asking_one_site_only() -> None:
    """Statement 4's entry bound is an equality for the search that spends its budget at one
    site: over every ``B``-set of contexts, the share holding a pair within ``r`` of ``c``."""
    q, B, r = 6, 3, 0.95
    rng = np.random.default_rng(5)
    rows = [rng.dirichlet(np.ones(4), size=q) for _ in range(2)]
    ceiling = iid_rows_ceiling(rows, B, r)
    tv = 0.5 * np.abs(rows[0][:, None] - rows[0][None]).sum(-1)
    subsets = list(itertools.combinations(range(q), B))
    reached = sum(tv[np.ix_(S, S)].max() >= r * tv.max() for S in subsets)
    assert ceiling.entries[0] == pytest.approx(reached / len(subsets), abs=1e-15)
    assert math.comb(q, B) == len(subsets)


@pytest.mark.parametrize("kwargs, match", [
    ({"rows": [np.ones((3, 2))], "budget": 2}, "exactly two sites"),
    ({"rows": [np.ones((3, 2)), np.ones((1, 2))], "budget": 2}, "at least two contexts"),
    ({"rows": [np.ones((3, 2))] * 2, "budget": 0}, "budget"),
    ({"rows": [np.ones((3, 2))] * 2, "budget": 2, "ratio": 1.5}, "ratio"),
])
def test_bad_input_is_a_typed_error(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        iid_rows_ceiling(**kwargs)


def test_independent_set_counts_refuses_a_directed_graph() -> None:
    with pytest.raises(InvalidParameterError, match="symmetric"):
        independent_set_counts(np.array([[False, True], [False, False]]), 1)
