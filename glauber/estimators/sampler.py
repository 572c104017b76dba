"""Batched Glauber dynamics: many chains advanced together, sampled on the model's device.

One step of the chain (docs/theory.md, "Notation"): pick a site ``i`` uniformly at random and
resample ``x_i`` from ``p_tau(. | x_{-i})``; or a step of another kernel (``kernel=``: a sweep,
a shuffled pass, an ``epsilon`` mixture, a Metropolis-Hastings correction;
:mod:`glauber.core.kernel_spec`, stepped by :mod:`glauber.estimators.kernel_steps`), at a fixed
temperature or under an annealing schedule. :func:`glauber_chains` advances ``B`` chains at once;
every chain picks *its own* site (a site shared by the whole batch would make all chains one draw),
all ``B`` queries go into one :meth:`scores` call per step (``batch_size`` permitting), and the draw
is a Gumbel-max in the model's array library: a numpy ``Generator`` for toy models, a
``torch.Generator`` on the model's device for MLMs, so a torch model never sends states to the host
between steps.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from glauber.core.arrays import JsonResult, is_torch, to_numpy
from glauber.core.conditionals import host_states, trusted_inputs
from glauber.core.kernel_spec import KernelSpec, Schedule, check_kernel
from glauber.core.protocol import ConditionalModel
from glauber.core.validation import check_nonnegative_int, check_positive_int, check_tau
from glauber.errors import FrozenSitesError, InvalidParameterError, NothingSampledWarning
from glauber.estimators.batch_arrays import copy_states, to_model_library
from glauber.estimators.kernel_steps import KernelStepper
from glauber.estimators.random_draws import SeedLike, device_generator
from glauber.estimators.step_conditionals import FiniteGuard


def frozen_mask(n: int, frozen: Any) -> np.ndarray:
    """Boolean mask of frozen sites from ``None``, a sequence of site indices, or a bool mask [n].

    Raises
    ------
    InvalidParameterError
        If an index lies outside ``0..n-1`` or a mask has the wrong length.
    FrozenSitesError
        If every site is frozen.
    """
    mask = np.zeros(n, dtype=bool)
    if frozen is not None:
        arr = to_numpy(frozen) if is_torch(frozen) else np.asarray(frozen)
        if arr.dtype == bool:
            if arr.shape != (n,):
                raise InvalidParameterError(
                    f"a boolean frozen mask must have shape ({n},), got {arr.shape}"
                )
            mask = arr.copy()
        elif arr.size:
            idx = arr.astype(np.int64).ravel()
            if idx.min() < 0 or idx.max() >= n:
                raise InvalidParameterError(
                    f"frozen site indices must lie in 0..{n - 1}, got {idx.tolist()}"
                )
            mask[idx] = True
    if mask.all():
        raise FrozenSitesError(
            f"all {n} sites are frozen, so no site can be resampled; freeze fewer positions "
            "(e.g. only the prompt prefix)"
        )
    return mask


@dataclass(frozen=True)
class ChainsResult(JsonResult):
    """Result of :func:`glauber_chains`.

    Attributes
    ----------
    final_states : ndarray, shape (B, n)
        The states after ``n_steps`` steps (vocabulary indices, numpy on the host).
    trajectory : ndarray, shape (R, B, n)
        The states at the steps listed in ``recorded_steps`` (step 0 is the initial state).
    recorded_steps : ndarray, shape (R,)
    tau : float
    n_steps : int
    frozen : ndarray of bool, shape (n,)
        The sites that were never resampled.
    seed : int or None
        The integer seed, when one was given.
    kernel : dict
        ``{"kernel": name, "epsilon": epsilon}`` (:class:`~glauber.core.kernel_spec.KernelSpec`).
    schedule : dict or None
        The annealing schedule (``tau`` is then the temperature of the last step).
    acceptance : AcceptanceResult or None
        Metropolis-Hastings acceptance per site and overall (None for Gibbs kernels).
    final_energy : ndarray of float, shape (B,), or None
        The Metropolis-Hastings energy ``E`` of each final state, over the free sites (the
        cached value the last acceptance used; None for Gibbs kernels).
    """

    final_states: np.ndarray
    trajectory: np.ndarray
    recorded_steps: np.ndarray
    tau: float
    n_steps: int
    frozen: np.ndarray
    seed: int | None
    kernel: dict | None = None
    schedule: dict | None = None
    acceptance: Any = None
    final_energy: np.ndarray | None = None


def glauber_chains(
    model: ConditionalModel,
    tau: float,
    init_states: Any,
    n_steps: int,
    seed: SeedLike = 0,
    record_every: int | None = None,
    frozen: Sequence[int] | np.ndarray | None = None,
    batch_size: int = 4096,
    progress: Callable[[int], Any] | None = None,
    kernel: str | KernelSpec = "random",
    epsilon: float | None = None,
    step_offset: int = 0,
) -> ChainsResult:
    """Run ``B`` independent Glauber chains in parallel (the kernel of docs/theory.md, "Notation",
    or another, ``kernel=``).

    Each step, every chain draws its own site uniformly from the non-frozen sites and resamples it
    from ``p_tau(. | x_{-i})`` (Gumbel-max). All chains share one :meth:`scores` call per step
    (several if ``B > batch_size``). Frozen sites (e.g. a prompt prefix, paper Appendix C.4) are
    never resampled; the kernel is then Glauber dynamics on the free sites.

    Parameters
    ----------
    model : ConditionalModel
    tau : float or Schedule
        Temperature > 0, or an annealing :class:`~glauber.core.kernel_spec.Schedule`: step ``t``
        runs at ``tau.tau_at(step_offset + t)``.
    init_states : array of int, shape (B, n)
        Initial states (vocabulary indices), one per chain.
    n_steps : int
        Number of steps, >= 0 (a step of the kernel: one site of every chain for the random
        scan, one pass over the free sites for a sweep or a shuffled scan). ``0`` returns the
        initial states and warns (:class:`~glauber.errors.NothingSampledWarning`).
    seed : int or numpy.random.Generator
        Same seed, same chains. Torch models draw from a ``torch.Generator`` on their device
        seeded from it.
    record_every : int, optional
        Record the states every ``record_every`` steps (step 0 always). ``None`` records only
        steps 0 and ``n_steps``.
    frozen : sequence of int or bool mask [n], optional
        Sites never resampled.
    batch_size : int
        Most rows per :meth:`scores` call.
    progress : callable, optional
        ``progress(1)`` after every step (e.g. a tqdm bar's ``update``); draws nothing, so the
        chains are the same with or without it.
    kernel : str or KernelSpec
        ``random`` (default), ``sweep``, ``shuffled``, ``mh:pll``, ``mh:logits`` (see
        :mod:`glauber.core.kernel_spec`). Metropolis-Hastings energies sum over the free sites;
        a step costs ``m`` forwards per chain (``m`` free sites) where a Gibbs step costs one.
    epsilon : float, optional
        Probability of a uniform redraw at each site update, in ``[0, 1]`` (default 0, or the
        spec's own).
    step_offset : int
        Steps already run (a resumed annealing schedule continues from there), >= 0.

    Returns
    -------
    ChainsResult

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and positive.
    InvalidParameterError
        If ``n_steps < 0``, ``record_every < 1``, ``batch_size < 1`` or ``init_states`` is empty.
    InvalidKernelError, InvalidProbabilityError
        On an unknown kernel or ``epsilon`` outside ``[0, 1]`` (before any model call).
    FrozenSitesError
        If every site is frozen (an empty set of sites to resample).
    SequenceLengthError, VocabularyError
        If ``init_states`` is not ``[B, n]`` with entries in ``0..q-1``.
    NonFiniteScoresError
        If the model returns NaN or infinite scores (for torch models, detected after the run:
        the loop never waits on the host).

    Warns
    -----
    NothingSampledWarning
        If ``n_steps == 0``: nothing is sampled, the result holds the initial states.

    Examples
    --------
    >>> import numpy as np
    >>> from glauber.toy_models import FunctionModel
    >>> m = FunctionModel(3, 2, lambda x, i: np.zeros((len(x), 2)))
    >>> r = glauber_chains(m, 1.0, np.zeros((4, 3), dtype=int), n_steps=10, seed=1)
    >>> r.final_states.shape, r.recorded_steps.tolist()
    ((4, 3), [0, 10])
    """
    spec = check_kernel(kernel, epsilon)
    schedule = tau if isinstance(tau, Schedule) else None
    tau = schedule.tau_at(step_offset + 1) if schedule is not None else check_tau(tau)
    n_steps = check_nonnegative_int(n_steps, "n_steps")
    step_offset = check_nonnegative_int(step_offset, "step_offset")
    batch_size = check_positive_int(batch_size, "batch_size")
    if record_every is not None:
        record_every = check_positive_int(record_every, "record_every")
    x0 = host_states(model, init_states)
    if x0.shape[0] == 0:
        raise InvalidParameterError("init_states is empty; pass at least one initial state")
    frozen_sites = frozen_mask(model.n, frozen)
    free = np.flatnonzero(~frozen_sites)
    if n_steps == 0:
        warnings.warn(NothingSampledWarning(
            "glauber_chains(n_steps=0) samples nothing: the states returned are the initial "
            "states; pass n_steps >= 1"), stacklevel=2)
    rng = np.random.default_rng(seed)

    states = to_model_library(model, x0, int(free[0]), tau)
    gen = device_generator(states, rng)
    guard = FiniteGuard(model)
    snapshots = [copy_states(states)]
    steps = [0]
    temperatures = (schedule.temperatures(step_offset + 1, n_steps) if schedule is not None
                    else np.full(n_steps, tau))
    stepper = KernelStepper(model, spec, free, states, gen, batch_size, guard)
    with trusted_inputs(model):
        for t in range(1, n_steps + 1):
            stepper.step(states, float(temperatures[t - 1]))
            if progress is not None:
                progress(1)
            if (record_every is not None and t % record_every == 0) or (
                record_every is None and t == n_steps
            ):
                snapshots.append(copy_states(states))
                steps.append(t)
    guard.check()
    trajectory = np.stack([to_numpy(s).astype(np.int64) for s in snapshots])
    return ChainsResult(
        final_states=to_numpy(states).astype(np.int64),
        trajectory=trajectory,
        recorded_steps=np.asarray(steps, dtype=np.int64),
        tau=float(temperatures[-1]) if n_steps else tau,
        n_steps=n_steps,
        frozen=frozen_sites,
        seed=int(seed) if isinstance(seed, (int, np.integer)) else None,
        kernel=spec.to_dict(),
        schedule=None if schedule is None else schedule.to_dict(),
        acceptance=stepper.acceptance(),
        final_energy=None if stepper.energy is None else to_numpy(stepper.energy),
    )


__all__ = [
    "ChainsResult",
    "frozen_mask",
    "glauber_chains",
]
