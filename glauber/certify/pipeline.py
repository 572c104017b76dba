"""``certify``: every estimator of the library run on one model at one temperature.

:func:`certify` runs, on any ConditionalModel (toy or MLM), the rectangle test (Proposition 4),
the influence and oscillation matrices (Definition 2, Lemma 6) with the corrected Theorem 5
certificates and Corollary 7, the margins and Theorem 8 bounds of the given states, the Section
5.4 drift of the most frequent token (as printed and the corrected band certificate), coupling
times of a few pairs (Section 6.1), and, for a model small enough to enumerate, the exact values
of its chain. It returns a :class:`~glauber.certify.certificate.Certificate` holding each stage's
own result and the :class:`~glauber.core.claims.Claim` list built from them
(:mod:`glauber.certify.claims` says what the claims may and may not say).
"""

from __future__ import annotations

import dataclasses
import math
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from glauber.certify.certificate import (
    Certificate,
    Settings,
    Timings,
    software_versions,
)
from glauber.certify.claims import build_claims
from glauber.certify.exact import EXACT_MAX_STATES, exact_values
from glauber.core.conditionals import answers_on_host, host_states
from glauber.core.enumeration import all_states
from glauber.core.memory import check_fits
from glauber.core.protocol import ConditionalModel, check_model
from glauber.core.restrict import RestrictedModel
from glauber.core.validation import (
    check_eps,
    check_nonnegative_int,
    check_positive_int,
    check_tau,
)
from glauber.errors import (
    BasinError,
    InvalidParameterError,
    StateSpaceTooLargeError,
    UnboundableModelError,
)
from glauber.estimators.coupling import CouplingResult, coupling_time
from glauber.estimators.drift import DriftResult, drift
from glauber.estimators.escape import Basin, evaluate_basin
from glauber.estimators.influence import InfluenceResult, influence
from glauber.estimators.influence_bracket import (
    InfluenceBracket,
    WitnessCurve,
    exact_lower,
    fixed_lower,
    influence_bracket,
)
from glauber.estimators.influence_upper import TABULATE_MAX_STATES, UpperBoundSource
from glauber.estimators.margins import MarginsResult, margins
from glauber.estimators.rectangle import RectangleTestResult, rectangle_test
from glauber.estimators.score_cache import MemoisedModel
from glauber.estimators.witnesses import reduced_precision
from glauber.exact.chain import ExactChain
from glauber.exact.score_table import table_queries

#: Random states drawn when a model has no ``default_states()`` and no states are given.
DEFAULT_RANDOM_STATES = 4
#: Model rows the influence search may spend when influences are not enumerated: 82-89 s
#: for AntiBERTy on the full 120-residue trastuzumab VH chain on two CPU cores, where the
#: search's principal block of the chain realises rho(C) = 3.22 at tau = 1 (docs/results.md,
#: tau_no_cert section); scripts/main.sh then takes 178 s of its 5 minutes.
DEFAULT_SEARCH_BUDGET = 2000
#: n x n float64 matrices the influence stage holds at once (for the memory check).
INFLUENCE_MATRICES = 6
#: Rows per lookup of a score table (nothing is asked of the model then).
TABLE_BATCH = 65536


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
    max_exhaustive_states: int = EXACT_MAX_STATES,
    exact: bool | None = None,
    search_budget: int = DEFAULT_SEARCH_BUDGET,
    progress: Any = None,
    batch_size: int = 128,
    device: str = "cpu",
    bracket: bool = True,
) -> Certificate:
    """Run every estimator on ``model`` at temperature ``tau`` and state what is certified.

    Stages (each batched into :meth:`scores` calls of at most ``batch_size`` rows):

    1. rectangles: :func:`~glauber.estimators.rectangle_test` on ``n_rectangles`` rectangles
       from ``states`` with the model's top-50 replacements (Proposition 4; the paper uses 300).
    2. influence: :func:`~glauber.estimators.influence` on every pair of states
       (``exhaustive``: exact), else a search for the suprema within ``search_budget`` model rows
       starting from the first ``n_contexts`` states (every entry realised by a witness; with
       ``search_budget=0``, ``n_replacements`` sampled replacements per site instead); corrected
       Theorem 5 (row, column, spectral, matrix-power certificates, the best one), Lemma 6 /
       tanh / Corollary 7 from the oscillations, and the rigorous ``no certificate`` side.
    3. margins: :func:`~glauber.estimators.margins` of ``states`` (Appendix A.1), Theorem 8 on
       each perfect trap ``{x}`` with its exact escape probability, and on ``basin`` when given
       (over every basin state when ``exhaustive``, else over the given states that lie in it).
    4. drift: :func:`~glauber.estimators.drift` of the count of the most frequent token of
       ``states`` (Section 5.4 as printed) and the corrected band certificate over ``horizon``
       steps on the band one count beyond the given counts (every band state when
       ``exhaustive``).
    5. coupling: :func:`~glauber.estimators.coupling_time` of ``n_pairs`` pairs (a given state,
       a uniform random state) within ``budget`` steps (Section 6.1; a diagnostic, not a bound;
       skipped when ``n_pairs = 0``).
    6. exact: with ``exact``, the exact values of the chain
       (:func:`~glauber.certify.exact.exact_values`), and the claims are confronted with them.

    With ``bracket`` (after the influence stage, at no extra model row): the bracket
    ``tau_no_cert < tau_cert`` (:func:`~glauber.estimators.influence_bracket.influence_bracket`):
    a rigorous upper bound on ``C`` over every context
    (:func:`~glauber.estimators.influence_upper_bound`: exact from the table of a small chain,
    a closed form for pairwise toys, the weights of a masked LM's LayerNorm head), the lowest
    temperature where it certifies and its ``t_mix`` bound at ``tau``; and the highest
    temperature where the influence stage's realised values (exact, or the search's witnesses
    re-evaluated from the memo of its queries) prove that no certificate exists.

    With ``exact``, the chain's score table is built first (stage ``table``: ``n q^(n-1)``
    queries, kept on disk for models with a ``cache_key`` such as a :func:`glauber.core.restrict`
    window of a masked LM) and every other stage reads the table instead of the model: on a
    window of a real model the whole certificate then costs one table build.

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
        Sizes of the stages above (each >= 1; ``n_pairs`` may be 0).
    eps : float
        Target distance of the mixing-time certificates, in (0, 1).
    basin : callable, optional
        ``basin(states[B, n]) -> bool[B]`` for Assumption 1 / Theorem 8 on a basin.
    exhaustive : bool, optional
        Enumerate every state for the influence matrix, the basin and the drift band (exact,
        rigorous). Default: when the model answers on the host (an in-memory model, or the
        score table of an exact chain) and ``q ** n <= max_exhaustive_states``.
    max_exhaustive_states : int
        Largest ``q ** n`` enumerated.
    exact : bool, optional
        Build the exact chain (its score table and full transition matrix) and its exact values.
        Default: when ``q ** n <= EXACT_MAX_STATES`` (8192: every 3-site window of a 20-letter
        vocabulary), for any model.
    search_budget : int
        Model rows the influence search may use when influences are not enumerated (0: sample
        ``n_replacements`` replacements of the ``n_contexts`` contexts instead).
    progress : callable or tqdm, optional
        ``progress(stage, rows_done, rows_total)`` after every model call, or a tqdm bar (its
        total is set to the planned rows, its description to the stage).
    batch_size : int
        Most rows per :meth:`scores` call.
    device : str
        Device of the exact chain's dense algebra (``"cpu"``: numpy; else torch there).
    bracket : bool
        Compute the bracket (see above).

    Returns
    -------
    Certificate

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.
    InvalidProbabilityError
        If ``eps`` is not in (0, 1).
    InvalidModelError
        If ``model`` is not a ConditionalModel (a specification string: resolve it first with
        :func:`glauber.models.resolve_model`).
    ResourceLimitError
        If the influence matrices of ``model.n`` sites cannot fit in the memory available.
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
    >>> claim = cert.claim("thm5-corrected")
    >>> claim.rigorous, claim.holds, cert.exact.tmix <= claim.bound
    (True, True, True)
    """
    model = check_model(model)
    tau = check_tau(tau)
    eps = check_eps(eps)
    seed = check_nonnegative_int(seed, "seed")
    n_pairs = check_nonnegative_int(n_pairs, "n_pairs")
    search_budget = check_nonnegative_int(search_budget, "search_budget")
    counts = {
        name: check_positive_int(value, name)
        for name, value in (
            ("n_rectangles", n_rectangles), ("n_contexts", n_contexts),
            ("n_replacements", n_replacements), ("budget", budget),
            ("horizon", horizon), ("batch_size", batch_size),
            ("max_exhaustive_states", max_exhaustive_states),
        )
    }
    if model.n < 2:
        raise InvalidParameterError(
            f"certify needs a model with n >= 2 sites (rectangles and influences pair two sites); "
            f"this model has n = {model.n}"
        )
    # the influence stage holds a few n x n float64 matrices (C, Delta and their derived forms)
    check_fits(INFLUENCE_MATRICES * 8.0 * model.n ** 2,
               f"the {model.n} x {model.n} influence matrices",
               "certify a model with fewer sites (a shorter --length, or a smaller n in the "
               "toy specification)")
    num_states = int(model.q) ** int(model.n)
    if exhaustive and num_states > max_exhaustive_states:
        raise StateSpaceTooLargeError(
            f"exhaustive=True needs q**n = {_count(model.q, model.n)} states, over "
            f"max_exhaustive_states = {max_exhaustive_states}; sample instead (exhaustive=None "
            "or False) or raise the limit"
        )
    exact_limit = max(EXACT_MAX_STATES, max_exhaustive_states)
    if exact and num_states > exact_limit:
        raise StateSpaceTooLargeError(
            f"exact=True needs the chain on q**n = {model.q}**{model.n} = {num_states:,} states, "
            f"over the exact limit of {exact_limit:,}; resample fewer sites (e.g. 3 sites of a "
            "20-token vocabulary: --sites 98-100) or drop exact (--no-exact samples)"
        )
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(5)]
    xs, source = _initial_states(model, states, rngs[0])
    tracker = _Tracker(progress)
    counted = _CountingModel(model, tracker.add)
    note = "not computed (exact=False)"
    if exact is None:
        exact = num_states <= EXACT_MAX_STATES
        note = (f"not computed: q**n = {model.q}**{model.n} states > {EXACT_MAX_STATES:,} "
                "(restrict to a window of fewer states for the exact chain: "
                "glauber.core.restrict, or --context/--sites)")
    started = time.perf_counter()
    seconds: dict[str, float] = {}
    chain, work = None, counted
    if exact:
        tracker.plan({"table": table_queries(model.n, model.q)})
    with tracker.stage("table", seconds):
        if exact:  # the score table: n q^(n-1) queries; every stage then reads it for free
            chain = ExactChain(counted, tau, max_states=num_states, batch_size=batch_size)
            work = chain.tabulated()
    on_host = chain is not None or answers_on_host(counted)
    if exhaustive is None:
        exhaustive = on_host and num_states <= max_exhaustive_states
    settings = Settings(
        n_rectangles=counts["n_rectangles"], n_contexts=counts["n_contexts"],
        n_replacements=min(counts["n_replacements"], model.q - 1), n_pairs=n_pairs,
        budget=counts["budget"], horizon=counts["horizon"], batch_size=counts["batch_size"],
        exhaustive=bool(exhaustive), search_budget=search_budget,
    )
    if chain is not None:  # table lookups: large batches, nothing asked of the model
        settings_work = dataclasses.replace(settings, batch_size=max(batch_size, TABLE_BATCH))
    else:
        settings_work = settings
        tracker.plan(_planned_rows(model, xs, xs[: settings.n_contexts], settings,
                                   basin is not None))
    contexts = xs[: settings.n_contexts]
    with tracker.stage("rectangles", seconds):
        incompat = _incompatibility(work, xs, tau, settings_work, rngs[1])
    # the search's queries are memoised so the bracket re-reads its witnesses' scores for free
    memo = (MemoisedModel(work, settings_work.batch_size)
            if bracket and not settings.exhaustive and settings.search_budget else None)
    with tracker.stage("influence", seconds):
        infl = _influence(memo or work, tau, contexts, settings_work, eps, rngs[2],
                          max_exhaustive_states)
    with tracker.stage("bracket", seconds):
        brk = (_bracket(work, tau, eps, infl, memo, max(TABULATE_MAX_STATES,
                                                        max_exhaustive_states))
               if bracket else None)
    with tracker.stage("margins", seconds):
        marg = margins(work, xs, tau=tau, batch_size=settings_work.batch_size)
        basin_result = None
        if basin is not None:
            basin_result = _basin(work, xs, tau, basin, settings_work, max_exhaustive_states)
    with tracker.stage("drift", seconds):
        drift_at_states, drift_band = _drift(work, xs, tau, settings_work, max_exhaustive_states)
    with tracker.stage("coupling", seconds):
        coup = None
        if n_pairs:
            coup = _coupling(work, xs, tau, settings_work, rngs[3], rngs[4])
    with tracker.stage("exact", seconds):
        values = None
        if chain is not None:
            trap = marg.best_trap
            values = exact_values(chain, eps, None if trap is None else xs[trap], device=device)
            note = f"exact chain over all {num_states} states"
    timings = Timings(**seconds, total=time.perf_counter() - started, rows=tracker.asked)
    name = str(getattr(model, "name", type(model).__name__))
    labels = tuple(str(v) for v in getattr(model, "labels", range(model.q)))
    return Certificate(
        model=name,
        n=int(model.n),
        q=int(model.q),
        tau=tau,
        eps=eps,
        seed=seed,
        device=str(getattr(model, "device", device)),
        labels=labels,
        states=tuple(tuple(int(v) for v in row) for row in xs),
        states_source=source,
        settings=settings,
        incompatibility=incompat,
        influence=infl,
        margins=marg,
        basin=basin_result,
        drift=drift_at_states,
        drift_band=drift_band,
        coupling=coup,
        claims=build_claims(name, eps, labels, settings, incompat, infl, marg, basin_result,
                            drift_at_states, drift_band, coup, values, brk),
        timings=timings,
        versions=software_versions(),
        exact=values,
        exact_note=note,
        bracket=brk,
    )


def _count(q: int, n: int) -> str:
    """``q**n`` for a message: the number when it is short, else ``q**n ~ 10^k``."""
    if n * math.log10(max(q, 2)) < 16:
        return f"{int(q) ** int(n)}"
    return f"{q}**{n} ~ 10^{n * math.log10(q):.0f}"


# ------------------------------------------------------------------------------- the stages
def _incompatibility(
    model: ConditionalModel, xs: np.ndarray, tau: float, settings: Settings, rng: Any
) -> RectangleTestResult:
    return rectangle_test(
        model, xs, tau, settings.n_rectangles, "topk", 50, rng, settings.batch_size
    )


def _influence(
    model: ConditionalModel,
    tau: float,
    contexts: np.ndarray,
    settings: Settings,
    eps: float,
    rng: Any,
    max_states: int,
) -> InfluenceResult:
    return influence(
        model, tau, contexts=None if settings.exhaustive else contexts,
        n_replacements=settings.n_replacements, seed=rng, exhaustive=settings.exhaustive,
        batch_size=settings.batch_size, eps=eps, max_states=max_states,
        search_budget=settings.search_budget,
    )


def _bracket(
    model: ConditionalModel,
    tau: float,
    eps: float,
    infl: InfluenceResult,
    memo: MemoisedModel | None,
    max_states: int,
) -> InfluenceBracket:
    """The bracket from a rigorous upper bound (when the model has one) and the influence
    stage's realised values: the exact table, the search's witnesses, or the sample at ``tau``."""
    try:
        source, missing = UpperBoundSource(model, max_states=max_states), ""
    except UnboundableModelError as exc:
        source, missing = None, str(exc)
    rows = 0
    if source is not None and source.tabulated:
        lower, how = exact_lower(source), "exact (table)"
    elif memo is not None and infl.witnesses:
        curve = WitnessCurve(memo.cache, infl.witnesses, reduced_precision(model))
        lower, how, rows = curve, "search witnesses", int(infl.queries) + curve.rows
    else:
        how = "exact (at tau only)" if infl.exhaustive else "sampled (at tau only)"
        lower = fixed_lower(tau, infl.rho_lower)
    return influence_bracket(source, tau, lower=lower, lower_method=how, eps=eps,
                             lower_rows=rows, upper_missing=missing)


def _basin(
    model: ConditionalModel,
    xs: np.ndarray,
    tau: float,
    basin: Basin,
    settings: Settings,
    max_states: int,
) -> MarginsResult:
    pool = all_states(model.n, model.q, max_states) if settings.exhaustive else xs
    inside = pool[evaluate_basin(basin, pool)]
    if inside.shape[0] == 0:
        raise BasinError(
            "none of the states lies in the basin; pass states from the basin (or a basin that "
            "contains some of them)"
        )
    if settings.exhaustive and inside.shape[0] == pool.shape[0]:
        raise BasinError("the basin is the whole state space; Theorem 8 needs a proper subset")
    return margins(
        model, inside, tau=tau, basin=basin, batch_size=settings.batch_size,
        basin_complete=settings.exhaustive,
    )


def drift_band(xs: np.ndarray, q: int) -> tuple[int, float, float]:
    """The counted token and band of :func:`certify`'s Section 5.4 stage.

    The token is the most frequent one in ``xs``; the band ``(a, b)`` runs one count beyond the
    states' counts of it, so every given state lies inside.
    """
    token = int(np.argmax(np.bincount(xs.ravel(), minlength=q)))
    counts = (xs == token).sum(axis=1)
    return token, float(counts.min() - 1), float(counts.max() + 1)


def _drift(
    model: ConditionalModel, xs: np.ndarray, tau: float, settings: Settings, max_states: int
) -> tuple[DriftResult, DriftResult]:
    """Drift at the given states (as printed) and over the band (the corrected certificate)."""
    token, a, b = drift_band(xs, model.q)
    kw = dict(band=(a, b), T=settings.horizon, batch_size=settings.batch_size)
    if settings.exhaustive:
        every = all_states(model.n, model.q, max_states)
        level = (every == token).sum(axis=1)
        band_states = every[(level > a) & (level < b)]
        at_given = drift(model, xs, token, tau, batch_size=settings.batch_size)
        band = drift(model, band_states, token, tau, band_states_complete=True, **kw)
        return at_given, band
    at_given = drift(model, xs, token, tau, **kw)
    return at_given, at_given


def _coupling(
    model: ConditionalModel,
    xs: np.ndarray,
    tau: float,
    settings: Settings,
    rng_starts: np.random.Generator,
    rng_chain: np.random.Generator,
) -> CouplingResult:
    p = settings.n_pairs
    x0 = xs[np.arange(p) % xs.shape[0]]
    y0 = rng_starts.integers(model.q, size=(p, model.n))
    return coupling_time(
        model, tau, x0, y0, settings.budget, seed=rng_chain, batch_size=settings.batch_size,
        sync_every=min(50, settings.budget),
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
    basin_states = (q**n if s.exhaustive else xs.shape[0]) if with_basin else 0
    margins_rows = (xs.shape[0] + basin_states) * n
    drift_rows = xs.shape[0] * n
    if s.exhaustive:  # plus every state with a < count < b: C(n, c) (q - 1)^(n - c) at count c
        _, a, b = drift_band(xs, q)
        levels = range(int(a) + 1, int(b))
        drift_rows += n * sum(math.comb(n, c) * (q - 1) ** (n - c) for c in levels)
    return {
        "rectangles": 4 * s.n_rectangles,
        "influence": (ctx * n * (1 + reps * (n - 1)) if s.exhaustive or not s.search_budget
                      else s.search_budget),
        "margins": margins_rows,
        "drift": drift_rows,
        "coupling": 1 + 2 * s.n_pairs * s.budget if s.n_pairs else 0,
    }


def _initial_states(
    model: ConditionalModel, states: Any, rng: np.random.Generator
) -> tuple[np.ndarray, str]:
    source = "given"
    if states is None and hasattr(model, "default_states"):
        states = model.default_states()
        source = "context" if isinstance(model, RestrictedModel) else "default states"
    if states is None:
        states = rng.integers(model.q, size=(DEFAULT_RANDOM_STATES, model.n))
        source = "random states"
    xs = host_states(model, states)
    if xs.shape[0] == 0:
        raise InvalidParameterError("states is empty; pass at least one state [1, n]")
    return _distinct(xs), source


def _distinct(xs: np.ndarray) -> np.ndarray:
    """The distinct rows of ``xs`` in order of first appearance."""
    _, first = np.unique(xs, axis=0, return_index=True)
    return xs[np.sort(first)]


__all__ = ["DEFAULT_RANDOM_STATES", "certify", "drift_band"]
