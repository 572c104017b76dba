"""The Ising model on a graph (a Gibbs, compatible model) and its toy family record.

Tokens ``0`` and ``1`` are the spins ``-1`` and ``+1``. With the local field
``f_i(x) = h_i + sum_k J_ik s(x_k)`` the score of spin ``s`` at site ``i`` is ``s * f_i(x)``, so
at temperature ``tau`` the conditional is ``p(+1 | x_{-i}) = 1 / (1 + exp(-2 f_i / tau))``: the
heat-bath (Glauber) update of the Ising model at inverse temperature ``beta = 1 / tau``
(Levin–Peres–Wilmer 2nd ed., Section 3.3.5). When ``J`` is symmetric these conditionals are
those of ``pi(x) ∝ exp(beta (sum_{u<v} J_uv s_u s_v + sum_i h_i s_i))`` (compatible: Theorem 3);
when it is not, no joint law has them (:mod:`glauber.toy_models.asym_ising`).
"""

from __future__ import annotations

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
from glauber.toy_models.family import Preset, ToyFamily

Coupling = float | str | Mapping[Any, float]

#: Graph shapes the graph families (Ising, Potts) draw, simplest (for shrinking) first.
GRAPH_KINDS = ("random", "path", "cycle", "star", "complete", "grid")
#: How couplings are drawn: one value for every edge, or one per edge.
COUPLING_MODES = ("uniform", "per-edge")
#: How fields are drawn: zero, one value for every site, or one per site.
FIELD_MODES = ("zero", "uniform", "per-site")
#: The draw options of the graph families and their defaults.
GRAPH_OPTIONS = {"graphs": GRAPH_KINDS, "coupling": (-2.0, 2.0), "coupling_modes": COUPLING_MODES,
                 "field": (-2.0, 2.0), "field_modes": FIELD_MODES}


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


def site_field(field: Any, nodes: tuple[Any, ...], width: int | None = None) -> np.ndarray:
    """Fields in site order: ``[n]`` (``width`` None: one number per site) or ``[n, width]`` (one
    value per token, as Potts has).

    ``field`` is None (zero), one value for every site (a number, or ``width`` numbers), a dict
    node -> value (absent nodes get 0), or the values of every site in site order.

    Raises
    ------
    InvalidParameterError
        If a key is not a node, a value is not real and finite (booleans are refused), or an
        array has the wrong shape.
    """
    n, one = len(nodes), (() if width is None else (width,))
    what = "a number" if width is None else f"{width} values"
    if field is None:
        return np.zeros((n, *one), dtype=np.float64)
    if isinstance(field, Mapping):
        site_of = {v: i for i, v in enumerate(nodes)}
        h = np.zeros((n, *one), dtype=np.float64)
        for node, value in field.items():
            if node not in site_of:
                raise InvalidParameterError(f"field key {node!r} is not a node of the graph")
            h[site_of[node]] = _field_value(value, one, f"field at node {node!r}", what)
    else:
        h = _field_value(field, None, "field", what)
        if h.shape == one:
            h = np.broadcast_to(h, (n, *one)).copy()
        elif h.shape != (n, *one):
            raise InvalidParameterError(
                f"field must be None, {what} (every site), a dict node -> {what}, or the values "
                f"of all n = {n} sites in site order (shape {(n, *one)}); got shape {h.shape}"
            )
    if not np.isfinite(h).all():
        raise InvalidParameterError("field values must be finite; replace NaN/inf entries")
    return h


def _field_value(value: Any, shape: tuple[int, ...] | None, name: str, what: str) -> np.ndarray:
    if np.asarray(value).dtype.kind == "b":
        raise InvalidParameterError(f"{name} must be real numbers, got a boolean {value!r}")
    array = as_real_array(value, name)
    if shape is not None and array.shape != shape:
        raise InvalidParameterError(f"{name} must be {what}, got shape {array.shape}")
    return array


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


def _ising_preserved_by(J: np.ndarray, h: np.ndarray, sites: Any, tokens: Any) -> bool:
    """``J`` and ``h`` invariant under the site permutation, ``h`` negated under a spin flip."""
    p = np.asarray(sites, dtype=np.int64)
    t = tuple(int(a) for a in tokens)
    if t not in ((0, 1), (1, 0)) or sorted(p.tolist()) != list(range(len(h))):
        return False
    sign = 1.0 if t == (0, 1) else -1.0
    # J[p][:, p] == J says J_{p(u) p(v)} = J_uv; h[p] == sign h says h_{p(i)} = sign h_i
    return bool(np.array_equal(J[np.ix_(p, p)], J) and np.array_equal(h[p], sign * h))


def ising_scores(local_field: np.ndarray) -> np.ndarray:
    """Scores ``[-f, +f]`` of the tokens 0 (spin -1) and 1 (spin +1) for local fields ``f[B]``."""
    return np.stack([-local_field, local_field], axis=1)


class GraphModel(ToyModel):
    """A toy model on a graph: its sites, its edges with their couplings, its fields (the base of
    :class:`IsingModel`, :class:`~glauber.toy_models.potts.PottsModel` and
    :class:`~glauber.toy_models.clock.ClockModel`).

    Parameters
    ----------
    graph : networkx.Graph
        Checked by :func:`graph_sites`; site ``i`` is the ``i``-th node of ``sorted(graph.nodes)``.
    q : int
    coupling : float, str or mapping
        As :func:`graph_couplings` reads it.
    field : any
        As :func:`site_field` reads it, with ``field_width`` values per site (None: one).
    name : str
    labels : sequence of str, optional
    field_width : int, optional

    Attributes
    ----------
    nodes, site_of : the nodes in site order, and node -> site
    edges : ndarray, shape (E, 2)
        Edges as site pairs; :attr:`edge_couplings` holds their couplings.
    J : ndarray, shape (n, n)
        Symmetric couplings with zero diagonal.
    h : ndarray, shape (n,) or (n, field_width)
    """

    def __init__(self, graph: nx.Graph, q: int, coupling: Coupling, field: Any, name: str,
                 labels: tuple[str, ...] | None = None, field_width: int | None = None) -> None:
        nodes = graph_sites(graph)
        super().__init__(len(nodes), q, name=name, labels=labels)
        self.nodes = nodes
        self.site_of = {v: i for i, v in enumerate(nodes)}
        self.edges, self.edge_couplings = graph_couplings(graph, nodes, coupling)
        self.J = symmetric_matrix(self.n, self.edges, self.edge_couplings)
        self.h = site_field(field, nodes, field_width)


class IsingModel(GraphModel):
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
        super().__init__(graph, 2, coupling, field, name or "ising", labels=("-1", "+1"))

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        # J[site, site] = 0, so the token at `site` does not enter.
        return ising_scores(self.h[site] + spins(states) @ self.J[site])

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

    def is_monotone(self) -> bool:
        """Ferromagnetic (every ``J_uv >= 0``): ``p(+1 | x_{-i})`` is then non-decreasing in every
        other spin, so the heat-bath grand coupling preserves the order of states
        (:mod:`glauber.exact.brackets`); the field does not matter."""
        return bool((self.J >= 0).all())

    def preserved_by(self, sites: Any, tokens: Any) -> bool:
        """Whether ``(g x)_{sites[i]} = tokens[x_i]`` maps the conditionals onto themselves.

        Exactly when ``J[sites][:, sites] = J`` and ``h[sites] = h`` (tokens kept) or ``-h``
        (spins flipped): the score of site ``sites[i]`` at ``g x`` is then that of site ``i`` at
        ``x`` (:mod:`glauber.exact.symmetry`).
        """
        return _ising_preserved_by(self.J, self.h, sites, tokens)


def cycle_graph(n: int) -> nx.Graph:
    """The ``n``-cycle, for ``n >= 3`` (a command-line preset's graph).

    Raises
    ------
    InvalidParameterError
        If ``n < 3``.
    """
    if check_positive_int(n, "n") < 3:
        raise InvalidParameterError(f"a cycle needs n >= 3 sites, got n={n}; use a path instead")
    return nx.cycle_graph(n)


def edge_graph(n: int, edges: tuple[tuple[int, int], ...]) -> nx.Graph:
    """The graph on sites ``0..n-1`` with these edges (a :class:`ModelSpec`'s graph)."""
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges)
    return graph


# ------------------------------------------------------------------------------- the family
def graph_arguments(n: int, edges: tuple, couplings: tuple, field: tuple) -> dict[str, Any]:
    """``graph``, ``coupling`` and ``field`` of a :class:`GraphModel` from the parameters a
    :class:`~glauber.toy_models.family.ModelSpec` of a graph family stores."""
    return {"graph": edge_graph(n, edges), "coupling": dict(zip(edges, couplings)),
            "field": np.array(field, dtype=np.float64)}


def graph_draw(per_token_field: bool = False) -> Any:
    """The draw of a graph family: a drawn graph, its couplings, and its fields (``q`` per site
    when ``per_token_field``) (:func:`glauber.toy_models.draws.draw_graph_model`)."""
    def draw(draw_fn: Any, n: int, q: int, options: Mapping[str, Any]) -> dict[str, Any]:
        from glauber.toy_models.draws import draw_graph_model

        return draw_graph_model(draw_fn, n, options, width=q if per_token_field else None)

    return draw


def _star(n: int, J: float, h: float, hub_h: float) -> IsingModel:
    graph = nx.star_graph(check_positive_int(n, "n") - 1)  # hub 0 and n - 1 leaves
    field = {v: h for v in graph.nodes}
    field[0] = h + hub_h
    return IsingModel(graph, coupling=J, field=field)


def _grid(rows: int, cols: int, J: float, h: float) -> IsingModel:
    graph = nx.grid_2d_graph(check_positive_int(rows, "rows"), check_positive_int(cols, "cols"))
    return IsingModel(graph, coupling=J, field=h)


#: The Ising family: any graph, couplings per edge, fields per site.
ISING = ToyFamily(
    "ising", lambda n, q, **params: IsingModel(**graph_arguments(n, **params)), graph_draw(),
    GRAPH_OPTIONS, min_sites=1, max_q=2,
    presets={
        "ising-cycle": Preset(
            lambda n, J, h: IsingModel(cycle_graph(n), coupling=J, field=h),
            {"n": 8, "J": 1.0, "h": 0.0},
            "Ising on the n-cycle (LPW Theorem 15.5 gives its relaxation time), coupling J, "
            "field h"),
        "ising-path": Preset(
            lambda n, J, h: IsingModel(nx.path_graph(check_positive_int(n, "n")), coupling=J,
                                       field=h),
            {"n": 8, "J": 1.0, "h": 0.0}, "Ising on the path of n sites"),
        "ising-grid": Preset(_grid, {"rows": 3, "cols": 3, "J": 1.0, "h": 0.0},
                             "Ising on the rows x cols grid (free boundary)"),
        "ising-star": Preset(
            _star, {"n": 6, "J": 1.0, "h": 0.0, "hub_h": 0.0},
            "Ising on a star: hub site 0 and n-1 leaves; field h everywhere plus hub_h on the "
            "hub"),
        "ising-complete": Preset(
            lambda n, J, h: IsingModel(nx.complete_graph(check_positive_int(n, "n")),
                                       coupling=J, field=h),
            {"n": 6, "J": 1.0, "h": 0.0}, "Ising on the complete graph K_n"),
    },
    spin_couplings=lambda model: (model.J, model.h),
)


__all__ = [
    "COUPLING_MODES",
    "FIELD_MODES",
    "GRAPH_KINDS",
    "GRAPH_OPTIONS",
    "GraphModel",
    "ISING",
    "IsingModel",
    "cycle_graph",
    "edge_graph",
    "graph_arguments",
    "graph_couplings",
    "graph_draw",
    "graph_sites",
    "ising_scores",
    "site_field",
    "spin_oscillation_bound",
    "spins",
    "symmetric_matrix",
]
