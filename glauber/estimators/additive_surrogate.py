"""An additive model of one site's scores, and the contexts it predicts realise Definition 2.

The surrogate of site ``i`` is ``s_i(a; x) ~ c(a) + sum_{k != i} W_k[x_k, a]``, fitted by least
squares to the scores of every query a search has answered at ``i`` (scores centred over the
tokens: a conditional is invariant to a shift of its scores). It is *exact* for every model
whose scores are additive in the one-hot context: Ising and Potts on any graph, the asymmetric
Ising model, Curie–Weiss and the planted token (its score counts the other sites holding the
token), and windows of them (``restrict`` folds the frozen sites into ``c``). A *star* at a
context ``x`` (``x`` and ``x^{k->c}`` for every ``k != i`` and token ``c``,
``1 + (n - 1)(q - 1)`` queries) determines it: ``W_k[c] - W_k[x_k]`` is the difference of two
answered score vectors.

Given the surrogate, Definition 2's supremum ``c_ij = max TV(p(. | x), p(. | x^{j->b}))`` is a
maximum over contexts the surrogate scores for free. :func:`line_gains` enumerates the contexts
of the sites that move ``s_i`` (its *active* sites) and returns, at each, the best replacement in
every direction; :func:`cover` picks contexts whose pairs reach a fraction ``theta`` of the
predicted supremum in as many directions as possible, so that one context ``x`` and its
replacements ``x^{j->b_j}`` (one query each) realise several entries at once. Nothing here is a
bound: every proposed pair is then asked of the model, and only what it answers is kept (a
witness, docs/theory.md, Definition 2). On a model that is not additive (random tables, masked
LMs) the predictions are only a guide, refitted as queries accumulate.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

#: Weights that move a score by less than this (relative to the largest) count as inactive.
_ACTIVE = 1e-9


@dataclass(frozen=True)
class AdditiveScores:
    """A fitted additive surrogate of site ``site``'s scores (see the module docstring).

    Attributes
    ----------
    site : int
    others : ndarray of int, shape (n - 1,)
        The context sites ``k != site``, in order.
    bias : ndarray, shape (q,)
    weights : ndarray, shape (n - 1, q, q)
        ``weights[p, c]``: the (centred) scores added when ``x_{others[p]} = c``.
    seen : ndarray of bool, shape (n - 1, q)
        Whether a fitted query had ``x_{others[p]} = c`` (unseen weights are not predicted).
    """

    site: int
    others: np.ndarray
    bias: np.ndarray
    weights: np.ndarray
    seen: np.ndarray

    def scores(self, contexts: np.ndarray) -> np.ndarray:
        """Predicted centred scores at full contexts ``[M, n]`` -> ``[M, q]``."""
        out = np.broadcast_to(self.bias, (contexts.shape[0], self.bias.size)).copy()
        for p, k in enumerate(self.others):
            out += self.weights[p][contexts[:, k]]
        return out

    def oscillation(self) -> np.ndarray:
        """Per context site (position into ``others``): the largest score oscillation
        ``max_a d(a) - min_a d(a)`` of ``d = W[c] - W[c']`` over seen tokens ``c, c'``
        (Lemma 6's ``Delta`` as the surrogate sees it)."""
        out = np.zeros(self.others.size)
        for p in range(self.others.size):
            w = self.weights[p][self.seen[p]]
            if len(w) >= 2:
                d = w[:, None, :] - w[None, :, :]
                out[p] = float((d.max(axis=-1) - d.min(axis=-1)).max())
        return out

    def active(self) -> np.ndarray:
        """Positions (into ``others``) whose seen tokens move the scores, most first."""
        osc = self.oscillation()
        top = float(osc.max()) if osc.size else 0.0
        act = np.flatnonzero(osc > _ACTIVE * max(top, 1.0))
        return act[np.argsort(-osc[act], kind="stable")]


def fit_additive_scores(states: np.ndarray, scores: np.ndarray, site: int,
                        q: int) -> AdditiveScores:
    """Least-squares additive surrogate of site ``site`` from answered queries.

    Parameters
    ----------
    states : ndarray of int, shape (m, n)
        Queried contexts (``x_site`` is ignored).
    scores : ndarray, shape (m, q)
        The model's scores at ``site`` for each context (tau = 1).
    site : int
    q : int

    Returns
    -------
    AdditiveScores
        The minimum-norm least-squares fit of the centred scores on the one-hot context (exact
        interpolation when the queries hold a star and the model is additive).
    """
    m, n = states.shape
    others = np.delete(np.arange(n), site)
    design = np.zeros((m, 1 + (n - 1) * q))
    design[:, 0] = 1.0
    rows = np.arange(m)
    for p, k in enumerate(others):
        design[rows, 1 + p * q + states[:, k]] = 1.0
    target = scores - scores.mean(axis=1, keepdims=True)
    coef, *_ = np.linalg.lstsq(design, target, rcond=None)
    seen = design[:, 1:].reshape(m, n - 1, q).any(axis=0)
    return AdditiveScores(site, others, coef[0], coef[1:].reshape(n - 1, q, q), seen)


def _softmax(scores: np.ndarray, tau: float) -> np.ndarray:
    z = scores / tau
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def line_gains(model: AdditiveScores, tau: float, reference: np.ndarray,
               limit: int = 1 << 14) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Predicted TV of the best pair through each enumerated context, in every direction.

    Contexts: every combination of the seen tokens of the active sites (the most active first,
    as many as keep the count within ``limit``), the other sites as in ``reference``.

    Parameters
    ----------
    model : AdditiveScores
    tau : float
    reference : ndarray of int, shape (n,)
        Values of the sites not enumerated.
    limit : int
        Most contexts enumerated.

    Returns
    -------
    contexts : ndarray of int, shape (M, n)
    gain : ndarray, shape (M, n)
        ``gain[m, j]``: the predicted ``max_b TV(p(. | x), p(. | x^{j->b}))`` at context ``m``
        (0 for ``j = site`` and for sites not enumerated: they move nothing the surrogate sees).
    best : ndarray of int, shape (M, n)
        The maximising replacement ``b`` (-1 where ``gain`` is 0).
    """
    n = reference.size
    active = model.active()
    keep, count = [], 1
    for p in active:
        size = int(model.seen[p].sum())
        if count * size > limit:
            break
        keep.append(int(p))
        count *= size
    values = [np.flatnonzero(model.seen[p]) for p in keep]
    combos = np.array(list(itertools.product(*values)), dtype=np.int64).reshape(count, len(keep))
    contexts = np.broadcast_to(reference, (count, n)).copy()
    sites = model.others[keep] if keep else np.zeros(0, dtype=np.int64)
    contexts[:, sites] = combos
    probs = _softmax(model.scores(contexts), tau)
    gain = np.zeros((count, n))
    best = np.full((count, n), -1, dtype=np.int64)
    # contexts are in itertools.product order: reshaped, enumerated site t is axis t
    shape = tuple(len(v) for v in values)
    grid = probs.reshape(shape + (probs.shape[-1],))
    for t, (k, v) in enumerate(zip(sites, values)):
        a = np.expand_dims(grid, t + 1)  # partner axis after axis t
        b = np.expand_dims(np.moveaxis(grid, t, -2), t)  # [..., 1 at t, ..., |v|, q]
        b = np.moveaxis(b, -2, t + 1)
        tv = 0.5 * np.abs(a - b).sum(axis=-1)  # [..., |v| (own), |v| (partner), ...]
        r = tv.argmax(axis=t + 1).reshape(count)
        gain[:, k] = tv.max(axis=t + 1).reshape(count)
        best[:, k] = np.where(gain[:, k] > 0, v[r], -1)
    return contexts, gain, best


def cover(gain: np.ndarray, best: np.ndarray, wanted: np.ndarray,
          weights: np.ndarray, theta: float) -> list[tuple[int, np.ndarray]]:
    """Greedy cover of the wanted directions by contexts (rows of ``gain``).

    A context covers direction ``j`` when its predicted pair reaches ``theta`` of the best
    predicted anywhere (``gain[m, j] >= theta max_m gain[:, j]``). Each step takes the context
    of largest ``sum of weights[j] over the wanted directions it covers`` per query it costs
    (``1 +`` those directions), until every wanted direction is covered.

    Returns
    -------
    list of (context row, directions)
        In the order chosen.
    """
    top = gain.max(axis=0)
    good = (gain >= theta * top[None, :]) & (top[None, :] > 0) & (best >= 0)
    need = wanted.copy() & good.any(axis=0)
    out = []
    while need.any():
        hits = good & need[None, :]
        value = (hits * weights[None, :]).sum(axis=1) / (1.0 + hits.sum(axis=1))
        m = int(np.argmax(value))
        if value[m] <= 0:
            break
        dirs = np.flatnonzero(hits[m])
        out.append((m, dirs))
        need[dirs] = False
    return out


__all__ = ["AdditiveScores", "cover", "fit_additive_scores", "line_gains"]
