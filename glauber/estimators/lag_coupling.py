"""Lag-coupling estimates of an upper bound on the distance to stationarity at every step.

Biswas, Jacob and Vanetti (2019), "Estimating convergence of Markov chains with L-lag
couplings" (NeurIPS), Theorem 2.5: let ``X`` and ``Y`` start independently from ``pi_0``; run
``X`` alone for ``L`` steps, then step ``(X_s, Y_{s-L})`` with a coupling of the kernel that
keeps them together once they meet, and let ``tau^(L) = inf{s > L : X_s = Y_{s-L}}``. Then

    ``TV(pi_t, pi) <= E[max(0, ceil((tau^(L) - L - t) / L))]``

for every ``t >= 0``, where ``pi_t`` is the law of the chain after ``t`` steps from ``pi_0``.
The coupling here is the project's same-site maximal coupling
(:func:`glauber.estimators.coupling.coupling_time`): both chains update the same site and draw
from the maximal coupling of their two conditionals, so met pairs stay met. With ``T`` the
meeting time of the pair ``(X_L, Y_0)``, ``tau^(L) - L = max(T, 1)`` (the meeting is counted
from the first coupled step), and the bound at ``t`` is
``E[max(0, ceil((max(T, 1) - t) / L))]``.

The expectation is estimated by the mean over ``n_pairs`` independent pairs, with a one-sided
upper confidence limit at level ``level``: ``mean + mu_3 / (6 sd^2 N) + z sd / sqrt(N)``
(Johnson's skewness-corrected t limit, Johnson 1978, "Modified t tests and confidence
intervals for asymmetrical populations", JASA 73: the per-pair values are i.i.d. with finite
moments when ``T`` has a geometric tail, as it has on a finite irreducible chain, and
right-skewed on a metastable chain, where the plain central-limit limit undercovers), plus
``-log(1 - level) / N`` (3 / N at 95%), the rule of three for a pair still apart at ``t`` that
the sample did not show, counted once (without it, a step at which every pair had met would
read "TV <= 0"). Everything here is an **estimate** of an upper bound, never a rigorous bound:
the confidence limit holds in the sampling sense only, a rare escape that no pair showed is
missed, and the bound itself is only as tight as the coupling.
``benchmarks/lag_coupling_coverage.py`` measures its coverage
against the exact TV of toys and exact windows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import norm

from glauber.core.arrays import JsonResult
from glauber.core.conditionals import host_states
from glauber.core.protocol import ConditionalModel
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import ConvergenceError, InvalidParameterError
from glauber.estimators.coupling import coupling_time
from glauber.estimators.sampler import glauber_chains

#: Fewest coupled pairs for a confidence limit (the CLT on fewer is not worth stating).
MIN_PAIRS = 20
#: Default steps a pair may take to meet before the estimate is refused.
DEFAULT_MAX_STEPS = 10_000


@dataclass(frozen=True)
class LagCouplingBound(JsonResult):
    """The lag-coupling estimate of an upper bound on ``TV(pi_t, pi)`` (Biswas-Jacob-Vanetti
    2019, Theorem 2.5), at every step ``t`` of ``steps``.

    Attributes
    ----------
    tau : float
    lag : int
        ``L``: the head start of ``X``.
    n_pairs : int
    level : float
        Confidence level of ``upper`` (one-sided).
    steps : ndarray of int
        The steps ``t`` evaluated: ``0 .. max meeting time``.
    estimate : ndarray of float
        The mean over pairs of ``max(0, ceil((T - t) / L))``, capped at 1 (a TV).
    upper : ndarray of float
        Its upper confidence limit at ``level``, capped at 1.
    meeting_times : ndarray of int
        ``tau^(L) - L`` of each pair (>= 1).
    rigorous : bool
        Always False: an estimate.
    """

    tau: float
    lag: int
    n_pairs: int
    level: float
    steps: np.ndarray
    estimate: np.ndarray
    upper: np.ndarray
    meeting_times: np.ndarray
    rigorous: bool = False

    def at(self, t: int) -> tuple[float, float]:
        """``(estimate, upper)`` at step ``t >= 0`` (0 and the allowance beyond the last
        meeting time)."""
        t = int(t)
        if t < 0:
            raise InvalidParameterError(f"the step t must be >= 0, got {t}")
        if t < len(self.steps):
            return float(self.estimate[t]), float(self.upper[t])
        return 0.0, float(self.upper[-1])

    def first_below(self, eps: float) -> int | None:
        """The first step at which the upper confidence limit is at most ``eps`` (None if it
        never is, at the steps evaluated)."""
        hit = np.flatnonzero(self.upper <= eps)
        return None if hit.size == 0 else int(hit[0])

    def summary(self, t: int) -> str:
        """``"TV <= b at step t (95% CI; an estimate, not rigorous)"``."""
        _, b = self.at(t)
        return (f"TV <= {b:.3g} at step {int(t):,} ({self.level:.0%} CI, lag {self.lag}, "
                f"{self.n_pairs} pairs; an estimate, not rigorous)")


def lag_coupling_bound(
    model: ConditionalModel,
    tau: float,
    starts: Any,
    lag: int = 1,
    n_pairs: int = 100,
    max_steps: int = DEFAULT_MAX_STEPS,
    level: float = 0.95,
    seed: int = 0,
    batch_size: int = 4096,
) -> LagCouplingBound:
    """Estimate an upper bound on ``TV(law of X_t, pi)`` for Glauber dynamics started from
    ``starts`` (Biswas-Jacob-Vanetti 2019, Theorem 2.5; module docstring).

    Parameters
    ----------
    model : ConditionalModel
        Toy or masked LM (the chains run through
        :func:`~glauber.estimators.sampler.glauber_chains` and
        :func:`~glauber.estimators.coupling.coupling_time`).
    tau : float
        Temperature > 0.
    starts : array of int, shape (n,) or (S, n)
        The start, or a start distribution given by ``S`` states (uniform over the rows):
        ``X_0`` and ``Y_0`` of each pair are drawn from it independently.
    lag : int
        ``L >= 1``. A larger lag gives a tighter bound at large ``t`` (fewer pairs still apart
        there count ``ceil((T - t) / L)`` times fewer).
    n_pairs : int
        Independent coupled pairs, ``>=`` :data:`MIN_PAIRS`.
    max_steps : int
        Most coupled steps a pair may take; a pair still apart then makes the estimate
        impossible (its meeting time is unknown).
    level : float
        Confidence level of the upper limit, in (0, 1).
    seed : int
        Same seed, same result.
    batch_size : int
        Most rows per model call.

    Returns
    -------
    LagCouplingBound

    Raises
    ------
    InvalidParameterError
        If ``lag < 1``, ``n_pairs < MIN_PAIRS`` (raise ``n_pairs``), ``level`` is not in (0, 1)
        or ``starts`` is empty.
    ConvergenceError
        If some pair did not meet within ``max_steps`` (raise ``max_steps`` or ``lag``).
    InvalidTemperatureError, SequenceLengthError, VocabularyError
        On a bad temperature or bad states.

    Examples
    --------
    >>> import networkx as nx
    >>> from glauber.toy_models import IsingModel
    >>> b = lag_coupling_bound(IsingModel(nx.cycle_graph(4)), 4.0, [0, 0, 0, 0], lag=5)
    >>> b.rigorous, bool(b.upper[0] <= 1.0), b.first_below(0.25) is not None
    (False, True, True)
    """
    tau = check_tau(tau)
    lag, n_pairs = check_lag(lag, n_pairs)
    max_steps = check_positive_int(max_steps, "max_steps")
    if not 0.0 < float(level) < 1.0:
        raise InvalidParameterError(f"level must be in (0, 1), got {level!r}")
    pool = host_states(model, np.atleast_2d(np.asarray(starts)))
    if pool.shape[0] == 0:
        raise InvalidParameterError("starts is empty: give a start state or some states")
    rng = np.random.default_rng(seed)
    x0 = pool[rng.integers(pool.shape[0], size=n_pairs)]
    y0 = pool[rng.integers(pool.shape[0], size=n_pairs)]
    ahead = glauber_chains(model, tau, x0, lag, seed=rng, batch_size=batch_size).final_states
    met = coupling_time(model, tau, ahead, y0, max_steps, seed=rng, batch_size=batch_size)
    if met.n_censored:
        raise ConvergenceError(
            f"{met.n_censored} of {n_pairs} lag-{lag} coupled pairs did not meet within "
            f"max_steps = {max_steps:,} coupled steps, so their meeting times (and the bound) "
            "are unknown; raise max_steps, or the lag (a head start of about t_mix meets "
            "sooner)")
    # tau^(L) > L: a pair with X_L = Y_0 meets at its first coupled step (it stays together)
    times = np.maximum(np.asarray(met.times, dtype=np.int64), 1)
    steps = np.arange(int(times.max()) + 1)
    values = np.maximum(0, np.ceil((times[None, :] - steps[:, None]) / lag))  # [t, pair]
    mean = values.mean(axis=1)
    sd = values.std(axis=1, ddof=1)
    third = ((values - mean[:, None]) ** 3).mean(axis=1)
    skew = np.divide(third, 6.0 * sd**2 * n_pairs, out=np.zeros_like(mean), where=sd > 0)
    z = float(norm.ppf(level))
    allowance = -math.log1p(-float(level)) / n_pairs  # a pair still apart, unseen
    upper = mean + np.maximum(skew, 0.0) + z * sd / math.sqrt(n_pairs) + allowance
    return LagCouplingBound(tau=tau, lag=lag, n_pairs=n_pairs, level=float(level), steps=steps,
                            estimate=np.minimum(mean, 1.0), upper=np.minimum(upper, 1.0),
                            meeting_times=times)


def check_lag(lag: Any, n_pairs: Any) -> tuple[int, int]:
    """``(lag, n_pairs)`` checked: integers, ``lag >= 1`` and ``n_pairs >=``
    :data:`MIN_PAIRS` (a command checks them before its run).

    Raises
    ------
    InvalidParameterError
        Saying which to raise, and to what.
    """
    return (_check_int(lag, 1, "lag", "a lag of at least 1 step"),
            _check_int(n_pairs, MIN_PAIRS, "n_pairs",
                       f"at least {MIN_PAIRS} coupled pairs for a confidence limit"))


def _check_int(value: Any, least: int, name: str, need: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or int(value) < least:
        raise InvalidParameterError(f"{name} = {value!r} is too small for a lag-coupling bound: "
                                    f"it needs {need}; raise {name} to >= {least}")
    return int(value)


__all__ = [
    "DEFAULT_MAX_STEPS",
    "LagCouplingBound",
    "MIN_PAIRS",
    "check_lag",
    "lag_coupling_bound",
]
