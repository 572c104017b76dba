"""The stationary law of an exact chain: GTH, its log form, the closed-form joint, sparse solves.

The queries of :class:`~glauber.exact.chain.ExactChain` about ``mu_tau`` (Corollary 2: unique
when the conditionals are positive), each accurate to relative precision where it says so; the
algorithms live in :mod:`glauber.exact.stationary` and :mod:`glauber.exact.sparse`.
"""

from __future__ import annotations

from typing import Callable, Literal

import numpy as np

from glauber.errors import InvalidParameterError, UnderflowError
from glauber.exact import sparse
from glauber.exact.stationary import (
    GTH_MAX_STATES,
    LOG_GTH_MAX_STATES,
    TRUSTED_MIN_PROBABILITY,
    StationarySolution,
    log_gth_stationary,
    log_stationary_distribution,
    stationary_distribution,
)

#: The smallest positive normal float64: laws and conductances below it are refused in linear form.
SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)

#: Stationary methods of the chain: those of
#: :func:`glauber.exact.stationary.stationary_distribution` and ``"joint"`` (the model's
#: log-joint).
PiMethod = Literal["auto", "gth", "sparse", "iterative", "joint"]


class StationaryQueries:
    """``mu_tau`` and ``log mu_tau`` of the chain, with their accuracy statements.

    A mixin of :class:`~glauber.exact.chain.ExactChain`, which holds what it reads (the
    cache, the kernel, the transition matrix, the log-conditionals).
    """

    def stationary_solution(self, method: PiMethod = "auto") -> StationarySolution:
        """Stationary distribution with its diagnostics (residual, clipped mass, method used).

        ``solution.method`` reports what ran: ``"gth"`` (dense, ``"auto"`` up to 4096 states),
        ``"joint"`` (the law in closed form, verified by detailed balance: the model's exact
        log-joint, :func:`glauber.exact.sparse.joint_stationary`, or a Metropolis-Hastings
        random scan's target; ``"auto"`` above 4096 states when there is one), ``"sparse"`` or
        ``"iterative"`` (normwise accurate solves,
        :func:`glauber.exact.stationary.stationary_distribution`).

        Raises
        ------
        InvalidParameterError
            If ``method="joint"`` and the model has no log-joint in balance with its kernel.
        """
        if self._sparse_pi(method):
            return self.sparse_stationary(method).solution
        return self._cached(
            f"pi:{method}", lambda: stationary_distribution(self.transition_matrix(), method)
        )

    def _sparse_pi(self, method: str) -> bool:
        return method == "joint" or (method == "auto" and self.num_states > GTH_MAX_STATES)

    def _joint(self) -> sparse.SparseStationary | None:
        """The law in closed form, if it is in detailed balance with the kernel: the model's
        log-joint for the paper's kernel, the target ``exp(-E/tau)/Z`` for a random scan of
        Metropolis-Hastings updates (reversible for it by construction, docs/theory.md row
        mh-target; checked here move by move). None for every other kernel."""
        if self.kernel.metropolis and self.kernel.scan == "random":
            return self._cached("joint", lambda: sparse.balanced_stationary(
                self.log_target(), self._flow_defect(self.log_target()),
                self.transition_matrix(), "the Metropolis-Hastings target exp(-E/tau)/Z"))
        if not self.kernel.is_plain:
            return None
        return self._cached("joint", lambda: sparse.joint_stationary(
            self.model, self.states(), self.tau, self.log_conditionals(),
            self.transition_matrix()))

    def sparse_stationary(self, method: PiMethod = "auto") -> sparse.SparseStationary:
        """The stationary law of the sparse path with its accuracy statement.

        ``"auto"``/``"joint"``: the law in closed form when it is in detailed balance with the
        kernel (the model's log-joint, or a Metropolis-Hastings random scan's target; exact to
        relative precision); else (``"auto"``, ``"sparse"``, ``"iterative"``)
        a sparse solve, normwise accurate (``accuracy`` says how, with
        :func:`glauber.exact.sparse.stationary_tv_error_bound`).

        Raises
        ------
        InvalidParameterError
            If ``method="joint"`` and the model has no usable log-joint.
        ConvergenceError
            If a sparse solve misses its residual tolerance.
        """

        def compute() -> sparse.SparseStationary:
            if method in ("auto", "joint"):
                found = self._joint()
                if found is not None:
                    return found
                if method == "joint":
                    raise InvalidParameterError(
                        f"method='joint' needs a law in closed form in detailed balance with the "
                        f"kernel (a model with log_weight(states) under the paper's kernel, or a "
                        f"Metropolis-Hastings random scan); {self!r} has none (use "
                        "method='auto')")
                return self._solved()
            return sparse.solve_stationary(
                self.transition_matrix(), self.log_site_rows(), method)

        return self._cached(f"sparse_pi:{method}", compute)

    def _solved(self) -> sparse.SparseStationary:
        return self._cached("sparse_pi:solved", lambda: sparse.solve_stationary(
            self.transition_matrix(), self.log_site_rows(), "auto"))

    def solved_stationary(self) -> StationarySolution:
        """The stationary law solved from ``P`` alone, never read from a closed form: the
        :meth:`stationary_solution`, except above 4096 states where that is the model's joint
        or a Metropolis-Hastings target (:meth:`sparse_stationary`), whose sparse solve this
        returns instead (normwise accurate). What a law in closed form is compared against:
        the distances to the targets in :func:`glauber.exact.kernel_summary.kernel_summary`."""
        if self._sparse_pi("auto") and self._joint() is not None:
            return self._solved().solution
        return self.stationary_solution()

    def stationary(self, method: PiMethod = "auto") -> np.ndarray:
        """Stationary distribution ``mu_tau`` (Corollary 2: unique when conditionals are positive).

        ``"gth"`` and ``"joint"`` (the model's log-joint or a Metropolis-Hastings random scan's
        target, checked by detailed balance) are accurate to relative precision on every entry
        (also ``1e-40``); ``"sparse"`` (direct) and ``"iterative"`` (Krylov) only normwise;
        ``"auto"`` uses GTH up to 4096 states, above it the closed form where there is one,
        else the Krylov solve (the direct solve up to 8192 states when the Krylov solve fails its
        check). A GTH law with entries below
        :data:`~glauber.exact.stationary.TRUSTED_MIN_PROBABILITY` is recomputed from
        :meth:`log_stationary`, so no entry loses its relative accuracy to an underflowed
        intermediate.

        Raises
        ------
        ConvergenceError
            If the sparse solve's residual exceeds its tolerance.
        UnderflowError
            If an entry is below the smallest normal float64 (about 2.2e-308): a chain with
            positive conditionals has no zero entry, so use :meth:`log_stationary`.
        """
        return self._cached(f"pi_checked:{method}", lambda: self._checked_stationary(method))

    def _checked_stationary(self, method: PiMethod) -> np.ndarray:
        if self._sparse_pi(method):
            found = self.sparse_stationary(method)
            if found.solution.method == "joint":
                _check_normal(found.log_pi, self.states)
            return found.solution.pi
        gth = method == "gth" or (method == "auto" and self.num_states <= GTH_MAX_STATES)
        try:
            pi = self.stationary_solution(method).pi
        except UnderflowError:  # linear GTH overflowed: only the log form can answer
            if not gth:
                raise
            pi = np.zeros(self.num_states)
        if not gth or ((pi >= TRUSTED_MIN_PROBABILITY).all() and not self._subnormal_moves()):
            return pi
        log_pi = self.log_stationary(method)
        _check_normal(log_pi, self.states)
        return np.exp(log_pi)

    def log_stationary(self, method: PiMethod = "auto") -> np.ndarray:
        """``log mu_tau``, with no entry lost to underflow (entries of ``1e-392`` are ``-901.6``).

        GTH carried out in log space up to 1024 states
        (:func:`glauber.exact.stationary.log_gth_stationary`), above it the model's log-joint
        when it is in detailed balance with the kernel (:meth:`sparse_stationary`), else the
        log of the float64 law when none of its entries is below
        :data:`~glauber.exact.stationary.TRUSTED_MIN_PROBABILITY`.

        Raises
        ------
        UnderflowError
            If the chain is too large for log-space GTH and its float64 law has tiny entries.
        ConvergenceError
            If the chain is reducible.
        """

        def compute() -> np.ndarray:
            if method in ("auto", "gth") and self.num_states <= LOG_GTH_MAX_STATES:
                return log_gth_stationary(self.log_transition_matrix(), log_input=True)
            if method == "joint" or (method == "auto" and (
                    self._sparse_pi(method) or self._joint() is not None)):
                found = self.sparse_stationary(method)
                pi = found.solution.pi
                if found.solution.method != "joint" and not (pi >= TRUSTED_MIN_PROBABILITY).all():
                    raise UnderflowError(
                        f"the stationary law of this {self.num_states}-state chain has entries "
                        f"below {TRUSTED_MIN_PROBABILITY:g} (smallest {pi.min():.3g}), which a "
                        "sparse solve can lose to underflow, and the model has no log-joint; "
                        "use a smaller chain or a higher temperature")
                return found.log_pi
            if self._subnormal_moves():
                raise UnderflowError(
                    "some transition probabilities are subnormal in float64 (no relative "
                    f"accuracy) and log-space GTH is limited to {LOG_GTH_MAX_STATES} states; "
                    "raise tau or use a smaller chain"
                )
            return log_stationary_distribution(self.transition_matrix(), method)

        return self._cached(f"log_pi:{method}", compute)

    def _subnormal_moves(self) -> bool:
        """Some transition probability is below the normal float64 range (inexact linearly).

        Every ``log p_i(a | x_{-i})`` is a move's ``log P`` plus ``log n`` (each context has a
        state with ``x_i != a``), so the smallest conditional decides."""
        smallest = float(self.log_site_rows().min()) - np.log(self.n)
        return smallest < np.log(SMALLEST_NORMAL)

    def _stationary_for_distances(self) -> np.ndarray:
        """``mu`` to absolute accuracy (underflowed entries 0): all a TV distance needs."""
        try:
            return self.stationary()
        except UnderflowError:
            return np.exp(self.log_stationary())


def _check_normal(log_pi: np.ndarray, states: Callable[[], np.ndarray]) -> None:
    """Refuse a law with an entry below the smallest normal float64 (use ``log_stationary``)."""
    if (log_pi < np.log(SMALLEST_NORMAL)).any():
        k = int(np.argmin(log_pi))
        raise UnderflowError(
            f"the stationary probability of state {states()[k].tolist()} is "
            f"10^{log_pi[k] / np.log(10):.1f}, below the smallest float64; use "
            "log_stationary() (log pi, exact to relative precision) instead of stationary()"
        )
