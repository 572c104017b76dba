"""``certify``: every estimator of the library run on one model at one temperature.

:func:`certify` checks its arguments once, loops over the stages of
:mod:`glauber.certify.stages` (the rectangle test of Proposition 4, the influence and
oscillation matrices of Definition 2 and Lemma 6 with the corrected Theorem 5 certificates and
Corollary 7, the margins and Theorem 8 bounds of the given states, the exact values of a chain
small enough to enumerate, the Section 5.4 drift and Section 6.1 coupling times), and returns a
:class:`~glauber.certify.certificate.Certificate` holding each stage's own result and the
:class:`~glauber.core.claims.Claim` list built from them (:mod:`glauber.certify.claims` says what
the claims may and may not say).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from glauber.certify import stages
from glauber.certify.certificate import (
    Certificate,
    Settings,
    Timings,
    software_versions,
)
from glauber.certify.exact import EXACT_MAX_STATES, EXACT_WINDOW_MAX_STATES
from glauber.exact.sparse import SPARSE_MAX_STATES
from glauber.exact.window import matrix_free, window_fits
from glauber.certify.stage_run import StageRun, stream
from glauber.certify.stages import build_claims
from glauber.core.conditionals import answers_on_host, host_states
from glauber.core.enumeration import table_queries
from glauber.core.memory import check_fits
from glauber.core.protocol import ConditionalModel, check_model
from glauber.core.restrict import RestrictedModel
from glauber.core.validation import check_eps, check_nonnegative_int, check_positive_int, check_tau
from glauber.errors import InvalidParameterError, StateSpaceTooLargeError
from glauber.estimators.escape import Basin

#: Random states drawn when a model has no ``default_states()`` and no states are given.
DEFAULT_RANDOM_STATES = 4
#: n x n float64 matrices the influence stage holds at once (for the memory check).
INFLUENCE_MATRICES = 6


def certify(
    model: ConditionalModel,
    tau: float,
    states: Any = None,
    settings: Settings = Settings(),
    *,
    eps: float = 0.25,
    seed: int = 0,
    basin: Basin | None = None,
    exact: bool | None = None,
    max_exhaustive_states: int = EXACT_MAX_STATES,
    progress: Any = None,
    device: str = "cpu",
    executor: Any = None,
    **changes: Any,
) -> Certificate:
    """Run every stage on ``model`` at temperature ``tau`` and state what is certified.

    The stages (:func:`~glauber.certify.stages.all_stages`, computed by
    :mod:`glauber.certify.runs`): the exact chain's score table (with ``exact``; every later
    stage then reads it), Proposition 4's rectangles, the influence (exhaustive, searched or
    sampled) with corrected Theorem 5 and Corollary 7, the margins with Theorem 8 on traps and
    ``basin``, the exact values, the Section 5.4 drift and Section 6.1 coupled pairs. Every
    argument is checked here, once: the stages read the checked values (``tau`` as a
    :class:`~glauber.core.validation.Temperature`).

    Parameters
    ----------
    model : ConditionalModel
        Toy or MLM, ``n >= 2``; ``tau`` finite and > 0; ``eps`` in (0, 1).
    states : array of int, shape (S, n), optional
        States to examine (repeats once). Default: ``model.default_states()`` (the shipped
        antibody chains of amino-acid MLMs), else ``DEFAULT_RANDOM_STATES`` random states.
    settings : Settings
        How much each stage does; ``**changes`` replaces fields by keyword (``n_pairs=0``).
    seed : int
        Seed of every random choice (same seed, same certificate except for timings).
    basin : callable, optional
        ``basin(states[B, n]) -> bool[B]`` for Assumption 1 / Theorem 8 on a basin.
    exact : bool, optional
        Build the exact chain; default when ``q ** n <= EXACT_MAX_STATES`` (8192), or for a
        window (a model with ``sites``: :func:`glauber.core.restrict`) when ``q ** n <=
        EXACT_WINDOW_MAX_STATES`` (3,200,000: 5 amino acids; above ``2**20`` states only when
        the matrix-free chain fits in memory, :func:`glauber.exact.window.window_fits`), the
        most ``exact=True`` accepts.
    max_exhaustive_states : int
        Largest ``q ** n`` an exhaustive run enumerates (left at its default, an exact chain's
        influences are enumerated at any size up to ``2**20`` states: they are read from its
        table; a 5-site window's other stages sample, its exact values come from the chain).
    progress : callable or tqdm, optional
        ``progress(stage, rows_done, rows_total)`` after every model call, or a tqdm bar.
    device : str
        Device of the exact chain's dense algebra (``"cpu"``: numpy; else torch there).
    executor : object, optional
        Where the exact chain's score-table shards are computed (``map(fn, items)`` in order,
        e.g. :class:`glauber.experiments.executor.RayExecutor`); default in this process.

    Raises
    ------
    GlauberError
        Typed, on any bad argument (``InvalidTemperatureError``, ``InvalidParameterError`` for
        an unknown or out-of-range setting, ``StateSpaceTooLargeError`` when ``exact`` or
        ``exhaustive`` asks for too many states, ``BasinError``, ...): see docs/architecture.md.

    Examples
    --------
    >>> import networkx as nx
    >>> from glauber.toy_models import IsingModel
    >>> cert = certify(IsingModel(nx.cycle_graph(4)), tau=4.0, n_rectangles=5, budget=20)
    >>> claim = cert.claim("thm5-corrected")
    >>> claim.rigorous, claim.holds, cert.exact.tmix <= claim.bound
    (True, True, True)
    """
    tracker = _Tracker(progress)
    run = _prepare(model, tau, states, _settings(settings, changes), eps, seed, basin, exact,
                   max_exhaustive_states, device, tracker)
    run.executor = executor
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    asking = [stage for stage in stages.all_stages() if not run.exact or stage.name == "table"]
    tracker.plan({stage.name: stage.plan(run) for stage in asking})  # a chain's table answers
    for stage in stages.all_stages():
        with tracker.stage(stage.name, seconds):
            run.results.update(stage.run(run))
    timings = Timings(seconds, time.perf_counter() - started, tracker.asked)
    cert = _certificate(model, run, timings, device)
    return dataclasses.replace(cert, claims=build_claims(cert))


def _certificate(model: ConditionalModel, run: StageRun, timings: Timings,
                 device: str) -> Certificate:
    """The certificate of a finished run, without its claims: each stage's results go to the
    field of that name, or to ``results`` when the certificate has none."""
    fields = {f.name for f in dataclasses.fields(Certificate)}
    return Certificate(
        model=str(getattr(model, "name", type(model).__name__)), n=int(model.n), q=int(model.q),
        tau=float(run.tau), eps=run.eps, seed=run.seed,
        device=str(getattr(model, "device", device)),
        labels=tuple(str(v) for v in getattr(model, "labels", range(model.q))),
        states=tuple(tuple(int(v) for v in row) for row in run.states),
        states_source=run.states_source, settings=run.settings, claims=(), timings=timings,
        versions=software_versions(),
        **{k: v for k, v in run.results.items() if k in fields},
        results={k: v for k, v in run.results.items() if k not in fields},
    )


def _settings(settings: Settings, changes: dict[str, Any]) -> Settings:
    """``settings`` with the keyword ``changes`` (checked by :class:`Settings` itself)."""
    if not isinstance(settings, Settings):
        raise InvalidParameterError(
            f"settings must be a glauber.certify.Settings, got {type(settings).__name__}")
    known = {f.name for f in dataclasses.fields(Settings)}
    unknown = sorted(set(changes) - known)
    if unknown:
        raise InvalidParameterError(
            f"certify() got unknown argument(s) {', '.join(unknown)}; the settings are "
            f"{', '.join(sorted(known))}")
    return dataclasses.replace(settings, **changes)


def _prepare(
    model: ConditionalModel, tau: float, states: Any, settings: Settings, eps: float, seed: int,
    basin: Basin | None, exact: bool | None, max_exhaustive_states: int, device: str,
    tracker: _Tracker,
) -> StageRun:
    """Check every argument once and resolve the defaults: the run the stages read."""
    model = check_model(model)
    tau, eps = check_tau(tau), check_eps(eps)
    seed = check_nonnegative_int(seed, "seed")
    max_exhaustive_states = check_positive_int(max_exhaustive_states, "max_exhaustive_states")
    if exact is not None:
        if not isinstance(exact, (bool, np.bool_)):
            raise InvalidParameterError(f"exact must be True, False or None, got {exact!r}")
        exact = bool(exact)
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
    exact_limit = max(EXACT_WINDOW_MAX_STATES, max_exhaustive_states)
    if exact and num_states > exact_limit:
        raise StateSpaceTooLargeError(
            f"exact=True needs the chain on q**n = {model.q}**{model.n} = {num_states:,} states, "
            f"over the exact limit of {exact_limit:,}; resample fewer sites (e.g. 4 sites of a "
            "20-token vocabulary: --sites 97-100) or drop exact (--no-exact samples)"
        )
    exact_asked = exact
    if exact is None:
        window = getattr(model, "sites", None) is not None
        exact = num_states <= (EXACT_WINDOW_MAX_STATES if window else EXACT_MAX_STATES) and (
            num_states <= SPARSE_MAX_STATES
            or (matrix_free(model.n, model.q) and window_fits(model.n, model.q)))
    if exact and max_exhaustive_states == EXACT_MAX_STATES:  # the default: the chain's table
        max_exhaustive_states = max(max_exhaustive_states,  # answers every query; the other
                                    min(num_states, SPARSE_MAX_STATES))  # stages sample above
    if settings.exhaustive and num_states > max_exhaustive_states:
        raise StateSpaceTooLargeError(
            f"exhaustive=True needs q**n = {_count(model.q, model.n)} states, over "
            f"max_exhaustive_states = {max_exhaustive_states}; sample instead (exhaustive=None "
            "or False) or raise the limit"
        )
    xs, source = _initial_states(model, states, stream(seed, "states"))
    run = StageRun(model=_CountingModel(model, tracker.add), tau=tau, eps=eps, seed=seed,
                   states=xs, states_source=source, settings=settings,
                   exact=exact, exact_asked=exact_asked, max_states=max_exhaustive_states,
                   basin=basin,
                   device=device)
    exhaustive = settings.exhaustive
    if exhaustive is None:  # the probe query runs only when no chain will answer on the host
        on_host = run.exact or answers_on_host(run.model)
        exhaustive = on_host and num_states <= max_exhaustive_states
    run.settings = dataclasses.replace(
        settings, exhaustive=bool(exhaustive),
        n_replacements=min(settings.n_replacements, model.q - 1),
        search_budget=min(settings.search_budget, table_queries(model.n, model.q)))
    return run


def _count(q: int, n: int) -> str:
    """``q**n`` for a message: the number when it is short, else ``q**n ~ 10^k``."""
    if n * math.log10(max(q, 2)) < 16:
        return f"{int(q) ** int(n)}"
    return f"{q}**{n} ~ 10^{n * math.log10(q):.0f}"


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

    def count(self, rows: int) -> None:
        """Report ``rows`` asked elsewhere (by the workers of an executor)."""
        self._on_rows(int(rows))

    def __reduce__(self) -> tuple:
        """Pickle as the wrapped model (a remote worker has nothing to report to)."""
        return _same, (self._model,)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy and pickle protocols: not the wrapped model's
            raise AttributeError(name)
        return getattr(self._model, name)


def _same(model: ConditionalModel) -> ConditionalModel:
    return model


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


__all__ = ["DEFAULT_RANDOM_STATES", "certify"]
