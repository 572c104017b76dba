"""Hypothesis helpers of the families' draws: graphs, couplings, fields, ranges.

Imported by a family's ``draw`` when it runs (never when :mod:`glauber.toy_models` is imported),
so the models need no Hypothesis; drawing needs the ``test`` extra. Sizes are drawn before
parameters (``q`` first, then ``n``), and parameters as floats with 0 inside their range, so
Hypothesis shrinks a counterexample towards fewer sites, a smaller vocabulary, zero fields and
small couplings.
"""

from __future__ import annotations

import itertools
import math

from hypothesis import strategies as st

Range = tuple[float, float]


def floats_in(bounds: Range) -> st.SearchStrategy[float]:
    """Finite, non-subnormal floats in ``[lo, hi]`` (Hypothesis shrinks them towards 0)."""
    lo, hi = bounds
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def seed(draw: st.DrawFn) -> int:
    """A seed of ``numpy.random.default_rng`` (families whose tables are random)."""
    return draw(st.integers(0, 2**32 - 1))


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


def draw_graph_model(draw: st.DrawFn, n: int, options: dict, width: int | None = None) -> dict:
    """``edges``, ``couplings`` and ``field`` of a model on a drawn graph (Ising, Potts)."""
    edges = draw_edges(draw, n, options["graphs"])
    couplings = draw_edge_values(draw, len(edges), options["coupling"],
                                 options["coupling_modes"])
    field = draw_site_values(draw, n, options["field"], options["field_modes"], width=width)
    return {"edges": edges, "couplings": couplings, "field": field}


def largest_n(q: int, max_states: int, cap: int | None = None) -> int:
    """Largest ``n`` with ``q**n <= max_states`` (0 if none), at most ``cap``."""
    n = int(math.floor(math.log(max_states) / math.log(q) + 1e-12)) if max_states >= 1 else 0
    while q ** (n + 1) <= max_states:
        n += 1
    while n > 0 and q**n > max_states:
        n -= 1
    return n if cap is None else min(n, cap)


__all__ = ["draw_edge_values", "draw_edges", "draw_graph_model", "draw_site_values", "floats_in",
           "largest_n", "seed"]
