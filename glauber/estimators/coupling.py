"""Same-site maximal coupling of Glauber chains, and coupling (coalescence) times.

The coupling of Theorem 5's proof (and of the paper's phase diagram, §6.1): both chains of a pair
update the *same* uniformly chosen site ``i``; their two conditionals ``p = p_tau(. | x_{-i})`` and
``q = p_tau(. | y_{-i})`` are coupled maximally, so the new tokens differ with probability exactly
``||p - q||_TV`` (Levin–Peres–Wilmer 2nd ed., Proposition 4.7). Different pairs choose independent
sites. Both chains of every pair go into one :meth:`scores` call per step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from glauber.core.arrays import JsonResult, is_torch, like, namespace, to_numpy
from glauber.core.conditionals import host_states, trusted_inputs
from glauber.core.kernel_spec import KernelSpec, check_kernel
from glauber.core.protocol import ConditionalModel
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import InvalidParameterError
from glauber.estimators.batch_arrays import concat, copy_states, to_model_library
from glauber.estimators.kernel_steps import KernelStepper
from glauber.estimators.maximal_coupling import maximal_coupling_step
from glauber.estimators.random_draws import SeedLike, device_generator, random_sites
from glauber.estimators.step_conditionals import FiniteGuard, step_log_conditionals


def coupled_step(
    model: ConditionalModel,
    tau: float,
    x: Any,
    y: Any,
    generator: Any,
    batch_size: int = 4096,
    guard: FiniteGuard | None = None,
) -> tuple[Any, Any]:
    """One step of same-site maximally coupled Glauber chains for ``P`` pairs ``(x[p], y[p])``.

    Each pair draws its own site; ``x`` and ``y`` are stacked into one query batch. Pairs that
    already agree everywhere stay equal (they see the same conditional).

    Parameters
    ----------
    model : ConditionalModel
    tau : float
    x, y : arrays of int, shape (P, n)
        In the model's array library (see
        :func:`glauber.estimators.batch_arrays.to_model_library`); not modified.
    generator : numpy.random.Generator or torch.Generator
    batch_size : int
        Most rows per :meth:`scores` call (the step asks ``2P`` rows).
    guard : FiniteGuard, optional
        Defer the finiteness check of the scores to the caller's sync points (default: check
        now, one host synchronisation on torch).

    Returns
    -------
    (x1, y1) : new arrays, shape (P, n)
    """
    xp = namespace(x)
    n_pairs = int(x.shape[0])
    sites = random_sites(x, like(x, np.arange(model.n)), n_pairs, generator)
    lp = step_log_conditionals(
        model, concat([x, y]), concat([sites, sites]), tau, batch_size, check_finite=guard is None
    )
    if guard is not None:
        guard.update(lp)
    a, b = maximal_coupling_step(lp[:n_pairs], lp[n_pairs:], generator)
    b = xp.where(xp.all(x == y, axis=1), a, b)
    rows = like(x, np.arange(n_pairs))
    x1, y1 = copy_states(x), copy_states(y)
    x1[rows, sites] = a
    y1[rows, sites] = b
    return x1, y1


@dataclass(frozen=True)
class CouplingResult(JsonResult):
    """Result of :func:`coupling_time`.

    Attributes
    ----------
    times : ndarray of int, shape (P,)
        Steps until the pair first agreed (``d_H = 0``); ``budget`` where censored.
    censored : ndarray of bool, shape (P,)
        True where the pair had not agreed within ``budget`` steps.
    n_censored : int
    median : float or None
        Median coupling time with censored pairs counted as ``> budget`` (all share one censoring
        time, so this is the Kaplan–Meier median); ``None`` when it exceeds the budget.
    median_exceeds_budget : bool
    budget : int
    tau : float
    """

    times: np.ndarray
    censored: np.ndarray
    n_censored: int
    median: float | None
    median_exceeds_budget: bool
    budget: int
    tau: float


def coupling_time(
    model: ConditionalModel,
    tau: float,
    x0: Any,
    y0: Any,
    budget: int,
    seed: SeedLike = 0,
    batch_size: int = 4096,
    sync_every: int = 50,
    progress: Callable[[int, int], Any] | None = None,
    kernel: str | KernelSpec = "random",
    epsilon: float | None = None,
) -> CouplingResult:
    """Steps to agreement of same-site maximally coupled pairs of chains (paper §6.1 protocol).

    A coupling time bounds mixing: ``d(t) <= max_{x,y} P(T_couple > t)`` (Levin–Peres–Wilmer
    2nd ed., Theorem 5.4 and Corollary 5.5; the coupled chains stay together once they meet), so
    from worst-case starts coupling times bound ``t_mix``; from sampled starts they are a
    diagnostic (the paper's phase diagram), not a bound.

    Parameters
    ----------
    model : ConditionalModel
    tau : float
        Temperature > 0.
    x0, y0 : arrays of int, shape (P, n) or (n,)
        Starting states of the ``P`` pairs.
    budget : int
        Most steps, >= 1; pairs not agreeing by then are censored.
    seed : int or numpy.random.Generator
        Same seed, same result.
    batch_size : int
        Most rows per :meth:`scores` call (each step asks two rows per unfinished pair).
    sync_every : int
        Check for finished pairs (a host round-trip on torch) and drop them every this many steps.
    progress : callable, optional
        Called as ``progress(t, budget)`` at each check (draws no random numbers, so the result
        does not depend on it).
    kernel : str or KernelSpec
        The kernel both chains run (:mod:`glauber.core.kernel_spec`; default the paper's): a
        pair updates the same sites (the same order for a shuffled pass), maximally couples its
        site laws (the proposals, for Metropolis-Hastings, with one shared uniform for the
        acceptance); steps are the kernel's (passes for a sweep).
    epsilon : float, optional
        Probability of a uniform redraw at each site update, in ``[0, 1]``.

    Returns
    -------
    CouplingResult

    Raises
    ------
    InvalidParameterError
        If ``budget``, ``batch_size`` or ``sync_every`` is < 1, or ``x0`` and ``y0`` differ in
        shape.
    InvalidTemperatureError, SequenceLengthError, VocabularyError
        On a bad temperature or bad states.
    InvalidKernelError, InvalidProbabilityError
        On an unknown kernel or ``epsilon`` outside ``[0, 1]``.
    NonFiniteScoresError
        If the model returns NaN or infinite scores (on torch, detected at the next sync point).
    """
    spec = check_kernel(kernel, epsilon)
    tau = check_tau(tau)
    budget = check_positive_int(budget, "budget")
    batch_size = check_positive_int(batch_size, "batch_size")
    sync_every = check_positive_int(sync_every, "sync_every")
    xs = host_states(model, _as_2d(x0))
    ys = host_states(model, _as_2d(y0))
    if xs.shape != ys.shape or xs.shape[0] == 0:
        raise InvalidParameterError(
            f"x0 and y0 must hold the same (non-zero) number of starting states, got shapes "
            f"{xs.shape} and {ys.shape}"
        )
    n_pairs = xs.shape[0]
    rng = np.random.default_rng(seed)
    times = np.full(n_pairs, -1, dtype=np.int64)
    times[(xs == ys).all(axis=1)] = 0
    active = np.flatnonzero(times < 0)
    if active.size:
        stacked = to_model_library(model, np.concatenate([xs[active], ys[active]]), 0, tau)
        gen = device_generator(stacked, rng)
        xp = namespace(stacked)
        hit = like(stacked, np.full(active.size, -1))
        guard = FiniteGuard(model)
        stepper = KernelStepper(model, spec, np.arange(model.n), stacked, gen, batch_size, guard,
                                paired=True)
        with trusted_inputs(model):
            for t in range(1, budget + 1):
                stepper.step(stacked, tau)
                P = int(stacked.shape[0]) // 2
                x, y = stacked[:P], stacked[P:]
                hit = xp.where(xp.all(x == y, axis=1) & (hit < 0), t, hit)
                if t % sync_every == 0 or t == budget:
                    guard.check()
                    if progress is not None:
                        progress(t, budget)
                    h = to_numpy(hit)
                    times[active[h >= 0]] = h[h >= 0]
                    keep = np.flatnonzero(h < 0)
                    if keep.size == 0:
                        break
                    if keep.size < active.size:
                        sel = like(x, keep)
                        stacked, hit = concat([x[sel], y[sel]]), hit[sel]
                        stepper.keep_pairs(sel)
                        active = active[keep]
    censored = times < 0
    times = np.where(censored, budget, times)
    med = float(np.median(np.where(censored, np.inf, times.astype(np.float64))))
    return CouplingResult(
        times=times,
        censored=censored,
        n_censored=int(censored.sum()),
        median=med if np.isfinite(med) else None,
        median_exceeds_budget=not np.isfinite(med),
        budget=budget,
        tau=tau,
    )


def _as_2d(states: Any) -> Any:
    states = states if is_torch(states) else np.asarray(states)
    return states[None, :] if states.ndim == 1 else states


__all__ = [
    "coupled_step",
    "coupling_time",
    "CouplingResult",
]
