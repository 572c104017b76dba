"""Searched suprema of Definition 2 (``c_ij``) and Lemma 6 (``Delta_ij``), each with a witness.

Definition 2 takes ``c_ij(tau) = sup ||p_tau(. | x_{-i}) - p_tau(. | y_{-i})||_TV`` over pairs
``x, y`` that differ only at site ``j``; Lemma 6's ``Delta_ij`` is the supremum of the score
oscillation ``max_a (s_i(a; x) - s_i(a; y)) - min_a (s_i(a; x) - s_i(a; y))`` over the same
pairs. :func:`influence` samples a few contexts; this module *searches* for the suprema by
batched coordinate ascent, and every value it reports is realised by an explicit pair, its
witness (context ``x``, site ``j``, replacement ``b``: the pair ``(x, x^{j->b})`` at site ``i``).
Each entry is therefore a lower bound anyone can recheck
(:func:`glauber.estimators.witnesses.recheck_witnesses`), and so is any monotone function of
them: the spectral radius of the searched ``C`` is a lower bound on that of Definition 2's
(Perron–Frobenius), which is what :mod:`glauber.estimators.influence_threshold` uses.

The budget counts *distinct conditional queries*: rows sent to :meth:`scores`, a context
``x_{-i}`` and a site ``i`` each (the model masks ``x_i``), each once
(:class:`~glauber.estimators.score_cache.ScoreCache`); one query at site ``i`` serves every
entry ``(i, j)``. The ``n q^(n-1)`` queries that tabulate the model give the exact suprema, so a
budget above that is refused (:func:`check_budget`) and budgets are reported as fractions of it
(``query_fraction``). The budget is never exceeded. docs/theory.md ("Searching Definition 2 at a
budget") says what a budget can see: ``k`` realised entries of a row need ``k + 1`` queries at
its site, and a fraction ``f`` of a site's contexts sees at most a fraction ``f`` of the pairs
of each of its entries.

The search runs in phases over one query memo (docs/theory.md, Definition 2):

1. *scan*: :func:`influence`-style pairs at each context (``starts`` first, then uniform random
   contexts), the most likely other token at each site as its replacement, ``n^2`` queries a
   whole context (``scan`` of the budget, at least two whole contexts, all of it below that;
   one context where the stars below are paid for). Below one whole context, for ``"rho"``,
   90% of the budget buys a *principal block* of the first context, which bounds ``rho`` from
   below by Perron–Frobenius monotonicity (``_scan_block``): the sites of largest conditional
   entropy, every pair among them, where one probed column shows influence spread out (masked
   LMs), else a block grown breadth-first over probed columns (sparse, local models); the rest
   goes to the lines of its best entries (5).
2. *surrogate*: where the budget pays for the *star* of a site (``x`` and every ``x^{k->c}``,
   ``1 + (n - 1)(q - 1)`` queries) and ``n - 1`` more queries, the site gets one, an additive
   model of its scores is fitted to everything asked there, and the contexts it predicts
   realise ``theta = 98%`` of each entry's supremum are asked, several entries per context,
   refitting until nothing new is predicted
   (:mod:`glauber.estimators.additive_surrogate`). Exact on models whose scores are additive
   in the one-hot context (Ising, Potts, asymmetric Ising, Curie–Weiss, the planted token):
   there every entry is reached to 98% with a star and ``2 (n - 1)`` queries per site.
3. *stars* (``stars`` of the budget): an elitist evolution of one context per site ``i``,
   scored on its whole row at once (``x``, ``x^{j->b_j}`` for every ``j``: ``n`` queries for
   ``n - 1`` entries), mutants changing one or a few sites and some replacements;
4. *walkers*: one coordinate-ascent walker per entry ``(i, j)``, started at the best witness
   of its entry, holds a context ``x`` and a pair of tokens ``(a, b)`` at ``j``. A move
   queries a grid of conditionals at site ``i`` in one batch: a *pair move* varies ``x_j``
   over all ``q`` tokens (``q`` queries) and keeps the pair of largest TV; a *coordinate
   move* at a site ``k`` varies ``x_k`` over all ``q`` tokens with ``x_j = a`` and with
   ``x_j = b`` (``2 q`` queries) and moves ``x_k`` to the token of largest TV (ties broken at
   random, so walkers cross plateaus). Walkers cycle over the sites in random order; one that
   completes a cycle without improving restarts, from the given starts first, then
   alternately from a uniform random state and from a random change of a quarter of the sites
   of the best witness of its entry. (Not after a block: there the lines do better.)
5. *lines* (what is left): one query at a time, each entry adds a new token to its line (the
   contexts ``x^{j->c}`` at site ``i`` through its best witness ``x``), which pairs with
   every cached point of the line; with ``n = 2`` each entry is one line, asked point by
   point. When every line is complete, the rows left go to queries never asked, drawn at
   random (all of them when they fit: the memo then gives the exact suprema).

Every pair of answered queries at one site that differ at exactly one other site is a
candidate for its entry (a coordinate move at ``k`` also scores ``c_ik`` at two contexts), and
``Delta`` is read off the same pairs; the memo is read whole at the end, and at the start when
it is shared (e.g. over a grid of temperatures: scores are tau-free, so the stars and the
surrogates of one temperature serve the next). With ``target="rho"`` the sites starred, the
entries covered, the walkers and rows moved and the lines extended are weighted by the left
and right Perron vectors ``u``, ``v`` of the current ``C`` (``u_i v_j`` is the derivative of
the spectral radius in ``C_ij``), which is where the certificates of Theorem 5 (corrected) are
decided.

Measured (``python benchmarks/influence_search.py``: 225 random toy models, 25 of each family
of :data:`glauber.testing.FAMILIES`, 64 to 4,096 states; budgets as fractions of the ``n q^(n-1)``
distinct queries; "entries": non-zero exact entries reached to 95% with ``target="entries"``,
"rho": models with ``rho(c) > 0`` whose searched ``rho`` reaches 95% with ``target="rho"``;
the better of the two uniform samplings of the same budget, same run, in brackets):

=================================  =================  =================  =================
models                             1%                 3%                 10%
=================================  =================  =================  =================
all 225, entries / rho             0.372 / 0.066      0.670 / 0.176      0.841 / 0.363
                                   (0.252 / 0.005)    (0.478 / 0.088)    (0.698 / 0.203)
``n >= 3`` (108), entries / rho    0.387 / 0.130      0.697 / 0.348      0.869 / 0.609
at least one star per site         0.869 / 0.857      0.903 / 0.857      0.945 / 0.897
(15 / 38 / 67 models)              (0.524 / 0.071)    (0.655 / 0.429)    (0.793 / 0.621)
=================================  =================  =================  =================

Half the models (117) have ``n = 2``: there a tenth of ``T`` is ``q / 5`` queries, at most a
tenth of an entry's pairs is ever seen (docs/theory.md, "Searching Definition 2 at a budget"):
at 10% the search reaches 0.150 of their entries, uniform queries 0.172. On the 21 random tables
with ``n = 2`` no method can do much (statement 4 there, :mod:`glauber.theory.search_ceiling`):
any method reaches ``rho`` on at most 0.887 of the 182 models with ``rho(c) > 0`` in
expectation, and on 0.90 of them with probability at most 0.012. By family at 10% (entries / rho): Ising
0.954 / 0.800, Curie–Weiss 0.913 / 0.750, asymmetric Ising 0.914 / 0.680, clock 0.890 /
0.500, Potts 0.815 / 0.312, restricted 0.299 / 0.211, planted 0.146 / 0, random table 0.081 / 0,
random joint 0.040 / 0.
"""

from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from glauber.core.arrays import JsonResult, log_softmax, namespace, to_numpy
from glauber.core.conditionals import host_states
from glauber.core.enumeration import table_queries
from glauber.core.protocol import ConditionalModel, check_model
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import InvalidParameterError
from glauber.estimators.additive_surrogate import cover, fit_additive_scores, line_gains
from glauber.estimators.influence_threshold import rho_lower_bound
from glauber.estimators.random_draws import SeedLike
from glauber.estimators.score_cache import ScoreCache
from glauber.estimators.witnesses import Witness, reduced_precision, witness_tolerance
from glauber.theory.contraction import (
    alpha_col,
    alpha_row,
    alpha_spectral,
    spectral_radius,
)

#: Search targets: every entry alike, or entries weighted by their effect on the spectral radius.
TARGETS = ("entries", "rho")
#: Values closer than this count as ties (walkers pick among them at random).
_TIE = 1e-6
#: Least queries a round asks, in units of ``n`` (batches too small waste a masked LM's forward).
_MIN_ROUND = 16
#: Share of a budget below one whole context that the principal block of the scan gets, for
#: ``"rho"`` (the rest goes to the lines of its best entries). Measured on Sapiens VH over the
#: full trastuzumab VH chain at tau = 1 (1,000 / 2,000 queries): all of it 1.57 / 1.88, 90%
#: 1.64 / 1.93, 75% 1.65 / 1.79; 90% with the walkers after it 1.48 / 1.81.
_BLOCK_SHARE = 0.9
#: Most floats one grid evaluation holds at once (pairs x vocabulary), per chunk of walkers.
_CHUNK_FLOATS = 1 << 24
#: Most distinct queries ``n q^(n-1)`` enumerated to find the unasked ones (else drawn).
_ENUMERATE_QUERIES = 1 << 20


@dataclass(frozen=True)
class InfluenceSearchResult(JsonResult):
    """Result of :func:`search_influence`: realised values of Definition 2 and Lemma 6.

    Attributes
    ----------
    tau : float
    C : ndarray, shape (n, n)
        ``C[i, j]``: the largest TV found for the influence of ``j`` on ``i``, realised by
        ``witnesses``; a lower bound on ``c_ij(tau)`` (zero where no pair was seen).
    Delta : ndarray, shape (n, n)
        ``Delta[i, j]``: the largest score oscillation found (tau-free); a lower bound.
    witnesses : tuple of Witness
        One per non-zero entry of ``C`` (``quantity="C"``) and of ``Delta`` (``"Delta"``).
    is_lower_bound : bool
        Always True: every number here is realised, never an upper bound.
    queries : int
        Distinct conditional queries this search sent to the model (rows: a context ``x_{-i}``
        and a site ``i``; queries answered by a shared cache are free).
    budget : int
        Most distinct queries allowed.
    query_fraction, budget_fraction : float
        ``queries`` and ``budget`` as fractions of the ``n q^(n-1)`` distinct queries that
        tabulate every conditional of the model
        (:func:`glauber.core.enumeration.table_queries`): at 1 the exact supremum is known.
    target : str
    rounds, local_searches : int
        Batched rounds of the walkers, and walker starts (restarts included).
    alpha_row, alpha_col, alpha_spectral, spectral_radius : float
        Of ``C`` (see :mod:`glauber.theory.contraction`): lower bounds on those of Definition
        2's matrix (each is monotone in the entries of a non-negative matrix).
    tolerance : float
        Rounding allowance of a rechecked TV (:func:`witness_tolerance` of the scores' dtype).
    rho_lower : float
        A lower bound on the spectral radius of ``max(C - tolerance, 0)``, hence on
        ``rho(c(tau))``, that survives rounding
        (:func:`glauber.estimators.influence_threshold.rho_lower_bound`).
    no_certificate : bool
        ``rho_lower >= 1``: no Theorem 5 certificate (row, column, spectral or matrix power)
        can hold at this ``tau`` (rigorous: each needs ``rho(c(tau)) < 1``).
    """

    tau: float
    C: np.ndarray
    Delta: np.ndarray
    witnesses: tuple[Witness, ...]
    is_lower_bound: bool
    queries: int
    budget: int
    query_fraction: float
    budget_fraction: float
    target: str
    rounds: int
    local_searches: int
    alpha_row: float
    alpha_col: float
    alpha_spectral: float
    spectral_radius: float
    tolerance: float
    rho_lower: float
    no_certificate: bool


def _check_sites(model: ConditionalModel) -> None:
    if int(model.n) < 2:
        raise InvalidParameterError(
            f"influence needs n >= 2 sites, the model has n = {int(model.n)}")


def check_budget(budget: Any, n: int, q: int, name: str = "budget") -> int:
    """A search budget: distinct conditional queries, at least 1 and below a tabulation.

    Parameters
    ----------
    budget : int
    n, q : int
        The model's sites and vocabulary size.
    name : str
        The argument's name in messages.

    Returns
    -------
    int

    Raises
    ------
    InvalidParameterError
        If ``budget`` is not an integer >= 1, or exceeds the ``n q^(n-1)`` distinct queries
        that tabulate the model (its exact influence then costs less than the search).
    """
    if isinstance(budget, bool) or not isinstance(budget, numbers.Integral) or budget < 1:
        raise InvalidParameterError(
            f"{name} must be an integer >= 1 (distinct conditional queries: rows sent to the "
            f"model), got {budget!r}"
        )
    table = table_queries(n, q)
    if budget > table:
        raise InvalidParameterError(
            f"{name} = {int(budget):,} exceeds the {table:,} distinct queries (n q^(n-1) = "
            f"{n} x {q}^{n - 1}) that tabulate every conditional of this model, and with them "
            f"the exact influence is known: tabulate it instead (ExactChain(model, tau)"
            f".influence_matrix(), or glauber certify/alpha-curve with --exact) or pass "
            f"{name} <= {table:,}"
        )
    return int(budget)


@dataclass
class _Grid:
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

    def take(self, keep: np.ndarray) -> _Grid:
        return _Grid(self.sites[keep], self.base[keep], self.j[keep], self.k[keep],
                     self.vals_j[keep], self.vals_k[keep],
                     None if self.ids is None else self.ids[keep])


class _Best:
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
def _pairs(size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.triu_indices(size, 1)``: every pair ``a < b`` of ``0..size-1`` (cached)."""
    return np.triu_indices(size, 1)


@functools.lru_cache(maxsize=16)
def _others(n: int) -> np.ndarray:
    """``others[i]``: the sites other than ``i``, ``[n, n - 1]`` (cached)."""
    return np.array([np.delete(np.arange(n), i) for i in range(n)], dtype=np.int64)


def _pair_values(scores: Any, tau: float, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """TV at ``tau`` and score oscillation of every pair along ``axis`` (1 or 2) of ``[W, R, K, q]``.

    Returns ``[W, P, K]`` (axis 1) or ``[W, R, P]`` (axis 2) arrays on the host, pairs in
    ``np.triu_indices`` order.
    """
    xp = namespace(scores)
    size = scores.shape[axis]
    a, b = _pairs(size)
    if axis == 1:
        sa, sb = scores[:, a], scores[:, b]
    else:
        sa, sb = scores[:, :, a], scores[:, :, b]
    pa, pb = xp.exp(log_softmax(sa / tau)), xp.exp(log_softmax(sb / tau))
    tv = 0.5 * xp.sum(xp.abs(pa - pb), axis=-1)
    diff = sa - sb  # the log-softmax normalisers are constants in a: scores suffice
    osc = xp.amax(diff, axis=-1) - xp.amin(diff, axis=-1)
    return to_numpy(tv).astype(np.float64), to_numpy(osc).astype(np.float64)


def _evaluate(cache: ScoreCache, grid: _Grid, tau: float) -> dict[str, np.ndarray]:
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


def _harvest(grid: _Grid, values: dict[str, np.ndarray], best_c: _Best, best_d: _Best) -> None:
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
                pa, pb = _pairs(r)
                p, col = np.divmod(pos, c)
                has_k = grid.k >= 0
                ctx[rows[has_k], grid.k[has_k]] = grid.vals_k[has_k, col[has_k]]
                ctx[rows, grid.j] = grid.vals_j[rows, pa[p]]
                rep, site_j = grid.vals_j[rows, pb[p]], grid.j
            else:  # pairs over x_k within a row r
                pa, pb = _pairs(c)
                row, p = np.divmod(pos, len(pa))
                ctx[rows, grid.j] = grid.vals_j[rows, row]
                ctx[rows, grid.k] = grid.vals_k[rows, pa[p]]
                rep, site_j = grid.vals_k[rows, pb[p]], grid.k
            best.offer(grid.sites, site_j, value, ctx, rep)


def _harvest_cache(cache: ScoreCache, tau: float, best_c: _Best, best_d: _Best) -> None:
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


def _perron_weights(C: np.ndarray) -> np.ndarray:
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
        self.cycle = rng.permuted(_others(n)[ii], axis=1)

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

    def restart(self, e: np.ndarray, starts: np.ndarray, best: _Best) -> None:
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
                    others = _others(n)[i]
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
        improved = new_value > self.value[e] + _TIE
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
    """Row-wise argmax with ties (within :data:`_TIE`) broken at random."""
    top = values.max(axis=1, keepdims=True)
    noise = np.where(values >= top - _TIE, rng.random(values.shape), -1.0)
    return noise.argmax(axis=1)


def search_influence(
    model: ConditionalModel,
    tau: float,
    *,
    budget: int,
    starts: Any = None,
    restarts: int | None = None,
    seed: SeedLike = 0,
    batch_size: int = 4096,
    target: str = "entries",
    scan: float = 0.1,
    warm: InfluenceSearchResult | None = None,
    cache: ScoreCache | None = None,
    stop_at_no_certificate: bool = False,
    stars: float = 0.3,
) -> InfluenceSearchResult:
    """Search for the suprema ``c_ij(tau)`` (Definition 2) and ``Delta_ij`` (Lemma 6).

    Batched coordinate ascent over contexts and replacement pairs (see the module docstring);
    every entry of the result is realised by its witness, hence a lower bound on the supremum.

    Parameters
    ----------
    model : ConditionalModel
        Any model with ``scores`` (toy or MLM).
    tau : float
        Temperature > 0.
    budget : int
        Most distinct conditional queries (rows sent to ``model.scores``: a context and a
        site, each once; queries already in ``cache`` are free), at most the ``n q^(n-1)``
        that tabulate the model (:func:`check_budget`). Never exceeded.
    starts : array of int, shape (S, n), optional
        Contexts the walkers start from first (e.g. natural sequences); then random states.
    restarts : int, optional
        Most local searches per entry (default: as many as the budget allows, and what they
        leave is spent one query at a time on the lines of the best witnesses). The search
        ends early when every walker has used them.
    seed : int or numpy.random.Generator
        Same seed, same result.
    batch_size : int
        Most rows per :meth:`scores` call.
    target : {"entries", "rho"}
        ``"entries"`` moves every walker in each round; ``"rho"`` moves walkers drawn with
        Perron weights ``u_i v_j`` of the current ``C`` (a fraction of them per round, about a
        tenth of the budget's worth), for the spectral radius and the certificates.
    scan : float
        Fraction of the budget spent first on scanning contexts (``starts``, then uniform
        contexts; the most likely other token at each site as its replacement, ``n^2`` queries
        a context), at least two whole contexts; a budget below ``2 n^2`` goes to the scan
        whole: one context, or, below ``n^2``, a principal block of the first context (see
        the module docstring). Where the budget pays for a star at every site, the scan is
        one context (the stars' first queries) and the additive surrogate follows. The
        walkers then start from the best witness of their entry. Not used with ``warm`` or a
        ``cache`` that already holds queries.
    warm : InfluenceSearchResult, optional
        A previous result (e.g. at another temperature): its witnesses are the walkers' starts
        (with a shared ``cache``, the best pairs re-read from it at ``tau`` are used instead).
    cache : ScoreCache, optional
        Shared query memo (pass the same one across temperatures: scores are tau-free). Every
        pair of its queries that differ at one site is read at ``tau`` before the search
        begins, at no query cost.
    stop_at_no_certificate : bool
        Stop as soon as ``rho_lower >= 1`` (no Theorem 5 certificate can hold at ``tau``).
    stars : float
        Fraction of the budget spent on the star evolution, after the scan.

    Returns
    -------
    InfluenceSearchResult

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.
    InvalidParameterError
        If the model has no ``scores``, ``n < 2``, ``budget`` or ``batch_size`` is not an
        integer >= 1, ``budget`` exceeds the ``n q^(n-1)`` queries of a tabulation (the
        exact value costs less: the message says so), ``restarts`` is < 1, ``target`` is unknown, ``scan``/``stars`` are not
        fractions summing to at most 1, or ``cache``/``warm`` belong to a different model or
        size.
    SequenceLengthError, VocabularyError
        On malformed ``starts``.

    Examples
    --------
    >>> import networkx as nx
    >>> from glauber.toy_models import IsingModel
    >>> m = IsingModel(nx.path_graph(4), coupling=1.0)
    >>> res = search_influence(m, 1.0, budget=16)  # half of the 4 x 2^3 queries of a table
    >>> # an end site: its one neighbour moves the field from -J to J, c = tanh(J / tau)
    >>> bool(np.isclose(res.C[0, 1], np.tanh(1.0))), res.query_fraction
    (True, 0.5)
    """
    model = check_model(model)
    tau = check_tau(tau)
    _check_sites(model)
    budget = check_budget(budget, model.n, model.q)
    if restarts is not None:
        restarts = check_positive_int(restarts, "restarts")
    if cache is None:
        cache = ScoreCache(model)
    elif cache.model is not model:
        raise InvalidParameterError("cache belongs to another model; pass ScoreCache(model)")
    return _search(cache, tau, budget, starts, restarts, seed, batch_size, target, scan, warm,
                   stop_at_no_certificate, stars)


def _search(cache: ScoreCache, tau: float, budget: int, starts: Any, restarts: int | None,
            seed: SeedLike, batch_size: int, target: str, scan: float,
            warm: InfluenceSearchResult | None, stop: bool,
            stars: float = 0.3) -> InfluenceSearchResult:
    """:func:`search_influence` on a checked model, ``tau`` and ``budget`` (0 allowed: the
    pairs already in ``cache`` are read, nothing is asked)."""
    model = cache.model
    batch_size = check_positive_int(batch_size, "batch_size")
    for name, value in (("scan", scan), ("stars", stars), ("scan + stars", scan + stars)):
        if not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
            raise InvalidParameterError(f"{name} must be a fraction in [0, 1], got {value!r}")
    if target not in TARGETS:
        raise InvalidParameterError(f"target must be one of {TARGETS}, got {target!r}")
    n, q = int(model.n), int(model.q)
    if warm is not None and warm.C.shape != (n, n):
        raise InvalidParameterError(
            f"warm result has shape {warm.C.shape}, the model has n = {n} sites; pass a result "
            "of the same model"
        )
    start_states = (np.zeros((0, n), dtype=np.int64) if starts is None
                    else host_states(model, starts))
    rng = np.random.default_rng(seed)
    best_c, best_d = _Best(n), _Best(n)
    _harvest_cache(cache, tau, best_c, best_d)  # free: pairs asked by earlier searches
    used0 = cache.queries
    replayed = best_c.witnesses("C") if used0 else []
    fresh = not replayed and warm is None
    anchor = None
    star_all = n * (1 + (n - 1) * (q - 1))  # a star at every site
    # below one whole context, for rho (the masked-LM regime), a principal block gets
    # _BLOCK_SHARE of the budget and the lines of its best entries the rest (_fill)
    block = fresh and target == "rho" and budget < n * n
    if fresh and not (target == "entries" and n >= 3 and star_all // 4 <= budget < star_all):
        # cover every entry first (scan); only one context when every site's star is paid
        # for. Below that the scan's block serves rho; for entries, stars for some of the
        # sites and their surrogates do better from a quarter of star_all on (the module
        # docstring's measurements).
        rows = (n * n if budget >= star_all else int(_BLOCK_SHARE * budget) if block
                else _scan_rows(budget, scan, n))
        anchor = _scan(cache, start_states, rows, batch_size, tau, rng, best_c, best_d)
    _surrogate_phase(cache, tau, budget - (cache.queries - used0), batch_size, start_states,
                     target, rng, best_c, best_d, stop, anchor)
    rounds = local_searches = 0
    if not block:
        if stars > 0:
            _evolve_rows(cache, tau,
                         max(0, int((scan + stars) * budget) - (cache.queries - used0)),
                         batch_size, start_states, target, rng, best_c, best_d, stop)
        rounds, local_searches = _walk(cache, tau, budget - (cache.queries - used0), start_states,
                                       restarts, rng, batch_size, target, warm, fresh, best_c,
                                       best_d, stop)
    if restarts is None and not (stop and rho_lower_bound(best_c.value,
                                                          _tolerance(cache, tau)) >= 1):
        _fill(cache, budget - (cache.queries - used0), batch_size, target, rng, best_c)
        _ask_unasked(cache, budget - (cache.queries - used0), batch_size, rng)
    _harvest_cache(cache, tau, best_c, best_d)  # pairs formed across grids, too
    return _result(tau, best_c, best_d, cache, cache.queries - used0, budget, target, rounds,
                   local_searches)


def _walk(cache: ScoreCache, tau: float, budget: int, starts: np.ndarray,
          restarts: int | None, rng: np.random.Generator, batch_size: int, target: str,
          warm: InfluenceSearchResult | None, fresh: bool, best_c: _Best, best_d: _Best,
          stop: bool) -> tuple[int, int]:
    """The walkers of the module docstring, within ``budget`` queries; returns the rounds
    and the local searches (restarts included)."""
    n, q = cache.n, cache.q
    used0 = cache.queries
    walkers = _Walkers(n, q, rng)
    if fresh:
        walkers.warm(best_c.witnesses("C"), pair_first=q > 2)
    else:  # start where the earlier searches got to
        walkers.warm(best_c.witnesses("C") or list(warm.witnesses), pair_first=False)
    rounds, idle = 0, 0
    per_round = _walkers_per_round(target, budget, n, q)
    while True:
        left = budget - (cache.queries - used0)
        if left <= 0 or (stop and rho_lower_bound(best_c.value, _tolerance(cache, tau)) >= 1):
            break
        chosen = _choose(walkers, target, best_c.value, per_round, restarts, rng)
        if chosen.size == 0:
            break
        walkers.restart(chosen[~walkers.active[chosen]], starts, best_c)
        moves = _fit(cache, _moves(walkers, chosen), left)
        if not moves:  # no move's new queries fit in what is left: the lines take the rest
            break
        before = cache.queries
        for grid, _, _ in moves:
            w, r, c = grid.vals_j.shape[0], grid.vals_j.shape[1], grid.vals_k.shape[1]
            grid.ids = cache.fetch(grid.states().reshape(-1, n), np.repeat(grid.sites, r * c),
                                   batch_size).reshape(w, r, c)
        for grid, members, forced in moves:
            values = _evaluate(cache, grid, tau)
            _harvest(grid, values, best_c, best_d)
            _step(walkers, grid, members, forced, values, rng)
        rounds += 1
        idle = idle + 1 if cache.queries == before else 0
        if idle > n:  # every move the walkers make is cached: the lines take the rest
            break
    return rounds, int(walkers.starts.sum())


def _star_points(x: np.ndarray, site: int, q: int) -> np.ndarray:
    """The star of context ``x`` at ``site``: ``x`` and ``x^{k->c}`` for every ``k != site``
    and token ``c != x_k`` (``1 + (n - 1)(q - 1)`` states)."""
    n = x.size
    others = _others(n)[site]
    k = np.repeat(others, q - 1)
    c = (x[k] + np.tile(np.arange(1, q), n - 1)) % q
    pts = np.repeat(x[None, :], 1 + k.size, axis=0)
    pts[1 + np.arange(k.size), k] = c
    return pts


def _surrogate_phase(cache: ScoreCache, tau: float, budget: int, batch_size: int,
                     starts: np.ndarray, target: str, rng: np.random.Generator, best_c: _Best,
                     best_d: _Best, stop: bool, anchor: np.ndarray | None,
                     theta: float = 0.98, max_rounds: int = 20) -> None:
    """Stars, an additive surrogate per site, and the contexts it predicts (module docstring).

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
    order = (np.argsort(-(_perron_weights(best_c.value).max(axis=1)), kind="stable")
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
        if left <= 0 or (stop and rho_lower_bound(best_c.value, _tolerance(cache, tau)) >= 1):
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
        weights = _perron_weights(predicted) if target == "rho" else np.ones((n, n))
        proposals = []
        for i, ((ctx, gain, best), _) in fitted.items():
            top = gain.max(axis=0)  # ties relative: TVs can be tiny (a strong field)
            wanted = theta * top > best_c.value[i] + _TIE * top
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
        _scan_pairs(cache, contexts, reps, c_idx, i_idx, j_idx, left, batch_size, tau, best_c,
                    best_d)
        if cache.queries == before:
            return


def _star_lines(cache: ScoreCache, x: np.ndarray, i: int, tau: float, best_c: _Best,
                best_d: _Best) -> None:
    """Offer every pair on the lines of the star of ``x`` at site ``i`` (already asked)."""
    n, q = cache.n, cache.q
    others = _others(n)[i]
    states = np.repeat(x[None, :], (n - 1) * q, axis=0)
    states[np.arange((n - 1) * q), np.repeat(others, q)] = np.tile(np.arange(q), n - 1)
    scores = cache.rows(cache.fetch(states, np.full(len(states), i), 1))  # cached: no query
    raw = to_numpy(scores).astype(np.float64).reshape(n - 1, q, q)
    probs = np.exp(to_numpy(log_softmax(scores / tau)).astype(np.float64)).reshape(n - 1, q, q)
    a, b = _pairs(q)
    diff = raw[:, a] - raw[:, b]
    values = (0.5 * np.abs(probs[:, a] - probs[:, b]).sum(axis=-1),
              diff.max(axis=-1) - diff.min(axis=-1))  # [n - 1, pairs]
    for best, value in zip((best_c, best_d), values):
        p = value.argmax(axis=1)
        ctx = np.repeat(x[None, :], n - 1, axis=0)
        ctx[np.arange(n - 1), others] = a[p]
        best.offer(np.full(n - 1, i), others, value[np.arange(n - 1), p], ctx, b[p])


def _fill(cache: ScoreCache, budget: int, batch_size: int, target: str,
          rng: np.random.Generator, best_c: _Best) -> None:
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
            weight = _perron_weights(best_c.value)[ii, jj] + 0.05 * rng.random(ii.size)
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


def _ask_unasked(cache: ScoreCache, left: int, batch_size: int,
                 rng: np.random.Generator) -> None:
    """Spend ``left`` rows on queries the cache has never asked, drawn uniformly at random.

    Once every line of :func:`_fill` is complete, the budget left still buys new
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


def _scan_rows(budget: int, scan: float, n: int) -> int:
    """Rows of a fresh search's scan: ``scan`` of ``budget`` but at least two whole contexts
    (``2 n^2`` rows) where the budget pays for them; below that, all of it.

    Below ``2 n^2`` the scan is one whole context or one principal block (:func:`_scan`), and
    the block is where ``rho`` comes from: measured on Sapiens VH over the full trastuzumab VH
    chain (``n = 120``, ``tau = 1``, budgets 1,000 / 2,000 / 4,000 rows), giving the scan all
    of the budget found ``rho`` 1.51 / 1.80 / 1.99, 80% of it 1.47 / 1.69 / 1.98, 40% of it
    1.20 / 1.49 / 1.75 (stars and walkers spending the rest).
    """
    if budget >= 2 * n * n:
        return max(int(scan * budget), 2 * n * n)
    return budget


def _scan(cache: ScoreCache, starts: np.ndarray, budget: int, batch_size: int, tau: float,
          rng: np.random.Generator, best_c: _Best, best_d: _Best) -> np.ndarray | None:
    """Sample ``C`` at contexts (``starts``, then uniform ones) with ``budget`` queries.

    At each context ``x``: the base conditional at every site (``x`` with ``i`` masked, ``n``
    queries), then, over a *block* of sites ``S``, the pair ``(x, x^{j->b_j})`` at every
    ``i in S`` for every ``j in S \\ {i}``, with ``b_j`` the most likely token at ``j`` other
    than ``x_j`` under ``p_tau(. | x_{-j})`` (read off the base queries). A whole context
    (``S`` every site) costs ``n^2`` queries; :func:`influence` samples the same pairs with a
    random ``b_j``. When ``budget`` pays for whole contexts, they are scanned (``starts``
    first); when it pays for less than one, the first context gets a principal block
    (:func:`_scan_block`). By Perron–Frobenius monotonicity ``rho(C) >= rho(C_SS)``, so a
    dense block of realised values is what bounds ``rho`` from below; a band or scattered
    entries of the same cost bound it far less when the influence is spread out. Queries that
    do not fit in ``budget`` are dropped.
    """
    n, q = cache.n, cache.q
    count = budget // (n * n)
    partial = count < 1
    count = max(count, 1)
    if budget < n + 2:  # not even a block of two sites at one context
        return None
    extra = max(0, count - len(starts))
    contexts = np.concatenate([starts[:count], rng.integers(q, size=(extra, n))])
    used0 = cache.queries
    flat = np.repeat(contexts, n, axis=0)
    sites = np.tile(np.arange(n), len(contexts))
    ids = cache.fetch(flat, sites, batch_size).reshape(len(contexts), n)
    logp = to_numpy(log_softmax(cache.rows(ids.reshape(-1)) / tau)).astype(np.float64)
    logp = logp.reshape(len(contexts), n, q)
    # b_j: the most likely token other than x_j under the base conditional at j
    masked = logp.copy()
    np.put_along_axis(masked, contexts[:, :, None], -np.inf, axis=2)
    reps = masked.argmax(axis=2)
    if partial:
        _scan_block(cache, contexts[0], reps[0], logp[0], budget - (cache.queries - used0),
                    batch_size, tau, best_c, best_d)
        return contexts[0]
    ii, jj = np.nonzero(~np.eye(n, dtype=bool))  # every pair i != j, i-major
    c = np.repeat(np.arange(len(contexts)), len(ii))
    i, j = np.tile(ii, len(contexts)), np.tile(jj, len(contexts))
    _scan_pairs(cache, contexts, reps, c, i, j, budget - (cache.queries - used0), batch_size,
                tau, best_c, best_d)
    return contexts[0]


def _scan_pairs(cache: ScoreCache, contexts: np.ndarray, reps: np.ndarray, c: np.ndarray,
                i: np.ndarray, j: np.ndarray, left: int, batch_size: int, tau: float,
                best_c: _Best, best_d: _Best) -> None:
    """Ask and harvest the pairs ``(x, x^{j->b_j})`` at site ``i`` of contexts ``c``, at most
    ``left`` new rows (members in order; those that do not fit are dropped)."""
    n = cache.n
    if c.size == 0:
        return
    base = contexts[c].copy()
    base[np.arange(len(c)), i] = 0
    grid = _Grid(i, base, j, np.full(len(c), -1), np.stack([contexts[c, j], reps[c, j]], axis=1),
                 np.zeros((len(c), 1), dtype=np.int64))
    moves = _fit(cache, [(grid, np.arange(len(c)), np.zeros(len(c), bool), np.arange(len(c)))],
                 left)
    for grid, _, _ in moves:
        grid.ids = cache.fetch(grid.states().reshape(-1, n), np.repeat(grid.sites, 2),
                               batch_size).reshape(-1, 2, 1)
        _harvest(grid, _evaluate(cache, grid, tau), best_c, best_d)


def _scan_block(cache: ScoreCache, x: np.ndarray, reps: np.ndarray, logp: np.ndarray,
                budget: int, batch_size: int, tau: float, best_c: _Best,
                best_d: _Best) -> None:
    """The principal block of :func:`_scan` at one context ``x`` (base queries already asked).

    First the column of the site ``j0`` of largest entropy: the pair at every other site
    (``n - 1`` rows). If at least a quarter of them move by more than the rounding tolerance
    (influence spread out, as in a masked LM), the block is the sites of largest entropy
    (:func:`_block_sites`, ``j0`` among them, its column reused). Otherwise the model is
    sparse (a site reads a few others, as on a graph), and a block of scattered high-entropy
    sites would hold few of its edges: the block is grown breadth-first instead, the column of
    each site of the block probed in turn (``n - 1`` rows each) and every site it moves added
    (strongest first), then the next site of largest entropy when the frontier is empty.

    Measured (``benchmarks/influence_search_large.py``, 12 local models at ``n = 40..120``,
    ``0.25 n^2`` rows): mean ``rho(C) / rho(c)`` 0.73, against 0.61 for the entropy block
    alone; on AntiBERTy and Sapiens VH over the full trastuzumab VH chain the probed column
    costs 2-3% of ``rho`` at 1,000 rows and nothing at 2,000 and 4,000.
    """
    n = cache.n
    used0 = cache.queries
    order = _entropy_order(logp)
    ctx, rep = x[None], reps[None]
    tol = _tolerance(cache, tau)

    def column(j: int) -> np.ndarray:
        rows = np.delete(np.arange(n), j)
        left = budget - (cache.queries - used0)
        _scan_pairs(cache, ctx, rep, np.zeros(n - 1, dtype=np.int64), rows,
                    np.full(n - 1, j), left, batch_size, tau, best_c, best_d)
        moved = rows[best_c.value[rows, j] > tol]
        return moved[np.argsort(-best_c.value[moved, j], kind="stable")]

    if budget < n - 1:
        return
    j0 = int(order[0])
    moved = column(j0)
    if moved.size >= (n - 1) / 4:  # dense: the sites of largest entropy
        left = budget - (cache.queries - used0)
        block = _block_sites(order, left + int(np.sqrt(max(left, 0))))
        members = [(i, j) for i in block for j in block if i != j and j != j0]
        if members:
            i, j = (np.array(v, dtype=np.int64) for v in zip(*members))
            _scan_pairs(cache, ctx, rep, np.zeros(len(i), dtype=np.int64), i, j, left,
                        batch_size, tau, best_c, best_d)
        return
    probed = {j0}
    frontier = [int(k) for k in moved]
    inside = {j0, *frontier}
    while budget - (cache.queries - used0) >= n - 1 and len(probed) < n:
        if frontier:
            j = frontier.pop(0)
        else:
            j = int(next(k for k in order if k not in probed))
            inside.add(j)
        if j in probed:
            continue
        probed.add(j)
        for k in column(j).tolist():
            if k not in inside:
                inside.add(k)
                frontier.append(k)


def _entropy_order(logp: np.ndarray) -> np.ndarray:
    """Sites by decreasing entropy of their conditional (rows of log-probabilities ``logp``,
    ``[n, q]``, ``0 log 0 = 0``; entropies rounded to 12 decimals, ties in site order)."""
    entropy = -np.sum(np.exp(logp) * logp, axis=1, where=np.isfinite(logp))
    return np.argsort(-np.round(entropy, 12), kind="stable")


def _block_sites(order: np.ndarray, budget: int) -> np.ndarray:
    """The principal block of :func:`_scan` at one context: the first ``s`` sites of ``order``
    (:func:`_entropy_order`: largest entropy of ``p_tau(. | x_{-i})`` first), ``s`` the
    largest with ``s (s - 1) <= budget``.

    Entropy is the criterion because a conditional that is nearly a point mass can move little
    under any one change of context; measured on Sapiens VH over the full trastuzumab VH chain
    (one context, every pair of sites), the block of the 43 sites of largest entropy keeps
    ``rho`` 1.30 of the whole chain's 1.37 at ``tau = 1``, 43 uniformly drawn sites 0.55.
    """
    s = int(min(len(order), (1 + np.sqrt(1 + 4 * max(budget, 0))) // 2))
    return np.sort(order[:s])


def _star_grid(sites: np.ndarray, contexts: np.ndarray, reps: np.ndarray) -> _Grid:
    """The stars of contexts ``contexts[s]`` at sites ``sites[s]``: for every ``j != i``, the
    pair ``(x, x^{j->reps[s, j]})``; member ``s (n - 1) + m`` is the ``m``-th ``j``."""
    count, n = contexts.shape
    jj = _others(n)[sites].reshape(-1)
    s = np.repeat(np.arange(count), n - 1)
    base = contexts[s].copy()
    base[np.arange(len(s)), sites[s]] = 0
    return _Grid(sites[s], base, jj, np.full(len(s), -1),
                 np.stack([contexts[s, jj], reps[s, jj]], axis=1),
                 np.zeros((len(s), 1), dtype=np.int64))


def _evolve_rows(cache: ScoreCache, tau: float, budget: int, batch_size: int,
                 starts: np.ndarray, target: str, rng: np.random.Generator, best_c: _Best,
                 best_d: _Best, stop: bool) -> int:
    """An elitist evolution of one context per site ``i`` (its *star*: ``x`` and
    ``x^{j->b_j}`` for every ``j``, ``n`` queries) on the weighted row ``sum_j w_ij TV_ij``.

    Weights: Perron ``v_j`` for ``"rho"`` (rows drawn with Perron ``u_i``), ``1 / C_ij`` (the
    progress of each entry relative to its best so far) for ``"entries"``. Each round, every
    row drawn proposes mutants (one or a few sites of its context changed, a quarter of its
    replacements redrawn), about a twentieth of ``budget`` in all, and keeps its best mutant
    when that one's weighted row is not smaller. Returns the rounds run.
    """
    n, q = cache.n, cache.q
    others = _others(n)
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
    per_round = max(budget // 20, min(budget, _MIN_ROUND * n))  # queries a round asks
    rounds = idle = 0
    while idle <= n:  # n rounds without a new query: the stars it reaches are all known
        left = budget - (cache.queries - used0)
        if left < n or (stop and rho_lower_bound(best_c.value, _tolerance(cache, tau)) >= 1):
            break
        before = cache.queries
        if target == "rho":
            weights = _perron_weights(best_c.value)
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
        values = _evaluate(cache, grid, tau)
        _harvest(grid, values, best_c, best_d)
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


def _walkers_per_round(target: str, budget: int, n: int, q: int) -> int:
    """Every walker for ``"entries"``; about a tenth of the budget's worth for ``"rho"``."""
    entries = n * (n - 1)
    if target == "entries":
        return entries
    return int(min(entries, max(1, budget // (10 * 2 * q), _MIN_ROUND * n // (2 * q))))


def _choose(walkers: _Walkers, target: str, C: np.ndarray, per_round: int,
            restarts: int | None, rng: np.random.Generator) -> np.ndarray:
    """The walkers to move this round, in priority order (the budget keeps a prefix)."""
    live = walkers.active | (True if restarts is None else walkers.starts < restarts)
    eligible = np.flatnonzero(live)
    if eligible.size == 0:
        return eligible
    if target == "entries":
        return rng.permutation(eligible)
    weights = _perron_weights(C)[walkers.i[eligible], walkers.j[eligible]] + 0.05
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
        grid = _Grid(walkers.i[e], walkers.x[e].copy(), walkers.j[e], k, vals_j, vals_k)
        out.append((grid, e, walkers.need_pair[e].copy(), np.flatnonzero(mask)))
    return out


def _fit(cache: ScoreCache, moves: list, left: int) -> list:
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


def _step(walkers: _Walkers, grid: _Grid, members: np.ndarray, forced: np.ndarray,
          values: dict[str, np.ndarray], rng: np.random.Generator) -> None:
    """Move each walker to the best cell of its grid (ties at random)."""
    rows = np.arange(members.size)
    if grid.vals_k.shape[1] == 1:  # pair move: the best pair (a, b) at j
        tv = values["tv_j"][:, :, 0]
        p = _pick(tv, rng)
        pa, pb = _pairs(grid.vals_j.shape[1])
        walkers.x[members, walkers.j[members]] = grid.vals_j[rows, pa[p]]
        walkers.b[members] = grid.vals_j[rows, pb[p]]
    else:  # coordinate move: the best token at k for the pair (a, b)
        tv = values["tv_j"][:, 0, :]
        p = _pick(tv, rng)
        walkers.x[members, grid.k] = grid.vals_k[rows, p]
    walkers.advance(members, forced, tv[rows, p])


def _tolerance(cache: ScoreCache, tau: float) -> float:
    return witness_tolerance(cache.dtype, tau, reduced_precision(cache.model))


def _result(tau: float, best_c: _Best, best_d: _Best, cache: ScoreCache, queries: int,
            budget: int, target: str, rounds: int, local_searches: int) -> InfluenceSearchResult:
    C, Delta = best_c.value.copy(), best_d.value.copy()
    tol = _tolerance(cache, tau)
    rho_low = rho_lower_bound(C, tol)
    return InfluenceSearchResult(
        tau=tau, C=C, Delta=Delta,
        witnesses=tuple(best_c.witnesses("C") + best_d.witnesses("Delta")),
        is_lower_bound=True, queries=int(queries), budget=int(budget),
        query_fraction=int(queries) / table_queries(cache.n, cache.q),
        budget_fraction=int(budget) / table_queries(cache.n, cache.q), target=target,
        rounds=int(rounds), local_searches=int(local_searches),
        alpha_row=alpha_row(C), alpha_col=alpha_col(C), alpha_spectral=alpha_spectral(C),
        spectral_radius=spectral_radius(C), tolerance=tol, rho_lower=float(rho_low),
        no_certificate=bool(rho_low >= 1.0),
    )


def search_influence_sweep(
    model: ConditionalModel,
    taus: Sequence[float],
    *,
    budget: int,
    starts: Any = None,
    seed: SeedLike = 0,
    batch_size: int = 4096,
    target: str = "rho",
    scan: float = 0.1,
    stars: float = 0.3,
    stop_at_no_certificate: bool = True,
    focus: bool = True,
) -> list[InfluenceSearchResult]:
    """:func:`search_influence` at each temperature, warm-started, sharing one query memo.

    Scores are tau-free, so one :class:`ScoreCache` serves the whole sweep: each search
    re-reads every grid asked before (at no cost), refits the surrogates of the sites starred
    before (their stars are in the memo) and starts its walkers at the previous temperature's
    witnesses. The first temperature also pays for the scan (as in :func:`search_influence`;
    a principal block is chosen at the first temperature), which serves them all; the rest of
    ``budget`` is split evenly over the temperatures left, and what a search leaves unused
    (e.g. because ``stop_at_no_certificate`` ended it once ``rho_lower >= 1``) goes to the next
    ones.

    With ``focus`` (and ``stop_at_no_certificate``), sorted ``taus`` are searched for
    ``tau_no_cert``: each temperature may spend all the budget left, until the first one where
    ``rho_lower >= 1`` is not reached (the frontier); the temperatures after it only read the
    memo (no query). The whole budget then goes where the threshold is decided.

    At the end every temperature re-reads the whole memo (no query): a search that stopped
    early (``rho_lower >= 1`` reached) gets the pairs the later ones asked, so its entries can
    only grow; where the sweep asked every query of a tabulation, every temperature's ``C`` is
    the exact one.

    Parameters
    ----------
    model : ConditionalModel
    taus : sequence of float
        Temperatures, searched in increasing order.
    budget : int
        Most distinct conditional queries sent to the model over the whole sweep, at most the
        ``n q^(n-1)`` that tabulate it.
    focus : bool
        Spend the budget at the frontier (see above).
    starts, seed, batch_size, target, scan, stars, stop_at_no_certificate
        As in :func:`search_influence` (``scan`` and ``stars`` at the first temperature only:
        the later ones start from the memo).

    Returns
    -------
    list of InfluenceSearchResult
        One per temperature, in increasing order; ``queries`` are each search's own.

    Raises
    ------
    InvalidParameterError
        If ``taus`` is empty, ``budget`` < 1 or above a tabulation (and see
        :func:`search_influence`).
    """
    taus = sorted(check_tau(t) for t in taus)
    if not taus:
        raise InvalidParameterError("taus is empty; pass at least one temperature")
    model = check_model(model)
    _check_sites(model)
    budget = check_budget(budget, model.n, model.q)
    cache = ScoreCache(model)
    n = int(model.n)
    rng = np.random.default_rng(seed)
    results: list[InfluenceSearchResult] = []
    spent = 0
    frontier = False  # a temperature where the search ended without rho_lower >= 1
    for k, tau in enumerate(taus):
        left = budget - spent
        if focus and stop_at_no_certificate:
            share = 0 if frontier else left
        else:
            share = left // (len(taus) - k)
        scan_k = scan
        if k == 0:  # the first scan serves every temperature: it is paid for on top
            cover = min(left, max(int(scan * budget), 2 * n * n))
            if not (focus and stop_at_no_certificate):
                share = cover + (left - cover) // len(taus)
            scan_k = cover / max(share, 1)
        res = _search(
            cache, tau, share, starts, None, rng, batch_size, target, min(scan_k, 1.0),
            results[-1] if results else None, stop_at_no_certificate,
            min(stars, 1.0 - min(scan_k, 1.0)),
        )
        spent += res.queries
        results.append(res)
        frontier = frontier or not res.no_certificate
    return _reread(cache, results)


def _reread(cache: ScoreCache, results: list[InfluenceSearchResult]
            ) -> list[InfluenceSearchResult]:
    """Each result of a sweep re-read from the sweep's whole memo: scores are tau-free, so the
    queries asked at later temperatures realise pairs at the earlier ones too (no query is
    asked; each entry is the best of a superset of the pairs it was the best of, so it can only
    grow, and its witness stays a pair of answered queries)."""
    out = []
    for res in results:
        best_c, best_d = _Best(cache.n), _Best(cache.n)
        _harvest_cache(cache, res.tau, best_c, best_d)
        out.append(_result(res.tau, best_c, best_d, cache, res.queries, res.budget, res.target,
                           res.rounds, res.local_searches))
    return out


__all__ = ["TARGETS", "InfluenceSearchResult", "check_budget", "search_influence",
           "search_influence_sweep"]
