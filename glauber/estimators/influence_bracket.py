"""The bracket ``tau_no_cert < tau_cert``: where no Theorem 5 certificate can exist, and where
one is proved.

* ``tau_cert``: the lowest temperature, found on a grid and refined by bisection, at which a
  rigorous UPPER bound ``C_up(tau) >= c(tau)`` (:func:`glauber.estimators.influence_upper_bound`)
  has spectral radius below 1, proved by a Collatz–Wielandt vector
  (:func:`glauber.theory.verified_power.weighted_tmix_upper`): then the matrix-power
  certificate of the corrected Theorem 5 exists, and ``t_mix(eps) <= tmix_bound`` is
  explicit. For ``tanh(Delta / 4 tau)`` bounds ``C_up`` decreases in ``tau``, so it is certified
  at every larger temperature too (``upper_monotone``).
* ``tau_no_cert``: the highest temperature, on the grid and refined by bisection, at which
  realised LOWER values (a search's witnesses, an exact table) have a rounding-safe spectral
  radius ``>= 1`` (:func:`glauber.estimators.influence_threshold.rho_lower_bound`): no
  certificate of the corrected Theorem 5 can hold there.

Neither ``c(tau)`` nor a realised pair's TV need be monotone in ``tau``, so each temperature is
a separate claim; between the two the question is open. Scores are tau-free, so after one
pass the whole bracket costs no model rows: the upper side keeps its ``Delta`` or table
(:class:`~glauber.estimators.influence_upper.UpperBoundSource`), the lower side the scores of
its witness pairs (:class:`WitnessCurve`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from glauber.core.arrays import JsonResult, log_softmax, to_numpy
from glauber.core.validation import check_eps, check_positive_float, check_tau
from glauber.errors import InvalidParameterError
from glauber.estimators.influence_threshold import rho_lower_bound
from glauber.estimators.influence_upper import UpperBoundSource
from glauber.estimators.score_cache import ScoreCache
from glauber.estimators.witnesses import Witness, witness_tolerance

#: Default grid of the upper side: powers of 2 from 2^-6 to 2^24 (cheap: no model rows).
UPPER_GRID = tuple(2.0**k for k in range(-6, 25))
#: Relative width at which a bisection stops (``hi / lo - 1``).
BISECTION_RTOL = 1e-3
#: What ``tau_cert`` requires of the upper bound.
CRITERION = ("rho(C_up) < 1, proved by a Collatz-Wielandt vector (the matrix-power "
             "certificate of the corrected Theorem 5 then exists)")


@dataclass(frozen=True)
class InfluenceBracket(JsonResult):
    """The bracket of one model: ``tau_no_cert`` (no certificate can exist) and ``tau_cert``
    (a certificate is proved), with what each rests on.

    Attributes
    ----------
    tau : float
        The requested temperature.
    tau_cert : float or None
        The lowest temperature found where the upper bound certifies (None: none up to the top
        of ``grid``).
    tau_no_cert : float or None
        The highest temperature found where no certificate can exist (None: the lower values
        reach ``rho >= 1`` nowhere).
    ratio : float or None
        ``tau_cert / tau_no_cert`` when both exist.
    criterion : str
        What ``tau_cert`` requires (:data:`CRITERION`).
    upper_method : str
        The argument of the upper bound (``"layernorm-head"``, ``"tabulated"``, ...).
    upper_monotone : bool
        The upper bound decreases in ``tau``: certified at every temperature above ``tau_cert``.
    lower_method : str
        Where the lower values come from (``"exact"``, ``"search witnesses"``, ``"sampled"``).
    grid : tuple of float
        The temperatures evaluated (grid and bisection points), increasing.
    rho_upper, rho_lower : tuple of float
        At each temperature of ``grid``: the upper bound's Collatz–Wielandt radius, and the
        rounding-safe lower bound on the spectral radius (NaN where not evaluated).
    bisection_rtol : float
        Relative width at which the bisections stopped.
    certified_at_tau : bool
        The upper bound certifies at the requested ``tau``.
    tmix_bound : float or None
        At ``tau``, when certified: the proved bound on ``t_mix(eps)``.
    eps : float
    upper_C : ndarray, shape (n, n), or None
        The upper-bound matrix at ``tau`` (for a report to draw); None without an upper bound.
    upper_Delta : ndarray, shape (n, n), or None
        Its tau-free oscillation bound.
    upper_rows, lower_rows : int
        Model rows each side asked for (the lower side's search is counted where it ran).
    upper_seconds, lower_seconds : float
    note : str
        What would narrow the bracket, or why a side is missing.
    details : dict
        The upper bound's details (head size, attaining tokens, ...).
    """

    tau: float
    tau_cert: float | None
    tau_no_cert: float | None
    ratio: float | None
    criterion: str
    upper_method: str
    upper_monotone: bool
    lower_method: str
    grid: tuple[float, ...]
    rho_upper: tuple[float, ...]
    rho_lower: tuple[float, ...]
    bisection_rtol: float
    certified_at_tau: bool
    tmix_bound: float | None
    eps: float
    upper_C: np.ndarray | None
    upper_Delta: np.ndarray | None
    upper_rows: int = 0
    lower_rows: int = 0
    upper_seconds: float = 0.0
    lower_seconds: float = 0.0
    note: str = ""
    details: dict = field(default_factory=dict)


class WitnessCurve:
    """``tau -> `` a rounding-safe lower bound on ``rho(c(tau))`` from fixed realised pairs.

    The pairs of the ``C`` witnesses of one or more searches (:class:`Witness`): their scores
    are fetched once (through ``cache``, free when the search asked them through it), and at
    any ``tau`` each pair's TV is a realised value of Definition 2, so the entrywise maximum
    ``C_W(tau)`` satisfies ``0 <= C_W <= c(tau)`` and
    :func:`~glauber.estimators.influence_threshold.rho_lower_bound` of it, less the scores'
    rounding (:func:`~glauber.estimators.witnesses.witness_tolerance`), bounds
    ``rho(c(tau))`` from below.

    Parameters
    ----------
    cache : ScoreCache
        The model's query memo.
    witnesses : sequence of Witness
        Only ``quantity == "C"`` ones are used.
    reduced_precision : bool
        The model computes in half precision (wider tolerance).
    """

    def __init__(self, cache: ScoreCache, witnesses: Sequence[Witness],
                 reduced_precision: bool = False) -> None:
        pairs = [w for w in witnesses if w.quantity == "C"]
        self.n = cache.n
        self.reduced = bool(reduced_precision)
        before = cache.queries
        if pairs:
            x = np.array([w.context for w in pairs], dtype=np.int64)
            y = x.copy()
            y[np.arange(len(pairs)), [w.j for w in pairs]] = [w.replacement for w in pairs]
            sites = np.array([w.i for w in pairs], dtype=np.int64)
            ids_x = cache.fetch(x, sites, batch_size=4096)
            ids_y = cache.fetch(y, sites, batch_size=4096)
            self._sx = np.asarray(to_numpy(cache.rows(ids_x)), dtype=np.float64)
            self._sy = np.asarray(to_numpy(cache.rows(ids_y)), dtype=np.float64)
            self._dtype = cache.dtype
        else:
            self._sx = self._sy = np.zeros((0, cache.q))
            self._dtype = None
        self._i = np.array([w.i for w in pairs], dtype=np.int64)
        self._j = np.array([w.j for w in pairs], dtype=np.int64)
        self.rows = cache.queries - before

    def C(self, tau: float) -> np.ndarray:
        """``C_W(tau)``: the largest realised TV of each entry (zero where no pair)."""
        tau = check_tau(tau)
        C = np.zeros((self.n, self.n))
        if self._i.size:
            p = np.exp(log_softmax(self._sx / tau))
            r = np.exp(log_softmax(self._sy / tau))
            np.maximum.at(C, (self._i, self._j), 0.5 * np.abs(p - r).sum(axis=1))
        return C

    def __call__(self, tau: float) -> float:
        tol = witness_tolerance(self._dtype, tau, self.reduced)
        return rho_lower_bound(self.C(tau), tol)


def bracket_thresholds(
    upper: Callable[[float], float],
    lower: Callable[[float], float] | None,
    grid: Sequence[float],
    rtol: float = BISECTION_RTOL,
) -> tuple[float | None, float | None, dict[float, tuple[float, float]]]:
    """``(tau_cert, tau_no_cert, evaluations)`` from the two radius functions.

    ``tau_cert``: the lowest grid temperature from which ``upper(tau) < 1`` at every larger
    grid temperature, then bisected (on a log scale) against the grid point below it, keeping
    the lowest temperature where ``upper < 1`` was evaluated. ``tau_no_cert``: the highest grid
    temperature with ``lower(tau) >= 1``, bisected against the grid point above it, keeping the
    highest where ``lower >= 1`` was evaluated. ``evaluations`` maps every temperature
    evaluated to ``(upper, lower)`` (``nan`` for a side not evaluated there).
    """
    rtol = check_positive_float(rtol, "rtol")
    taus = sorted({check_tau(t) for t in grid})
    if not taus:
        raise InvalidParameterError("the bracket needs at least one temperature")
    seen: dict[float, list[float]] = {}

    def up(t: float) -> float:
        seen.setdefault(t, [math.nan, math.nan])
        if math.isnan(seen[t][0]):
            seen[t][0] = float(upper(t))
        return seen[t][0]

    def low(t: float) -> float:
        seen.setdefault(t, [math.nan, math.nan])
        if math.isnan(seen[t][1]):
            seen[t][1] = float(lower(t))
        return seen[t][1]

    tau_cert = None
    k = len(taus)
    while k > 0 and up(taus[k - 1]) < 1.0:
        k -= 1
    if k < len(taus):
        tau_cert = taus[k]
        if k > 0:
            lo, hi = taus[k - 1], taus[k]
            while hi / lo - 1.0 > rtol:
                mid = math.sqrt(lo * hi)
                if up(mid) < 1.0:
                    hi = mid
                else:
                    lo = mid
            tau_cert = hi
    tau_no_cert = None
    if lower is not None:
        hits = [t for t in taus if low(t) >= 1.0]
        if hits:
            tau_no_cert = max(hits)
            above = [t for t in taus if t > tau_no_cert]
            if above:
                lo, hi = tau_no_cert, above[0]
                while hi / lo - 1.0 > rtol:
                    mid = math.sqrt(lo * hi)
                    if low(mid) >= 1.0:
                        lo = mid
                    else:
                        hi = mid
                tau_no_cert = lo
    return tau_cert, tau_no_cert, {t: (v[0], v[1]) for t, v in sorted(seen.items())}


def influence_bracket(
    upper: UpperBoundSource | None,
    tau: float,
    *,
    lower: Callable[[float], float] | None = None,
    lower_method: str = "",
    grid: Sequence[float] | None = None,
    eps: float = 0.25,
    rtol: float = BISECTION_RTOL,
    lower_rows: int = 0,
    lower_seconds: float = 0.0,
    upper_missing: str = "",
) -> InfluenceBracket:
    """The bracket of one model at ``tau``: :func:`bracket_thresholds` and what it rests on.

    Parameters
    ----------
    upper : UpperBoundSource or None
        The tau-free upper bound (built once); None when the model has none (``upper_missing``
        says why): ``tau_cert`` is then None.
    tau : float
        The requested temperature (always evaluated; the t_mix bound is given there).
    lower : callable, optional
        ``tau ->`` a rounding-safe lower bound on ``rho(c(tau))`` (:class:`WitnessCurve`,
        :func:`exact_lower`, or :func:`fixed_lower` at ``tau`` only); None: no lower side.
    lower_method : str
        Where ``lower``'s values come from, for the record.
    grid : sequence of float, optional
        Temperatures of both sides; default :data:`UPPER_GRID` with ``tau``.
    eps : float
        Target distance of the t_mix bound.
    rtol : float
        Relative width at which the bisections stop.
    lower_rows, lower_seconds : int, float
        The cost of the lower side paid before the call (a search), for the record.
    upper_missing : str
        Why there is no upper bound (the :class:`~glauber.errors.UnboundableModelError`).

    Returns
    -------
    InfluenceBracket
    """
    tau = check_tau(tau)
    eps = check_eps(eps)
    started = time.perf_counter()
    taus = sorted(set(UPPER_GRID if grid is None else grid) | {tau})
    lower_time = [0.0]

    def lower_timed(t: float) -> float:
        t0 = time.perf_counter()
        try:
            return lower(t)
        finally:
            lower_time[0] += time.perf_counter() - t0

    def no_upper(t: float) -> float:
        return math.inf

    tau_cert, tau_no_cert, evals = bracket_thresholds(
        no_upper if upper is None else upper.rho, None if lower is None else lower_timed,
        taus, rtol)
    at_tau = None if upper is None else upper.at(tau, eps)
    _, low_tau = evals.get(tau, (math.nan, math.nan))  # both sides reported at tau
    evals[tau] = (math.inf if at_tau is None else at_tau.spectral_radius,
                  low_tau if lower is None or not math.isnan(low_tau) else float(lower(tau)))
    grid_out = tuple(sorted(evals))
    ratio = (tau_cert / tau_no_cert if tau_cert is not None and tau_no_cert is not None
             else None)
    note = _note(upper, tau_cert, tau_no_cert, lower is not None, max(taus), upper_missing)
    certified = at_tau is not None and at_tau.certified
    return InfluenceBracket(
        tau=tau, tau_cert=tau_cert, tau_no_cert=tau_no_cert, ratio=ratio, criterion=CRITERION,
        upper_method="none" if at_tau is None else at_tau.method,
        upper_monotone=upper is not None and bool(upper.monotone),
        lower_method=lower_method if lower is not None else "none", grid=grid_out,
        rho_upper=tuple(evals[t][0] for t in grid_out),
        rho_lower=tuple(evals[t][1] for t in grid_out), bisection_rtol=float(rtol),
        certified_at_tau=bool(certified),
        tmix_bound=at_tau.tmix_bound if certified else None, eps=eps,
        upper_C=None if at_tau is None else at_tau.C,
        upper_Delta=None if at_tau is None else at_tau.Delta,
        upper_rows=0 if upper is None else int(upper.rows), lower_rows=int(lower_rows),
        upper_seconds=(0.0 if upper is None else upper.seconds)
        + time.perf_counter() - started - lower_time[0],
        lower_seconds=float(lower_seconds) + lower_time[0], note=note,
        details={} if upper is None else dict(upper.details),
    )


def exact_lower(source: UpperBoundSource) -> Callable[[float], float]:
    """``tau ->`` a rounding-safe lower bound on ``rho(c(tau))`` from a tabulated source's exact
    values (each entry lowered by twice its rounding allowance)."""
    def lower(tau: float) -> float:
        C, tol = source.tabulated_C(tau)
        return rho_lower_bound(np.maximum(C - 2.0 * tol, 0.0), 0.0)
    return lower


def fixed_lower(tau: float, value: float) -> Callable[[float], float]:
    """A lower side known at one temperature only (``nan`` elsewhere: never a claim)."""
    def lower(t: float) -> float:
        return float(value) if t == tau else math.nan
    return lower


def _note(upper: UpperBoundSource | None, tau_cert: float | None, tau_no_cert: float | None,
          has_lower: bool, top: float, upper_missing: str) -> str:
    parts = []
    if upper is None:
        parts.append(f"no upper bound: {upper_missing}" if upper_missing else "no upper bound")
    elif tau_cert is None:
        parts.append(f"the upper bound certifies at no temperature up to {top:g}")
    if not has_lower:
        parts.append("no lower side (no search, table or sample)")
    elif tau_no_cert is None:
        parts.append("the lower values reach rho >= 1 at no temperature evaluated")
    if upper is not None and upper.closed_method == "layernorm-head" and not upper.tabulated:
        parts.append("the upper bound is the head's context-free weight bound, the same for "
                     "every pair of sites; narrowing it needs bounds through the network per "
                     "site pair, or a window small enough to tabulate")
    return "; ".join(parts)


__all__ = [
    "BISECTION_RTOL",
    "CRITERION",
    "InfluenceBracket",
    "UPPER_GRID",
    "WitnessCurve",
    "bracket_thresholds",
    "exact_lower",
    "fixed_lower",
    "influence_bracket",
]
