"""The Potts model on a graph: ``q`` colours, a Gibbs (compatible) conditional model."""

from __future__ import annotations

import numbers
from typing import Any, Mapping

import networkx as nx
import numpy as np

from glauber.core.validation import as_real_array
from glauber.errors import InvalidParameterError, VocabularyError
from glauber.theory.floating import UNIT_ROUNDOFF, gamma
from glauber.theory.influence_bounds import OscillationBound, pairwise_oscillation
from glauber.toy_models.base import ToyModel
from glauber.toy_models.ising import (
    Coupling,
    graph_couplings,
    graph_sites,
    symmetric_matrix,
)


def _colour_field(field: Any, nodes: tuple[Any, ...], q: int) -> np.ndarray:
    n = len(nodes)
    if field is None:
        return np.zeros((n, q), dtype=np.float64)
    if isinstance(field, Mapping):
        site_of = {v: i for i, v in enumerate(nodes)}
        h = np.zeros((n, q), dtype=np.float64)
        for node, value in field.items():
            if node not in site_of:
                raise InvalidParameterError(f"field key {node!r} is not a node of the graph")
            row = as_real_array(value, f"field at node {node!r}")
            if row.shape != (q,):
                raise InvalidParameterError(
                    f"field at node {node!r} must have q = {q} values, got shape {row.shape}"
                )
            h[site_of[node]] = row
    else:
        h = as_real_array(field, "field")
        if h.shape == (q,):
            h = np.broadcast_to(h, (n, q)).copy()
        elif h.shape != (n, q):
            raise InvalidParameterError(
                f"field must be None, q = {q} values (every site), an (n, q) = ({n}, {q}) array, "
                f"or a dict node -> q values; got shape {h.shape}"
            )
    if not np.isfinite(h).all():
        raise InvalidParameterError("field values must be finite; replace NaN/inf entries")
    return h


class PottsModel(ToyModel):
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
        nodes = graph_sites(graph)
        super().__init__(len(nodes), int(q), name=name or "potts")
        self.nodes = nodes
        self.site_of = {v: i for i, v in enumerate(nodes)}
        self.edges, self.edge_couplings = graph_couplings(graph, nodes, coupling)
        self.J = symmetric_matrix(self.n, self.edges, self.edge_couplings)
        self.h = _colour_field(field, nodes, self.q)

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        onehot = np.eye(self.q)[np.asarray(states, dtype=np.int64)]  # [B, n, q]
        # J[site, site] = 0, so the token at `site` does not enter.
        return np.einsum("bnq,n->bq", onehot, self.J[site]) + self.h[site]

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


__all__ = ["PottsModel"]
