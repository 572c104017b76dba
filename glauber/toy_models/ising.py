"""Ising models: the Gibbs (compatible) model on a graph and the asymmetric (incompatible) one.

Tokens ``0`` and ``1`` are the spins ``-1`` and ``+1``. With the local field
``f_i(x) = h_i + sum_k J_ik s(x_k)`` the score of spin ``s`` at site ``i`` is ``s * f_i(x)``, so
at temperature ``tau`` the conditional is ``p(+1 | x_{-i}) = 1 / (1 + exp(-2 f_i / tau))``: the
heat-bath (Glauber) update of the Ising model at inverse temperature ``beta = 1 / tau``
(Levin–Peres–Wilmer 2nd ed., Section 3.3.5). When ``J`` is symmetric these conditionals are
those of ``pi(x) ∝ exp(beta (sum_{u<v} J_uv s_u s_v + sum_i h_i s_i))`` (compatible: Theorem 3);
when it is not, no joint law has them (the rectangle test of Proposition 4 gives
``|delta| = 4 |J_ij - J_ji|``).
"""

from __future__ import annotations

import numbers
from typing import Any, Mapping

import networkx as nx
import numpy as np

from glauber.core.validation import (
    as_real_array,
    check_finite_float,
    check_positive_int,
)
from glauber.errors import InvalidGraphError, InvalidParameterError
from glauber.theory.floating import UNIT_ROUNDOFF, gamma
from glauber.theory.influence_bounds import OscillationBound, pairwise_oscillation
from glauber.toy_models.base import ToyModel

Coupling = float | str | Mapping[Any, float]


def graph_sites(graph: nx.Graph) -> tuple[Any, ...]:
    """Check ``graph`` and return its nodes in site order, ``sorted(graph.nodes)``.

    Raises
    ------
    InvalidGraphError
        If the graph is not a simple undirected ``networkx`` graph, has no nodes, has self-loops,
        or has nodes that cannot be sorted.
    """
    if not isinstance(graph, nx.Graph):
        raise InvalidGraphError(f"expected a networkx graph, got {type(graph).__name__}")
    if graph.is_directed():
        raise InvalidGraphError(
            "the graph is directed; pass an undirected graph (graph.to_undirected()), or use "
            "AsymmetricIsingModel(J) for couplings with J_ij != J_ji"
        )
    if graph.is_multigraph():
        raise InvalidGraphError(
            "the graph has parallel edges (a multigraph); merge them into a simple nx.Graph, "
            "adding their couplings into one edge attribute"
        )
    if graph.number_of_nodes() == 0:
        raise InvalidGraphError("the graph has no nodes; a model needs at least one site")
    loops = list(nx.selfloop_edges(graph))
    if loops:
        raise InvalidGraphError(
            f"the graph has self-loops at {sorted({u for u, _ in loops}, key=repr)[:5]}; remove "
            "them (graph.remove_edges_from(nx.selfloop_edges(graph))): a site does not interact "
            "with itself"
        )
    try:
        return tuple(sorted(graph.nodes))
    except TypeError as exc:
        raise InvalidGraphError(
            "graph nodes cannot be sorted, so sorted(graph.nodes) cannot define the site order; "
            "relabel them, e.g. nx.convert_node_labels_to_integers(graph)"
        ) from exc


def graph_couplings(
    graph: nx.Graph, nodes: tuple[Any, ...], coupling: Coupling
) -> tuple[np.ndarray, np.ndarray]:
    """Edge list (site pairs, ``[E, 2]``) and coupling per edge (``[E]``) of ``graph``.

    Parameters
    ----------
    graph : networkx.Graph
        A graph already checked by :func:`graph_sites`.
    nodes : tuple
        The nodes in site order.
    coupling : float, str or mapping
        One value for every edge; the name of an edge attribute holding each edge's value; or a
        mapping ``(u, v) -> J_uv`` with an entry for every edge (either orientation; both
        orientations must then agree).

    Raises
    ------
    InvalidParameterError
        If a value is missing, not a real number, or not finite, or a mapping key is not an edge.
    """
    site_of = {v: i for i, v in enumerate(nodes)}
    edges = list(graph.edges)
    pairs = np.array([[site_of[u], site_of[v]] for u, v in edges], dtype=np.int64).reshape(-1, 2)
    if isinstance(coupling, str):
        weights = []
        for u, v in edges:
            if coupling not in graph.edges[u, v]:
                raise InvalidParameterError(
                    f"edge ({u!r}, {v!r}) has no attribute {coupling!r}; set it on every edge or "
                    "pass a number or a dict edge -> coupling"
                )
            value = graph.edges[u, v][coupling]
            weights.append(check_finite_float(value, f"coupling of edge {(u, v)}"))
        return pairs, np.array(weights, dtype=np.float64)
    if isinstance(coupling, Mapping):
        given: dict[frozenset, float] = {}
        for key, value in coupling.items():
            if not (isinstance(key, tuple) and len(key) == 2 and graph.has_edge(*key)):
                raise InvalidParameterError(
                    f"coupling key {key!r} is not an edge of the graph; keys must be edges (u, v)"
                )
            j = check_finite_float(value, f"coupling of edge {key!r}")
            edge = frozenset(key)
            if edge in given and given[edge] != j:
                raise InvalidParameterError(
                    f"edge {key!r} is given two couplings ({given[edge]} and {j}); an undirected "
                    "edge has one coupling (use AsymmetricIsingModel for J_ij != J_ji)"
                )
            given[edge] = j
        missing = [(u, v) for u, v in edges if frozenset((u, v)) not in given]
        if missing:
            raise InvalidParameterError(
                f"no coupling given for edges {missing[:5]}; the dict needs every edge"
            )
        return pairs, np.array([given[frozenset(e)] for e in edges], dtype=np.float64)
    j = check_finite_float(coupling, "coupling")
    return pairs, np.full(len(edges), j, dtype=np.float64)


def symmetric_matrix(n: int, pairs: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The ``n x n`` symmetric matrix with ``J[u, v] = J[v, u] = w`` per edge, zero elsewhere."""
    mat = np.zeros((n, n), dtype=np.float64)
    mat[pairs[:, 0], pairs[:, 1]] = weights
    mat[pairs[:, 1], pairs[:, 0]] = weights
    return mat


def _site_field(field: Any, nodes: tuple[Any, ...]) -> np.ndarray:
    n = len(nodes)
    if isinstance(field, Mapping):
        site_of = {v: i for i, v in enumerate(nodes)}
        h = np.zeros(n, dtype=np.float64)
        for node, value in field.items():
            if node not in site_of:
                raise InvalidParameterError(f"field key {node!r} is not a node of the graph")
            h[site_of[node]] = check_finite_float(value, f"field at node {node!r}")
        return h
    if isinstance(field, numbers.Real) and not isinstance(field, bool):
        return np.full(n, check_finite_float(field, "field"), dtype=np.float64)
    h = as_real_array(field, "field")
    if h.shape != (n,):
        raise InvalidParameterError(
            f"field must be a number, a dict node -> h, or an array of n = {n} values in site "
            f"order, got shape {h.shape}"
        )
    if not np.isfinite(h).all():
        raise InvalidParameterError("field values must be finite; replace NaN/inf entries")
    return h


def spins(states: np.ndarray) -> np.ndarray:
    """Spins ``2 x - 1`` in ``{-1, +1}`` (float64) of binary states."""
    return 2.0 * np.asarray(states, dtype=np.float64) - 1.0


def spin_oscillation_bound(J: np.ndarray, h: np.ndarray) -> OscillationBound:
    """Lemma 6's oscillation of spin scores ``s(a) (h_i + sum_k J_ik s(x_k))``, exactly:
    ``4 |J_ij|`` (flipping ``x_j`` moves the two scores by ``+-2 J_ij``), plus the rounding of
    the local field (a dot product of ``n`` terms and one addition, within ``gamma_{n+1}`` of
    ``|h_i| + sum_k |J_ik|``; :func:`~glauber.theory.influence_bounds.pairwise_oscillation`)."""
    n = J.shape[0]
    s = np.array([-1.0, 1.0])
    K = J[:, :, None, None] * np.outer(s, s)[None, None, :, :]
    err = gamma(n + 1, UNIT_ROUNDOFF["float64"]) * (np.abs(h) + np.abs(J).sum(axis=1))
    return OscillationBound(pairwise_oscillation(K, err), "closed-form",
                            {"scores": "spin: s(a) (h_i + sum_k J_ik s(x_k))"})


def _ising_scores(local_field: np.ndarray) -> np.ndarray:
    """Scores ``[-f, +f]`` of the tokens 0 (spin -1) and 1 (spin +1) for local fields ``f[B]``."""
    return np.stack([-local_field, local_field], axis=1)


class IsingModel(ToyModel):
    """Ising model on a graph, spins ``s = 2 x - 1``, as a (compatible) conditional model.

    ``s_i(a; x_{-i}) = s(a) * (h_i + sum_{k ~ i} J_ik s(x_k))``; at temperature ``tau`` the Glauber
    chain is heat-bath Ising at ``beta = 1/tau`` with
    ``pi(x) ∝ exp(beta (sum_{edges uv} J_uv s_u s_v + sum_i h_i s_i))`` (Theorem 3: compatible, so
    reversible w.r.t. ``pi``; Levin–Peres–Wilmer 2nd ed., Section 3.3.5).

    Parameters
    ----------
    graph : networkx.Graph
        Simple undirected graph with at least one node and no self-loops. Site ``i`` is the
        ``i``-th node of ``sorted(graph.nodes)`` (see :attr:`nodes`, :attr:`site_of`).
    coupling : float, str or mapping, default 1.0
        ``J`` on every edge, or the name of an edge attribute, or a dict edge -> ``J``.
    field : float, mapping or array, default 0.0
        ``h`` at every node, or a dict node -> ``h`` (absent nodes get 0), or ``n`` values in
        site order.
    name : str, optional

    Attributes
    ----------
    J : ndarray, shape (n, n)
        Symmetric couplings with zero diagonal.
    h : ndarray, shape (n,)
        Fields in site order.
    edges : ndarray, shape (E, 2)
        Edges as site pairs; :attr:`edge_couplings` holds their ``J``.

    Raises
    ------
    InvalidGraphError
        Empty graph, self-loops, directed or multigraph, unsortable nodes.
    InvalidParameterError
        Missing, non-real or non-finite coupling or field.

    Examples
    --------
    >>> import networkx as nx, numpy as np
    >>> m = IsingModel(nx.path_graph(3), coupling=1.0, field=0.5)
    >>> m.score_site(np.array([[1, 0, 1]]), 1).tolist()  # f_1 = 0.5 + 1 + 1
    [[-2.5, 2.5]]
    """

    def __init__(
        self,
        graph: nx.Graph,
        coupling: Coupling = 1.0,
        field: float | Mapping[Any, float] | np.ndarray = 0.0,
        name: str | None = None,
    ) -> None:
        nodes = graph_sites(graph)
        super().__init__(len(nodes), 2, name=name or "ising", labels=("-1", "+1"))
        self.nodes = nodes
        self.site_of = {v: i for i, v in enumerate(nodes)}
        self.edges, self.edge_couplings = graph_couplings(graph, nodes, coupling)
        self.J = symmetric_matrix(self.n, self.edges, self.edge_couplings)
        self.h = _site_field(field, nodes)

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        # J[site, site] = 0, so the token at `site` does not enter.
        return _ising_scores(self.h[site] + spins(states) @ self.J[site])

    def oscillation_upper_bound(self) -> OscillationBound:
        """Lemma 6's oscillation in closed form, ``4 |J_ij|`` plus rounding
        (:func:`spin_oscillation_bound`)."""
        return spin_oscillation_bound(self.J, self.h)

    def log_weight(self, states: np.ndarray) -> np.ndarray:
        """Gibbs log-weight at ``tau = 1``, ``sum_{edges} J_uv s_u s_v + sum_i h_i s_i = -energy``.

        ``pi_tau(x) ∝ exp(log_weight(x) / tau)``. Input ``[B, n]`` (or one state), output ``[B]``.
        """
        s = spins(self.as_states(states))
        pair = s[:, self.edges[:, 0]] * s[:, self.edges[:, 1]]
        return pair @ self.edge_couplings + s @ self.h

    def energy(self, states: np.ndarray) -> np.ndarray:
        """Ising energy ``H(x) = -(sum_{edges} J_uv s_u s_v + sum_i h_i s_i)``, shape ``[B]``."""
        return -self.log_weight(states)


class AsymmetricIsingModel(ToyModel):
    """Ising-type conditionals with a general, possibly asymmetric, coupling matrix.

    ``s_i(s; x_{-i}) = s * (h_i + sum_k J_ik s(x_k))``: the influence of ``k`` on ``i`` is
    ``J_ik``. If ``J`` is symmetric this is :class:`IsingModel`; otherwise the conditionals are
    incompatible (no joint law has them: the rectangle of Proposition 4 flipping spins ``i`` and
    ``j`` has ``|delta| = 4 |J_ij - J_ji|`` at ``tau = 1``), the toy analogue of an MLM.

    Parameters
    ----------
    J : array_like, shape (n, n)
        Real, finite, zero diagonal.
    field : float or array_like of shape (n,), default 0.0
    name : str, optional

    Raises
    ------
    InvalidParameterError
        If ``J`` is not a finite square matrix with zero diagonal, or the field is malformed.
    """

    def __init__(
        self, J: Any, field: float | np.ndarray = 0.0, name: str | None = None
    ) -> None:
        mat = as_real_array(J, "couplings J")
        if mat.ndim != 2 or mat.shape[0] != mat.shape[1] or mat.shape[0] < 1:
            raise InvalidParameterError(f"J must be a square n x n matrix, got shape {mat.shape}")
        if not np.isfinite(mat).all():
            raise InvalidParameterError("J must be finite; replace its NaN/inf entries")
        if np.any(np.diag(mat) != 0.0):
            raise InvalidParameterError(
                "J must have a zero diagonal (a site does not influence itself); set "
                "np.fill_diagonal(J, 0)"
            )
        super().__init__(mat.shape[0], 2, name=name or "asym-ising", labels=("-1", "+1"))
        self.J = mat
        self.h = _site_field(field, tuple(range(self.n)))

    @classmethod
    def random(
        cls,
        n: int,
        rng: np.random.Generator | int | None = None,
        scale: float = 1.0,
        asym: float = 0.5,
        field: float | np.ndarray = 0.0,
    ) -> "AsymmetricIsingModel":
        """Random couplings ``J = scale * (S + asym * A)``, ``G`` i.i.d. standard normal off the
        diagonal, ``S = (G + G^T)/2``, ``A = (G - G^T)/2``.

        ``asym = 0`` gives a symmetric (compatible) ``J``; ``asym = 1`` gives ``J = scale * G``
        with independent entries.

        Raises
        ------
        InvalidParameterError
            If ``n < 1``, ``scale`` is not finite, or ``asym`` is outside ``[0, 1]``.
        """
        n = check_positive_int(n, "n")
        scale = check_finite_float(scale, "scale")
        asym = check_finite_float(asym, "asym")
        if not 0.0 <= asym <= 1.0:
            raise InvalidParameterError(f"asym must lie in [0, 1], got {asym}")
        g = np.random.default_rng(rng).standard_normal((n, n))
        np.fill_diagonal(g, 0.0)
        sym, anti = (g + g.T) / 2.0, (g - g.T) / 2.0
        return cls(scale * (sym + asym * anti), field=field)

    def is_compatible(self) -> bool:
        """True iff ``J`` is exactly symmetric (then the model is Gibbs, Theorem 3)."""
        return bool(np.array_equal(self.J, self.J.T))

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        # J[site, site] = 0, so the token at `site` does not enter.
        return _ising_scores(self.h[site] + spins(states) @ self.J[site])

    def oscillation_upper_bound(self) -> OscillationBound:
        """Lemma 6's oscillation in closed form, ``4 |J_ij|`` plus rounding
        (:func:`spin_oscillation_bound`)."""
        return spin_oscillation_bound(self.J, self.h)


__all__ = [
    "AsymmetricIsingModel",
    "IsingModel",
    "graph_couplings",
    "graph_sites",
    "spin_oscillation_bound",
    "spins",
    "symmetric_matrix",
]
