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
   below by Perron–Frobenius monotonicity: the sites of largest conditional entropy, every
   pair among them, where one probed column shows influence spread out (masked LMs), else a
   block grown breadth-first over probed columns (sparse, local models); the rest goes to the
   lines of its best entries (5).
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

Each phase has its module: 1 :mod:`~glauber.estimators.search_scan`, 2
:mod:`~glauber.estimators.search_surrogate`, 3 :mod:`~glauber.estimators.search_evolve`, 4
:mod:`~glauber.estimators.search_walk`, 5 :mod:`~glauber.estimators.search_fill`; the grids,
the best pairs with their witnesses and the harvest of the memo that they share are in
:mod:`~glauber.estimators.search_grid`. This module runs them in order (:func:`search_influence`)
and over a grid of temperatures (:func:`search_influence_sweep`).

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
                                   (0.263 / 0.011)    (0.497 / 0.174)    (0.723 / 0.402)
at least one star per site         0.869 / 0.857      0.903 / 0.857      0.945 / 0.897
(15 / 38 / 67 models, all n >= 3)  (0.524 / 0.071)    (0.655 / 0.429)    (0.793 / 0.621)
``n >= 3``, below one star         0.184 / 0          0.244 / 0.035      0.343 / 0.118
(93 / 70 / 41 models)              (0.152 / 0)        (0.152 / 0.018)    (0.237 / 0.029)
=================================  =================  =================  =================

The targets on ``n >= 3`` at 10% (0.90 of the entries, 0.80 of the models) are met where the
budget holds at least one star per site, ``S = f q^(n-1) / (1 + (n-1)(q-1)) >= 1`` (0.945 /
0.897 on 67 models), and lost below it (0.343 / 0.118 on 41 models: budgets of 4 to 76 queries,
fewer than a site's star of ``1 + (n-1)(q-1)``, so the additive surrogate cannot learn each
site's dependence on its context); on all 108, 0.869 / 0.609. The benchmark prints this split
(``where_lost``).

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

import numbers
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from glauber.core.arrays import JsonResult
from glauber.core.conditionals import host_states
from glauber.core.enumeration import table_queries
from glauber.core.protocol import ConditionalModel, check_model
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import InvalidParameterError
from glauber.estimators.influence_threshold import rho_lower_bound
from glauber.estimators.random_draws import SeedLike
from glauber.estimators.score_cache import ScoreCache
from glauber.estimators.search_evolve import evolve_rows
from glauber.estimators.search_fill import ask_unasked, fill
from glauber.estimators.search_grid import Best, harvest_cache, tolerance
from glauber.estimators.search_scan import BLOCK_SHARE, scan_contexts, scan_rows
from glauber.estimators.search_surrogate import surrogate_phase
from glauber.estimators.search_walk import walk
from glauber.estimators.witnesses import Witness
from glauber.theory.contraction import (
    alpha_col,
    alpha_row,
    alpha_spectral,
    spectral_radius,
)


#: Search targets: every entry alike, or entries weighted by their effect on the spectral radius.
TARGETS = ("entries", "rho")


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
    best_c, best_d = Best(n), Best(n)
    harvest_cache(cache, tau, best_c, best_d)  # free: pairs asked by earlier searches
    used0 = cache.queries
    replayed = best_c.witnesses("C") if used0 else []
    fresh = not replayed and warm is None
    anchor = None
    star_all = n * (1 + (n - 1) * (q - 1))  # a star at every site
    # below one whole context, for rho (the masked-LM regime), a principal block gets
    # BLOCK_SHARE of the budget and the lines of its best entries the rest (fill)
    block = fresh and target == "rho" and budget < n * n
    if fresh and not (target == "entries" and n >= 3 and star_all // 4 <= budget < star_all):
        # cover every entry first (scan); only one context when every site's star is paid
        # for. Below that the scan's block serves rho; for entries, stars for some of the
        # sites and their surrogates do better from a quarter of star_all on (the module
        # docstring's measurements).
        rows = (n * n if budget >= star_all else int(BLOCK_SHARE * budget) if block
                else scan_rows(budget, scan, n))
        anchor = scan_contexts(cache, start_states, rows, batch_size, tau, rng, best_c, best_d)
    surrogate_phase(cache, tau, budget - (cache.queries - used0), batch_size, start_states,
                    target, rng, best_c, best_d, stop, anchor)
    rounds = local_searches = 0
    if not block:
        if stars > 0:
            evolve_rows(cache, tau,
                        max(0, int((scan + stars) * budget) - (cache.queries - used0)),
                        batch_size, start_states, target, rng, best_c, best_d, stop)
        rounds, local_searches = walk(cache, tau, budget - (cache.queries - used0), start_states,
                                      restarts, rng, batch_size, target,
                                      () if warm is None else warm.witnesses, fresh, best_c,
                                      best_d, stop)
    if restarts is None and not (stop and rho_lower_bound(best_c.value,
                                                          tolerance(cache, tau)) >= 1):
        fill(cache, budget - (cache.queries - used0), batch_size, target, rng, best_c)
        ask_unasked(cache, budget - (cache.queries - used0), batch_size, rng)
    harvest_cache(cache, tau, best_c, best_d)  # pairs formed across grids, too
    return _result(tau, best_c, best_d, cache, cache.queries - used0, budget, target, rounds,
                   local_searches)


def _result(tau: float, best_c: Best, best_d: Best, cache: ScoreCache, queries: int,
            budget: int, target: str, rounds: int, local_searches: int) -> InfluenceSearchResult:
    C, Delta = best_c.value.copy(), best_d.value.copy()
    tol = tolerance(cache, tau)
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
        best_c, best_d = Best(cache.n), Best(cache.n)
        harvest_cache(cache, res.tau, best_c, best_d)
        out.append(_result(res.tau, best_c, best_d, cache, res.queries, res.budget, res.target,
                           res.rounds, res.local_searches))
    return out


__all__ = ["TARGETS", "InfluenceSearchResult", "check_budget", "search_influence",
           "search_influence_sweep"]
