"""One step of every kernel of :mod:`glauber.core.kernel_spec` on a batch of chains, on the
model's device: the sampler's (:func:`glauber.estimators.glauber_chains`) and the coupling's
(:func:`glauber.estimators.coupling_time`) site updates.

A step is one site update per chain (``random``: each chain its own uniform site) or one pass
over the free sites (``sweep``: in order; ``shuffled``: each chain its own uniform order). A
site update is a Gibbs draw from ``r = (1 - epsilon) p_tau + epsilon / q`` or a
Metropolis-Hastings move: propose ``a ~ r(. | x_{-i})``, accept with probability
``min(1, exp(-(E(y) - E(x)) / tau) r(x_i) / r(a))``
(:func:`glauber.theory.site_updates.log_acceptance`), every term of it in float64 (float32
scores are cast before their log-softmax; a proposal of the current token is accepted, its
ratio being 1 exactly). ``E`` sums over the chain's free sites
(the resampled ones: for a window, its own sites, as :func:`glauber.core.restrict` defines
the model), each term the own token's ``log p_1`` (``pll``) or raw score (``logits``).

Cost of a Metropolis-Hastings update: the proposal's forward (``B`` rows) gives ``r`` at
``tau``, the reverse proposal ``r(x_i)`` (same context) and the new term at site ``i`` of
``E(y)`` (``y_{-i} = x_{-i}``); the other ``m - 1`` terms of ``E(y)`` take ``B (m - 1)`` rows
(:func:`glauber.estimators.pll.token_terms`, sub-batched). ``E(x)`` is cached from the previous
step: ``m`` rows per chain and step in all, where a Gibbs update takes one.

Coupled pairs (``paired=True``): the batch holds ``P`` chains ``x`` then their partners ``y``;
both chains of a pair update the same sites (the same order for a shuffled pass), their site
laws are maximally coupled (:func:`glauber.estimators.maximal_coupling.maximal_coupling_step`; for
Metropolis-Hastings the proposals) and a Metropolis-Hastings pair shares one uniform for the
acceptance, so a pair that agrees stays together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from glauber.core.arrays import (
    JsonResult,
    is_torch,
    like,
    log_softmax,
    namespace,
    take_rows,
    to_numpy,
)
from glauber.core.conditionals import scores_and_log_conditionals
from glauber.core.kernel_spec import KernelSpec
from glauber.core.protocol import ConditionalModel
from glauber.estimators.batch_arrays import concat, copy_states
from glauber.estimators.maximal_coupling import maximal_coupling_step
from glauber.estimators.pll import token_terms
from glauber.estimators.random_draws import random_sites, sample_categorical, uniform
from glauber.estimators.step_conditionals import FiniteGuard
from glauber.theory.site_updates import log_acceptance, mixture_log_probs


@dataclass(frozen=True)
class AcceptanceResult(JsonResult):
    """Metropolis-Hastings acceptance of a run.

    Attributes
    ----------
    proposed, accepted : ndarray of int, shape (n,)
        Proposals made and accepted at each site (a proposal of the current token counts as
        accepted: its ratio is 1).
    per_site : ndarray of float, shape (n,)
        ``accepted / proposed`` (NaN at sites never proposed, e.g. frozen ones).
    overall : float
        Accepted over proposed, all sites.
    moved : float
        Fraction of proposals that changed the state (accepted and a new token).
    """

    proposed: np.ndarray
    accepted: np.ndarray
    per_site: np.ndarray
    overall: float
    moved: float


class KernelStepper:
    """Steps of one kernel for a batch of chains (see the module docstring).

    Parameters
    ----------
    model : ConditionalModel
    spec : KernelSpec
    free : numpy.ndarray of int
        The free (resampled) sites, increasing.
    template : array
        The chains' states (their library and device).
    generator : numpy.random.Generator or torch.Generator
    batch_size : int
        Most rows per :meth:`scores` call.
    guard : FiniteGuard
    paired : bool
        The batch is ``P`` chains then their ``P`` partners (coupled pairs).
    """

    def __init__(self, model: ConditionalModel, spec: KernelSpec, free: np.ndarray,
                 template: Any, generator: Any, batch_size: int, guard: FiniteGuard,
                 paired: bool = False) -> None:
        self.model, self.spec, self.gen = model, spec, generator
        self.batch_size, self.guard, self.paired = batch_size, guard, paired
        self.free = np.asarray(free, dtype=np.int64)
        self.m = len(self.free)
        self.free_arr = like(template, self.free)
        position = np.zeros(model.n, dtype=np.int64)
        position[self.free] = np.arange(self.m)
        #: ``position[site]``: the index of a free site in :attr:`free`.
        self.position = like(template, position)
        self.energy: Any = None  # E(x) of every chain (Metropolis-Hastings)
        self.proposed = like(template, np.zeros(model.n), "float64")
        self.accepted = like(template, np.zeros(model.n), "float64")
        self.moved = like(template, np.zeros(1), "float64")

    # ------------------------------------------------------------------------ energies
    def energies(self, states: Any) -> Any:
        """``E(x)`` of each chain (float64), over the free sites: ``B m`` rows."""
        B = int(states.shape[0])
        kind = "log_p" if self.spec.energy == "pll" else "scores"
        m = self.m
        terms = token_terms(
            self.model, B * m,
            lambda lo, hi: self._grid(states, lo, hi), kind, 1.0, self.batch_size,
            check_finite=False,
        )
        return -_float64(terms).reshape(B, m).sum(-1)

    def _grid(self, states: Any, lo: int, hi: int) -> tuple[Any, Any]:
        r = like(states, np.arange(lo, hi))
        return states[r // self.m], self.free_arr[r % self.m]

    def keep_pairs(self, index: Any) -> None:
        """Keep only the pairs ``index`` (paired batches; the cached energies follow)."""
        if self.energy is not None:
            P = int(self.energy.shape[0]) // 2
            self.energy = concat([self.energy[:P][index], self.energy[P:][index]])

    # ------------------------------------------------------------------------------ steps
    def step(self, states: Any, tau: float) -> Any:
        """One step of the kernel at temperature ``tau`` (``states`` updated in place)."""
        if self.spec.metropolis and self.energy is None:
            self.energy = self.energies(states)
        for sites in self._scan(states):
            self._update(states, sites, tau)
        return states

    def _scan(self, states: Any) -> Any:
        B = int(states.shape[0])
        P = B // 2 if self.paired else B
        if self.spec.scan == "random":
            yield self._both(random_sites(states, self.free_arr, P, self.gen))
        elif self.spec.scan == "sweep":
            for k in range(self.m):
                yield like(states, np.full(B, self.free[k]))
        else:
            keys = _uniform_matrix(states, P, self.m, self.gen)
            order = keys.argsort(dim=1) if is_torch(keys) else keys.argsort(axis=1)
            for k in range(self.m):
                yield self._both(self.free_arr[order[:, k]])

    def _both(self, draws: Any) -> Any:
        return concat([draws, draws]) if self.paired else draws

    def _update(self, states: Any, sites: Any, tau: float) -> None:
        B = int(states.shape[0])
        rows = like(states, np.arange(B))
        scores, log_p = self._conditionals(states, sites, tau, self.spec.metropolis)
        self.guard.update(log_p)
        log_r = mixture_log_probs(log_p, self.spec.epsilon)
        new = self._draw(states, log_r)
        if not self.spec.metropolis:
            states[rows, sites] = new
            return
        own = states[rows, sites]
        y = copy_states(states)
        y[rows, sites] = new
        energy_y = self._proposal_energy(y, sites, scores, new)
        self.guard.update(energy_y)
        log_acc = log_acceptance(-self.energy / tau, -energy_y / tau,
                                 _float64(take_rows(log_r, new)),
                                 _float64(take_rows(log_r, own)))
        u = uniform(log_acc, B // 2 if self.paired else B, self.gen)
        xp = namespace(log_acc)
        with np.errstate(divide="ignore"):  # u = 0: log u = -inf, always accepted
            # the current token's ratio is 1 exactly (its energies may differ by rounding)
            accept = (xp.log(self._both(u)) < log_acc) | (new == own)
        if self.paired:  # a pair that agrees takes one decision
            P = B // 2
            same = xp.all(states[:P] == states[P:], axis=1)
            accept = concat([accept[:P], xp.where(same, accept[:P], accept[P:])])
        states[rows, sites] = xp.where(accept, new, own)
        self.energy = xp.where(accept, energy_y, self.energy)
        self._count(sites, accept, accept & (new != own))

    def _conditionals(self, states: Any, sites: Any, tau: float,
                      float64: bool = False) -> tuple[Any, Any]:
        """Scores and log-conditionals of every chain at its site, ``batch_size`` rows a call
        (the log-conditionals in float64 with ``float64``: a Metropolis-Hastings proposal's
        ratio)."""
        out = [
            scores_and_log_conditionals(self.model, states[lo:lo + self.batch_size],
                                        sites[lo:lo + self.batch_size], tau, check_finite=False,
                                        float64=float64)
            for lo in range(0, int(states.shape[0]), self.batch_size)
        ]
        scores = concat([_as_array(s, lp) for s, lp in out])
        return scores, concat([lp for _, lp in out])

    def _draw(self, states: Any, log_r: Any) -> Any:
        if not self.paired:
            return sample_categorical(log_r, self.gen)
        P = int(states.shape[0]) // 2
        xp = namespace(log_r)
        a, b = maximal_coupling_step(log_r[:P], log_r[P:], self.gen)
        b = xp.where(xp.all(states[:P] == states[P:], axis=1), a, b)
        return concat([a, b])

    def _proposal_energy(self, y: Any, sites: Any, scores: Any, new: Any) -> Any:
        """``E(y)``: the term at the updated site from the proposal's scores (same context), the
        other ``m - 1`` free sites from ``B (m - 1)`` masked queries of ``y``."""
        own_scores = _float64(scores)
        term = take_rows(log_softmax(own_scores) if self.spec.energy == "pll" else own_scores,
                         new)
        B, m = int(y.shape[0]), self.m
        if m == 1:
            return -term
        kind = "log_p" if self.spec.energy == "pll" else "scores"
        skip = self.position[sites]  # [B]: the updated site's index among the free sites
        k = like(y, np.arange(m - 1))

        def build(lo: int, hi: int) -> tuple[Any, Any]:
            r = like(y, np.arange(lo, hi))
            chain, j = r // (m - 1), k[r % (m - 1)]
            j = j + (j >= skip[chain])
            return y[chain], self.free_arr[j]

        others = token_terms(self.model, B * (m - 1), build, kind, 1.0, self.batch_size,
                             check_finite=False)
        return -(term + _float64(others).reshape(B, m - 1).sum(-1))

    def _count(self, sites: Any, accepted: Any, moved: Any) -> None:
        one = like(self.proposed, np.ones(int(sites.shape[0])), "float64")
        if is_torch(sites):
            self.proposed.index_add_(0, sites, one)
            self.accepted.index_add_(0, sites, accepted.double())
            self.moved += moved.double().sum()
        else:
            np.add.at(self.proposed, sites, one)
            np.add.at(self.accepted, sites, accepted.astype(np.float64))
            self.moved += moved.sum()

    def acceptance(self) -> AcceptanceResult | None:
        """Acceptance counts so far (None for Gibbs kernels)."""
        if not self.spec.metropolis:
            return None
        proposed = to_numpy(self.proposed).astype(np.int64)
        accepted = to_numpy(self.accepted).astype(np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_site = np.where(proposed > 0, accepted / np.maximum(proposed, 1), np.nan)
        total = int(proposed.sum())
        return AcceptanceResult(
            proposed=proposed, accepted=accepted, per_site=per_site,
            overall=float(accepted.sum() / total) if total else float("nan"),
            moved=float(to_numpy(self.moved)[0] / total) if total else float("nan"),
        )


def _float64(x: Any) -> Any:
    return x.double() if is_torch(x) else np.asarray(x, dtype=np.float64)


def _as_array(scores: Any, template: Any) -> Any:
    """Scores in the log-conditionals' library (numpy models may answer with lists)."""
    return scores if is_torch(template) else np.asarray(scores, dtype=np.float64)


def _uniform_matrix(template: Any, rows: int, cols: int, generator: Any) -> Any:
    """Uniform ``[rows, cols]`` draws (the keys of a uniform random order per row)."""
    if is_torch(template):
        torch = namespace(template)
        return torch.rand((rows, cols), generator=generator, device=template.device)
    return generator.random((rows, cols))


__all__ = [
    "AcceptanceResult",
    "KernelStepper",
]
