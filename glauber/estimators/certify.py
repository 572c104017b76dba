"""``certify``: every estimator of the library run on one model at one temperature.

:func:`certify` runs, on any ConditionalModel (toy or MLM), the rectangle test (Proposition 4),
the influence and oscillation matrices (Definition 2, Lemma 6) with the corrected Theorem 5
certificates and Corollary 7, the margins and Theorem 8 bounds of the given states, the §5.4 drift
of the most frequent token (as printed and the corrected band certificate), and coupling times of
a few pairs (§6.1). It returns a :class:`Certificate`: plain numbers in frozen dataclasses, with a
list of :class:`Claim` objects that say which hypotheses held and what, if anything, is proved.

Honesty rules the claims. Sampled influences and oscillations are LOWER bounds on the suprema of
Definition 2 and Lemma 6, so a sampled ``alpha < 1`` is only *consistent with* fast mixing; a
Theorem 5 certificate is rigorous only when every pair of states was enumerated
(``exhaustive``: small toy models). Conversely a sampled spectral radius >= 1 proves that no
Theorem 5 certificate exists at this temperature (the spectral radius of a non-negative matrix
grows with its entries). A rectangle with ``|delta|`` above the rounding tolerance proves
incompatibility; margins are exact for the state they are computed at, so Theorem 8 on the
one-state basin ``{x}`` of a perfect trap is rigorous (its ``t_mix`` half needs
``mu_tau({x}) <= 1/2``, which a sample cannot check).

The certificate and its parts live in :mod:`glauber.estimators.certificate`, the claims in
:mod:`glauber.estimators.claims`; both are re-exported here.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from glauber.errors import BasinError, InvalidParameterError, StateSpaceTooLargeError
from glauber.core.arrays import is_torch
from glauber.estimators.certificate import (
    BasinSummary,
    Certificate,
    Claim,
    CouplingSummary,
    DriftSummary,
    ExactValues,
    IncompatibilitySummary,
    InfluenceSummary,
    MarginsSummary,
    Matrix,
    RectangleRecord,
    Settings,
    Timings,
    TrapBounds,
    Versions,
    software_versions,
)
from glauber.estimators.claims import build_claims
from glauber.core.conditionals import host_states, log_conditionals
from glauber.estimators.coupling import coupling_time
from glauber.estimators.drift import drift
from glauber.estimators.escape import Basin, escape_probability, evaluate_basin
from glauber.core.enumeration import all_states
from glauber.estimators.influence import influence
from glauber.estimators.margins import margins
from glauber.core.protocol import ConditionalModel
from glauber.estimators.rectangle import rectangle_test
from glauber.theory.contraction import certify_contraction
from glauber.theory.influence_bounds import corollary7_alpha_bound, influence_matrix_bound
from glauber.core.validation import (
    check_eps,
    check_nonnegative_int,
    check_positive_int,
    check_tau,
)

#: Random states drawn when a model has no ``default_states()`` and no states are given.
DEFAULT_RANDOM_STATES = 4
#: Stages of :func:`certify`, in order (the names given to ``progress``).
STAGES = ("rectangles", "influence", "margins", "drift", "coupling")


# ------------------------------------------------------------------------------- certify()
def certify(
    model: ConditionalModel,
    tau: float,
    states: Any = None,
    *,
    seed: int = 0,
    n_rectangles: int = 100,
    n_contexts: int = 2,
    n_replacements: int = 1,
    n_pairs: int = 4,
    budget: int = 50,
    horizon: int = 10_000,
    eps: float = 0.25,
    basin: Basin | None = None,
    exhaustive: bool | None = None,
    max_exhaustive_states: int = 4096,
    progress: Any = None,
    batch_size: int = 128,
) -> Certificate:
    """Run every estimator on ``model`` at temperature ``tau`` and state what is certified.

    Stages (each batched into :meth:`scores` calls of at most ``batch_size`` rows):

    1. rectangles: :func:`rectangle_test` on ``n_rectangles`` rectangles from ``states`` with the
       model's top-50 replacements (Proposition 4; the paper uses 300).
    2. influence: :func:`influence` on the first ``n_contexts`` states with
       ``n_replacements`` replacements per site, or on every pair of states (``exhaustive``);
       corrected Theorem 5 (row, column, spectral, matrix-power certificates, the best one),
       Lemma 6 / tanh / Corollary 7 from the oscillations.
    3. margins: :func:`margins` of ``states`` (Appendix A.1), Theorem 8 on the best perfect trap
       ``{x}`` with its exact escape probability, and on ``basin`` when given (over every basin
       state when ``exhaustive``, else over the given states that lie in it).
    4. drift: :func:`drift` of the count of the most frequent token of ``states`` (§5.4 as
       printed) and the corrected band certificate over ``horizon`` steps on the band one count
       beyond the given counts (every band state when ``exhaustive``).
    5. coupling: :func:`coupling_time` of ``n_pairs`` pairs (a given state, a uniform random
       state) within ``budget`` steps (§6.1; a diagnostic, not a bound).

    Parameters
    ----------
    model : ConditionalModel
        Toy or MLM, ``n >= 2``.
    tau : float
        Temperature, finite and > 0.
    states : array of int, shape (S, n), optional
        States to examine (vocabulary indices; repeated states are examined once). Default:
        ``model.default_states()`` when the model has that method and it returns states (the
        MLM backends return the shipped antibody chains for amino-acid models), else
        ``DEFAULT_RANDOM_STATES`` uniform random states drawn with ``seed``.
    seed : int
        Seed of every random choice (same seed, same certificate except for timings).
    n_rectangles, n_contexts, n_replacements, n_pairs, budget, horizon : int
        Sizes of the stages above (each >= 1).
    eps : float
        Target distance of the mixing-time certificates, in (0, 1).
    basin : callable, optional
        ``basin(states[B, n]) -> bool[B]`` for Assumption 1 / Theorem 8 on a basin.
    exhaustive : bool, optional
        Enumerate every state for the influence matrix, the basin and the drift band (exact,
        rigorous). Default: when the model answers in numpy (an in-memory toy) and
        ``q ** n <= max_exhaustive_states``.
    max_exhaustive_states : int
        Largest ``q ** n`` enumerated.
    progress : callable or tqdm, optional
        ``progress(stage, rows_done, rows_total)`` after every model call, or a tqdm bar (its
        total is set to the planned rows, its description to the stage).
    batch_size : int
        Most rows per :meth:`scores` call.

    Returns
    -------
    Certificate

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.
    InvalidProbabilityError
        If ``eps`` is not in (0, 1).
    InvalidParameterError
        If a count is < 1, ``seed`` is negative, the model has fewer than two sites, or
        ``states`` is empty.
    SequenceLengthError, VocabularyError
        On malformed states.
    BasinError
        If ``basin`` holds none of the states (or, exhaustively, no state or every state).
    StateSpaceTooLargeError
        If ``exhaustive=True`` and ``q ** n > max_exhaustive_states``.

    Examples
    --------
    >>> import networkx as nx
    >>> from glauber.toy_models import IsingModel
    >>> cert = certify(IsingModel(nx.cycle_graph(4)), tau=4.0, n_rectangles=5, budget=20)
    >>> cert.influence.exhaustive, cert.claim("Theorem 5 (corrected)").rigorous
    (True, True)
    """
    tau = check_tau(tau)
    eps = check_eps(eps)
    seed = check_nonnegative_int(seed, "seed")
    counts = {
        name: check_positive_int(value, name)
        for name, value in (
            ("n_rectangles", n_rectangles), ("n_contexts", n_contexts),
            ("n_replacements", n_replacements), ("n_pairs", n_pairs), ("budget", budget),
            ("horizon", horizon), ("batch_size", batch_size),
            ("max_exhaustive_states", max_exhaustive_states),
        )
    }
    if model.n < 2:
        raise InvalidParameterError(
            f"certify needs a model with n >= 2 sites (rectangles and influences pair two sites); "
            f"this model has n = {model.n}"
        )
    if exhaustive and model.q**model.n > max_exhaustive_states:
        raise StateSpaceTooLargeError(
            f"exhaustive=True needs q**n = {model.q}**{model.n} = {model.q**model.n} states, over "
            f"max_exhaustive_states = {max_exhaustive_states}; sample instead (exhaustive=None "
            "or False) or raise the limit"
        )
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(5)]
    xs = _initial_states(model, states, rngs[0])
    tracker = _Tracker(progress)
    counted = _CountingModel(model, tracker.add)
    if exhaustive is None:
        exhaustive = _answers_on_host(counted, xs) and model.q**model.n <= max_exhaustive_states
    settings = Settings(
        n_rectangles=counts["n_rectangles"], n_contexts=counts["n_contexts"],
        n_replacements=min(counts["n_replacements"], model.q - 1), n_pairs=counts["n_pairs"],
        budget=counts["budget"], horizon=counts["horizon"], batch_size=counts["batch_size"],
        exhaustive=bool(exhaustive),
    )
    contexts = xs[: settings.n_contexts]
    tracker.plan(_planned_rows(model, xs, contexts, settings, basin is not None))
    started = time.perf_counter()
    seconds: dict[str, float] = {}
    with tracker.stage("rectangles", seconds):
        incompat = _incompatibility(counted, xs, tau, settings, rngs[1])
    with tracker.stage("influence", seconds):
        infl = _influence(counted, tau, contexts, settings, eps, rngs[2], max_exhaustive_states)
    with tracker.stage("margins", seconds):
        marg = _margins(counted, xs, tau, basin, settings, max_exhaustive_states)
    with tracker.stage("drift", seconds):
        drf = _drift(counted, xs, tau, settings, max_exhaustive_states)
    with tracker.stage("coupling", seconds):
        coup = _coupling(counted, xs, tau, settings, rngs[3], rngs[4])
    timings = Timings(**seconds, total=time.perf_counter() - started, rows=tracker.asked)
    return Certificate(
        model=str(getattr(model, "name", type(model).__name__)),
        n=int(model.n),
        q=int(model.q),
        tau=tau,
        eps=eps,
        seed=seed,
        device=str(getattr(model, "device", "cpu")),
        labels=tuple(str(v) for v in getattr(model, "labels", range(model.q))),
        states=_int_matrix(xs),
        settings=settings,
        incompatibility=incompat,
        influence=infl,
        margins=marg,
        drift=drf,
        coupling=coup,
        claims=build_claims(eps, incompat, infl, marg, drf, coup),
        timings=timings,
        versions=software_versions(),
    )


# ------------------------------------------------------------------------------- the stages
def _incompatibility(
    model: ConditionalModel, xs: np.ndarray, tau: float, settings: Settings, rng: Any
) -> IncompatibilitySummary:
    r = rectangle_test(
        model, xs, tau, settings.n_rectangles, "topk", 50, rng, settings.batch_size
    )
    rect = r.rectangles
    records = tuple(
        RectangleRecord(*(int(v) for v in row[:7]), delta=float(row[7]))
        for row in zip(
            rect.state_index, rect.site_i, rect.site_j, rect.a, rect.a_prime, rect.b,
            rect.b_prime, rect.delta,
        )
    )
    return IncompatibilitySummary(
        n_rectangles=r.n_rectangles, replacements=r.replacements, k=r.k,
        mean_abs_delta=_f(r.mean_abs_delta), sd_abs_delta=_opt(r.sd_abs_delta),
        median_abs_delta=_f(r.median_abs_delta), max_abs_delta=_f(r.max_abs_delta),
        mean_delta=_f(r.mean_delta), sd_delta=_opt(r.sd_delta),
        p_value_abs=_opt(r.p_value_abs), p_value_t=_opt(r.p_value_t),
        p_value_wilcoxon=_opt(r.p_value_wilcoxon), atol=_f(r.atol),
        n_above_atol=int(r.n_above_atol), compatible_within_atol=bool(r.compatible_within_atol),
        rectangles=records,
    )


def _influence(
    model: ConditionalModel,
    tau: float,
    contexts: np.ndarray,
    settings: Settings,
    eps: float,
    rng: Any,
    max_states: int,
) -> InfluenceSummary:
    r = influence(
        model, tau, contexts=None if settings.exhaustive else contexts,
        n_replacements=settings.n_replacements, seed=rng, exhaustive=settings.exhaustive,
        batch_size=settings.batch_size, eps=eps, max_states=max_states,
    )
    return InfluenceSummary(
        exhaustive=bool(r.exhaustive), is_lower_bound=bool(r.is_lower_bound),
        n_contexts=int(r.n_contexts), n_replacements=int(r.n_replacements),
        n_comparisons=int(r.n_comparisons), C=_float_matrix(r.C), Delta=_float_matrix(r.Delta),
        contraction=r.contraction,
        lemma6_alpha=corollary7_alpha_bound(r.Delta, tau, sharp=False),
        tanh_alpha=corollary7_alpha_bound(r.Delta, tau, sharp=True),
        corollary7=bool(r.corollary7), lemma6_consistent=bool(r.lemma6_consistent),
        tanh_consistent=bool(r.tanh_consistent),
        oscillation_contraction=certify_contraction(
            influence_matrix_bound(r.Delta, tau, sharp=True), eps
        ),
    )


def _margins(
    model: ConditionalModel,
    xs: np.ndarray,
    tau: float,
    basin: Basin | None,
    settings: Settings,
    max_states: int,
) -> MarginsSummary:
    r = margins(model, xs, tau=tau, batch_size=settings.batch_size)
    trap = None
    if r.n_perfect:
        s = int(np.argmax(np.where(r.perfect, r.state_min, -np.inf)))
        x = xs[s]
        exact = escape_probability(
            model, xs[[s]], lambda b: np.all(b == x, axis=1), tau,
            batch_size=settings.batch_size,
        )
        trap = TrapBounds(
            state=s, delta_star=_f(r.state_min[s]), escape_bound=_f(r.trap_escape_bound[s]),
            sharper_escape_bound=_f(r.trap_sharper_escape_bound[s]),
            exact_escape=_f(exact.per_state[0]), tmix_lower_bound=_f(r.trap_tmix_lower_bound[s]),
        )
    return MarginsSummary(
        state_min=_floats(r.state_min), state_mean=_floats(r.state_mean),
        perfect=tuple(bool(v) for v in r.perfect), n_perfect=int(r.n_perfect),
        delta_star=_f(r.delta_star), trap=trap,
        basin=None if basin is None else _basin(model, xs, tau, basin, settings, max_states),
    )


def _basin(
    model: ConditionalModel,
    xs: np.ndarray,
    tau: float,
    basin: Basin,
    settings: Settings,
    max_states: int,
) -> BasinSummary:
    pool = all_states(model.n, model.q, max_states) if settings.exhaustive else xs
    inside = pool[evaluate_basin(basin, pool)]
    if inside.shape[0] == 0:
        raise BasinError(
            "none of the states lies in the basin; pass states from the basin (or a basin that "
            "contains some of them)"
        )
    if settings.exhaustive and inside.shape[0] == pool.shape[0]:
        raise BasinError("the basin is the whole state space; Theorem 8 needs a proper subset")
    r = margins(model, inside, tau=tau, basin=basin, batch_size=settings.batch_size).basin
    esc = escape_probability(model, inside, basin, tau, batch_size=settings.batch_size)
    return BasinSummary(
        n_states=int(inside.shape[0]), complete=settings.exhaustive,
        assumption1=bool(r.assumption1), argmax_at_exit_sites=bool(r.argmax_at_exit_sites),
        delta_star=_f(r.delta_star), k=int(r.k), escape_bound=_opt(r.escape_bound),
        sharper_escape_bound=_opt(r.sharper_escape_bound),
        tmix_lower_bound=_opt(r.tmix_lower_bound), max_exact_escape=_f(esc.max),
        mean_exact_escape=_f(esc.mean),
    )


def _drift(
    model: ConditionalModel, xs: np.ndarray, tau: float, settings: Settings, max_states: int
) -> DriftSummary:
    token, a, b = _drift_band(xs, model.q)
    kw = dict(band=(a, b), T=settings.horizon, batch_size=settings.batch_size)
    if settings.exhaustive:
        every = all_states(model.n, model.q, max_states)
        level = (every == token).sum(axis=1)
        band_states = every[(level > a) & (level < b)]
        at_given = drift(model, xs, token, tau, batch_size=settings.batch_size)
        band = drift(model, band_states, token, tau, band_states_complete=True, **kw)
    else:
        at_given = band = drift(model, xs, token, tau, **kw)
    cert = band.certificate
    labels = getattr(model, "labels", None)
    return DriftSummary(
        token=token, token_label=str(labels[token]) if labels is not None else str(token),
        per_state=_floats(at_given.per_state), counts=tuple(int(c) for c in at_given.counts),
        min=_f(at_given.min), median=_f(at_given.median), mean=_f(at_given.mean),
        all_positive=bool(at_given.all_positive), band_a=a, band_b=b,
        n_in_band=int(band.n_in_band), band_min_drift=_f(band.band_min_drift),
        band_states_complete=bool(band.band_states_complete), horizon=settings.horizon,
        escape_bound=None if cert is None else _f(cert.bound),
        exponent=None if cert is None else _f(cert.exponent),
        vacuous=bool(band.vacuous), rigorous=bool(band.rigorous),
    )


def _drift_band(xs: np.ndarray, q: int) -> tuple[int, float, float]:
    """The most frequent token of ``xs`` and the band one count beyond the states' counts."""
    token = int(np.argmax(np.bincount(xs.ravel(), minlength=q)))
    counts = (xs == token).sum(axis=1)
    return token, float(counts.min() - 1), float(counts.max() + 1)


def _coupling(
    model: ConditionalModel,
    xs: np.ndarray,
    tau: float,
    settings: Settings,
    rng_starts: np.random.Generator,
    rng_chain: np.random.Generator,
) -> CouplingSummary:
    p = settings.n_pairs
    x0 = xs[np.arange(p) % xs.shape[0]]
    y0 = rng_starts.integers(model.q, size=(p, model.n))
    r = coupling_time(
        model, tau, x0, y0, settings.budget, seed=rng_chain, batch_size=settings.batch_size,
        sync_every=min(50, settings.budget),
    )
    return CouplingSummary(
        n_pairs=p, budget=int(r.budget), times=tuple(int(t) for t in r.times),
        censored=tuple(bool(c) for c in r.censored), n_censored=int(r.n_censored),
        median=_opt(r.median), median_exceeds_budget=bool(r.median_exceeds_budget),
    )


# ---------------------------------------------------------------------------- helpers
class _CountingModel:
    """A ConditionalModel that forwards to ``model`` and reports the rows of every call."""

    def __init__(self, model: ConditionalModel, on_rows: Callable[[int], None]) -> None:
        self._model = model
        self._on_rows = on_rows
        self.n, self.q, self.vocab = model.n, model.q, model.vocab

    def scores(self, states: Any, sites: Any) -> Any:
        out = self._model.scores(states, sites)
        self._on_rows(int(out.shape[0]))
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


class _Tracker:
    """Stage timings and row counts, reported to a callback or a tqdm bar."""

    def __init__(self, progress: Any) -> None:
        self._sink = progress
        self._bar = progress is not None and hasattr(progress, "update")
        self._plan: dict[str, int] = {}
        self.asked = 0  # conditionals actually asked of the model
        self.done = 0  # position of the progress report (planned rows of finished stages)
        self.total = 0
        self._stage = "setup"

    def plan(self, rows: dict[str, int]) -> None:
        self._plan = rows
        self.total = self.done + sum(rows.values())
        if self._bar:
            self._sink.total = self.total
            self._sink.refresh()

    def add(self, rows: int) -> None:
        self.asked += rows
        self.done += rows
        if self._bar:
            self._sink.update(rows)
        elif self._sink is not None:
            self._sink(self._stage, self.done, self.total)

    @contextmanager
    def stage(self, name: str, seconds: dict[str, float]) -> Iterator[None]:
        self._stage = name
        target = self.done + self._plan.get(name, 0)
        if self._bar:
            self._sink.set_description_str(name)
        elif self._sink is not None:
            self._sink(name, self.done, self.total)
        start = time.perf_counter()
        yield
        seconds[name] = time.perf_counter() - start
        if self.done < target:  # e.g. coupled pairs stop early: keep the bar consistent
            gap, self.done = target - self.done, target
            if self._bar:
                self._sink.update(gap)
            elif self._sink is not None:
                self._sink(name, self.done, self.total)


def _planned_rows(
    model: ConditionalModel,
    xs: np.ndarray,
    contexts: np.ndarray,
    s: Settings,
    with_basin: bool,
) -> dict[str, int]:
    """Conditionals each stage asks for (coupling: its upper bound, one row per probe)."""
    n, q = model.n, model.q
    ctx, reps = (q**n, q - 1) if s.exhaustive else (contexts.shape[0], s.n_replacements)
    margins_rows = xs.shape[0] * n + n + (2 * xs.shape[0] * n if with_basin else 0)
    drift_rows = xs.shape[0] * n
    if s.exhaustive:  # plus every state with a < count < b: C(n, c) (q - 1)^(n - c) at count c
        _, a, b = _drift_band(xs, q)
        levels = range(int(a) + 1, int(b))
        drift_rows += n * sum(math.comb(n, c) * (q - 1) ** (n - c) for c in levels)
    return {
        "rectangles": 4 * s.n_rectangles,
        "influence": ctx * n * (1 + reps * (n - 1)),
        "margins": margins_rows,
        "drift": drift_rows,
        "coupling": 1 + 2 * s.n_pairs * s.budget,
    }


def _initial_states(model: ConditionalModel, states: Any, rng: np.random.Generator) -> np.ndarray:
    if states is None and hasattr(model, "default_states"):
        states = model.default_states()
    if states is None:
        states = rng.integers(model.q, size=(DEFAULT_RANDOM_STATES, model.n))
    xs = host_states(model, states)
    if xs.shape[0] == 0:
        raise InvalidParameterError("states is empty; pass at least one state [1, n]")
    return _distinct(xs)


def _answers_on_host(model: ConditionalModel, xs: np.ndarray) -> bool:
    """True when the model answers in numpy (one probe row), i.e. an in-memory toy model."""
    return not is_torch(log_conditionals(model, xs[:1], np.zeros(1, dtype=np.int64), 1.0))


def _distinct(xs: np.ndarray) -> np.ndarray:
    """The distinct rows of ``xs`` in order of first appearance."""
    _, first = np.unique(xs, axis=0, return_index=True)
    return xs[np.sort(first)]


def _f(value: Any) -> float:
    return float(value)


def _opt(value: Any) -> float | None:
    """A float, or None for None/NaN (strict JSON has no NaN, and NaN != NaN)."""
    return None if value is None or math.isnan(float(value)) else float(value)


def _floats(values: Any) -> tuple[float, ...]:
    return tuple(float(v) for v in np.asarray(values, dtype=np.float64).ravel())


def _float_matrix(m: Any) -> Matrix:
    return tuple(tuple(float(v) for v in row) for row in np.asarray(m, dtype=np.float64))


def _int_matrix(m: np.ndarray) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(v) for v in row) for row in m)


__all__ = [
    "BasinSummary",
    "Certificate",
    "Claim",
    "CouplingSummary",
    "DriftSummary",
    "ExactValues",
    "IncompatibilitySummary",
    "InfluenceSummary",
    "MarginsSummary",
    "RectangleRecord",
    "STAGES",
    "Settings",
    "Timings",
    "TrapBounds",
    "Versions",
    "certify",
    "software_versions",
]
