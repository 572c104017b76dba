"""The star evolution of :func:`glauber.estimators.search_influence` (phase 3 of the docstring
of :mod:`glauber.estimators.influence_search`): an elitist evolution of one context per site,
scored on its whole row of Definition 2's entries at once.
"""

from __future__ import annotations

import numpy as np

from glauber.estimators.influence_threshold import rho_lower_bound
from glauber.estimators.score_cache import ScoreCache
from glauber.estimators.search_grid import (
    MIN_ROUND,
    Best,
    Grid,
    evaluate,
    harvest,
    other_sites,
    perron_weights,
    tolerance,
)


def _star_grid(sites: np.ndarray, contexts: np.ndarray, reps: np.ndarray) -> Grid:
    """The stars of contexts ``contexts[s]`` at sites ``sites[s]``: for every ``j != i``, the
    pair ``(x, x^{j->reps[s, j]})``; member ``s (n - 1) + m`` is the ``m``-th ``j``."""
    count, n = contexts.shape
    jj = other_sites(n)[sites].reshape(-1)
    s = np.repeat(np.arange(count), n - 1)
    base = contexts[s].copy()
    base[np.arange(len(s)), sites[s]] = 0
    return Grid(sites[s], base, jj, np.full(len(s), -1),
                np.stack([contexts[s, jj], reps[s, jj]], axis=1),
                np.zeros((len(s), 1), dtype=np.int64))


def evolve_rows(cache: ScoreCache, tau: float, budget: int, batch_size: int,
                starts: np.ndarray, target: str, rng: np.random.Generator, best_c: Best,
                best_d: Best, stop: bool) -> int:
    """An elitist evolution of one context per site ``i`` (its *star*: ``x`` and
    ``x^{j->b_j}`` for every ``j``, ``n`` queries) on the weighted row ``sum_j w_ij TV_ij``.

    Weights: Perron ``v_j`` for ``"rho"`` (rows drawn with Perron ``u_i``), ``1 / C_ij`` (the
    progress of each entry relative to its best so far) for ``"entries"``. Each round, every
    row drawn proposes mutants (one or a few sites of its context changed, a quarter of its
    replacements redrawn), about a twentieth of ``budget`` in all, and keeps its best mutant
    when that one's weighted row is not smaller. Returns the rounds run.
    """
    n, q = cache.n, cache.q
    others = other_sites(n)
    used0 = cache.queries
    xr = np.array([starts[i % len(starts)] if len(starts) else rng.integers(q, size=n)
                   for i in range(n)], dtype=np.int64)
    seen = best_c.replacement.max(axis=1) >= 0  # rows with a witness start at their best one
    top = best_c.value.argmax(axis=1)
    xr[seen] = best_c.context[np.flatnonzero(seen), top[seen]]
    br = (xr + rng.integers(1, q, size=(n, n))) % q
    tvr = np.zeros((n, n))  # TVs of each row's current star
    known = np.zeros(n, dtype=bool)  # has the row's current star been evaluated?
    stale = np.zeros(n, dtype=np.int64)
    per_round = max(budget // 20, min(budget, MIN_ROUND * n))  # queries a round asks
    rounds = idle = 0
    while idle <= n:  # n rounds without a new query: the stars it reaches are all known
        left = budget - (cache.queries - used0)
        if left < n or (stop and rho_lower_bound(best_c.value, tolerance(cache, tau)) >= 1):
            break
        before = cache.queries
        if target == "rho":
            weights = perron_weights(best_c.value)
            u, v = weights.max(axis=1) + 0.05, weights.max(axis=0) + 0.05
            weights = np.broadcast_to(v / v.max(), (n, n)).copy()
            count = int(min(n, max(1, min(per_round, left) // (2 * n))))
            rows = rng.choice(n, size=count, replace=False, p=u / u.sum())
        else:
            weights = 1.0 / np.maximum(best_c.value, 1e-3)
            rows = rng.permutation(n)
        np.fill_diagonal(weights, 0.0)
        lam = max(1, min(per_round, left) // (n * len(rows)))
        rows = rows[: max(1, min(len(rows), left // (n * lam)))]
        owner = np.repeat(rows, lam)
        ctx, reps = xr[owner].copy(), br[owner].copy()
        mutate = np.ones(len(owner), dtype=bool)
        first = np.arange(0, len(owner), lam)
        mutate[first[~known[rows]]] = False  # a row's first star is its context as it is
        m = np.minimum(n - 1, 1 + rng.poisson(0.5, size=len(owner)))
        pick = rng.random((len(owner), n - 1)).argsort(axis=1).argsort(axis=1) < m[:, None]
        pick &= mutate[:, None]
        sites = others[owner][pick]
        who = np.nonzero(pick)[0]
        ctx[who, sites] = (ctx[who, sites] + rng.integers(1, q, size=len(who))) % q
        redo = (rng.random(ctx.shape) < 0.25) & mutate[:, None]
        reps[redo] = rng.integers(q, size=int(redo.sum()))
        clash = reps == ctx
        reps[clash] = (ctx[clash] + rng.integers(1, q, size=int(clash.sum()))) % q
        grid = _star_grid(owner, ctx, reps)
        grid.ids = cache.fetch(grid.states().reshape(-1, n), np.repeat(grid.sites, 2),
                               batch_size).reshape(-1, 2, 1)
        values = evaluate(cache, grid, tau)
        harvest(grid, values, best_c, best_d)
        stars = np.zeros((len(owner), n))
        stars[np.arange(len(owner))[:, None], others[owner]] = values["tv_j"].reshape(-1, n - 1)
        score = np.einsum("sj,sj->s", stars, weights[owner]).reshape(len(rows), lam)
        best = score.argmax(axis=1)
        pick_k = np.arange(len(rows)) * lam + best
        current = np.where(known[rows], np.einsum("rj,rj->r", tvr[rows], weights[rows]), -np.inf)
        take = score[np.arange(len(rows)), best] >= current
        keep_rows, keep_k = rows[take], pick_k[take]
        xr[keep_rows], br[keep_rows], tvr[keep_rows] = ctx[keep_k], reps[keep_k], stars[keep_k]
        known[keep_rows] = True
        stale[rows] = np.where(take, 0, stale[rows] + lam)
        stuck = rows[stale[rows] > 2 * n]  # a fresh random context
        xr[stuck] = rng.integers(q, size=(len(stuck), n))
        br[stuck] = (xr[stuck] + rng.integers(1, q, size=(len(stuck), n))) % q
        known[stuck], stale[stuck] = False, 0
        rounds += 1
        idle = idle + 1 if cache.queries == before else 0
    return rounds


__all__ = [
    "evolve_rows",
]
