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
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import math
import platform
import time
import types
import typing
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from glauber.errors import BasinError, InvalidParameterError, StateSpaceTooLargeError
from glauber.estimators.arrays import is_torch
from glauber.estimators.conditionals import host_states, log_conditionals
from glauber.estimators.coupling import coupling_time
from glauber.estimators.drift import drift
from glauber.estimators.escape import Basin, escape_probability, evaluate_basin
from glauber.estimators.influence import all_states, influence
from glauber.estimators.margins import margins
from glauber.estimators.protocol import ConditionalModel
from glauber.estimators.rectangle import rectangle_test
from glauber.theory.contraction import ContractionCertificate, certify_contraction
from glauber.theory.influence_bounds import corollary7_alpha_bound, influence_matrix_bound
from glauber.theory.validation import (
    check_eps,
    check_nonnegative_int,
    check_positive_int,
    check_tau,
)

#: Random states drawn when a model has no ``default_states()`` and no states are given.
DEFAULT_RANDOM_STATES = 4
#: Stages of :func:`certify`, in order (the names given to ``progress``).
STAGES = ("rectangles", "influence", "margins", "drift", "coupling")

Matrix = tuple[tuple[float, ...], ...]


# --------------------------------------------------------------------------- the certificate
@dataclass(frozen=True)
class Claim:
    """One statement of the paper (or its correction) confronted with this model.

    Attributes
    ----------
    statement : str
        The result and its hypothesis, with the paper's number.
    hypothesis_held : bool
        Whether the hypothesis held on the numbers computed here.
    certifies : str
        What follows, or why nothing does.
    value : float or None
        The headline number of the claim (a bound, a statistic).
    caveat : str
        What the numbers do not show.
    rigorous : bool
        True only when ``certifies`` is proved for this model (exact enumeration, or a quantity
        that is exact given the states used); False for estimates and diagnostics.
    """

    statement: str
    hypothesis_held: bool
    certifies: str
    value: float | None
    caveat: str
    rigorous: bool


@dataclass(frozen=True)
class RectangleRecord:
    """One rectangle of the test: state index, sites ``i, j``, tokens ``A -> A'``, ``B -> B'``."""

    state: int
    i: int
    j: int
    a: int
    a_prime: int
    b: int
    b_prime: int
    delta: float


@dataclass(frozen=True)
class IncompatibilitySummary:
    """Proposition 4's rectangle test (see :class:`~glauber.estimators.RectangleTestResult`).

    ``p_value_abs`` is the one-sided t-test of ``mean |delta| > atol``; ``p_value_t`` and
    ``p_value_wilcoxon`` test a signed bias. ``None`` stands for an undefined statistic.
    """

    n_rectangles: int
    replacements: str
    k: int
    mean_abs_delta: float
    sd_abs_delta: float | None
    median_abs_delta: float
    max_abs_delta: float
    mean_delta: float
    sd_delta: float | None
    p_value_abs: float | None
    p_value_t: float | None
    p_value_wilcoxon: float | None
    atol: float
    n_above_atol: int
    compatible_within_atol: bool
    rectangles: tuple[RectangleRecord, ...]


@dataclass(frozen=True)
class InfluenceSummary:
    """Influence ``C`` (Definition 2), oscillation ``Delta`` (Lemma 6) and their certificates.

    ``C[i][j]`` is the influence of site ``j`` on site ``i``. Unless ``exhaustive``, both
    matrices are maxima over sampled pairs: LOWER bounds on the suprema (``is_lower_bound``).
    ``contraction`` holds the corrected Theorem 5 certificates from ``C``;
    ``lemma6_alpha = max_i sum_j Delta_ij / (4 tau)`` (Corollary 7 as printed) and
    ``tanh_alpha = max_i sum_j tanh(Delta_ij / (4 tau))`` bound the row-sum ``alpha``;
    ``oscillation_contraction`` is corrected Theorem 5 applied to ``tanh(Delta / (4 tau))``.
    """

    exhaustive: bool
    is_lower_bound: bool
    n_contexts: int
    n_replacements: int
    n_comparisons: int
    C: Matrix
    Delta: Matrix
    contraction: ContractionCertificate
    lemma6_alpha: float
    tanh_alpha: float
    corollary7: bool
    lemma6_consistent: bool
    tanh_consistent: bool
    oscillation_contraction: ContractionCertificate


@dataclass(frozen=True)
class TrapBounds:
    """Theorem 8 on the one-state basin ``{x}`` of the given state with the largest margin.

    ``delta_star`` is the state's smallest margin (every site and every other token is
    exit-causing for ``{x}``); ``exact_escape`` is ``P_tau(x, {x}^c)`` computed exactly from the
    state's conditionals. ``tmix_lower_bound`` needs ``mu_tau({x}) <= 1/2``.
    """

    state: int
    delta_star: float
    escape_bound: float
    sharper_escape_bound: float
    exact_escape: float
    tmix_lower_bound: float


@dataclass(frozen=True)
class BasinSummary:
    """Assumption 1 and Theorem 8 on a caller's basin (over ``n_states`` basin states).

    ``complete``: the states are every state of the basin (enumerated), so the result is exact.
    Bounds are ``None`` when Assumption 1 fails.
    """

    n_states: int
    complete: bool
    assumption1: bool
    argmax_at_exit_sites: bool
    delta_star: float
    k: int
    escape_bound: float | None
    sharper_escape_bound: float | None
    tmix_lower_bound: float | None
    max_exact_escape: float
    mean_exact_escape: float


@dataclass(frozen=True)
class MarginsSummary:
    """Per-state margins ``Delta_i(x)`` (paper Appendix A.1) at ``tau = 1``.

    ``perfect[s]``: every site of state ``s`` holds the strict argmax (a perfect trap).
    ``trap``: Theorem 8 for the best perfect trap (``None`` when there is none).
    """

    state_min: tuple[float, ...]
    state_mean: tuple[float, ...]
    perfect: tuple[bool, ...]
    n_perfect: int
    delta_star: float
    trap: TrapBounds | None
    basin: BasinSummary | None


@dataclass(frozen=True)
class DriftSummary:
    """Section 5.4: drift of the count of ``token`` (as printed, and the corrected band form).

    ``per_state``/``counts`` are at the given states; ``all_positive`` is the printed
    criterion. The band ``(band_a, band_b)`` runs one count beyond the given states' counts;
    ``band_min_drift`` is the smallest drift over ``n_in_band`` band states (every band state
    when ``band_states_complete``). ``escape_bound`` bounds ``P(X_t <= a for some t <= horizon |
    X_0 >= b)`` (``None`` when the band drift is not positive); ``rigorous`` needs a complete
    band and a non-vacuous bound.
    """

    token: int
    token_label: str
    per_state: tuple[float, ...]
    counts: tuple[int, ...]
    min: float
    median: float
    mean: float
    all_positive: bool
    band_a: float
    band_b: float
    n_in_band: int
    band_min_drift: float
    band_states_complete: bool
    horizon: int
    escape_bound: float | None
    exponent: float | None
    vacuous: bool
    rigorous: bool


@dataclass(frozen=True)
class CouplingSummary:
    """Same-site maximal coupling of pairs (paper §6.1); ``times`` are censored at ``budget``."""

    n_pairs: int
    budget: int
    times: tuple[int, ...]
    censored: tuple[bool, ...]
    n_censored: int
    median: float | None
    median_exceeds_budget: bool


@dataclass(frozen=True)
class ExactValues:
    """Exact values from the full transition matrix of a small model (filled in by callers
    that may enumerate the chain, e.g. ``glauber certify`` on toy models).

    ``contraction``: corrected Theorem 5 from the exact influence matrix; ``tmix``: the exact
    worst-start ``t_mix(eps)``; ``trap_mass``: ``mu_tau({x})`` of the trap state (the hypothesis
    of Theorem 8's ``t_mix`` bound), ``None`` without a trap.
    """

    num_states: int
    contraction: ContractionCertificate
    tmix: int
    relaxation_time: float
    reversible: bool
    trap_mass: float | None


@dataclass(frozen=True)
class Settings:
    """The knobs of one :func:`certify` run."""

    n_rectangles: int
    n_contexts: int
    n_replacements: int
    n_pairs: int
    budget: int
    horizon: int
    batch_size: int
    exhaustive: bool


@dataclass(frozen=True)
class Timings:
    """Wall-clock seconds per stage and in ``total``; ``rows``: conditionals asked of the model
    (including one probe row per stage that needs it). ``load`` and ``exact`` are filled in by
    callers (model loading, exact chain)."""

    rectangles: float
    influence: float
    margins: float
    drift: float
    coupling: float
    total: float
    rows: int
    load: float | None = None
    exact: float | None = None


@dataclass(frozen=True)
class Versions:
    """Versions of the software that produced a certificate (``None``: not installed)."""

    glauber: str
    python: str
    numpy: str | None
    scipy: str | None
    torch: str | None
    transformers: str | None


@dataclass(frozen=True)
class Certificate:
    """Everything :func:`certify` computed, as plain numbers (see the module docstring).

    ``states`` are the vocabulary indices of the states used (``labels`` names the tokens).
    ``to_json``/``from_json`` and ``to_dict``/``from_dict`` round-trip exactly (strict JSON:
    infinities are written ``"inf"``).
    """

    model: str
    n: int
    q: int
    tau: float
    eps: float
    seed: int
    device: str
    labels: tuple[str, ...]
    states: tuple[tuple[int, ...], ...]
    settings: Settings
    incompatibility: IncompatibilitySummary
    influence: InfluenceSummary
    margins: MarginsSummary
    drift: DriftSummary
    coupling: CouplingSummary
    claims: tuple[Claim, ...]
    timings: Timings
    versions: Versions
    exact: ExactValues | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe nested dict (tuples as lists, ``inf`` as ``"inf"``)."""
        return _encode(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Certificate":
        """Rebuild a certificate from :meth:`to_dict` output.

        Raises
        ------
        InvalidParameterError
            If a field is missing or has the wrong type.
        """
        return _decode(cls, data, "certificate")

    def to_json(self, indent: int | None = 2) -> str:
        """Strict JSON text (no ``NaN``/``Infinity`` tokens)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> "Certificate":
        """Rebuild a certificate from :meth:`to_json` output.

        Raises
        ------
        InvalidParameterError
            If the text is not JSON or not a certificate.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidParameterError(f"not a JSON certificate: {exc}") from exc
        return cls.from_dict(data)

    def claim(self, prefix: str) -> Claim:
        """The first claim whose statement starts with ``prefix``.

        Raises
        ------
        InvalidParameterError
            If no claim matches.
        """
        for c in self.claims:
            if c.statement.startswith(prefix):
                return c
        raise InvalidParameterError(
            f"no claim starts with {prefix!r}; claims: {[c.statement[:40] for c in self.claims]}"
        )


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
        claims=_claims(eps, incompat, infl, marg, drf, coup),
        timings=timings,
        versions=software_versions(),
    )


def software_versions() -> Versions:
    """Versions of glauber, Python and the numerical packages (read from package metadata)."""
    from glauber import __version__

    def version(name: str) -> str | None:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None

    return Versions(
        glauber=__version__, python=platform.python_version(), numpy=version("numpy"),
        scipy=version("scipy"), torch=version("torch"), transformers=version("transformers"),
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


# -------------------------------------------------------------------------------- the claims
def _claims(
    eps: float,
    incompat: IncompatibilitySummary,
    infl: InfluenceSummary,
    marg: MarginsSummary,
    drf: DriftSummary,
    coup: CouplingSummary,
) -> tuple[Claim, ...]:
    claims = [
        _incompatibility_claim(incompat),
        _theorem5_claim(infl, eps),
        _printed_contraction_claim(infl),
        _corollary7_claim(infl),
        _oscillation_claim(infl, eps),
        _trap_claim(marg),
    ]
    if marg.basin is not None:
        claims.append(_basin_claim(marg.basin))
    claims += [_printed_drift_claim(drf), _band_drift_claim(drf), _coupling_claim(coup)]
    return tuple(claims)


_LOWER = (
    "sampled influences are LOWER bounds on the suprema c_ij of Definition 2 (the worst pair "
    "of states may not have been sampled)"
)


def _incompatibility_claim(r: IncompatibilitySummary) -> Claim:
    found = r.n_above_atol > 0
    certifies = (
        f"the conditionals are incompatible: {r.n_above_atol} of {r.n_rectangles} rectangles "
        "have delta != 0, so no joint law has them; Theorem 3 does not apply (the stationary "
        "law is not a joint the model defines, and the chain need not be reversible)"
        if found else
        f"nothing: no rectangle of {r.n_rectangles} has |delta| > atol; a sample cannot prove "
        "compatibility"
    )
    return Claim(
        statement="Proposition 4 (rectangle test): compatible conditionals have delta = 0 in "
        "every rectangle, so one rectangle with delta != 0 proves incompatibility",
        hypothesis_held=found,
        certifies=certifies,
        value=r.mean_abs_delta,
        caveat=f"|delta| <= atol = {r.atol:g} counts as rounding; one-sided p-value of "
        f"mean |delta| > atol: {_fmt(r.p_value_abs)}",
        rigorous=found,
    )


def _theorem5_claim(r: InfluenceSummary, eps: float) -> Claim:
    c = r.contraction
    held = c.best != "none"
    if r.exhaustive:
        certifies = (
            f"t_mix({eps:g}) <= {_fmt(c.best_bound)} steps ({c.best} certificate; exact "
            "influences)" if held else
            f"nothing: the exact spectral radius of C is {c.spectral_radius:.4g} >= 1"
        )
        caveat = "exact: every pair of states was enumerated"
    elif held:
        certifies = (
            f"NOT certified: consistent with fast mixing (t_mix({eps:g}) <= "
            f"{_fmt(c.best_bound)} would follow if the sampled influences were the suprema)"
        )
        caveat = _LOWER + "; a rigorous certificate needs exhaustive influences (toy models)"
    elif c.spectral_radius >= 1.0:
        certifies = (
            f"no Theorem 5 certificate exists at this temperature: the sampled spectral radius "
            f"{c.spectral_radius:.4g} >= 1, and the true C is entrywise larger (Perron-Frobenius: "
            "the spectral radius of a non-negative matrix grows with its entries)"
        )
        caveat = "says nothing about slow mixing: Theorem 5 is only a sufficient condition"
    else:
        certifies = (
            f"nothing: the sampled spectral radius {c.spectral_radius:.4g} is within rounding "
            "of 1 (no finite certificate)"
        )
        caveat = _LOWER
    return Claim(
        statement="Theorem 5 (corrected): if the spectral radius of C is < 1, t_mix(eps) <= the "
        "best of the row-sum, column-sum, spectral and matrix-power certificates",
        hypothesis_held=held,
        certifies=certifies,
        value=c.best_bound,
        caveat=caveat,
        rigorous=r.exhaustive or c.spectral_radius >= 1.0,
    )


def _printed_contraction_claim(r: InfluenceSummary) -> Claim:
    c = r.contraction
    corrected = (
        f"the corrected one-step contraction needs alpha_col < 1: alpha_col = "
        f"{c.alpha_col:.4g} ({'holds' if c.contraction_corrected_holds else 'fails'}"
        f"{'' if r.exhaustive else ' on the sampled C, a lower bound'})"
    )
    return Claim(
        statement="Theorem 5 as printed: alpha_row = max_i sum_j c_ij < 1 gives "
        "E[d_H(X_1, Y_1)] <= (1 - (1 - alpha)/n) d_H(x, y)",
        hypothesis_held=bool(c.contraction_as_printed_holds),
        certifies="nothing: the one-step contraction is false as printed (its proof bounds a "
        "column sum; a hub that influences many sites breaks it); " + corrected,
        value=c.alpha_row,
        caveat="alpha_row < 1 still bounds t_mix (corrected Theorem 5, row certificate)",
        rigorous=False,
    )


def _corollary7_claim(r: InfluenceSummary) -> Claim:
    held = r.corollary7
    if held and r.exhaustive:
        certifies = f"alpha_row <= {r.lemma6_alpha:.4g} < 1 (exact oscillations)"
    elif held:
        certifies = (
            f"NOT certified: consistent with alpha_row <= {r.lemma6_alpha:.4g} < 1 (the sampled "
            "oscillations are lower bounds on the suprema)"
        )
    else:
        certifies = (
            f"nothing: max_i sum_j Delta_ij / (4 tau) = {r.lemma6_alpha:.4g} >= 1"
            + ("" if r.exhaustive else " (already on the sampled, lower-bound oscillations)")
        )
    return Claim(
        statement="Corollary 7 (Lemma 6: c_ij <= Delta_ij / (4 tau)): max_i sum_j Delta_ij < "
        "4 tau implies alpha_row < 1",
        hypothesis_held=held,
        certifies=certifies,
        value=r.lemma6_alpha,
        caveat=f"the sharper tanh form gives max_i sum_j tanh(Delta_ij / (4 tau)) = "
        f"{r.tanh_alpha:.4g}; Lemma 6 check on the sampled pairs: "
        f"{'consistent' if r.lemma6_consistent and r.tanh_consistent else 'VIOLATED (bug?)'}",
        rigorous=held and r.exhaustive,
    )


def _oscillation_claim(r: InfluenceSummary, eps: float) -> Claim:
    c = r.oscillation_contraction
    held = c.best != "none"
    if held and r.exhaustive:
        certifies = f"t_mix({eps:g}) <= {_fmt(c.best_bound)} steps ({c.best} certificate)"
    elif held:
        certifies = (
            f"NOT certified: consistent with t_mix({eps:g}) <= {_fmt(c.best_bound)} (sampled "
            "oscillations are lower bounds)"
        )
    else:
        certifies = f"nothing: spectral radius of tanh(Delta/(4 tau)) = {c.spectral_radius:.4g}"
    return Claim(
        statement="Corrected Theorem 5 on tanh(Delta_ij / (4 tau)) >= c_ij (the sharper form "
        "of Lemma 6): a certificate from score oscillations alone",
        hypothesis_held=held,
        certifies=certifies,
        value=c.best_bound,
        caveat="never tighter than the certificate from C itself; useful when only score "
        "bounds are known",
        rigorous=held and r.exhaustive,
    )


def _trap_claim(r: MarginsSummary) -> Claim:
    statement = (
        "Theorem 8 on the one-state basin {x} of a perfect trap x (every site at its strict "
        "argmax): P(x, {x}^c) <= |V| e^{-Delta*/tau}, and t_mix(1/4) >= e^{Delta*/tau}/(4|V|) "
        "if mu({x}) <= 1/2"
    )
    t = r.trap
    if t is None:
        return Claim(
            statement=statement, hypothesis_held=False,
            certifies="nothing: no given state is a perfect trap (each has a site whose token "
            "is not the strict argmax: approximate traps only)",
            value=r.delta_star, caveat="value: the smallest margin Delta* over the states",
            rigorous=False,
        )
    vacuous = " (vacuous: below 1 step)" if t.tmix_lower_bound < 1 else ""
    return Claim(
        statement=statement, hypothesis_held=True,
        certifies=f"state {t.state}: escape probability <= {t.escape_bound:.4g} (sharper "
        f"{t.sharper_escape_bound:.4g}; exact {t.exact_escape:.4g}); t_mix(1/4) >= "
        f"{_fmt(t.tmix_lower_bound)} steps{vacuous}",
        value=t.tmix_lower_bound,
        caveat="margins are exact for the state itself, so the escape bound is rigorous; the "
        "t_mix bound also needs mu_tau({x}) <= 1/2, not checked here",
        rigorous=True,
    )


def _basin_claim(r: BasinSummary) -> Claim:
    if r.assumption1:
        certifies = (
            f"P(x, B^c) <= {_fmt(r.escape_bound)} (sharper {_fmt(r.sharper_escape_bound)}; "
            f"largest exact escape {r.max_exact_escape:.4g}); t_mix(1/4) >= "
            f"{_fmt(r.tmix_lower_bound)} if mu(B) <= 1/2"
        )
    else:
        certifies = "nothing: Assumption 1 fails (an exit-causing site is not at its argmax)"
    return Claim(
        statement="Theorem 8 (Assumption 1 on the given basin B): P(x, B^c) <= |V| "
        "e^{-Delta*/tau} and t_mix(1/4) >= e^{Delta*/tau}/(4|V|) if mu(B) <= 1/2",
        hypothesis_held=r.assumption1,
        certifies=certifies,
        value=r.tmix_lower_bound,
        caveat="every basin state was checked" if r.complete else
        f"Assumption 1 was checked on {r.n_states} basin states only; it must hold at every "
        "state of B",
        rigorous=r.assumption1 and r.complete,
    )


def _printed_drift_claim(r: DriftSummary) -> Claim:
    return Claim(
        statement=f"Section 5.4 as printed: positive drift of the count of {r.token_label!r} at "
        "the sampled states implies exponentially slow escape",
        hypothesis_held=r.all_positive,
        certifies="nothing: positive drift at sampled (boundary) states does not bound the "
        "escape probability; see the corrected band certificate",
        value=r.min,
        caveat="value: the smallest drift at the given states",
        rigorous=False,
    )


def _band_drift_claim(r: DriftSummary) -> Claim:
    held = r.band_min_drift > 0
    if not held:
        certifies = "nothing: the drift is <= 0 somewhere in the band"
    elif r.vacuous:
        certifies = f"nothing: the bound {_fmt(r.escape_bound)} is vacuous (>= 1)"
    else:
        certifies = (
            f"P(count <= {r.band_a:g} within {r.horizon} steps | count >= {r.band_b:g}) <= "
            f"{r.escape_bound:.4g}"
            + ("" if r.band_states_complete else " IF the drift bound held at every band state")
        )
    return Claim(
        statement=f"Section 5.4 corrected: drift >= eps > 0 at EVERY state with {r.band_a:g} < "
        f"count < {r.band_b:g} gives P(escape) <= T exp(-2 eps (b - a - 1))",
        hypothesis_held=held,
        certifies=certifies,
        value=r.escape_bound,
        caveat="every band state was checked" if r.band_states_complete else
        f"the drift was evaluated at {r.n_in_band} sampled band states only (an estimate)",
        rigorous=r.rigorous,
    )


def _coupling_claim(r: CouplingSummary) -> Claim:
    return Claim(
        statement="Coupling (paper §6.1): pairs from independent starts, same site, maximal "
        "coupling of the two conditionals",
        hypothesis_held=r.n_censored == 0,
        certifies=f"a diagnostic only: {r.n_pairs - r.n_censored} of {r.n_pairs} pairs met "
        f"within {r.budget} steps (median {_fmt(r.median)})",
        value=r.median,
        caveat="d(t) <= max over ALL pairs of starts of P(T_couple > t) (LPW Corollary 5.5); "
        "sampled starts bound nothing",
        rigorous=False,
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


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "inf"
    return f"{value:.4g}"


# --------------------------------------------------------------------- JSON encode / decode
def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            raise InvalidParameterError("a certificate field holds NaN; use None instead")
        return "inf" if value > 0 else "-inf"
    return value


def _decode(tp: Any, data: Any, where: str) -> Any:
    """Rebuild a value of annotated type ``tp`` from :func:`_encode` output."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if data is None and len(args) < len(typing.get_args(tp)):
            return None
        return _decode(args[0], data, where)
    if origin is tuple:
        item = typing.get_args(tp)[0]
        if not isinstance(data, list):
            raise InvalidParameterError(f"{where} must be a list, got {type(data).__name__}")
        return tuple(_decode(item, v, f"{where}[{k}]") for k, v in enumerate(data))
    if dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise InvalidParameterError(f"{where} must be an object, got {type(data).__name__}")
        hints = typing.get_type_hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name not in data:
                if f.default is dataclasses.MISSING:
                    raise InvalidParameterError(f"{where} lacks the field {f.name!r}")
                continue
            kwargs[f.name] = _decode(hints[f.name], data[f.name], f"{where}.{f.name}")
        return tp(**kwargs)
    if tp is float:
        if data in ("inf", "-inf"):
            return float(data)
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise InvalidParameterError(f"{where} must be a number or 'inf', got {data!r}")
        return float(data)
    if tp in (int, bool, str) and isinstance(data, tp):
        if not (tp is int and isinstance(data, bool)):
            return data
    raise InvalidParameterError(f"{where} must be of type {tp.__name__}, got {data!r}")


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
