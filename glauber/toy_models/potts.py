"""The Potts model on a graph: ``q`` colours, a Gibbs (compatible) conditional model, and its toy
family record."""

from __future__ import annotations

import numbers
from typing import Any

import networkx as nx
import numpy as np

from glauber.errors import VocabularyError
from glauber.theory.floating import UNIT_ROUNDOFF, gamma
from glauber.theory.influence_bounds import OscillationBound, pairwise_oscillation
from glauber.toy_models.family import Preset, ToyFamily
from glauber.toy_models.ising import (
    GRAPH_OPTIONS,
    Coupling,
    GraphModel,
    cycle_graph,
    graph_arguments,
    graph_draw,
)


class PottsModel(GraphModel):
    """Potts model: ``s_i(a; x_{-i}) = sum_{k ~ i} J_ik 1{x_k = a} + h_i(a)``.

    Its conditionals are those of
    ``pi_tau(x) ∝ exp((sum_{edges uv} J_uv 1{x_u = x_v} + sum_i h_i(x_i)) / tau)``, so it is
    compatible and the Glauber chain is reversible w.r.t. ``pi_tau`` (Theorem 3); ``q = 2``
    is the Ising model with ``J_Ising = J / 2`` and ``h_Ising = (h(1) - h(0)) / 2``.

    Parameters
    ----------
    graph : networkx.Graph
        Simple undirected graph, at least one node, no self-loops; sites in
        ``sorted(graph.nodes)`` order.
    q : int
        Number of colours, >= 2.
    coupling : float, str or mapping, default 1.0
        As for :class:`~glauber.toy_models.ising.IsingModel`.
    field : None, array_like or mapping, optional
        ``h_i(a)``: None (zero), ``q`` values shared by all sites, an ``(n, q)`` array, or a dict
        node -> ``q`` values (absent nodes get 0).
    name : str, optional

    Raises
    ------
    VocabularyError
        If ``q < 2``.
    InvalidGraphError
        Empty graph, self-loops, directed or multigraph.
    InvalidParameterError
        Bad or non-finite couplings or fields.

    Examples
    --------
    >>> import networkx as nx, numpy as np
    >>> m = PottsModel(nx.path_graph(3), q=3, coupling=2.0)
    >>> m.score_site(np.array([[1, 0, 1]]), 1).tolist()  # both neighbours have colour 1
    [[0.0, 4.0, 0.0]]
    """

    def __init__(
        self,
        graph: nx.Graph,
        q: int,
        coupling: Coupling = 1.0,
        field: Any = None,
        name: str | None = None,
    ) -> None:
        if isinstance(q, bool) or not isinstance(q, numbers.Integral) or q < 2:
            raise VocabularyError(f"Potts needs q >= 2 colours (an integer), got {q!r}")
        super().__init__(graph, int(q), coupling, field, name or "potts", field_width=int(q))

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        onehot = np.eye(self.q)[np.asarray(states, dtype=np.int64)]  # [B, n, q]
        # J[site, site] = 0, so the token at `site` does not enter.
        return np.einsum("bnq,n->bq", onehot, self.J[site]) + self.h[site]

    def is_monotone(self) -> bool:
        """Whether the heat-bath grand coupling preserves an order of states: for ``q = 2``
        with ``J >= 0`` (the ferromagnetic Ising model), or with no coupling at all; never for
        ``q >= 3`` with a coupling (no order of the colours is preserved)."""
        return bool((self.J == 0).all() or (self.q == 2 and (self.J >= 0).all()))

    def preserved_by(self, sites: Any, tokens: Any) -> bool:
        """Whether ``(g x)_{sites[i]} = tokens[x_i]`` maps the conditionals onto themselves:
        exactly when ``J[sites][:, sites] = J`` and ``h[sites[i], tokens[a]] = h[i, a]``
        (:mod:`glauber.exact.symmetry`)."""
        p = np.asarray(sites, dtype=np.int64)
        t = np.asarray(tokens, dtype=np.int64)
        if sorted(p.tolist()) != list(range(self.n)) or sorted(t.tolist()) != list(range(self.q)):
            return False
        moved = np.empty_like(self.h)
        moved[np.ix_(p, t)] = self.h  # moved[p(i), t(a)] = h[i, a]
        return bool(np.array_equal(self.J[np.ix_(p, p)], self.J) and np.array_equal(moved, self.h))

    def oscillation_upper_bound(self) -> OscillationBound:
        """Lemma 6's oscillation in closed form: ``2 |J_ij|`` (recolouring ``x_j`` from ``b``
        to ``b'`` moves ``s_i(b)`` by ``J_ij``, ``s_i(b')`` by ``-J_ij``), plus the rounding of
        the scores (a sum of ``n`` terms and one addition: ``gamma_{n+1}`` of
        ``sum_k |J_ik| + max_a |h_i(a)|``)."""
        K = self.J[:, :, None, None] * np.eye(self.q)[None, None, :, :]
        err = gamma(self.n + 1, UNIT_ROUNDOFF["float64"]) * (
            np.abs(self.J).sum(axis=1) + np.abs(self.h).max(axis=1))
        return OscillationBound(pairwise_oscillation(K, err), "closed-form",
                                {"scores": "potts: sum_k J_ik 1{x_k = a} + h_i(a)"})

    def log_weight(self, states: np.ndarray) -> np.ndarray:
        """Gibbs log-weight at ``tau = 1``: ``sum_{edges} J_uv 1{x_u = x_v} + sum_i h_i(x_i)``."""
        x = self.as_states(states)
        same = x[:, self.edges[:, 0]] == x[:, self.edges[:, 1]]
        return same @ self.edge_couplings + self.h[np.arange(self.n), x].sum(axis=1)


# ------------------------------------------------------------------------------- the family
#: The Potts family: any graph and vocabulary, couplings per edge, per-colour fields per site.
POTTS = ToyFamily(
    "potts", lambda n, q, **params: PottsModel(q=q, **graph_arguments(n, **params)),
    graph_draw(per_token_field=True), GRAPH_OPTIONS, min_sites=1, max_q=None,
    presets={"potts-cycle": Preset(
        lambda n, q, J: PottsModel(cycle_graph(n), q, coupling=J),
        {"n": 6, "q": 3, "J": 1.0}, "q-colour Potts on the n-cycle, coupling J")},
)


__all__ = ["POTTS", "PottsModel"]
