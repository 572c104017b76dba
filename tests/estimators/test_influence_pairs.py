"""The exhaustive influence of a score table, from each pair of contexts once
(glauber.estimators.influence, ``contexts_only``): the same result, bit for bit, as the
enumeration of every query ``(x, j, b, i)`` over every state, which forms each value ``2 q``
times.

Oracle: the enumeration itself (the same function with the table's ``contexts_only`` switched
off), on random tables of every shape the exhaustive path takes, compact and expanded, at random
temperatures; and the exact chain's influence matrix.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.estimators import influence
from glauber.exact.chain import ExactChain
from glauber.exact.score_table import TabulatedModel, compact_score_table, score_table

from ..support import table_model


def _both(table: TabulatedModel, tau: float):
    fast = influence(table, tau, exhaustive=True, batch_size=37)
    table.contexts_only = False
    slow = influence(table, tau, exhaustive=True, batch_size=37)
    table.contexts_only = True
    return fast, slow


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 4), q=st.integers(2, 5), seed=st.integers(0, 10**6),
       scale=st.floats(0.0, 4.0), tau=st.floats(0.05, 5.0), compact=st.booleans())
def test_the_pairs_give_the_enumeration_bit_for_bit(n, q, seed, scale, tau, compact) -> None:
    model = table_model(n, q, seed, scale=scale)
    rows = compact_score_table(model) if compact else score_table(model)
    fast, slow = _both(TabulatedModel(model, rows), tau)
    np.testing.assert_array_equal(fast.C, slow.C)
    np.testing.assert_array_equal(fast.Delta, slow.Delta)
    assert fast.rounding == slow.rounding and fast.n_comparisons == slow.n_comparisons
    assert fast.contraction == slow.contraction and fast.rho_lower == slow.rho_lower
    same = {f.name for f in dataclasses.fields(fast)} - {"C", "Delta", "lemma6", "tanh"}
    assert all(getattr(fast, k) == getattr(slow, k) for k in same)


def test_the_pairs_give_the_exact_chains_influence_matrix() -> None:
    model = table_model(3, 4, 11, scale=1.5)
    chain = ExactChain(model, 0.8)
    fast = influence(chain.tabulated(), 0.8, exhaustive=True)
    np.testing.assert_array_equal(fast.C, chain.influence_matrix())
    assert fast.exhaustive and not fast.is_lower_bound and fast.C.max() > 0
