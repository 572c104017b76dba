"""The exact values of one kernel on a small chain (:class:`KernelSummary`): what
``glauber certify --kernel K`` adds beside the paper's kernel, and what the kernels section of
docs/results.md tabulates.

For a chain of any kernel (:class:`~glauber.exact.chain.ExactChain` with ``kernel=``): its
stationary law's mode and mass, the exact worst-start ``t_mix`` (or, where stepping would take
too long, a bracket), the absolute spectral gap, the total-variation distance from its law to
the paper's kernel's law and to the two Metropolis-Hastings targets ``exp(-E/tau)/Z`` (how far a
plain Gibbs sampler is from the "energy" its users think it samples), the exact acceptance
probability of a Metropolis-Hastings step at stationarity, and, under an annealing schedule, the
worst-start distance after the schedule to the law of its last temperature.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from glauber.core.arrays import JsonResult
from glauber.core.enumeration import all_states
from glauber.core.kernel_spec import Schedule, parse_schedule
from glauber.errors import BracketOnlyError, StateSpaceTooLargeError, StepLimitError
from glauber.exact.chain import ExactChain
from glauber.exact.mixing import MAX_DENSE_STATES
from glauber.exact.spectral import spectral_tmix_lower_bound
from glauber.exact.unavailable import UNAVAILABLE, Attempts

#: Steps after which ``t_mix`` stops stepping every start (chains that neither square nor
#: factor, e.g. a Metropolis-Hastings window of 8,000 states); a bracket is reported instead.
SUMMARY_TMIX_MAX_STEPS = 300
#: Largest chain whose annealed worst-start distance is computed (every start stepped).
ANNEAL_MAX_STATES = 1024


@dataclass(frozen=True)
class KernelSummary(JsonResult):
    """Exact values of one kernel at one temperature (see the module docstring).

    Attributes
    ----------
    kernel : str
        The kernel's name (:attr:`glauber.core.kernel_spec.KernelSpec.name`).
    epsilon, tau : float
    num_states : int
    tmix : int or None
        Exact worst-start ``t_mix(eps)`` in the kernel's steps (passes for a scan), or None.
    tmix_lower : int or None
        ``tmix`` when computed; else a rigorous lower bound (the step limit plus one, or the
        spectral bound of :func:`glauber.exact.spectral.spectral_tmix_lower_bound`).
    tmix_upper : int or None
        ``tmix`` when computed; else, for a reversible chain (a random scan of
        Metropolis-Hastings updates, or one found reversible), ``ceil(t_rel log(1/(eps pi_min)))``
        (Levin–Peres–Wilmer 2nd ed., Theorem 12.4; from the float64 gap: an estimate).
    absolute_gap : float or None
        ``1 - max{|lambda| : lambda != 1}`` of one step.
    mode_state : tuple of int
    mode_mass : float
        The stationary law's most likely state and its mass.
    tv_to_random_scan : float or None
        TV between this kernel's law and the paper's kernel's (None for the paper's kernel).
    tv_to_pll_target, tv_to_logits_target : float
        TV between this kernel's law and ``exp(-E/tau)/Z`` for the PLL and the logits energies.
    acceptance : float or None
        Metropolis-Hastings (random scan): the probability that a step from the stationary law
        accepts its proposal (a proposal of the current token counts as accepted).
    anneal : dict or None
        Under a schedule: ``{"schedule", "steps", "tv_worst_start"}``, the worst-start TV after
        the schedule to the stationary law of its last temperature.
    notes : tuple of str
        What could not be computed, and why.
    """

    kernel: str
    epsilon: float
    tau: float
    num_states: int
    tmix: int | None
    tmix_lower: int | None
    tmix_upper: int | None
    absolute_gap: float | None
    mode_state: tuple[int, ...]
    mode_mass: float
    tv_to_random_scan: float | None
    tv_to_pll_target: float
    tv_to_logits_target: float
    acceptance: float | None
    anneal: dict | None
    notes: tuple[str, ...]


def kernel_summary(chain: ExactChain, eps: float = 0.25,
                   max_steps: int = SUMMARY_TMIX_MAX_STEPS,
                   anneal: Schedule | str | None = None) -> KernelSummary:
    """The :class:`KernelSummary` of ``chain`` (any kernel).

    Raises
    ------
    NonPositiveConditionalError, NonFiniteScoresError
        If the chain itself cannot be built.
    """
    attempt = Attempts()
    notes = attempt.notes
    pi = chain.stationary()
    mode = int(np.argmax(pi))
    gap = attempt("spectral gap", chain.absolute_spectral_gap)
    lower = [spectral_tmix_lower_bound(gap, eps)]
    try:
        if lower[0] > max_steps and _steps(chain):  # stepping could not reach it: not tried
            raise StepLimitError("beyond the spectral lower bound", max_steps)
        tmix = int(chain.mixing_time(eps, max_steps=max_steps))
    except StepLimitError as exc:
        tmix = None
        lower.append(exc.steps + 1)
        notes.append(f"t_mix: not within {exc.steps} steps of every start's point mass (the "
                     "chain neither squares nor factors): bracketed")
    except (*UNAVAILABLE, BracketOnlyError) as exc:
        tmix = None
        notes.append(f"t_mix: {exc}")
    upper = tmix
    # reversible: a random scan of Metropolis-Hastings updates by construction (docs/theory.md,
    # row mh-target), else as checked numerically
    if tmix is None and gap is not None and gap > 0 and (
            (chain.kernel.metropolis and chain.kernel.scan == "random")
            or attempt("reversibility", chain.is_reversible)):
        upper = math.ceil(math.log(1.0 / (eps * float(pi.min()))) / gap)
    plain = None
    if not chain.kernel.is_plain:
        plain = attempt("the paper's kernel", lambda: sibling(chain, "random", 0.0).stationary())

    # distances from the law solved from P: a law read from its closed form (a
    # Metropolis-Hastings random scan's is its target) would be compared with itself
    solved = chain.solved_stationary().pi

    def tv(other: np.ndarray | None) -> float | None:
        return None if other is None else 0.5 * float(np.abs(solved - other).sum())

    return KernelSummary(
        kernel=chain.kernel.name, epsilon=chain.kernel.epsilon, tau=chain.tau,
        num_states=chain.num_states, tmix=tmix,
        tmix_lower=tmix if tmix is not None else max(lower),
        tmix_upper=upper, absolute_gap=gap,
        mode_state=tuple(int(v) for v in chain.states()[mode]), mode_mass=float(pi[mode]),
        tv_to_random_scan=tv(plain),
        tv_to_pll_target=tv(chain.target("pll")),
        tv_to_logits_target=tv(chain.target("logits")),
        acceptance=_acceptance(chain, pi),
        anneal=None if anneal is None else attempt(
            "annealed distance", lambda: _annealed(chain, parse_schedule(anneal))),
        notes=tuple(notes),
    )


def _steps(chain: ExactChain) -> bool:
    """Whether ``t_mix`` would step every start (neither squaring nor a factor applies)."""
    return chain.num_states > MAX_DENSE_STATES and not chain.factored


def sibling(chain: ExactChain, kernel: str, epsilon: float) -> ExactChain:
    """``chain`` under another kernel: the same model and temperature, sharing its score table
    (one table serves every kernel)."""
    other = ExactChain(chain.model, chain.tau, chain.num_states, chain.batch_size, chain.cache,
                       kernel=kernel, epsilon=epsilon)
    other._cache["scores"] = chain.scores()
    return other


def _acceptance(chain: ExactChain, pi: np.ndarray) -> float | None:
    """``1 - sum_x pi(x) (1/n) sum_i [K_i(x, x) - r_i(x_i | x_{-i})]`` for a random-scan
    Metropolis-Hastings chain: the rejection mass of each site update, averaged."""
    if not chain.kernel.metropolis or chain.kernel.scan != "random":
        return None
    own = all_states(chain.n, chain.q).T[:, :, None]
    stay = np.take_along_axis(chain.site_rows(), own, axis=2)[..., 0]
    proposal = sibling(chain, "random", chain.kernel.epsilon).site_rows()
    proposed_own = np.take_along_axis(proposal, own, axis=2)[..., 0]
    return float(1.0 - (pi * (stay - proposed_own).mean(axis=0)).sum())


def _annealed(chain: ExactChain, schedule: Schedule) -> dict:
    """Worst-start TV after the schedule, to the stationary law of its last temperature."""
    if chain.num_states > ANNEAL_MAX_STATES:
        raise StateSpaceTooLargeError(
            f"the annealed worst-start distance steps every start: {chain.num_states} states "
            f"exceed ANNEAL_MAX_STATES = {ANNEAL_MAX_STATES}"
        )
    laws = np.eye(chain.num_states)
    chains: dict[float, ExactChain] = {}
    for tau in schedule.temperatures(1, schedule.steps):
        tau = float(tau)
        if tau not in chains:
            chains[tau] = chain.at(tau)
        laws = np.asarray(chains[tau].transition_matrix().T @ laws.T).T
    final = chain.at(schedule.end).stationary()
    return {"schedule": schedule.spec, "steps": schedule.steps,
            "tv_worst_start": 0.5 * float(np.abs(laws - final).sum(axis=1).max())}


__all__ = [
    "ANNEAL_MAX_STATES",
    "kernel_summary",
    "KernelSummary",
    "sibling",
    "SUMMARY_TMIX_MAX_STEPS",
]
