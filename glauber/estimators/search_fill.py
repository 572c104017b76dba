"""What a search of :func:`glauber.estimators.search_influence` spends last (phase 5 of the
docstring of :mod:`glauber.estimators.influence_search`): one query at a time on the lines of
the best witnesses, then on queries never asked.

Each new query pairs with every cached query that differs from it at one site; with every
query of a tabulation asked, the memo gives Definition 2's suprema themselves
(docs/theory.md, "Searching Definition 2 at a budget").
"""

from __future__ import annotations

import numpy as np

from glauber.estimators.score_cache import ScoreCache
from glauber.estimators.search_grid import Best, perron_weights


#: Most distinct queries ``n q^(n-1)`` enumerated to find the unasked ones (else drawn).
_ENUMERATE_QUERIES = 1 << 20


def fill(cache: ScoreCache, budget: int, batch_size: int, target: str,
         rng: np.random.Generator, best_c: Best) -> None:
    """Spend what the walkers cannot (their moves cost ``q`` or ``2 q`` queries) one query at
    a time: each entry ``(i, j)`` adds one new point to its *line* (the contexts
    ``x^{j->c}``, ``c`` any token, at site ``i``; ``x`` its best witness's context, a uniform
    one for an entry without a witness), so every cached point of the line forms a new pair
    with it; entries in order of Perron weight (``"rho"``) or at random (``"entries"``), until
    the budget is spent or every line is complete. The pairs are read by the caller's memo
    harvest. With ``n = 2`` each entry has one line, and this asks it point by point.
    """
    n, q = cache.n, cache.q
    used0 = cache.queries
    ii, jj = np.nonzero(~np.eye(n, dtype=bool))
    lines = np.where((best_c.replacement[ii, jj] >= 0)[:, None], best_c.context[ii, jj],
                     rng.integers(q, size=(ii.size, n)))
    full = np.zeros(ii.size, dtype=bool)
    while not full.all():
        left = budget - (cache.queries - used0)
        if left <= 0:
            return
        if target == "rho":
            weight = perron_weights(best_c.value)[ii, jj] + 0.05 * rng.random(ii.size)
            order = np.argsort(-weight, kind="stable")
        else:
            order = rng.permutation(ii.size)
        states, sites = [], []
        for e in order[~full[order]].tolist():
            if len(states) >= left:
                break
            pts = np.repeat(lines[e][None, :], q, axis=0)
            pts[:, jj[e]] = np.arange(q)
            new = [c for c, key in enumerate(cache.keys(pts, np.full(q, ii[e]))) if key not in cache]
            if not new:
                full[e] = True
                continue
            states.append(pts[int(rng.choice(new))])
            sites.append(ii[e])
        if states:
            cache.fetch(np.array(states), np.array(sites), batch_size)


def ask_unasked(cache: ScoreCache, left: int, batch_size: int,
                rng: np.random.Generator) -> None:
    """Spend ``left`` rows on queries the cache has never asked, drawn uniformly at random.

    Once every line of :func:`fill` is complete, the budget left still buys new
    information: each new query pairs with the cached ones that differ from it at one site
    (the final harvest reads them). Where the ``n q^(n-1)``
    distinct queries number at most :data:`_ENUMERATE_QUERIES` they are enumerated, so a
    budget that covers every unasked query asks them all (the harvest is then Definition 2's
    supremum itself); above that, uniform draws are almost surely new.
    """
    n, q = cache.n, cache.q
    if left <= 0:
        return
    if q ** (n - 1) * n <= _ENUMERATE_QUERIES:
        rest = np.array(np.meshgrid(*[np.arange(q)] * (n - 1), indexing="ij")).reshape(n - 1, -1).T
        states = np.concatenate([np.insert(rest, i, 0, axis=1) for i in range(n)])
        sites = np.repeat(np.arange(n), len(rest))
    else:
        states = rng.integers(q, size=(2 * left, n))
        sites = rng.integers(n, size=2 * left)
    keys = cache.keys(states, sites)
    first = {key: r for r, key in reversed(list(enumerate(keys)))}  # one row per distinct key
    unasked = np.array([first[key] for key in cache.new_keys(keys, set())], dtype=np.int64)
    unasked = np.sort(rng.permutation(unasked)[:left])
    if unasked.size:
        cache.fetch(states[unasked], sites[unasked], batch_size,
                    keys=[keys[r] for r in unasked.tolist()])


__all__ = [
    "ask_unasked",
    "fill",
]
