"""The additive surrogate of a site's scores: exact on pairwise models, its enumeration, its cover."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.core.enumeration import all_states
from glauber.estimators.additive_surrogate import cover, fit_additive_scores, line_gains
from glauber.exact import ExactChain
from glauber.testing import models, temperatures

from ..support import table_model

#: Families whose scores are additive in the one-hot context (the module docstring), windows of
#: them included.
ADDITIVE = {"ising": {}, "curie-weiss": {}, "potts": {}, "planted": {}, "asym-ising": {},
            "restricted": {"families": ("ising", "potts", "planted", "asym-ising")}}


def star(x: np.ndarray, i: int, q: int) -> np.ndarray:
    """``x`` and ``x^{k->c}`` for every ``k != i`` and ``c`` (reference, by loops)."""
    out = [x.copy()]
    for k in range(x.size):
        for c in range(q):
            if k != i and c != x[k]:
                y = x.copy()
                y[k] = c
                out.append(y)
    return np.array(out)


def centred(scores: np.ndarray) -> np.ndarray:
    return scores - scores.mean(axis=1, keepdims=True)


@settings(max_examples=30, deadline=None)
@given(model=models(max_states=512, families=ADDITIVE), data=st.data())
def test_one_star_determines_the_scores_of_an_additive_model(model, data):
    # s_i(a; x) = c(a) + sum_k W_k[x_k, a] for these models, and a star at x holds every
    # difference W_k[c] - W_k[x_k]: the least-squares fit interpolates, and predicts the scores
    # of every other context exactly (up to a shift per context, which no conditional sees).
    n, q = model.n, model.q
    i = data.draw(st.integers(0, n - 1), label="site")
    x = np.array(data.draw(st.lists(st.integers(0, q - 1), min_size=n, max_size=n)))
    pts = star(x, i, q)
    fit = fit_additive_scores(pts, np.asarray(model.scores(pts, np.full(len(pts), i))), i, q)
    everything = all_states(n, q)
    truth = centred(np.asarray(model.scores(everything, np.full(len(everything), i))))
    np.testing.assert_allclose(fit.scores(everything), truth, atol=1e-8)


@settings(max_examples=25, deadline=None)
@given(model=models(max_states=512, families=ADDITIVE), tau=temperatures(0.1, 10.0))
def test_enumerated_gains_are_the_exact_influence_of_an_additive_model(model, tau):
    # With an exact surrogate, the best pair through any enumerated context is Definition 2's
    # supremum: max over contexts of gain[:, j] equals c_ij (ExactChain, by enumeration).
    n, q = model.n, model.q
    exact = ExactChain(model, tau).influence_matrix()
    x = np.zeros(n, dtype=np.int64)
    for i in range(n):
        pts = star(x, i, q)
        fit = fit_additive_scores(pts, np.asarray(model.scores(pts, np.full(len(pts), i))),
                                  i, q)
        contexts, gain, best = line_gains(fit, tau, x, limit=q ** (n - 1))
        assert gain[:, i].max() == 0.0
        np.testing.assert_allclose(gain.max(axis=0), exact[i], atol=1e-9)
        # the replacement it names realises the gain (a pair anyone can recheck)
        m, j = np.unravel_index(np.argmax(gain), gain.shape)
        if gain[m, j] > 0:
            y = contexts[m].copy()
            y[j] = best[m, j]
            p = np.exp(fit.scores(np.stack([contexts[m], y])) / tau)
            p /= p.sum(axis=1, keepdims=True)
            assert 0.5 * np.abs(p[0] - p[1]).sum() == pytest.approx(gain[m, j], abs=1e-12)


@pytest.mark.parametrize("n,q", [(3, 4), (5, 2), (4, 3)])
def test_line_gains_against_brute_force(n, q):
    # Any fitted surrogate (here of random scores: not additive): the gain at each enumerated
    # context in each direction is the largest TV to its q - 1 neighbours along that site.
    rng = np.random.default_rng(n * q)
    site, tau = 1, 0.7
    fit = fit_additive_scores(rng.integers(q, size=(200, n)), rng.standard_normal((200, q)),
                              site, q)
    contexts, gain, best = line_gains(fit, tau, rng.integers(q, size=n))
    assert len(contexts) == q ** (n - 1)  # every site active: all contexts
    for m, k in itertools.product(range(len(contexts)), range(n)):
        if k == site:
            assert gain[m, k] == 0 and best[m, k] == -1
            continue
        tvs = []
        for b in range(q):
            y = contexts[m].copy()
            y[k] = b
            p = np.exp(fit.scores(np.stack([contexts[m], y])) / tau)
            p /= p.sum(axis=1, keepdims=True)
            tvs.append(0.5 * np.abs(p[0] - p[1]).sum())
        assert gain[m, k] == pytest.approx(max(tvs), abs=1e-12)
        assert tvs[best[m, k]] == pytest.approx(max(tvs), abs=1e-12)


def test_enumeration_keeps_the_most_active_sites_within_the_limit():
    # 6 sites of 3 tokens: 3^5 = 243 contexts at site 0; a limit of 9 keeps the two sites that
    # move the scores most (the others stay at the reference, with no gain).
    rng = np.random.default_rng(0)
    n, q = 6, 3
    x = np.zeros(n, dtype=np.int64)
    W = rng.standard_normal((n, q, q)) * np.array([0, 1e-3, 5, 1e-2, 3, 1e-3])[:, None, None]

    pts = star(x, 0, q)
    scores = sum(W[k][pts[:, k]] for k in range(1, n))
    fit = fit_additive_scores(pts, scores, 0, q)
    ref = np.array([0, 1, 2, 0, 1, 2])
    contexts, gain, _ = line_gains(fit, 1.0, ref, limit=9)
    assert len(contexts) == 9
    assert np.all(contexts[:, [1, 3, 5]] == ref[[1, 3, 5]])
    assert np.all(gain[:, [0, 1, 3, 5]] == 0)
    assert np.all(gain[:, [2, 4]] > 0)


def test_the_surrogate_of_a_random_table_predicts_more_than_exists():
    # Counterexample: a prediction is not a bound. Fitted to a star of a random score table (not
    # additive), the surrogate's largest predicted gain exceeds the exact supremum of some
    # entry; the search therefore keeps only what the model answers (every value a witness).
    model = table_model(4, 3, seed=5, scale=2.0)
    exact = ExactChain(model, 0.5).influence_matrix()
    over = 0
    for i in range(4):
        pts = star(np.zeros(4, dtype=np.int64), i, 3)
        fit = fit_additive_scores(pts, np.asarray(model.scores(pts, np.full(len(pts), i))), i, 3)
        _, gain, _ = line_gains(fit, 0.5, np.zeros(4, dtype=np.int64))
        over += int(np.sum(gain.max(axis=0) > exact[i] + 1e-6))
    assert over > 0


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10_000), theta=st.floats(0.5, 1.0))
def test_cover_covers_every_wanted_direction_once(seed, theta):
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 12)), int(rng.integers(2, 7))
    gain = rng.random((m, n)) * (rng.random((m, n)) < 0.7)
    best = np.where(gain > 0, rng.integers(3, size=(m, n)), -1)
    wanted = rng.random(n) < 0.8
    chosen = cover(gain, best, wanted, rng.random(n) + 0.1, theta)
    top = gain.max(axis=0)
    covered = np.zeros(n, dtype=int)
    for row, dirs in chosen:
        assert dirs.size > 0
        assert np.all(gain[row, dirs] >= theta * top[dirs])
        covered[dirs] += 1
    assert np.all(covered <= 1)
    assert np.array_equal(covered == 1, wanted & (top > 0))
