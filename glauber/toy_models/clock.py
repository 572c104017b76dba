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

from typing import Any

import networkx as nx
import numpy as np

from glauber.toy_models.family import Preset, ToyFamily
from glauber.toy_models.ising import (
    GRAPH_OPTIONS,
    Coupling,
    GraphModel,
    cycle_graph,
    graph_arguments,
    graph_draw,
)


class ClockModel(GraphModel):
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
        super().__init__(graph, q, coupling, field, name or "clock")
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
#: The clock family: any graph and number of angles, couplings per edge, fields per site.
CLOCK = ToyFamily(
    "clock", lambda n, q, **params: ClockModel(q=q, **graph_arguments(n, **params)),
    graph_draw(), GRAPH_OPTIONS, min_sites=1, max_q=None,
    presets={"clock-cycle": Preset(
        lambda n, q, J, h: ClockModel(cycle_graph(n), q, coupling=J, field=h),
        {"n": 6, "q": 4, "J": 1.0, "h": 0.0},
        "q-state clock model on the n-cycle, coupling J, field h along token 0")},
)


__all__ = ["CLOCK", "ClockModel"]
