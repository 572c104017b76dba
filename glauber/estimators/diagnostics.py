"""Multi-chain convergence diagnostics: rank-normalised split R-hat, bulk and tail ESS (ArviZ).

Given ``C`` chains of ``D`` draws of ``K`` real observables, :func:`convergence_diagnostics`
computes, through ArviZ (``arviz-stats``, the ``diagnostics`` extra), for every observable and
at every *evaluation point* ``d`` (the first ``d`` draws of every chain):

* the rank-normalised split R-hat of Vehtari, Gelman, Simpson, Carpenter and Bürkner (2021,
  "Rank-normalization, folding, and localization: an improved R-hat for assessing convergence of
  MCMC", *Bayesian Analysis* 16(2), eq. 4-5 and §4.2: the larger of the bulk and the folded
  R-hat of the split, rank-normalised chains);
* the bulk effective sample size (ESS of the rank-normalised split chains, §4.3) and the tail
  ESS (the smaller ESS of the 5% and 95% quantile indicators, §4.3, ArviZ's ``method="tail"``
  at ``prob=(0.05, 0.95)``).

Nothing of these is re-implemented here: every number is ArviZ's own array function
(``arviz_stats.base.array_stats.rhat`` / ``.ess``) on the same draws.

*Comparing with ArviZ by hand.* At evaluation point ``d``, the R-hat of observable ``k`` equals
``array_stats.rhat(x[:, :d, k], method="rank")`` and an independent transcription of Vehtari
et al. to 1e-12 (a Hypothesis test over random arrays checks both), and ArviZ 0.23's
``az.rhat(x[:, :d, k])`` (compared on 600 random arrays, every evaluation point: difference 0).
Numbers that differ come from other draws or another statistic, not from this function:

* *the axes*: ArviZ's array functions default to ``chain_axis=-2, draw_axis=-1``, so a
  ``(chains, draws, observables)`` array passed unchanged is read as draws of chains
  ``(draws, observables)``; pass ``x[:, :, k]`` or ``chain_axis=0, draw_axis=1``;
* *the draws*: ``glauber trajectory`` records the starts as draw 0 (its ``diagnostics.json``
  includes them); on the metastable Ising 10-cycle at ``tau = 0.5`` (8 chains, 401 draws) the
  largest R-hat is 4.867 with them and 4.943 without;
* *the method*: ArviZ's ``method="identity"`` (no split) gave 4.998 on the same draws, and
  ``"split"``/``"folded"`` other values again; the rank-normalised split R-hat is the default of
  both ArviZ and this function;
* *the point*: :attr:`DiagnosticsResult.rhat` holds one row per evaluation point; the row of
  all the draws is the last (``rhat[-1]``), not the maximum over the rows.

The one deliberate difference is in the ESS of a prefix whose pooled draws are all equal: ArviZ
returns the number of draws there, this function NaN (nothing has been seen of the observable,
and it is not counted as converged).

An observable *converges* at the first evaluation point where ``R-hat < 1.01`` and
``ESS_bulk >= 400`` (the thresholds Vehtari et al. recommend, §4.4 and §5). R-hat is undefined
where every pooled draw of an observable is equal; such an observable is *constant* over the
whole run (it carries no information and is left out of the verdict), or constant only over a
prefix (it is not converged there: nothing has yet been seen of it). The run converges at the
first point where every non-constant observable converges.

Computing R-hat at every draw would cost ``O(D^2)``; the evaluation points are geometric
(:func:`evaluation_points`, ``per_doubling`` points per doubling of the draws), so the total
cost is a constant times that of the last point, and the step at which convergence is declared
is resolved to a factor ``2 ** (1 / per_doubling)``.

:func:`chain_observables` builds the observables ``glauber trajectory`` records from the states
of the chains (energy, Hamming distance to each start, one-hot token indicators per site, PCA
coordinates); :func:`energy_of_states` is the energy (``-PLL`` or the raw-logit sum).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from glauber.core.arrays import JsonResult, take_rows, to_numpy
from glauber.core.conditionals import host_states, iter_log_conditionals
from glauber.core.protocol import ConditionalModel
from glauber.core.validation import check_positive_int
from glauber.errors import InvalidParameterError, MissingDependencyError

#: R-hat below this (strictly) and bulk ESS at least :data:`ESS_THRESHOLD`: converged.
RHAT_THRESHOLD = 1.01
#: Smallest bulk effective sample size (over all chains together) of a converged observable.
ESS_THRESHOLD = 400.0
#: Quantiles of the tail ESS (Vehtari et al. 2021, §4.3).
TAIL_PROBS = (0.05, 0.95)
#: Fewest draws per chain ArviZ's split R-hat accepts.
MIN_DRAWS = 4
#: Fewest chains R-hat compares.
MIN_CHAINS = 2
#: The optional dependency (``pip install 'glauber[diagnostics]'``).
EXTRA = "diagnostics"


def arviz_array_stats() -> Any:
    """ArviZ's array interface (``arviz_stats.base.array_stats``).

    Raises
    ------
    MissingDependencyError
        If ``arviz-stats`` is not installed (the ``diagnostics`` extra).
    """
    try:
        from arviz_stats.base import array_stats
    except ImportError as exc:
        raise MissingDependencyError(
            "convergence diagnostics need ArviZ (arviz-stats): install the extra with "
            f"pip install 'glauber[{EXTRA}]' (or pass --no-diagnostics)"
        ) from exc
    return array_stats


def check_observables(observables: Any) -> np.ndarray:
    """``observables`` as a float64 array ``[chains, draws, observables]``, checked.

    Raises
    ------
    InvalidParameterError
        If it is not 3-dimensional, has fewer than 2 chains, fewer than 4 draws, no observable,
        or a value that is not a finite real number (NaN, infinity).
    """
    try:
        arr = np.asarray(observables, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"observables must be an array of real numbers [chains, draws, observables]: {exc}"
        ) from exc
    if arr.ndim != 3:
        raise InvalidParameterError(
            f"observables must have shape [chains, draws, observables], got {arr.shape}; "
            "for one observable use x[:, :, None]"
        )
    chains, draws, count = arr.shape
    if chains < MIN_CHAINS:
        raise InvalidParameterError(
            f"R-hat compares chains: got {chains} chain(s), need at least {MIN_CHAINS} (run "
            "4 or more chains from dispersed starts)"
        )
    if draws < MIN_DRAWS:
        raise InvalidParameterError(
            f"split R-hat needs at least {MIN_DRAWS} draws per chain, got {draws}; run longer "
            "or record more often"
        )
    if count < 1:
        raise InvalidParameterError("observables has no observable (its last axis is empty)")
    bad = ~np.isfinite(arr)
    if bad.any():
        c, d, k = (int(v) for v in np.argwhere(bad)[0])
        raise InvalidParameterError(
            f"observable {k} of chain {c} at draw {d} is {arr[c, d, k]!r}, and "
            f"{int(bad.sum())} value(s) in all are not finite; R-hat and ESS need finite "
            "observables: drop or fix them"
        )
    return arr


def evaluation_points(draws: int, per_doubling: int = 2, first: int = MIN_DRAWS) -> np.ndarray:
    """Prefix lengths at which the diagnostics are evaluated: geometric, ending at ``draws``.

    ``first, first * r, first * r^2, ...`` (rounded, distinct) with ``r = 2 ** (1 /
    per_doubling)``, then ``draws``. Their sum is at most about ``draws / (1 - 1/r)``, so the
    diagnostics cost a constant times one evaluation at the end, not ``O(draws^2)``.

    Raises
    ------
    InvalidParameterError
        If ``draws < first`` or ``per_doubling < 1``.

    Examples
    --------
    >>> evaluation_points(40).tolist()
    [4, 6, 8, 11, 16, 23, 32, 40]
    """
    per_doubling = check_positive_int(per_doubling, "per_doubling")
    if draws < first:
        raise InvalidParameterError(f"need at least {first} draws, got {draws}")
    k = np.arange(int(math.floor(per_doubling * math.log2(draws / first))) + 1)
    pts = np.unique(np.round(first * 2.0 ** (k / per_doubling)).astype(np.int64))
    return np.unique(np.append(pts[pts <= draws], draws))


@dataclass(frozen=True)
class DiagnosticsResult(JsonResult):
    """Result of :func:`convergence_diagnostics`.

    Attributes
    ----------
    names : tuple of str
        The observables' names (``K``).
    chains : int
    draws : ndarray of int, shape (P,)
        Evaluation points: the number of draws per chain used at each.
    steps : ndarray of int, shape (P,)
        The recorded step of the last draw used at each point (``draws - 1`` when no steps were
        given).
    rhat, ess_bulk, ess_tail : ndarray, shape (P, K)
        ArviZ's rank-normalised split R-hat, bulk ESS and tail ESS; NaN where the observable's
        pooled draws are all equal up to that point (R-hat undefined).
    constant : ndarray of bool, shape (K,)
        Observables whose pooled draws are all equal over the whole run (left out of the verdict).
    first_converged : ndarray of int, shape (K,)
        Index into ``draws`` of the first point where the observable converges; -1 if never.
    converged_index : int
        First point where every non-constant observable converges; -1 if none (or if every
        observable is constant).
    rhat_threshold, ess_threshold : float
    """

    names: tuple[str, ...]
    chains: int
    draws: np.ndarray
    steps: np.ndarray
    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    constant: np.ndarray
    first_converged: np.ndarray
    converged_index: int
    rhat_threshold: float
    ess_threshold: float

    @property
    def converged_step(self) -> int | None:
        """The recorded step at which every non-constant observable has converged (None: not)."""
        return None if self.converged_index < 0 else int(self.steps[self.converged_index])

    def first_converged_step(self, k: int) -> int | None:
        """The first recorded step at which observable ``k`` converges (None: never)."""
        i = int(self.first_converged[k])
        return None if i < 0 else int(self.steps[i])

    def worst(self, index: int = -1) -> tuple[int, int]:
        """``(k_rhat, k_ess)``: the observables with the largest R-hat and the smallest bulk ESS
        at evaluation point ``index`` (non-constant observables; NaN R-hat counts as worst)."""
        live = np.flatnonzero(~self.constant)
        rh = np.where(np.isnan(self.rhat[index, live]), np.inf, self.rhat[index, live])
        es = np.where(np.isnan(self.ess_bulk[index, live]), -np.inf, self.ess_bulk[index, live])
        return int(live[np.argmax(rh)]), int(live[np.argmin(es)])

    def verdict(self) -> str:
        """One line: converged (and from which step), or the worst R-hat and ESS at the end."""
        live = int((~self.constant).sum())
        if live == 0:
            return ("not assessed: every observable stayed constant (the chains never moved); "
                    "run longer or at a higher temperature")
        step = self.converged_step
        criteria = f"R-hat < {self.rhat_threshold:g} and bulk ESS >= {self.ess_threshold:g}"
        if step is not None:
            return (f"converged from step {step}: {criteria} for all {live} non-constant "
                    f"observables ({self.chains} chains, evaluated at {len(self.draws)} points)")
        kr, ke = self.worst()
        return (f"NOT converged after step {int(self.steps[-1])}: worst R-hat "
                f"{_fmt(self.rhat[-1, kr])} ({self.names[kr]}), smallest bulk ESS "
                f"{_fmt(self.ess_bulk[-1, ke])} ({self.names[ke]}); {criteria} needed for all "
                f"{live} non-constant observables: run longer")

    def observable(self, k: int) -> dict:
        """The JSON entry of observable ``k`` (``rhat``, ``ess_bulk``, ``ess_tail`` along the
        evaluation points, and ``first_converged_step``)."""
        return {"rhat": self.rhat[:, k], "ess_bulk": self.ess_bulk[:, k],
                "ess_tail": self.ess_tail[:, k], "constant": bool(self.constant[k]),
                "first_converged_step": self.first_converged_step(k)}

    def report(self) -> dict:
        """The content of ``diagnostics.json`` (per observable: ``rhat``, ``ess_bulk``,
        ``ess_tail``, ``first_converged_step``; constant observables listed by name)."""
        live = np.flatnonzero(~self.constant)
        return {
            "chains": self.chains, "draws": self.draws, "steps": self.steps,
            "thresholds": {"rhat": self.rhat_threshold, "ess_bulk": self.ess_threshold},
            "method": {"rhat": "rank-normalised split R-hat (ArviZ, method='rank')",
                       "ess_bulk": "ArviZ ess(method='bulk')",
                       "ess_tail": f"ArviZ ess(method='tail', prob={TAIL_PROBS})"},
            "converged_step": self.converged_step, "verdict": self.verdict(),
            "observables": {self.names[k]: self.observable(int(k)) for k in live},
            "constant_observables": [self.names[k] for k in np.flatnonzero(self.constant)],
        }


def _fmt(v: float) -> str:
    return "undefined" if np.isnan(v) else f"{v:.4g}"


def convergence_diagnostics(
    observables: Any,
    names: Sequence[str] | None = None,
    steps: Sequence[int] | np.ndarray | None = None,
    points: Sequence[int] | np.ndarray | None = None,
    per_doubling: int = 2,
    rhat_threshold: float = RHAT_THRESHOLD,
    ess_threshold: float = ESS_THRESHOLD,
) -> DiagnosticsResult:
    """Rank-normalised split R-hat, bulk and tail ESS of each observable along the run (ArviZ).

    Parameters
    ----------
    observables : array, shape (chains, draws, observables)
        Draw ``d`` of chain ``c``: the observables of that chain's ``d``-th recorded state.
    names : sequence of str, optional
        One per observable (default ``"0"``, ``"1"``, ...).
    steps : sequence of int, optional
        The recorded step of each draw (default ``0, 1, ...``).
    points : sequence of int, optional
        Evaluation points (numbers of draws, each in ``4..draws``); default
        :func:`evaluation_points` ``(draws, per_doubling)``.
    per_doubling : int
        Points per doubling of the draws when ``points`` is not given.
    rhat_threshold, ess_threshold : float
        Convergence: ``R-hat < rhat_threshold`` and ``ESS_bulk >= ess_threshold``.

    Returns
    -------
    DiagnosticsResult

    Raises
    ------
    InvalidParameterError
        Fewer than 2 chains, fewer than 4 draws, a non-finite observable, names or steps of the
        wrong length, or an evaluation point outside ``4..draws``.
    MissingDependencyError
        If ArviZ (``arviz-stats``) is not installed.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> res = convergence_diagnostics(rng.normal(size=(4, 1000, 1)), names=["x"])
    >>> bool(res.rhat[-1, 0] < 1.01), res.converged_step is not None
    (True, True)
    """
    arr = check_observables(observables)
    chains, draws, count = arr.shape
    names = tuple(str(k) for k in range(count)) if names is None else tuple(map(str, names))
    if len(names) != count:
        raise InvalidParameterError(f"{len(names)} names for {count} observables")
    steps_arr = np.arange(draws) if steps is None else np.asarray(steps, dtype=np.int64)
    if steps_arr.shape != (draws,):
        raise InvalidParameterError(f"steps must have one entry per draw ({draws}), got "
                                    f"{steps_arr.shape}")
    pts = (evaluation_points(draws, per_doubling) if points is None
           else np.unique(np.asarray(points, dtype=np.int64)))
    if pts.size == 0 or pts[0] < MIN_DRAWS or pts[-1] > draws:
        raise InvalidParameterError(
            f"evaluation points must lie in {MIN_DRAWS}..{draws}, got {pts.tolist()}")
    stats = arviz_array_stats()
    pooled = arr.reshape(chains * draws, count)
    constant = pooled.min(axis=0) == pooled.max(axis=0)
    live = np.flatnonzero(~constant)
    shape = (len(pts), count)
    rhat, bulk, tail = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    series = np.ascontiguousarray(arr[:, :, live].transpose(2, 0, 1))  # [K_live, C, D]
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # 0/0 of a prefix that is constant
        for p, d in enumerate(pts):
            if live.size == 0:
                break
            x = series[:, :, :d]
            flat = x.reshape(live.size, -1)
            varies = flat.min(axis=1) < flat.max(axis=1)
            rhat[p, live] = np.where(varies, stats.rhat(x, method="rank"), np.nan)
            bulk[p, live] = np.where(varies, stats.ess(x, method="bulk"), np.nan)
            tail[p, live] = np.where(varies, stats.ess(x, method="tail", prob=TAIL_PROBS), np.nan)
    ok = (rhat < rhat_threshold) & (bulk >= ess_threshold)  # NaN compares False
    first = np.where(ok.any(axis=0), ok.argmax(axis=0), -1)
    first[constant] = -1
    every = ok[:, live].all(axis=1) if live.size else np.zeros(len(pts), dtype=bool)
    return DiagnosticsResult(
        names=names, chains=chains, draws=pts, steps=steps_arr[pts - 1], rhat=rhat,
        ess_bulk=bulk, ess_tail=tail, constant=constant, first_converged=first,
        converged_index=int(every.argmax()) if every.any() else -1,
        rhat_threshold=float(rhat_threshold), ess_threshold=float(ess_threshold),
    )


# ------------------------------------------------------------------------------ observables
def energy_of_states(
    model: ConditionalModel, states: Any, kind: str = "pll", batch_size: int = 4096
) -> np.ndarray:
    """The energy of each state: ``-PLL`` or the negative raw-logit sum, at ``tau = 1``.

    ``kind="pll"``: ``E(x) = -sum_k log p_1(x_k | x_{-k})`` (the pseudo-log-likelihood energy);
    ``kind="logits"``: ``E(x) = -sum_k s_k(x_k; x_{-k})`` (the raw scores, Goyal et al. 2021).
    Costs ``n`` conditional queries per state (``n`` forwards of an MLM), batched.

    Parameters
    ----------
    model : ConditionalModel
    states : array of int, shape (B, n)
    kind : {"pll", "logits"}
    batch_size : int
        Most queries per model call.

    Returns
    -------
    ndarray, shape (B,)

    Raises
    ------
    InvalidParameterError
        If ``kind`` is neither ``"pll"`` nor ``"logits"``.

    Examples
    --------
    >>> from glauber.toy_models import FunctionModel
    >>> m = FunctionModel(2, 2, lambda x, i: np.zeros((len(x), 2)))  # uniform conditionals
    >>> energy_of_states(m, np.array([[0, 1]])).round(6).tolist()  # -2 log(1/2)
    [1.386294]
    """
    if kind not in ("pll", "logits"):
        raise InvalidParameterError(f"energy kind must be 'pll' or 'logits', got {kind!r}")
    x = host_states(model, states)
    b, n = x.shape
    rows = np.repeat(np.arange(b), n)
    sites = np.tile(np.arange(n), b)
    out = np.zeros(b * n)
    if kind == "pll":
        for lo, hi, lp in iter_log_conditionals(
            model, b * n, lambda lo, hi: (x[rows[lo:hi]], sites[lo:hi]), 1.0, batch_size
        ):
            out[lo:hi] = to_numpy(take_rows(lp, x[rows[lo:hi], sites[lo:hi]]))
    else:
        for lo in range(0, b * n, check_positive_int(batch_size, "batch_size")):
            hi = min(lo + batch_size, b * n)
            s = model.scores(x[rows[lo:hi]], sites[lo:hi])
            out[lo:hi] = to_numpy(take_rows(s, x[rows[lo:hi], sites[lo:hi]]))
    return -out.reshape(b, n).sum(axis=1)


def chain_observables(
    states: np.ndarray,
    starts: np.ndarray,
    q: int,
    energy: np.ndarray | None = None,
    pca: np.ndarray | None = None,
    site_labels: Sequence[str] | None = None,
    token_labels: Sequence[str] | None = None,
) -> tuple[np.ndarray, list[str]]:
    """The observables of ``glauber trajectory``, ``[chains, records, K]``, and their names.

    In order: ``energy`` (if given, ``[R, C]``), ``hamming to start j`` for every start ``j``
    (1-based), ``PC1``/``PC2`` (if given, ``[R, C, 2]``), and the one-hot indicators
    ``x[i]=a`` of every (site, token) seen at that site with at least one other token (an
    indicator that never changes is constant in every chain and carries no information).

    Parameters
    ----------
    states : array of int, shape (R, C, n)
        The recorded states of the chains.
    starts : array of int, shape (S, n)
        The start states (usually one per chain).
    q : int
        Vocabulary size.
    site_labels, token_labels : sequence of str, optional
        Names of the sites (default 1-based positions) and tokens (default indices).

    Examples
    --------
    >>> x = np.array([[[0, 0], [0, 1]], [[0, 1], [0, 0]]])  # 2 records, 2 chains, 2 sites
    >>> obs, names = chain_observables(x, x[0], q=2)
    >>> names
    ['hamming to start 1', 'hamming to start 2', 'x[2]=0', 'x[2]=1']
    >>> obs[0, :, 0].tolist(), obs[0, :, 2].tolist()  # chain 1: distance to start 1, x[2]=0
    ([0.0, 1.0], [1.0, 0.0])
    """
    states = np.asarray(states, dtype=np.int64)
    r, c, n = states.shape
    starts = np.asarray(starts, dtype=np.int64)
    sites = [str(i + 1) for i in range(n)] if site_labels is None else list(site_labels)
    tokens = [str(a) for a in range(q)] if token_labels is None else list(token_labels)
    columns, names = [], []
    if energy is not None:
        columns.append(np.asarray(energy, dtype=np.float64)[:, :, None])
        names.append("energy")
    hamming = (states[:, :, None, :] != starts[None, None, :, :]).sum(axis=-1)
    columns.append(hamming.astype(np.float64))
    names += [f"hamming to start {j + 1}" for j in range(len(starts))]
    if pca is not None:
        columns.append(np.asarray(pca, dtype=np.float64))
        names += ["PC1", "PC2"]
    for i in range(n):
        seen = np.unique(states[:, :, i])
        if seen.size < 2:
            continue
        columns.append((states[:, :, i][:, :, None] == seen).astype(np.float64))
        names += [f"x[{sites[i]}]={tokens[a]}" for a in seen]
    obs = np.concatenate(columns, axis=2)  # [R, C, K]
    return np.ascontiguousarray(obs.transpose(1, 0, 2)), names


__all__ = [
    "DiagnosticsResult",
    "ESS_THRESHOLD",
    "EXTRA",
    "MIN_CHAINS",
    "MIN_DRAWS",
    "RHAT_THRESHOLD",
    "TAIL_PROBS",
    "arviz_array_stats",
    "chain_observables",
    "check_observables",
    "convergence_diagnostics",
    "energy_of_states",
    "evaluation_points",
]
