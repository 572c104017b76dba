"""Influence coefficients (Definition 2) and score oscillations (Lemma 6), estimated or exact.

``c_ij(tau) = sup ||p_tau(. | x_{-i}) - p_tau(. | y_{-i})||_TV`` over ``x, y`` that differ only at
site ``j``: the influence OF ``j`` ON ``i``. ``Delta_ij`` is the supremum of the oscillation
``max_a (s_i(a; x) - s_i(a; y)) - min_a (s_i(a; x) - s_i(a; y))`` over the same pairs (tau-free).

A sample of pairs gives a maximum that is a LOWER bound on each supremum, so the certificates
computed from it (corrected Theorem 5, Corollary 7) are estimates, not proofs; ``exhaustive=True``
(toy models) enumerates every pair and the result is exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from glauber.core.arrays import JsonResult, like, namespace, to_numpy
from glauber.core.conditionals import host_states, iter_scored_log_conditionals
from glauber.core.enumeration import all_states, context_digit_view
from glauber.core.protocol import ConditionalModel
from glauber.core.validation import check_eps, check_positive_int, check_tau
from glauber.errors import InvalidParameterError
from glauber.estimators.influence_search import check_budget, search_influence
from glauber.estimators.influence_threshold import rho_lower_bound
from glauber.estimators.batch_arrays import concat
from glauber.estimators.random_draws import SeedLike
from glauber.estimators.witnesses import Witness, witness_tolerance
from glauber.theory.contraction import ContractionCertificate, certify_contraction
from glauber.theory.distances import hilbert_distance_upper, tv_rounding_bound
from glauber.theory.floating import RoundingFormats
from glauber.theory.influence_bounds import (
    corollary7_alpha_bound,
    corollary7_holds,
    influence_matrix_bound,
    lemma6_bound,
    tanh_bound,
)

#: Tolerance of the Lemma 6 / tanh consistency checks (rounding of TV in float32).
_CHECK_ATOL = 1e-6


@dataclass(frozen=True)
class InfluenceResult(JsonResult):
    """Result of :func:`influence`.

    Attributes
    ----------
    tau : float
    C : ndarray, shape (n, n)
        ``C[i, j]``: largest TV seen for the influence of ``j`` on ``i`` (zero diagonal).
    Delta : ndarray, shape (n, n)
        ``Delta[i, j]``: largest score oscillation seen (tau-free; zero diagonal), read off the
        scores and rounded up: never below the exact oscillation of a pair compared.
    is_lower_bound : bool
        True unless ``exhaustive``: ``C`` and ``Delta`` are then lower bounds on the suprema of
        Definition 2 and Lemma 6, and ``contraction`` is an estimate, not a certificate.
    exhaustive : bool
    n_contexts, n_replacements, n_comparisons : int
        Contexts used, replacements per (context, site), and TV comparisons made (one per
        context, site ``j``, replacement and site ``i != j``).
    alpha_row, alpha_col, alpha_spectral, spectral_radius : float
        Those of ``contraction`` (see :mod:`glauber.theory.contraction`).
    contraction : ContractionCertificate
        Corrected Theorem 5 certificates from ``C`` at ``eps`` (from ``C + rounding`` when
        ``exhaustive``).
    lemma6 : ndarray, shape (n, n)
        ``Delta / (4 tau)`` (Lemma 6 as printed).
    tanh : ndarray, shape (n, n)
        ``tanh(Delta / (4 tau))`` (the sharper form).
    lemma6_consistent, tanh_consistent : bool
        ``C <= lemma6`` and ``C <= tanh`` entrywise (up to rounding). Each holds for every sampled
        pair, so a failure means a bug or non-finite scores, not a counterexample.
    corollary7 : bool
        Corollary 7's hypothesis ``max_i sum_j Delta_ij < 4 tau`` on the estimated ``Delta``.
    lemma6_alpha, tanh_alpha : float
        ``max_i sum_j Delta_ij / (4 tau)`` (Corollary 7 as printed) and
        ``max_i sum_j tanh(Delta_ij / (4 tau))``: bounds on the row-sum ``alpha`` (of the
        suprema when ``exhaustive``).
    oscillation_contraction : ContractionCertificate
        Corrected Theorem 5 applied to ``tanh(Delta / (4 tau)) >= C`` (a certificate from score
        oscillations alone; never tighter than ``contraction``).
    rho_lower : float
        A lower bound on the spectral radius of Definition 2's matrix that survives rounding
        (:func:`~glauber.estimators.influence_threshold.rho_lower_bound` of ``C`` less
        ``tolerance``): every entry of ``C`` is a realised TV, so this bounds ``rho(c(tau))``
        from below whether ``C`` was enumerated, sampled or searched.
    no_certificate : bool
        ``rho_lower >= 1``: no Theorem 5 certificate can hold at this ``tau`` (rigorous).
    tolerance : float
        Rounding allowance of one computed TV (the scores' precision at ``tau``; at least
        ``rounding`` when the TVs were computed here).
    searched : bool
        ``C`` and ``Delta`` come from :func:`~glauber.estimators.search_influence` (a batched
        search for the suprema) rather than from sampled contexts.
    witnesses : tuple of Witness
        With ``searched``: the explicit pair realising each non-zero entry (re-evaluate them
        with :func:`~glauber.estimators.recheck_witnesses`).
    queries : int
        Distinct conditional queries (rows) the search sent to the model (0 without a search).
    query_fraction : float
        ``queries`` as a fraction of the ``n q^(n-1)`` distinct queries that tabulate the
        model (:func:`glauber.core.enumeration.table_queries`; 0 without a search).
    rounding : float
        With ``exhaustive``: a bound on the rounding error of every entry of ``C``
        (:func:`~glauber.theory.distances.tv_rounding_bound`); ``contraction`` is then the
        certificate of ``C + rounding``, an upper enclosure of the exact suprema. 0 otherwise.
    """

    tau: float
    C: np.ndarray
    Delta: np.ndarray
    is_lower_bound: bool
    exhaustive: bool
    n_contexts: int
    n_replacements: int
    n_comparisons: int
    alpha_row: float
    alpha_col: float
    alpha_spectral: float
    spectral_radius: float
    contraction: ContractionCertificate
    lemma6: np.ndarray
    tanh: np.ndarray
    lemma6_consistent: bool
    tanh_consistent: bool
    corollary7: bool
    lemma6_alpha: float
    tanh_alpha: float
    oscillation_contraction: ContractionCertificate
    rho_lower: float
    no_certificate: bool
    tolerance: float
    searched: bool = False
    witnesses: tuple[Witness, ...] = ()
    queries: int = 0
    query_fraction: float = 0.0
    rounding: float = 0.0


def influence(
    model: ConditionalModel,
    tau: float,
    contexts: Any = None,
    n_replacements: int = 1,
    seed: SeedLike = 0,
    exhaustive: bool = False,
    batch_size: int = 4096,
    eps: float = 0.25,
    max_states: int = 100_000,
    search_budget: int = 0,
) -> InfluenceResult:
    """Estimate the influence matrix ``C(tau)`` (Definition 2) and oscillations ``Delta`` (Lemma 6).

    For each context ``x``, each site ``j`` and each replacement ``b != x_j`` at ``j``, and every
    ``i != j``, compute ``TV(p_tau(. | x_{-i}), p_tau(. | x^{j->b}_{-i}))`` and the oscillation of
    the score difference; ``C`` and ``Delta`` take the maximum over all of them. Queries: ``S n``
    base conditionals plus ``S n R (n - 1)`` perturbed ones, in chunks of ``batch_size``.

    Parameters
    ----------
    model : ConditionalModel
    tau : float
        Temperature > 0.
    contexts : array of int, shape (S, n), optional
        Contexts ``x`` (ignored and not needed when ``exhaustive``).
    n_replacements : int
        Replacements ``b`` per (context, site), drawn uniformly without replacement from the
        ``q - 1`` other tokens (clipped to ``q - 1``).
    seed : int or numpy.random.Generator
        Same seed, same result.
    exhaustive : bool
        Enumerate every state and every replacement (toy models): ``C`` and ``Delta`` are then
        the exact suprema.
    batch_size : int
        Most rows per :meth:`scores` call.
    eps : float
        Target distance of the Theorem 5 certificates.
    max_states : int
        Largest ``q ** n`` enumerated when ``exhaustive``.
    search_budget : int
        When > 0 (and not ``exhaustive``): search for the suprema with
        :func:`~glauber.estimators.search_influence` within this many distinct queries (at most
        the ``n q^(n-1)`` that tabulate the model), starting from ``contexts``, instead of
        sampling replacements; every entry then carries its witness.

    Returns
    -------
    InfluenceResult

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.
    InvalidParameterError
        If ``n < 2``, no contexts are given (and not ``exhaustive``), a count is < 1, or
        ``search_budget`` exceeds the ``n q^(n-1)`` queries of a tabulation.
    StateSpaceTooLargeError
        If ``exhaustive`` and ``q ** n > max_states``.
    SequenceLengthError, VocabularyError
        On malformed contexts.
    """
    tau = check_tau(tau)
    eps = check_eps(eps)
    batch_size = check_positive_int(batch_size, "batch_size")
    n, q = model.n, model.q
    if n < 2:
        raise InvalidParameterError(f"influence needs n >= 2 sites, the model has n = {n}")
    if exhaustive:
        xs = all_states(n, q, max_states)
        reps = (xs[:, :, None] + np.arange(1, q)[None, None, :]) % q  # every b != x_j
    else:
        if contexts is None:
            raise InvalidParameterError(
                "pass contexts [S, n] to sample influence from, or exhaustive=True for a toy model"
            )
        xs = host_states(model, contexts)
        if xs.shape[0] == 0:
            raise InvalidParameterError("contexts is empty; pass at least one state [1, n]")
        r = min(check_positive_int(n_replacements, "n_replacements"), q - 1)
        rng = np.random.default_rng(seed)
        keys = rng.random((xs.shape[0], n, q - 1))  # a uniform r-subset of the q - 1 offsets
        if r < q - 1:
            offsets = np.argpartition(keys, r - 1, axis=-1)[:, :, :r] + 1
        else:
            offsets = np.broadcast_to(np.arange(1, q), keys.shape)
        reps = (xs[:, :, None] + offsets) % q
    search, rounding = None, 0.0
    if exhaustive and getattr(model, "contexts_only", False):
        C, Delta, dtype, rounding = _context_pair_influence(model, tau, batch_size)
        n_comparisons = xs.shape[0] * n * (q - 1) * (n - 1)  # what the pairs stand for
        tolerance = max(witness_tolerance(dtype, tau), rounding)
    elif exhaustive or not search_budget:
        C, Delta, n_comparisons, dtype, rounding = _max_influence(model, xs, reps, tau,
                                                                  batch_size)
        tolerance = max(witness_tolerance(dtype, tau), rounding)
    else:
        budget = check_budget(search_budget, n, q, "search_budget")
        search = search_influence(model, tau, budget=budget, starts=xs, seed=rng,
                                  batch_size=batch_size, target="rho")
        C, Delta, n_comparisons, tolerance = search.C, search.Delta, search.queries, search.tolerance
    rho_lower = rho_lower_bound(C, tolerance)
    lem = np.asarray(lemma6_bound(Delta, tau))
    th = np.asarray(tanh_bound(Delta, tau))
    rounding = rounding if exhaustive else 0.0  # a sampled C gives estimates either way
    cert = certify_contraction(C, eps, entry_error=rounding)
    return InfluenceResult(
        tau=tau,
        C=C,
        Delta=Delta,
        is_lower_bound=not exhaustive,
        exhaustive=bool(exhaustive),
        n_contexts=int(xs.shape[0]),
        n_replacements=0 if search is not None else int(reps.shape[2]),
        n_comparisons=n_comparisons,
        alpha_row=cert.alpha_row,
        alpha_col=cert.alpha_col,
        alpha_spectral=cert.alpha_spectral,
        spectral_radius=cert.spectral_radius,
        contraction=cert,
        lemma6=lem,
        tanh=th,
        lemma6_consistent=bool(np.all(C <= lem + _CHECK_ATOL)),
        tanh_consistent=bool(np.all(C <= th + _CHECK_ATOL)),
        corollary7=corollary7_holds(Delta, tau),
        lemma6_alpha=corollary7_alpha_bound(Delta, tau, sharp=False),
        tanh_alpha=corollary7_alpha_bound(Delta, tau, sharp=True),
        oscillation_contraction=certify_contraction(influence_matrix_bound(Delta, tau), eps),
        rho_lower=rho_lower,
        no_certificate=bool(rho_lower >= 1.0),
        tolerance=float(tolerance),
        searched=search is not None,
        witnesses=() if search is None else search.witnesses,
        queries=0 if search is None else int(search.queries),
        query_fraction=0.0 if search is None else float(search.query_fraction),
        rounding=rounding,
    )


def _max_influence(
    model: ConditionalModel, xs: np.ndarray, reps: np.ndarray, tau: float, batch_size: int
) -> tuple[np.ndarray, np.ndarray, int, str, float]:
    """Max TV and max oscillation over every (context, j, b, i != j) query, the number of
    queries, the dtype of the log-conditionals and a bound on the rounding error of each TV.

    The oscillation is read off the scores (tau-free), rounded up by
    :func:`~glauber.theory.distances.hilbert_distance_upper`, so ``Delta`` never falls below
    the exact oscillation of a pair it compared; each TV is within
    :func:`~glauber.theory.distances.tv_rounding_bound` of the exact one, and the largest of
    these bounds is returned.
    """
    s_count, n = xs.shape
    q = int(model.q)
    r = reps.shape[2]
    # Base conditionals p(. | x_{-i}) for every context and site, kept in the model's library.
    base_states = np.repeat(xs, n, axis=0)
    base_sites = np.tile(np.arange(n), s_count)
    base = list(iter_scored_log_conditionals(
        model, s_count * n, lambda lo, hi: (base_states[lo:hi], base_sites[lo:hi]), tau,
        batch_size,
    ))
    base_scores = concat([s for _, _, s, _, _ in base])
    base_lp = concat([lp for _, _, _, lp, _ in base])

    def decode(lo: int, hi: int) -> tuple[np.ndarray, ...]:
        """Flat query index -> (context s, site j, replacement b, site i != j)."""
        s, rest = np.divmod(np.arange(lo, hi), n * r * (n - 1))
        j, rest = np.divmod(rest, r * (n - 1))
        b, k = np.divmod(rest, n - 1)
        return s, j, b, k + (k >= j)

    def build(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        s, j, b, i = decode(lo, hi)
        states = xs[s]
        states[np.arange(hi - lo), j] = reps[s, j, b]
        return states, i

    n_queries = s_count * n * r * (n - 1)
    C = np.zeros((n, n))
    Delta = np.zeros((n, n))
    dtype, rounding = "float64", 0.0
    for lo, hi, scores, lp, s_dtype in iter_scored_log_conditionals(model, n_queries, build, tau,
                                                                     batch_size):
        s, j, _, i = decode(lo, hi)
        at = like(lp, s * n + i)
        ref, ref_scores = base_lp[at], base_scores[at]
        xp = namespace(lp)
        tv = to_numpy(0.5 * xp.sum(xp.abs(xp.exp(lp) - xp.exp(ref)), axis=-1))
        diff = scores - ref_scores  # tau-free, and free of the log-softmax's rounding
        osc = hilbert_distance_upper(to_numpy(xp.amax(diff, axis=-1)),
                                     to_numpy(xp.amin(diff, axis=-1)), s_dtype)
        np.maximum.at(C, (i, j), tv)
        np.maximum.at(Delta, (i, j), osc)
        dtype = str(lp.dtype).removeprefix("torch.")
        scale = np.maximum(_row_max_abs(scores), _row_max_abs(ref_scores))
        spread = np.maximum(_row_max_abs(lp), _row_max_abs(ref))
        formats = RoundingFormats(s_dtype, dtype)
        rounding = max(rounding, float(np.max(tv_rounding_bound(q, scale, spread, tau, formats))))
    return C, Delta, n_queries, dtype, rounding


def _context_pair_influence(model: ConditionalModel, tau: float, batch_size: int
                            ) -> tuple[np.ndarray, np.ndarray, str, float]:
    """:func:`_max_influence` over every state (``exhaustive``) for a model whose site-``i``
    scores never read ``x_i`` (``model.contexts_only``: a score table): ``(C, Delta, dtype,
    rounding)``, the same maxima bit for bit, ``2 q`` times fewer comparisons.

    Query ``(x, j, b, i)`` compares the rows of the contexts ``x_{-i}`` and ``x^{j->b}_{-i}``,
    whatever ``x_i``; ``(x^{j->b}, j, x_j, i)`` compares the same two rows the other way round.
    The TV, the oscillation bound (:func:`~glauber.theory.distances.hilbert_distance_upper` of
    ``fl(s - t)``, whose extremes swap and change sign exactly) and the rounding bound are
    symmetric in the pair, and each row's log-conditionals come from the same scores by the same
    arithmetic, so comparing each unordered pair of contexts that differ only at ``j`` once
    (the ``q^(n-1)`` rows of site ``i`` with ``x_i = 0``) gives every value the enumeration
    forms, and no other.
    """
    n, q = int(model.n), int(model.q)
    others = all_states(n - 1, q, q ** (n - 1))  # the contexts, mixed radix (site 0 first)
    C, Delta = np.zeros((n, n)), np.zeros((n, n))
    dtype, rounding = "float64", 0.0
    for i in range(n):
        states, sites = np.insert(others, i, 0, axis=1), np.full(others.shape[0], i)
        chunks = list(iter_scored_log_conditionals(
            model, others.shape[0], lambda lo, hi: (states[lo:hi], sites[lo:hi]), tau,
            batch_size))
        scores = to_numpy(concat([s for _, _, s, _, _ in chunks]))
        lp = to_numpy(concat([lp for _, _, _, lp, _ in chunks]))
        s_dtype, dtype = chunks[0][4], str(lp.dtype)
        formats = RoundingFormats(s_dtype, dtype)
        probs, scale, spread = np.exp(lp), _row_max_abs(scores), _row_max_abs(lp)
        for j in range(n):
            if j == i:
                continue
            s4, p4, sc, sp = (context_digit_view(v, n, q, i, j)
                              for v in (scores, probs, scale, spread))
            for a in range(q - 1):  # the pairs (a, b > a) of values of x_j
                tv = 0.5 * np.sum(np.abs(p4[:, a + 1:] - p4[:, a:a + 1]), axis=-1)
                diff = s4[:, a + 1:] - s4[:, a:a + 1]
                osc = hilbert_distance_upper(diff.max(axis=-1), diff.min(axis=-1), s_dtype)
                C[i, j] = max(C[i, j], float(tv.max()))
                Delta[i, j] = max(Delta[i, j], float(osc.max()))
                bound = tv_rounding_bound(q, np.maximum(sc[:, a + 1:], sc[:, a:a + 1]),
                                          np.maximum(sp[:, a + 1:], sp[:, a:a + 1]), tau, formats)
                rounding = max(rounding, float(np.max(bound)))
    return C, Delta, dtype, rounding


def _row_max_abs(values: Any) -> np.ndarray:
    """``max_a |values[b, a]|`` per row, as float64 on the host."""
    xp = namespace(values)
    return to_numpy(xp.amax(xp.abs(values), axis=-1)).astype(np.float64)


__all__ = [
    "influence",
    "InfluenceResult",
]
