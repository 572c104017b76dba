"""The surrogate phase of :func:`glauber.estimators.search_influence` (phase 2 of the docstring
of :mod:`glauber.estimators.influence_search`): a star per site, an additive model of its
scores, and the contexts it predicts realise most of each entry's supremum (Definition 2).

The fit and the covering pairs are :mod:`glauber.estimators.additive_surrogate`'s; exact on
models whose scores are additive in the one-hot context.
"""

from __future__ import annotations

import numpy as np

from glauber.core.arrays import log_softmax, to_numpy
from glauber.estimators.additive_surrogate import cover, fit_additive_scores, line_gains
from glauber.estimators.influence_threshold import rho_lower_bound
from glauber.estimators.score_cache import ScoreCache
from glauber.estimators.search_grid import TIE, Best, other_sites, pairs, perron_weights, tolerance
from glauber.estimators.search_scan import scan_pairs


def _star_points(x: np.ndarray, site: int, q: int) -> np.ndarray:
    """The star of context ``x`` at ``site``: ``x`` and ``x^{k->c}`` for every ``k != site``
    and token ``c != x_k`` (``1 + (n - 1)(q - 1)`` states)."""
    n = x.size
    others = other_sites(n)[site]
    k = np.repeat(others, q - 1)
    c = (x[k] + np.tile(np.arange(1, q), n - 1)) % q
    pts = np.repeat(x[None, :], 1 + k.size, axis=0)
    pts[1 + np.arange(k.size), k] = c
    return pts


def surrogate_phase(cache: ScoreCache, tau: float, budget: int, batch_size: int,
                    starts: np.ndarray, target: str, rng: np.random.Generator, best_c: Best,
                    best_d: Best, stop: bool, anchor: np.ndarray | None,
                    theta: float = 0.98, max_rounds: int = 20) -> None:
    """Stars, an additive surrogate per site, and the contexts it predicts (phase 2 of the
    docstring of :mod:`glauber.estimators.influence_search`).

    Each site ``i`` gets the star of one *anchor* context: the first context asked at ``i``
    (a scan's, or an earlier search's over a shared memo: ``x_i`` is masked, so it is one
    context for site ``i`` whatever ``x_i``), else ``anchor`` (the scan's first context, the
    first start, or a uniform one). Sites are starred in order of priority (Perron ``u_i``
    for ``"rho"``, at random for ``"entries"``) where the star is complete already, or the
    budget pays for it and ``n - 1`` more queries to realise what its surrogate predicts
    (:mod:`glauber.estimators.additive_surrogate`). Then, in rounds: refit every starred
    site's surrogate to all its answered queries, cover the entries whose best realised value
    is below ``theta`` of the predicted supremum (weights: Perron ``u_i v_j`` of the predicted
    matrix for ``"rho"``, 1 for ``"entries"``), and ask the covering pairs in order of weight
    per query, until no proposal asks anything new or the budget is spent.
    """
    n, q = cache.n, cache.q
    used0 = cache.queries
    if anchor is None:
        anchor = starts[0].copy() if len(starts) else rng.integers(q, size=n)
    states, sites = cache.queries_asked()
    anchors = np.repeat(anchor[None, :], n, axis=0)
    first = np.full(n, -1)
    first[sites[::-1]] = np.arange(len(sites))[::-1]  # earliest query at each site
    anchors[first >= 0] = states[first[first >= 0]]
    order = (np.argsort(-(perron_weights(best_c.value).max(axis=1)), kind="stable")
             if target == "rho" else rng.permutation(n))
    starred: list[int] = []
    for i in order.tolist():
        pts = _star_points(anchors[i], i, q)
        keys = cache.keys(pts, np.full(len(pts), i))
        missing = len(cache.new_keys(keys, set()))
        if missing and missing + n - 1 > budget - (cache.queries - used0):
            continue
        cache.fetch(pts, np.full(len(pts), i), batch_size, keys)
        _star_lines(cache, anchors[i], i, tau, best_c, best_d)
        starred.append(i)
    fitted: dict[int, tuple] = {}  # site -> (line_gains of its surrogate, queries fitted)
    for _ in range(max_rounds if starred else 0):
        left = budget - (cache.queries - used0)
        if left <= 0 or (stop and rho_lower_bound(best_c.value, tolerance(cache, tau)) >= 1):
            return
        states, sites = cache.queries_asked()
        predicted = best_c.value.copy()
        for i in starred:
            sel = np.flatnonzero(sites == i)
            if fitted.get(i, (None, -1))[1] != sel.size:  # refit sites with new queries only
                scores = to_numpy(cache.rows(sel)).astype(np.float64)
                fitted[i] = (line_gains(fit_additive_scores(states[sel], scores, i, q), tau,
                                        anchors[i]), sel.size)
            predicted[i] = np.maximum(predicted[i], fitted[i][0][1].max(axis=0))
        weights = perron_weights(predicted) if target == "rho" else np.ones((n, n))
        proposals = []
        for i, ((ctx, gain, best), _) in fitted.items():
            top = gain.max(axis=0)  # ties relative: TVs can be tiny (a strong field)
            wanted = theta * top > best_c.value[i] + TIE * top
            wanted[i] = False
            for m, dirs in cover(gain, best, wanted, weights[i], theta):
                value = float(weights[i, dirs].sum()) / (1 + dirs.size)
                proposals.append((value, i, ctx[m], dirs, best[m, dirs]))
        if not proposals:
            return
        proposals.sort(key=lambda p: -p[0])
        contexts = np.array([p[2] for p in proposals])
        reps = np.zeros_like(contexts)
        for c, (_, _, _, dirs, bs) in enumerate(proposals):
            reps[c, dirs] = bs
        c_idx = np.concatenate([np.full(p[3].size, c) for c, p in enumerate(proposals)])
        i_idx = np.concatenate([np.full(p[3].size, p[1]) for p in proposals])
        j_idx = np.concatenate([p[3] for p in proposals])
        before = cache.queries
        scan_pairs(cache, contexts, reps, c_idx, i_idx, j_idx, left, batch_size, tau, best_c,
                   best_d)
        if cache.queries == before:
            return


def _star_lines(cache: ScoreCache, x: np.ndarray, i: int, tau: float, best_c: Best,
                best_d: Best) -> None:
    """Offer every pair on the lines of the star of ``x`` at site ``i`` (already asked)."""
    n, q = cache.n, cache.q
    others = other_sites(n)[i]
    states = np.repeat(x[None, :], (n - 1) * q, axis=0)
    states[np.arange((n - 1) * q), np.repeat(others, q)] = np.tile(np.arange(q), n - 1)
    scores = cache.rows(cache.fetch(states, np.full(len(states), i), 1))  # cached: no query
    raw = to_numpy(scores).astype(np.float64).reshape(n - 1, q, q)
    probs = np.exp(to_numpy(log_softmax(scores / tau)).astype(np.float64)).reshape(n - 1, q, q)
    a, b = pairs(q)
    diff = raw[:, a] - raw[:, b]
    values = (0.5 * np.abs(probs[:, a] - probs[:, b]).sum(axis=-1),
              diff.max(axis=-1) - diff.min(axis=-1))  # [n - 1, pairs]
    for best, value in zip((best_c, best_d), values):
        p = value.argmax(axis=1)
        ctx = np.repeat(x[None, :], n - 1, axis=0)
        ctx[np.arange(n - 1), others] = a[p]
        best.offer(np.full(n - 1, i), others, value[np.arange(n - 1), p], ctx, b[p])


__all__ = [
    "surrogate_phase",
]
