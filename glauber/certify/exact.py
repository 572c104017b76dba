"""Exact values of a small chain beside a certificate's estimates (:class:`ExactValues`).

For a model small enough to enumerate (``q**n <= EXACT_MAX_STATES``: a toy, or a window of a
real model built by :func:`glauber.core.restrict`), the full transition matrix
(:class:`glauber.toy_models.ExactChain`, built from ``n q^(n-1)`` queries) gives the exact
influence matrix and its corrected Theorem 5 certificates (rigorous for the chain), the exact
worst-start ``t_mix(eps)``, the spectral gap, whether the chain is reversible (Theorem 3), the
stationary law's mode, every state's margins (the perfect traps and Theorem 8 on the best one)
and every rectangle's ``delta`` (Proposition 4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from glauber.core.arrays import JsonResult
from glauber.errors import BracketOnlyError, PrecisionError, StepLimitError
from glauber.exact.chain import ExactChain
from glauber.exact.rectangles import RectangleSummary
from glauber.exact.sparse import stationary_tv_error_bound
from glauber.exact.spectral import GAP_RTOL, spectral_tmix_lower_bound
from glauber.exact.unavailable import Attempts
from glauber.exact.window import WINDOW_MAX_STATES, state_tokens
from glauber.exact.window_chain import WindowChain
from glauber.theory.contraction import ContractionCertificate, certify_contraction
from glauber.theory.escape import theorem8_escape_bound

#: Largest state space for which :func:`certify` computes exact values by default (20^3 windows,
#: the Ising cycle of 13 spins).
EXACT_MAX_STATES = 8192
#: Largest window (a model restricted to some sites, :func:`glauber.core.restrict`) that
#: :func:`certify` makes exact by default (when its matrix-free chain fits in memory), and the
#: most states ``exact=True`` accepts: 5 sites of 20 amino acids, 3,200,000 states from an
#: 800,000-row score table (:data:`glauber.exact.window.WINDOW_MAX_STATES`; above ``2**20``
#: states the chain is :class:`~glauber.exact.window_chain.WindowChain`; ``t_mix`` is
#: bracketed above 65,536 states: :attr:`ExactValues.tmix_upper`).
EXACT_WINDOW_MAX_STATES = WINDOW_MAX_STATES
#: Steps after which the exact worst-start ``t_mix`` stops stepping the point masses of every
#: start, on chains that are stepped (above the dense limit of 4,096 states, where the kernel
#: does not factor: :attr:`~glauber.toy_models.ExactChain.factored`; a window of ``k < q / 2``
#: sites, e.g. 3 amino acids, squares its factor and reaches any ``t`` exactly). A metastable
#: stepped chain would otherwise step for hours; beyond the limit ``tmix`` is None and
#: ``tmix_lower`` bounds it from below.
EXACT_TMIX_MAX_STEPS = 500
#: How a note of :class:`ExactValues` that states an accuracy (not a failure) begins.
ACCURACY_NOTE = "stationary law:"
#: States of largest stationary mass, and perfect traps of largest margin, kept in a certificate.
TOP_STATES = 10


@dataclass(frozen=True)
class StateMass(JsonResult):
    """A state of an exact chain and its stationary mass, as a log (exact where it underflows)."""

    state: tuple[int, ...]
    log_mass: float


@dataclass(frozen=True)
class Trap(JsonResult):
    """A perfect trap of an exact chain (every site at its strict argmax; Theorem 8).

    Attributes
    ----------
    state : tuple of int
    delta_star : float
        Its margin ``Delta*`` (smallest over the sites of the argmax score less the runner-up).
    escape_bound : float
        Theorem 8's bound ``|V| e^{-Delta*/tau}`` on the one-step escape probability.
    exact_escape : float
        The exact one-step escape probability ``P(x, {x}^c)``.
    log_mass : float
        Its log stationary mass.
    """

    state: tuple[int, ...]
    delta_star: float
    escape_bound: float
    exact_escape: float
    log_mass: float


@dataclass(frozen=True)
class ExactValues(JsonResult):
    """Exact values from the full transition matrix of a small chain (``q**n`` states).

    Attributes
    ----------
    num_states : int
    contraction : ContractionCertificate
        Corrected Theorem 5 from the exact influence matrix, enclosed against the rounding of
        its TVs (rigorous for this chain).
    tmix : int or None
        The exact worst-start ``t_mix(eps)`` (None if it could not be computed: see ``notes``).
    relaxation_time, absolute_gap : float or None
        ``1 / gamma_*`` and ``gamma_* = 1 - max{|lambda| : lambda != 1}``.
    reversible : bool or None
        Detailed balance holds (Theorem 3: a compatible chain is reversible); None when the
        log-accurate stationary law it needs could not be computed (see ``notes``).
    trap_mass, log_trap_mass : float or None
        ``mu_tau({x})`` of the certificate's best perfect trap (the hypothesis of Theorem 8's
        ``t_mix`` bound), and its log (exact even where the mass underflows).
    mode_state : tuple of int
        The state of largest stationary mass, and ``max_stationary_mass`` its mass.
    max_stationary_mass : float
    perfect_traps : int
        States whose every site holds its strict argmax (over all ``q**n`` states).
    best_trap_state, best_trap_delta_star, best_trap_escape_bound, best_trap_exact_escape,
    best_trap_log_mass :
        The perfect trap with the largest margin over all states, its margin, Theorem 8's bound
        ``|V| e^{-Delta*/tau}`` on its escape probability, the exact escape probability and its
        log stationary mass (None without a perfect trap).
    rectangles : RectangleSummary or None
        ``|delta|`` over every rectangle (Proposition 4: all 0 for a joint law); None on the
        matrix-free path (``n (n-1)/2 (q-1)^2 q^n`` rectangles: 1.2e10 for 5 amino acids).
    notes : tuple of str
        What could not be computed, and why.
    tmix_lower : int or None
        ``tmix`` when it was computed; else a rigorous lower bound on it (the step limit of the
        exact computation plus one, the spectral bound
        :func:`glauber.certify.exact.spectral_tmix_lower_bound`, or the distances from a few
        starts of :meth:`~glauber.exact.ExactChain.mixing_bracket`, whichever is largest).
    tmix_upper : int or None
        ``tmix`` when it was computed; else the rigorous upper end of
        :meth:`~glauber.exact.ExactChain.mixing_bracket` (a chain above
        :data:`~glauber.exact.EXACT_TMIX_MAX_STATES` states that does not factor, e.g. a window
        of 4 amino acids: corrected Theorem 5 on its exact influence matrix), None if none.
    top_states : tuple of StateMass
        The most probable states of the stationary law, most probable first (at most
        :data:`glauber.certify.exact.TOP_STATES`; empty in certificates written before them).
    traps : tuple of Trap
        The perfect traps of largest margin, largest first (at most
        :data:`glauber.certify.exact.TOP_STATES`).
    absolute_gap_lower : float or None
        Where ``absolute_gap`` is not computed (the matrix-free chain of a 5-site window, a
        large non-reversible chain): a proved lower bound on it, corrected Theorem 5's
        ``(1 - rho(C))/n`` (:meth:`~glauber.exact.ExactChain.absolute_gap_lower_bound`; 0.0 where
        ``rho(C) >= 1``); None where the gap is computed or the kernel is not the paper's.
    """

    num_states: int
    contraction: ContractionCertificate
    tmix: int | None
    relaxation_time: float | None
    absolute_gap: float | None
    reversible: bool | None
    trap_mass: float | None
    log_trap_mass: float | None
    mode_state: tuple[int, ...]
    max_stationary_mass: float
    perfect_traps: int
    best_trap_state: tuple[int, ...] | None
    best_trap_delta_star: float | None
    best_trap_escape_bound: float | None
    best_trap_exact_escape: float | None
    best_trap_log_mass: float | None
    rectangles: RectangleSummary | None
    notes: tuple[str, ...] = ()
    tmix_lower: int | None = None
    tmix_upper: int | None = None
    top_states: tuple[StateMass, ...] = ()
    traps: tuple[Trap, ...] = ()
    absolute_gap_lower: float | None = None


def exact_values(
    chain: ExactChain, eps: float, trap_state: np.ndarray | None = None, device: str = "cpu"
) -> ExactValues:
    """Exact counterparts of a certificate from a chain's full transition matrix.

    Parameters
    ----------
    chain : ExactChain
        The exact chain (its score table is built on first use).
    eps : float
        Target distance of ``t_mix``.
    trap_state : array of int, shape (n,), optional
        A state whose stationary mass is reported (``trap_mass``).
    device : str
        ``"cpu"`` runs the dense algebra in numpy; another device runs it in torch there.

    Returns
    -------
    ExactValues
        A quantity that cannot be computed (a chain too slow for ``t_mix``, a gap below what
        the eigensolver resolves, a conditional that underflows) is None, and ``notes`` says why.

    Raises
    ------
    NonPositiveConditionalError, NonFiniteScoresError
        If the chain itself cannot be built (its conditionals are not all positive and finite).
    """
    if isinstance(chain, WindowChain):
        return window_values(chain, eps, trap_state)
    attempt = Attempts()
    notes = attempt.notes

    backend, dev = ("numpy", None) if device == "cpu" else ("torch", device)
    C = chain.influence_matrix()
    log_pi = attempt("log-accurate stationary law", chain.log_stationary)
    if log_pi is None:  # masses below float64's range: the normwise-accurate float64 law
        notes.append("stationary masses come from the float64 law (normwise accurate; a mass "
                     "below about 1e-300 may read 0)")
        with np.errstate(divide="ignore"):
            log_pi = np.log(chain.stationary())
    mode = int(np.argmax(log_pi))
    gap = attempt("spectral gap", chain.absolute_spectral_gap)
    lower = [spectral_tmix_lower_bound(gap, eps, None if gap is None else _gap_error(chain, gap))]
    upper: list[int] = []

    def tmix_or_bound() -> int | None:
        try:
            return int(chain.mixing_time(eps, backend=backend, device=dev,
                                         max_steps=EXACT_TMIX_MAX_STEPS))
        except StepLimitError as exc:
            lower.append(exc.steps + 1)  # some start is still farther than eps at the limit
            raise
        except BracketOnlyError as exc:  # beyond exact stepping: the rigorous bracket
            bracket = exc.bracket
            if bracket is not None:
                lower.append(int(bracket.lower))
                upper.extend([] if bracket.upper is None else [int(bracket.upper)])
            raise PrecisionError(str(exc)) from exc

    tmix = attempt("t_mix", tmix_or_bound)
    states = chain.states()
    log_mass = None if trap_state is None else float(log_pi[int(chain.index_of(trap_state))])
    trap, traps = _best_trap(chain, log_pi)
    top = np.argsort(-log_pi, kind="stable")[:TOP_STATES]
    return ExactValues(
        num_states=chain.num_states,
        contraction=certify_contraction(C, eps, entry_error=chain.influence_rounding()),
        tmix=tmix,
        tmix_lower=tmix if tmix is not None else max(lower),
        tmix_upper=tmix if tmix is not None else min(upper, default=None),
        relaxation_time=None if gap is None else (math.inf if gap <= 0 else 1.0 / gap),
        absolute_gap=gap,
        reversible=attempt("reversibility", chain.is_reversible),
        trap_mass=None if log_mass is None else math.exp(log_mass),
        log_trap_mass=log_mass,
        mode_state=tuple(int(v) for v in states[mode]),
        max_stationary_mass=math.exp(float(log_pi[mode])),
        **trap,
        rectangles=chain.rectangles(),
        notes=tuple(notes),
        top_states=tuple(StateMass(tuple(int(v) for v in states[k]), float(log_pi[k]))
                         for k in top),
        traps=traps,
        absolute_gap_lower=(chain.absolute_gap_lower_bound()
                            if gap is None and chain.kernel.is_plain else None),
    )


def window_values(chain: WindowChain, eps: float, trap_state: np.ndarray | None = None
                  ) -> ExactValues:
    """:func:`exact_values` of a matrix-free chain (a window of 5 amino acids).

    Exact: the influence matrix and its corrected Theorem 5 certificate, the perfect traps
    (margins and escape probabilities from the compact table). From the solved stationary law
    (normwise accurate; its residual and TV error bound are in ``notes``): the mode, the top
    states, the traps' masses, reversibility, and the starts of the rigorous ``t_mix`` bracket
    (:meth:`~glauber.exact.window_chain.WindowChain.mixing_bracket`). The gap is not computed;
    a proved lower bound on it is (``absolute_gap_lower``, from the influence matrix), no upper
    bound (a non-reversible chain; ``spectral_estimate()`` gives an Arnoldi estimate). Not
    computed either: the rectangles (``1.2e10`` of them).

    Raises
    ------
    StationaryResidualError
        If the stationary law misses its residual tolerance (a metastable window): nothing
        of it is reported; the rigorous bracket's upper end stands without it.
    """
    attempt = Attempts()
    notes = attempt.notes
    C, error = chain.influence_matrix(), chain.influence_rounding()
    contraction = certify_contraction(C, eps, entry_error=error)
    found = chain.window_stationary()
    pi = found.solution.pi
    quarter = certify_contraction(C, 0.25, entry_error=error).best_bound
    notes.append(f"{ACCURACY_NOTE} {found.accuracy}; here ||pi~ - pi||_TV <= "
                 f"{stationary_tv_error_bound(found.solution.residual_l1, quarter):.2g}"
                 + ("" if math.isfinite(quarter) else " (no t_mix(1/4) bound: C has no "
                    "certificate)"))
    gap_lower = chain.absolute_gap_lower_bound()
    notes.append((f"spectral gap: >= {gap_lower:.4g} proved (corrected Theorem 5: every "
                  "eigenvalue but 1 has |lambda| <= 1 - (1 - rho(C))/n)" if gap_lower > 0 else
                  "spectral gap: no lower bound proved (rho(C) >= 1)")
                 + "; no upper bound is proved for a non-reversible chain (WindowChain."
                 "spectral_estimate() gives an Arnoldi estimate)")
    notes.append(f"rectangles: not enumerated ({chain.num_states:,} states; Proposition 4 "
                 "is sampled by the rectangles stage)")
    bracket = chain.mixing_bracket(eps)
    with np.errstate(divide="ignore"):
        log_pi = np.log(pi)
    mode = int(np.argmax(pi))
    log_mass = None if trap_state is None else float(log_pi[int(chain.index_of(trap_state))])
    trap, traps = _window_traps(chain, log_pi)
    top = np.argsort(-pi, kind="stable")[:TOP_STATES]
    tokens = state_tokens(top, chain.n, chain.q)
    exact = bracket.exact
    return ExactValues(
        num_states=chain.num_states, contraction=contraction, tmix=exact,
        tmix_lower=bracket.lower if exact is None else exact,
        tmix_upper=bracket.upper if exact is None else exact,
        relaxation_time=None, absolute_gap=None,
        reversible=attempt("reversibility", chain.is_reversible),
        trap_mass=None if log_mass is None else math.exp(log_mass), log_trap_mass=log_mass,
        mode_state=tuple(int(v) for v in state_tokens(mode, chain.n, chain.q)),
        max_stationary_mass=float(pi[mode]), **trap, rectangles=None, notes=tuple(notes),
        top_states=tuple(StateMass(tuple(int(v) for v in row), float(log_pi[k]))
                         for row, k in zip(tokens, top)),
        traps=traps, absolute_gap_lower=gap_lower)


def _window_traps(chain: WindowChain, log_pi: np.ndarray) -> tuple[dict, tuple[Trap, ...]]:
    """:func:`_best_trap` from the compact table: each class's margin ``s(a) - max_{b != a}
    s(b)`` and move mass ``sum_{b != a} p(b)`` per token, laid out over the states."""
    scores, p, op = chain.compact_scores(), chain.compact_conditionals(), chain.operator()
    state_min = np.full(chain.num_states, np.inf)
    leave = np.zeros(chain.num_states)
    for s in range(chain.n):
        top2 = np.sort(scores[s], axis=1)[:, -2:]
        best = np.argmax(scores[s], axis=1)
        is_best = np.arange(chain.q)[None, :] == best[:, None]
        margin = scores[s] - np.where(is_best, top2[:, :1], top2[:, 1:])
        moves = np.stack([p[s, :, :a].sum(axis=1) + p[s, :, a + 1:].sum(axis=1)
                          for a in range(chain.q)], axis=1)
        a, _, c = op.site_shape(s)
        np.minimum(state_min, margin.reshape(a, c, chain.q).transpose(0, 2, 1).ravel(),
                   out=state_min)
        leave += moves.reshape(a, c, chain.q).transpose(0, 2, 1).ravel() / chain.n
    perfect = state_min > 0
    ranked = np.argsort(-np.where(perfect, state_min, -np.inf), kind="stable")[
        :min(TOP_STATES, int(perfect.sum()))]
    tokens = state_tokens(ranked, chain.n, chain.q)
    traps = tuple(Trap(tuple(int(v) for v in row), float(state_min[k]),
                       theorem8_escape_bound(chain.q, float(state_min[k]), chain.tau),
                       float(leave[k]), float(log_pi[k])) for row, k in zip(tokens, ranked))
    out = dict(perfect_traps=int(perfect.sum()), best_trap_state=None, best_trap_delta_star=None,
               best_trap_escape_bound=None, best_trap_exact_escape=None,
               best_trap_log_mass=None)
    if traps:
        best = traps[0]
        out.update(best_trap_state=best.state, best_trap_delta_star=best.delta_star,
                   best_trap_escape_bound=best.escape_bound,
                   best_trap_exact_escape=best.exact_escape, best_trap_log_mass=best.log_mass)
    return out, traps


def _gap_error(chain: ExactChain, gap: float) -> float:
    """How far above ``gap`` the chain's true gap may lie: the rigorous ``gap_upper`` of its
    spectral estimate where it has one (Lanczos on a large reversible chain: its rounding can
    exceed the dense solvers' relative accuracy), else twice ``GAP_RTOL`` of the gap (the dense
    solvers' accuracy: a dense ``P``, or the factor of a chain above the dense limit, whose
    spectral estimate would need the stationary law)."""
    default = 2.0 * GAP_RTOL * gap
    if chain.algebra != "dense" and chain.factored:  # the gap came from the dense factor M
        return default
    upper = chain.spectral_estimate().gap_upper
    return default if upper is None else max(default, upper - gap)


def _best_trap(chain: ExactChain, log_pi: np.ndarray) -> tuple[dict, tuple[Trap, ...]]:
    """Perfect traps over every state and Theorem 8 on the one with the largest margin; the
    :data:`TOP_STATES` traps of largest margin."""
    scores, p, states = chain.scores(), chain.conditionals(), chain.states()
    rows = np.arange(chain.num_states)
    margins = np.empty((chain.num_states, chain.n))
    leave = np.empty((chain.num_states, chain.n))
    for i in range(chain.n):
        s = scores[i]
        own = s[rows, states[:, i]]
        others = s.copy()
        others[rows, states[:, i]] = -np.inf
        margins[:, i] = own - others.max(axis=1)
        q_i = p[i].copy()
        q_i[rows, states[:, i]] = 0.0
        leave[:, i] = q_i.sum(axis=1)  # P(site i changes), summed over the moves
    state_min = margins.min(axis=1)
    perfect = state_min > 0
    out = dict(perfect_traps=int(perfect.sum()), best_trap_state=None, best_trap_delta_star=None,
               best_trap_escape_bound=None, best_trap_exact_escape=None,
               best_trap_log_mass=None)
    ranked = [int(k) for k in np.argsort(-np.where(perfect, state_min, -np.inf), kind="stable")
              [:min(TOP_STATES, int(perfect.sum()))]]
    traps = tuple(Trap(tuple(int(v) for v in states[k]), float(state_min[k]),
                       theorem8_escape_bound(chain.q, float(state_min[k]), chain.tau),
                       float(leave[k].mean()), float(log_pi[k])) for k in ranked)
    if perfect.any():
        best = int(np.argmax(np.where(perfect, state_min, -np.inf)))
        delta = float(state_min[best])
        out.update(
            best_trap_state=tuple(int(v) for v in states[best]),
            best_trap_delta_star=delta,
            best_trap_escape_bound=theorem8_escape_bound(chain.q, delta, chain.tau),
            best_trap_exact_escape=float(leave[best].mean()),
            best_trap_log_mass=float(log_pi[best]),
        )
    return out, traps


__all__ = ["ACCURACY_NOTE", "EXACT_MAX_STATES", "EXACT_TMIX_MAX_STEPS", "EXACT_WINDOW_MAX_STATES",
           "TOP_STATES", "ExactValues", "StateMass", "Trap", "exact_values",
           "spectral_tmix_lower_bound", "window_values"]
