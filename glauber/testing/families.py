"""The model families :func:`glauber.testing.models` draws from, and how each is drawn.

Sizes are drawn before parameters (``q`` first, then ``n``), and parameters are drawn as floats
with 0 inside their range, so Hypothesis shrinks a counterexample towards fewer sites, a
smaller vocabulary, zero fields and small couplings. Only random tables and random joints use
a seed (their tables hold ``n q**(n+1)`` numbers); their scale and bias are floats.

Families (name: what is drawn; options and their defaults in :data:`FAMILIES`):

* ``ising``: Ising on a random networkx graph (random edges, path, cycle, star, complete or
  grid), couplings one per graph or per edge, fields zero, uniform or per site, both signs;
* ``curie-weiss``: complete graph, pair coupling ``alpha / n``, uniform field;
* ``potts``: Potts on a random graph, ``q >= 2`` colours, per-colour fields;
* ``planted``: a self-reinforcing token (strength of either sign) and per-token base scores;
* ``random-joint``: the conditionals of a random energy (compatible);
* ``asym-ising``: couplings ``J_ij = s_ij + a_ij``, ``J_ji = s_ij - a_ij`` with
  ``|a_01| >= min_asym`` (incompatible when ``min_asym > 0``);
* ``random-table``: i.i.d. normal scores per site and context (incompatible);
* ``restricted``: a model of another family on ``n + m`` sites (``m`` frozen sites, at most
  :data:`MAX_BASE_STATES` states) restricted by :func:`glauber.core.restrict.restrict` to ``n``
  of its sites in a random order, the other ``m`` frozen at a random context (compatible when
  its base is; an asymmetric Ising base when its couplings among the chosen sites are
  symmetric).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from hypothesis import strategies as st

from glauber.testing.spec import ModelSpec

Range = tuple[float, float]

#: Graph shapes for the Ising and Potts families, simplest (for shrinking) first.
GRAPH_KINDS = ("random", "path", "cycle", "star", "complete", "grid")
#: How couplings are drawn: one value for every edge, or one per edge.
COUPLING_MODES = ("uniform", "per-edge")
#: How fields are drawn: zero, one value for every site, or one per site.
FIELD_MODES = ("zero", "uniform", "per-site")


def floats_in(bounds: Range) -> st.SearchStrategy[float]:
    """Finite, non-subnormal floats in ``[lo, hi]`` (Hypothesis shrinks them towards 0)."""
    lo, hi = bounds
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def draw_edges(draw: st.DrawFn, n: int, kinds: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    """Edges (site pairs ``u < v``) of a graph on ``n`` sites of a drawn kind."""
    kind = draw(st.sampled_from(kinds))
    pairs = list(itertools.combinations(range(n), 2))
    if kind == "random":  # a list of site pairs (self-loops dropped): its length is not tied
        site = st.integers(0, n - 1)  # to n, so lowering n keeps the later draws aligned
        drawn = draw(st.lists(st.tuples(site, site), max_size=len(pairs)))
        return tuple(sorted({(min(u, v), max(u, v)) for u, v in drawn if u != v}))
    if kind == "path":
        return tuple((i, i + 1) for i in range(n - 1))
    if kind == "cycle":
        return tuple((i, i + 1) for i in range(n - 1)) + (((0, n - 1),) if n >= 3 else ())
    if kind == "star":
        return tuple((0, i) for i in range(1, n))
    if kind == "complete":
        return tuple(pairs)
    rows = draw(st.sampled_from([r for r in range(1, n + 1) if n % r == 0]))
    cols = n // rows  # node (a, b) is site a * cols + b, the order of sorted(grid.nodes)
    right = [(a * cols + b, a * cols + b + 1) for a in range(rows) for b in range(cols - 1)]
    down = [(a * cols + b, (a + 1) * cols + b) for a in range(rows - 1) for b in range(cols)]
    return tuple(sorted(right + down))


def draw_edge_values(draw: st.DrawFn, count: int, bounds: Range,
                     modes: tuple[str, ...]) -> tuple[float, ...]:
    """``count`` couplings: one shared value or one per edge (``modes``)."""
    if count == 0:
        return ()
    if draw(st.sampled_from(modes)) == "uniform":
        return (draw(floats_in(bounds)),) * count
    return tuple(draw(st.lists(floats_in(bounds), min_size=count, max_size=count)))


def draw_site_values(draw: st.DrawFn, n: int, bounds: Range, modes: tuple[str, ...],
                     width: int | None = None) -> tuple:
    """Per-site values (a tuple of ``width`` values per site when ``width`` is given)."""
    def one() -> st.SearchStrategy:
        if width is None:
            return floats_in(bounds)
        return st.tuples(*[floats_in(bounds)] * width)

    zero = 0.0 if width is None else (0.0,) * width
    mode = draw(st.sampled_from(modes))
    if mode == "zero":
        return (zero,) * n
    if mode == "uniform":
        return (draw(one()),) * n
    return tuple(draw(st.lists(one(), min_size=n, max_size=n)))


def _ising(draw: st.DrawFn, n: int, q: int, o: Mapping[str, Any]) -> ModelSpec:
    edges = draw_edges(draw, n, o["graphs"])
    couplings = draw_edge_values(draw, len(edges), o["coupling"], o["coupling_modes"])
    field = draw_site_values(draw, n, o["field"], o["field_modes"])
    return ModelSpec("ising", n, q, edges=edges, couplings=couplings, field=field)


def _potts(draw: st.DrawFn, n: int, q: int, o: Mapping[str, Any]) -> ModelSpec:
    edges = draw_edges(draw, n, o["graphs"])
    couplings = draw_edge_values(draw, len(edges), o["coupling"], o["coupling_modes"])
    field = draw_site_values(draw, n, o["field"], o["field_modes"], width=q)
    return ModelSpec("potts", n, q, edges=edges, couplings=couplings, field=field)


def _asym_ising(draw: st.DrawFn, n: int, q: int, o: Mapping[str, Any]) -> ModelSpec:
    J = [[0.0] * n for _ in range(n)]
    pairs = sorted(itertools.combinations(range(n), 2), key=lambda p: (p[1], p[0]))
    for i, j in pairs:  # (0, 1), (0, 2), (1, 2), (0, 3), ...: lowering n drops the last draws
        s = draw(floats_in(o["coupling"]))
        if (i, j) == (0, 1) and o["min_asym"] > 0.0:
            a = draw(floats_in((o["min_asym"], max(o["min_asym"], o["asym"][1]))))
            a = -a if draw(st.booleans()) else a
        else:
            a = draw(floats_in(o["asym"]))
        J[i][j], J[j][i] = s + a, s - a
    field = draw_site_values(draw, n, o["field"], o["field_modes"])
    return ModelSpec("asym-ising", n, q, J=J, field=field)


def _curie_weiss(draw: st.DrawFn, n: int, q: int, o: Mapping[str, Any]) -> ModelSpec:
    return ModelSpec("curie-weiss", n, q, alpha=draw(floats_in(o["alpha"])),
                     field=draw(floats_in(o["field"])))


def _planted(draw: st.DrawFn, n: int, q: int, o: Mapping[str, Any]) -> ModelSpec:
    token = draw(st.integers(0, q - 1)) if o["token"] is None else min(int(o["token"]), q - 1)
    strength = draw(floats_in(o["strength"]))
    if draw(st.sampled_from(o["base_modes"])) == "zero":
        base = (0.0,) * q
    else:
        base = tuple(draw(st.lists(floats_in(o["base"]), min_size=q, max_size=q)))
    return ModelSpec("planted", n, q, token=token, strength=strength, base=base)


def _seed(draw: st.DrawFn) -> int:
    return draw(st.integers(0, 2**32 - 1))


def _random_joint(draw: st.DrawFn, n: int, q: int, o: Mapping[str, Any]) -> ModelSpec:
    return ModelSpec("random-joint", n, q, seed=_seed(draw), scale=draw(floats_in(o["scale"])))


def _random_table(draw: st.DrawFn, n: int, q: int, o: Mapping[str, Any]) -> ModelSpec:
    return ModelSpec("random-table", n, q, seed=_seed(draw), scale=draw(floats_in(o["scale"])),
                     bias=draw(floats_in(o["bias"])))


def _restricted(draw: st.DrawFn, n: int, q: int, o: Mapping[str, Any]) -> ModelSpec:
    lo, hi = o["frozen"]
    full = n + max(lo, min(draw(st.integers(lo, hi)), largest_n(q, MAX_BASE_STATES) - n))
    base = FAMILIES[draw(st.sampled_from(_bases(o, q)))]
    spec = base.draw(draw, full, q, base.defaults)
    sites = draw(st.permutations(range(full)))[:n]  # shrinks towards the first n sites in order
    context = draw(st.lists(st.integers(0, q - 1), min_size=full, max_size=full))
    return ModelSpec("restricted", n, q, base=spec, context=context, sites=sites)


def _bases(options: Mapping[str, Any], q: int | None = None) -> list[str]:
    """The base families of a restricted model (those with ``q`` tokens when ``q`` is given).

    Families of any ``q`` come first, so that the list for a larger ``q`` is a prefix of the
    list for ``q = 2``: a drawn index keeps its family while Hypothesis shrinks ``q``. The
    random joint, which draws the fewest values, comes first: Hypothesis shrinks towards it.
    """
    names = sorted(options["families"], key=lambda name: (FAMILIES[name].max_q is not None,
                                                          name != "random-joint"))
    return [name for name in names
            if q is None or FAMILIES[name].max_q is None or q <= FAMILIES[name].max_q]


def _restricted_q(options: Mapping[str, Any]) -> int | None:
    limits = [FAMILIES[name].max_q for name in _bases(options)]
    return None if None in limits else max(limits)


def _restricted_compatible(options: Mapping[str, Any]) -> bool | None:
    verdicts = {FAMILIES[name].compatible(FAMILIES[name].defaults) for name in _bases(options)}
    return True if verdicts == {True} else None


@dataclass(frozen=True)
class Family:
    """A model family: how to draw its parameters once ``n`` and ``q`` are drawn.

    Attributes
    ----------
    name : str
    draw : callable
        ``(draw, n, q, options) -> ModelSpec``.
    defaults : mapping
        The options and their default values (ranges are ``(lo, hi)`` pairs).
    min_sites : int
        Fewest sites the family allows.
    max_q : int or None
        Largest vocabulary (2 for the spin families; None: any).
    compatible : callable
        ``options -> bool or None``: whether every model drawn with these options is compatible
        (True), none is (False, for ``n >= 2``), or it varies (None).
    q_limit : callable, optional
        ``options -> int or None``: the largest vocabulary under these options, where it
        depends on them (default: ``max_q``).
    """

    name: str
    draw: Callable[[st.DrawFn, int, int, Mapping[str, Any]], ModelSpec]
    defaults: Mapping[str, Any]
    min_sites: int
    max_q: int | None
    compatible: Callable[[Mapping[str, Any]], bool | None]
    q_limit: Callable[[Mapping[str, Any]], int | None] | None = None

    def largest_q(self, options: Mapping[str, Any]) -> int | None:
        """The largest vocabulary of a model drawn with ``options`` (None: any)."""
        return self.max_q if self.q_limit is None else self.q_limit(options)


def _gibbs(options: Mapping[str, Any]) -> bool:
    return True


_GRAPH = {"graphs": GRAPH_KINDS, "coupling": (-2.0, 2.0), "coupling_modes": COUPLING_MODES,
          "field": (-2.0, 2.0), "field_modes": FIELD_MODES}

#: Every family, in shrinking order (Hypothesis prefers the first family that still fails).
FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("ising", _ising, _GRAPH, 1, 2, _gibbs),
        Family("curie-weiss", _curie_weiss, {"alpha": (-4.0, 4.0), "field": (-2.0, 2.0)},
               1, 2, _gibbs),
        Family("potts", _potts, _GRAPH, 1, None, _gibbs),
        Family("planted", _planted, {"token": None, "strength": (-6.0, 10.0),
                                     "base": (-8.0, 8.0), "base_modes": ("zero", "per-token")},
               2, None, _gibbs),
        Family("random-joint", _random_joint, {"scale": (0.0, 3.0)}, 1, None, _gibbs),
        Family("asym-ising", _asym_ising, {"coupling": (-2.0, 2.0), "asym": (-1.0, 1.0),
                                           "min_asym": 0.1, "field": (-2.0, 2.0),
                                           "field_modes": FIELD_MODES}, 2, 2,
               lambda o: False if o["min_asym"] > 0.0 else None),
        Family("random-table", _random_table, {"scale": (0.05, 3.0), "bias": (-6.0, 6.0)},
               2, None, lambda o: False if o["scale"][0] > 0.0 else None),
    )
}
#: Restricted windows draw their base from every other family (their own options' defaults).
FAMILIES["restricted"] = Family(
    "restricted", _restricted, {"families": tuple(FAMILIES), "frozen": (1, 3)}, 1, None,
    _restricted_compatible, _restricted_q,
)

#: Largest state space of the full model behind a restricted window (its frozen sites are cut
#: to fit; one frozen site is always kept).
MAX_BASE_STATES = 4096

def largest_n(q: int, max_states: int, cap: int | None = None) -> int:
    """Largest ``n`` with ``q**n <= max_states`` (0 if none), at most ``cap``."""
    n = int(math.floor(math.log(max_states) / math.log(q) + 1e-12)) if max_states >= 1 else 0
    while q ** (n + 1) <= max_states:
        n += 1
    while n > 0 and q**n > max_states:
        n -= 1
    return n if cap is None else min(n, cap)


__all__ = ["COUPLING_MODES", "FAMILIES", "FIELD_MODES", "Family", "GRAPH_KINDS",
           "MAX_BASE_STATES", "draw_edges", "floats_in", "largest_n"]
