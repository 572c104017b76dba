"""The ``q``-state clock model on a graph (a Gibbs, compatible model), and its toy family record.

Token ``a`` is the angle ``theta_a = 2 pi a / q``. The score of ``a`` at site ``i`` is
``s_i(a; x_{-i}) = sum_{k ~ i} J_ik cos(theta_a - theta_{x_k}) + h_i cos(theta_a)``, the
conditionals of ``pi_tau(x) ∝ exp((sum_{edges uv} J_uv cos(theta_{x_u} - theta_{x_v})
+ sum_i h_i cos(theta_{x_i})) / tau)`` (compatible: Theorem 3; the discrete planar rotor, e.g.
Baxter, *Exactly Solved Models in Statistical Mechanics*, 1982, Section 12.9). Two closed forms:
``q = 2`` is the Ising model with coupling ``J`` and field ``-h`` (``cos(pi (a - b))`` is the
product of the spins; token 0 points along the field); ``q = 4`` is two independent Ising models
with coupling ``J / 2`` (``cos(theta_a - theta_b) = (sigma_a sigma_b + rho_a rho_b) / 2`` with
``cos theta = (sigma + rho) / 2``, ``sin theta = (sigma - rho) / 2``).
"""

from __future__ import annotations

from typing import Any, Mapping

import networkx as nx
import numpy as np

from glauber.toy_models.base import ToyModel
from glauber.toy_models.family import Preset, ToyFamily
from glauber.toy_models.ising import (
    GRAPH_OPTIONS,
    Coupling,
    cycle_graph,
    edge_graph,
    graph_couplings,
    graph_sites,
    site_field,
    symmetric_matrix,
)


class ClockModel(ToyModel):
    """The ``q``-state clock model: ``s_i(a; x_{-i}) = sum_k J_ik cos(theta_a - theta_{x_k})
    + h_i cos(theta_a)``, ``theta_a = 2 pi a / q``.

    Parameters
    ----------
    graph : networkx.Graph
        Simple undirected graph, at least one node, no self-loops; sites in
        ``sorted(graph.nodes)`` order.
    q : int
        Number of angles, >= 2.
    coupling : float, str or mapping, default 1.0
        As for :class:`~glauber.toy_models.ising.IsingModel`.
    field : float, mapping or array, default 0.0
        ``h_i`` along the angle 0 (token 0), as for the Ising model.
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
    >>> m = ClockModel(nx.path_graph(2), q=4, coupling=2.0)
    >>> np.round(m.score_site(np.array([[0, 1]]), 0), 12).tolist()  # neighbour at 90 degrees
    [[0.0, 2.0, 0.0, -2.0]]
    """

    def __init__(self, graph: nx.Graph, q: int, coupling: Coupling = 1.0, field: Any = 0.0,
                 name: str | None = None) -> None:
        nodes = graph_sites(graph)
        super().__init__(len(nodes), q, name=name or "clock")
        self.nodes = nodes
        self.edges, self.edge_couplings = graph_couplings(graph, nodes, coupling)
        self.J = symmetric_matrix(self.n, self.edges, self.edge_couplings)
        self.h = site_field(field, nodes)
        tokens = np.arange(self.q)
        #: ``cos(theta_a - theta_b)`` for every pair of tokens.
        self.cosines = np.cos(2.0 * np.pi * (tokens[:, None] - tokens[None, :]) / self.q)

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        # cosines[:, states] is [q, B, n]; J[site, site] = 0, so the masked token does not enter.
        pair = np.einsum("abn,n->ba", self.cosines[:, np.asarray(states, dtype=np.int64)],
                         self.J[site])
        return pair + self.h[site] * self.cosines[:, 0]

    def log_weight(self, states: np.ndarray) -> np.ndarray:
        """Gibbs log-weight at ``tau = 1``: ``sum_{edges} J_uv cos(theta_u - theta_v)
        + sum_i h_i cos(theta_i)``; ``[B, n] -> [B]``."""
        x = self.as_states(states)
        pair = self.cosines[x[:, self.edges[:, 0]], x[:, self.edges[:, 1]]]
        return pair @ self.edge_couplings + self.cosines[x, 0] @ self.h


# ------------------------------------------------------------------------------- the family
def _build(n: int, q: int, edges: tuple, couplings: tuple, field: tuple) -> ClockModel:
    return ClockModel(edge_graph(n, edges), q, coupling=dict(zip(edges, couplings)),
                      field=np.array(field, dtype=np.float64))


def _draw(draw: Any, n: int, q: int, options: Mapping[str, Any]) -> dict[str, Any]:
    from glauber.toy_models.draws import draw_graph_model

    return draw_graph_model(draw, n, options)


#: The clock family: any graph and number of angles, couplings per edge, fields per site.
CLOCK = ToyFamily(
    "clock", _build, _draw, GRAPH_OPTIONS, min_sites=1, max_q=None,
    presets={"clock-cycle": Preset(
        lambda n, q, J, h: ClockModel(cycle_graph(n), q, coupling=J, field=h),
        {"n": 6, "q": 4, "J": 1.0, "h": 0.0},
        "q-state clock model on the n-cycle, coupling J, field h along token 0")},
)


__all__ = ["CLOCK", "ClockModel"]
