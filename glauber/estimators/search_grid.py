"""What every phase of :func:`glauber.estimators.search_influence` shares: grids of queries,
the entrywise best pairs with their witnesses, and the pairs harvested from the memo.

A *grid* (:class:`Grid`) is a batch of conditional queries at one site per member, a base
context with ``x_j`` (and ``x_k``) varied; :func:`fit` keeps the members whose new queries fit
in what is left of the budget, :func:`evaluate` gives the TV at ``tau`` and the score
oscillation of every pair along each axis, and :func:`harvest` offers each member's best pair
to :class:`Best`, the entrywise maxima of ``C`` (Definition 2) and ``Delta`` (Lemma 6) with
their witnesses. :func:`harvest_cache` reads every pair of the memo that differs at one site
(docs/theory.md, "Searching Definition 2 at a budget"). :func:`perron_weights` are the
``"rho"`` target's priorities (``u_i v_j``, the derivative of the spectral radius in
``C_ij``), :func:`tolerance` the rounding allowance of a rechecked TV.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from glauber.core.arrays import log_softmax, namespace, to_numpy
from glauber.estimators.score_cache import ScoreCache
from glauber.estimators.witnesses import Witness, reduced_precision, witness_tolerance


#: Values closer than this count as ties (walkers pick among them at random).
TIE = 1e-6

#: Least queries a round asks, in units of ``n`` (batches too small waste a masked LM's forward).
MIN_ROUND = 16

#: Most floats one grid evaluation holds at once (pairs x vocabulary), per chunk of walkers.
_CHUNK_FLOATS = 1 << 24


@dataclass
class Grid:
    """Queries at site ``sites[w]``: ``base[w]`` with ``x_j = vals_j[w, r]``, ``x_k = vals_k[w, c]``.

    ``k = -1`` (and one column) for a pair move. ``ids[w, r, c]`` are the cache rows.
    """

    sites: np.ndarray
    base: np.ndarray
    j: np.ndarray
    k: np.ndarray
    vals_j: np.ndarray
    vals_k: np.ndarray
    ids: np.ndarray = field(default=None)  # type: ignore[assignment]

    def states(self) -> np.ndarray:
        """All queried states, ``[W, R, K, n]``."""
        w, r, c = self.vals_j.shape[0], self.vals_j.shape[1], self.vals_k.shape[1]
        out = np.broadcast_to(self.base[:, None, None, :], (w, r, c, self.base.shape[1])).copy()
        rows = np.arange(w)
        out[rows, :, :, self.j] = self.vals_j[:, :, None]
        has_k = self.k >= 0
        out[rows[has_k], :, :, self.k[has_k]] = self.vals_k[has_k][:, None, :]
        return out

    def take(self, keep: np.ndarray) -> Grid:
        return Grid(self.sites[keep], self.base[keep], self.j[keep], self.k[keep],
                    self.vals_j[keep], self.vals_k[keep],
                    None if self.ids is None else self.ids[keep])


class Best:
    """Entrywise maxima with their witnesses (context ``[n]`` and replacement at ``j``)."""

    def __init__(self, n: int) -> None:
        self.value = np.zeros((n, n))
        self.context = np.zeros((n, n, n), dtype=np.int64)
        self.replacement = np.full((n, n), -1, dtype=np.int64)

    def offer(self, i: np.ndarray, j: np.ndarray, value: np.ndarray, context: np.ndarray,
              replacement: np.ndarray) -> None:
        """Keep each candidate that beats its entry (the largest per entry when repeated)."""
        if value.size == 0:
            return
        n = self.value.shape[0]
        e = i * n + j
        order = np.lexsort((-value, e))
        first = order[np.r_[True, e[order][1:] != e[order][:-1]]]
        better = first[value[first] > self.value[i[first], j[first]]]
        ii, jj = i[better], j[better]
        self.value[ii, jj] = value[better]
        self.context[ii, jj] = context[better]
        self.replacement[ii, jj] = replacement[better]

    def witnesses(self, quantity: str) -> list[Witness]:
        n = self.value.shape[0]
        return [
            Witness(quantity, i, j, tuple(int(t) for t in self.context[i, j]),
                    int(self.replacement[i, j]), float(self.value[i, j]))
            for i in range(n) for j in range(n)
            if i != j and self.replacement[i, j] >= 0
        ]


@functools.lru_cache(maxsize=64)
def pairs(size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.triu_indices(size, 1)``: every pair ``a < b`` of ``0..size-1`` (cached)."""
    return np.triu_indices(size, 1)


@functools.lru_cache(maxsize=16)
def other_sites(n: int) -> np.ndarray:
    """``others[i]``: the sites other than ``i``, ``[n, n - 1]`` (cached)."""
    return np.array([np.delete(np.arange(n), i) for i in range(n)], dtype=np.int64)


def _pair_values(scores: Any, tau: float, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """TV at ``tau`` and score oscillation of every pair along ``axis`` (1 or 2) of ``[W, R, K, q]``.

    Returns ``[W, P, K]`` (axis 1) or ``[W, R, P]`` (axis 2) arrays on the host, pairs in
    ``np.triu_indices`` order.
    """
    xp = namespace(scores)
    size = scores.shape[axis]
    a, b = pairs(size)
    if axis == 1:
        sa, sb = scores[:, a], scores[:, b]
    else:
        sa, sb = scores[:, :, a], scores[:, :, b]
    pa, pb = xp.exp(log_softmax(sa / tau)), xp.exp(log_softmax(sb / tau))
    tv = 0.5 * xp.sum(xp.abs(pa - pb), axis=-1)
    diff = sa - sb  # the log-softmax normalisers are constants in a: scores suffice
    osc = xp.amax(diff, axis=-1) - xp.amin(diff, axis=-1)
    return to_numpy(tv).astype(np.float64), to_numpy(osc).astype(np.float64)


def evaluate(cache: ScoreCache, grid: Grid, tau: float) -> dict[str, np.ndarray]:
    """Pair values of a grid: ``tv_j, osc_j`` ``[W, P_R, K]`` and ``tv_k, osc_k`` ``[W, R, P_K]``."""
    w, r, c = grid.ids.shape
    q = cache.q
    per_walker = (r * (r - 1) // 2 * c + c * (c - 1) // 2 * r + r * c) * q * 4
    step = max(1, _CHUNK_FLOATS // max(per_walker, 1))
    parts: dict[str, list[np.ndarray]] = {"tv_j": [], "osc_j": [], "tv_k": [], "osc_k": []}
    for lo in range(0, w, step):
        ids = grid.ids[lo:lo + step]
        scores = cache.rows(ids.reshape(-1)).reshape(ids.shape + (q,))
        if r > 1:
            tv, osc = _pair_values(scores, tau, 1)
            parts["tv_j"].append(tv)
            parts["osc_j"].append(osc)
        if c > 1:
            tv, osc = _pair_values(scores, tau, 2)
            parts["tv_k"].append(tv)
            parts["osc_k"].append(osc)
    return {k: np.concatenate(v) for k, v in parts.items() if v}


def harvest(grid: Grid, values: dict[str, np.ndarray], best_c: Best, best_d: Best) -> None:
    """Offer each walker's best pair along ``j`` (and along ``k``) to ``C`` and ``Delta``."""
    w, r, c = grid.ids.shape
    rows = np.arange(w)
    for axis, tv_key, osc_key in ((1, "tv_j", "osc_j"), (2, "tv_k", "osc_k")):
        if tv_key not in values:
            continue
        for key, best in ((tv_key, best_c), (osc_key, best_d)):
            flat = values[key].reshape(w, -1)
            pos = flat.argmax(axis=1)
            value = flat[rows, pos]
            ctx = grid.base.copy()
            if axis == 1:  # pairs over x_j within a column c
                pa, pb = pairs(r)
                p, col = np.divmod(pos, c)
                has_k = grid.k >= 0
                ctx[rows[has_k], grid.k[has_k]] = grid.vals_k[has_k, col[has_k]]
                ctx[rows, grid.j] = grid.vals_j[rows, pa[p]]
                rep, site_j = grid.vals_j[rows, pb[p]], grid.j
            else:  # pairs over x_k within a row r
                pa, pb = pairs(c)
                row, p = np.divmod(pos, len(pa))
                ctx[rows, grid.j] = grid.vals_j[rows, row]
                ctx[rows, grid.k] = grid.vals_k[rows, pa[p]]
                rep, site_j = grid.vals_k[rows, pb[p]], grid.k
            best.offer(grid.sites, site_j, value, ctx, rep)


def harvest_cache(cache: ScoreCache, tau: float, best_c: Best, best_d: Best) -> None:
    """Offer every pair of cached queries at one site that differ at exactly one other site.

    For each ``j``, queries are grouped by their site and their state off ``j``; within a
    group (at most ``q`` queries, one per token at ``j``) every pair is a candidate for
    ``(i, j)``. No query is asked.
    """
    states, sites = cache.queries_asked()
    total, n = states.shape
    if total < 2:
        return
    rows_all = np.arange(total)
    for j in range(n):
        keep = rows_all[sites != j]
        if keep.size < 2:
            continue
        key = states[keep].copy()
        key[:, j] = -1
        key = np.concatenate([sites[keep, None], key], axis=1)
        _, group = np.unique(key, axis=0, return_inverse=True)
        order = np.argsort(group.reshape(-1), kind="stable")
        g, rows = group.reshape(-1)[order], keep[order]
        for d in range(1, min(cache.q, len(rows))):
            same = np.flatnonzero(g[d:] == g[:-d])
            if same.size == 0:
                break  # groups hold consecutive rows: no pair d apart means none further
            a, b = rows[same], rows[same + d]
            sa, sb = cache.rows(a), cache.rows(b)
            xp = namespace(sa)
            pa, pb = xp.exp(log_softmax(sa / tau)), xp.exp(log_softmax(sb / tau))
            tv = to_numpy(0.5 * xp.sum(xp.abs(pa - pb), axis=-1)).astype(np.float64)
            diff = sa - sb
            osc = to_numpy(xp.amax(diff, axis=-1) - xp.amin(diff, axis=-1)).astype(np.float64)
            i = sites[a]
            jj = np.full(a.size, j)
            for best, value in ((best_c, tv), (best_d, osc)):
                best.offer(i, jj, value, states[a], states[b, j])


def perron_weights(C: np.ndarray) -> np.ndarray:
    """``u_i v_j`` for the left/right Perron vectors of ``C`` (max 1), uniform if ``rho = 0``."""
    n = C.shape[0]
    vals, right = np.linalg.eig(C)
    lvals, left = np.linalg.eig(C.T)
    top, ltop = int(np.argmax(vals.real)), int(np.argmax(lvals.real))
    if vals[top].real <= 1e-12:
        return np.ones((n, n))
    v, u = np.abs(right[:, top].real), np.abs(left[:, ltop].real)
    weights = np.outer(u, v)
    return weights / weights.max()


def fit(cache: ScoreCache, moves: list, left: int) -> list:
    """Keep the moves whose new queries fit in ``left`` rows, greedily in priority order.

    Returns ``(grid, walkers, forced)`` per kind of move that keeps at least one walker.
    """
    n = cache.n
    queue = []  # (priority, move index, walker position in the grid, its keys)
    for idx, (grid, _, _, priority) in enumerate(moves):
        r, c = grid.vals_j.shape[1], grid.vals_k.shape[1]
        keys = cache.keys(grid.states().reshape(-1, n), np.repeat(grid.sites, r * c))
        queue.extend((int(priority[pos]), idx, pos, keys[pos * r * c:(pos + 1) * r * c])
                     for pos in range(len(priority)))
    queue.sort(key=lambda item: item[0])
    pending: set[bytes] = set()
    keep: list[list[int]] = [[] for _ in moves]
    for _, idx, pos, keys in queue:
        new = cache.new_keys(keys, pending)
        if len(pending) + len(new) <= left:
            pending.update(new)
            keep[idx].append(pos)
    out = []
    for (grid, members, forced, _), sel in zip(moves, keep):
        if sel:
            sel_arr = np.array(sorted(sel), dtype=np.int64)
            out.append((grid.take(sel_arr), members[sel_arr], forced[sel_arr]))
    return out


def tolerance(cache: ScoreCache, tau: float) -> float:
    """Rounding allowance of a rechecked TV at ``tau`` for the memo's scores
    (:func:`~glauber.estimators.witnesses.witness_tolerance` of their dtype and precision)."""
    return witness_tolerance(cache.dtype, tau, reduced_precision(cache.model))


__all__ = [
    "Best",
    "Grid",
    "MIN_ROUND",
    "TIE",
    "evaluate",
    "fit",
    "harvest",
    "harvest_cache",
    "other_sites",
    "pairs",
    "perron_weights",
    "tolerance",
]
