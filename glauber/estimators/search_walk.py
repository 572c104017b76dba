"""The walkers of :func:`glauber.estimators.search_influence` (phase 4 of the docstring of
:mod:`glauber.estimators.influence_search`): one coordinate-ascent walker per entry of
Definition 2's matrix, moved in batched rounds of grids.

A *pair move* varies ``x_j`` over all ``q`` tokens and keeps the pair of largest TV; a
*coordinate move* at a site ``k`` varies ``x_k`` with ``x_j`` at either token of the pair and
moves to the token of largest TV (ties at random). Walkers restart from the given starts,
uniform states and kicks of the best witness of their entry.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from glauber.estimators.influence_threshold import rho_lower_bound
from glauber.estimators.score_cache import ScoreCache
from glauber.estimators.search_grid import (
    MIN_ROUND,
    TIE,
    Best,
    Grid,
    evaluate,
    fit,
    harvest,
    other_sites,
    pairs,
    perron_weights,
    tolerance,
)
from glauber.estimators.witnesses import Witness


class _Walkers:
    """One coordinate-ascent walker per off-diagonal entry ``(i, j)`` (struct of arrays)."""

    def __init__(self, n: int, q: int, rng: np.random.Generator) -> None:
        self.n, self.q, self.rng = n, q, rng
        ii, jj = np.nonzero(~np.eye(n, dtype=bool))
        self.i, self.j = ii, jj
        e = len(ii)
        self.x = np.zeros((e, n), dtype=np.int64)
        self.b = np.zeros(e, dtype=np.int64)
        self.value = np.full(e, -np.inf)
        self.stale = np.zeros(e, dtype=np.int64)
        self.active = np.zeros(e, dtype=bool)
        self.need_pair = np.zeros(e, dtype=bool)
        self.starts = np.zeros(e, dtype=np.int64)
        self.pos = np.zeros(e, dtype=np.int64)
        # each walker's cycle over the sites other than i (j included: the pair move)
        self.cycle = rng.permuted(other_sites(n)[ii], axis=1)

    def warm(self, witnesses: Sequence[Witness], pair_first: bool) -> None:
        """Start each walker whose entry has a ``C`` witness there (a pair move next if
        ``pair_first``, else a coordinate move)."""
        n = self.n
        for wit in witnesses:
            if wit.quantity != "C":
                continue
            w = wit.i * (n - 1) + wit.j - (wit.j > wit.i)  # row-major, diagonal skipped
            self.x[w] = wit.context
            self.x[w, wit.i] = 0
            self.b[w] = wit.replacement
            self.active[w], self.need_pair[w] = True, pair_first
            self.value[w], self.stale[w] = -np.inf, 0
            self.starts[w] += 1

    def restart(self, e: np.ndarray, starts: np.ndarray, best: Best) -> None:
        """Begin a new local search for walkers ``e`` (given starts first, then random/kicks)."""
        n, q, rng = self.n, self.q, self.rng
        for w in e.tolist():
            r = int(self.starts[w])
            if r < len(starts):
                x = starts[(w + r) % len(starts)].copy()
            else:
                i, j = self.i[w], self.j[w]
                if (r - len(starts)) % 2 == 0 or best.replacement[i, j] < 0:
                    x = rng.integers(q, size=n)
                else:
                    x = best.context[i, j].copy()
                    others = other_sites(n)[i]
                    flip = rng.choice(others, size=max(1, (n - 1) // 4), replace=False)
                    x[flip] = rng.integers(q, size=len(flip))
            x[self.i[w]] = 0
            self.x[w] = x
            self.starts[w] = r + 1
        self.active[e], self.need_pair[e], self.value[e], self.stale[e] = True, True, -np.inf, 0

    def next_site(self, e: np.ndarray) -> np.ndarray:
        """The site each walker moves next (its ``j`` for a pair move)."""
        return np.where(self.need_pair[e], self.j[e], self.cycle[e, self.pos[e]])

    def advance(self, e: np.ndarray, forced: np.ndarray, new_value: np.ndarray) -> None:
        """Record the walkers' moves (``forced``: a pair move opening a local search, outside
        the cycle): improvement, staleness, position in the cycle."""
        improved = new_value > self.value[e] + TIE
        self.stale[e] = np.where(improved, 0, self.stale[e] + 1)
        self.value[e] = np.maximum(self.value[e], new_value)
        cyc = e[~forced]
        self.pos[cyc] += 1
        wrap = cyc[self.pos[cyc] >= self.n - 1]
        for w in wrap.tolist():
            self.cycle[w] = self.rng.permutation(self.cycle[w])
        self.pos[wrap] = 0
        self.need_pair[e] = False
        self.active[e[self.stale[e] >= self.n - 1]] = False


def _pick(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row-wise argmax with ties (within :data:`~glauber.estimators.search_grid.TIE`) broken at random."""
    top = values.max(axis=1, keepdims=True)
    noise = np.where(values >= top - TIE, rng.random(values.shape), -1.0)
    return noise.argmax(axis=1)


def walk(cache: ScoreCache, tau: float, budget: int, starts: np.ndarray,
         restarts: int | None, rng: np.random.Generator, batch_size: int, target: str,
         warm: Sequence[Witness], fresh: bool, best_c: Best, best_d: Best,
         stop: bool) -> tuple[int, int]:
    """The walkers of the docstring of :mod:`glauber.estimators.influence_search`, within
    ``budget`` queries; returns the rounds and the local searches (restarts included).

    ``warm``: the witnesses of a previous result, the walkers' starts where the memo gives
    none."""
    n, q = cache.n, cache.q
    used0 = cache.queries
    walkers = _Walkers(n, q, rng)
    if fresh:
        walkers.warm(best_c.witnesses("C"), pair_first=q > 2)
    else:  # start where the earlier searches got to
        walkers.warm(best_c.witnesses("C") or list(warm), pair_first=False)
    rounds, idle = 0, 0
    per_round = _walkers_per_round(target, budget, n, q)
    while True:
        left = budget - (cache.queries - used0)
        if left <= 0 or (stop and rho_lower_bound(best_c.value, tolerance(cache, tau)) >= 1):
            break
        chosen = _choose(walkers, target, best_c.value, per_round, restarts, rng)
        if chosen.size == 0:
            break
        walkers.restart(chosen[~walkers.active[chosen]], starts, best_c)
        moves = fit(cache, _moves(walkers, chosen), left)
        if not moves:  # no move's new queries fit in what is left: the lines take the rest
            break
        before = cache.queries
        for grid, _, _ in moves:
            w, r, c = grid.vals_j.shape[0], grid.vals_j.shape[1], grid.vals_k.shape[1]
            grid.ids = cache.fetch(grid.states().reshape(-1, n), np.repeat(grid.sites, r * c),
                                   batch_size).reshape(w, r, c)
        for grid, members, forced in moves:
            values = evaluate(cache, grid, tau)
            harvest(grid, values, best_c, best_d)
            _step(walkers, grid, members, forced, values, rng)
        rounds += 1
        idle = idle + 1 if cache.queries == before else 0
        if idle > n:  # every move the walkers make is cached: the lines take the rest
            break
    return rounds, int(walkers.starts.sum())


def _walkers_per_round(target: str, budget: int, n: int, q: int) -> int:
    """Every walker for ``"entries"``; about a tenth of the budget's worth for ``"rho"``."""
    entries = n * (n - 1)
    if target == "entries":
        return entries
    return int(min(entries, max(1, budget // (10 * 2 * q), MIN_ROUND * n // (2 * q))))


def _choose(walkers: _Walkers, target: str, C: np.ndarray, per_round: int,
            restarts: int | None, rng: np.random.Generator) -> np.ndarray:
    """The walkers to move this round, in priority order (the budget keeps a prefix)."""
    live = walkers.active | (True if restarts is None else walkers.starts < restarts)
    eligible = np.flatnonzero(live)
    if eligible.size == 0:
        return eligible
    if target == "entries":
        return rng.permutation(eligible)
    weights = perron_weights(C)[walkers.i[eligible], walkers.j[eligible]] + 0.05
    size = min(per_round, eligible.size)
    return rng.choice(eligible, size=size, replace=False, p=weights / weights.sum())


def _moves(walkers: _Walkers, chosen: np.ndarray) -> list[tuple]:
    """The grids of the chosen walkers' next moves.

    Returns ``(grid, walkers, forced, priority)`` per kind of move (pair, coordinate):
    ``forced`` marks a pair move that opens a local search, ``priority`` the walker's place in
    ``chosen``.
    """
    q = walkers.q
    site = walkers.next_site(chosen)
    pair = site == walkers.j[chosen]
    out = []
    all_tokens = np.arange(q)
    for mask, is_pair in ((pair, True), (~pair, False)):
        e = chosen[mask]
        if e.size == 0:
            continue
        if is_pair:
            vals_j = np.broadcast_to(all_tokens, (e.size, q)).copy()
            vals_k = np.zeros((e.size, 1), dtype=np.int64)
            k = np.full(e.size, -1)
        else:
            vals_j = np.stack([walkers.x[e, walkers.j[e]], walkers.b[e]], axis=1)
            vals_k = np.broadcast_to(all_tokens, (e.size, q)).copy()
            k = site[mask]
        grid = Grid(walkers.i[e], walkers.x[e].copy(), walkers.j[e], k, vals_j, vals_k)
        out.append((grid, e, walkers.need_pair[e].copy(), np.flatnonzero(mask)))
    return out


def _step(walkers: _Walkers, grid: Grid, members: np.ndarray, forced: np.ndarray,
          values: dict[str, np.ndarray], rng: np.random.Generator) -> None:
    """Move each walker to the best cell of its grid (ties at random)."""
    rows = np.arange(members.size)
    if grid.vals_k.shape[1] == 1:  # pair move: the best pair (a, b) at j
        tv = values["tv_j"][:, :, 0]
        p = _pick(tv, rng)
        pa, pb = pairs(grid.vals_j.shape[1])
        walkers.x[members, walkers.j[members]] = grid.vals_j[rows, pa[p]]
        walkers.b[members] = grid.vals_j[rows, pb[p]]
    else:  # coordinate move: the best token at k for the pair (a, b)
        tv = values["tv_j"][:, 0, :]
        p = _pick(tv, rng)
        walkers.x[members, grid.k] = grid.vals_k[rows, p]
    walkers.advance(members, forced, tv[rows, p])


__all__ = [
    "walk",
]
