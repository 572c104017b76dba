"""Worst-start mixing of an exact chain: ``d(t)``, exact ``t_mix`` and rigorous ``t_mix`` brackets.

The queries of :class:`~glauber.exact.chain.ExactChain` about ``d(t) = max_x ||P^t(x, .) - mu||_TV``
(LPW 2nd ed., Section 4.5): dense squaring, sparse stepping or the ``n q^(n-1)``-class factor
(:mod:`glauber.exact.mixing`, :mod:`glauber.exact.factored`), and above
:data:`EXACT_TMIX_MAX_STATES` states the brackets of :mod:`glauber.exact.brackets`.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Literal

import numpy as np

from glauber.core.validation import check_eps
from glauber.errors import (
    BracketOnlyError,
    GapBelowFloorError,
    InvalidParameterError,
    PrecisionError,
)
from glauber.exact import brackets, mixing
from glauber.exact.brackets import MixingBracket
from glauber.exact.factored import factorable
from glauber.exact.stepping import GlauberKernel, SiteRowsKernel
from glauber.theory.contraction import certify_contraction

#: Largest chain whose worst-start ``t_mix`` and ``d(t)`` ``"auto"`` computes exactly (dense
#: squaring, the factor, or stepping every start); above, only
#: :meth:`~glauber.exact.chain.ExactChain.mixing_bracket`.
EXACT_TMIX_MAX_STATES = 2**16


class MixingQueries:
    """``d(t)``, ``t_mix(eps)`` and their rigorous brackets.

    A mixin of :class:`~glauber.exact.chain.ExactChain`, which holds what it reads (the
    cache, the kernel, the transition matrix, the log-conditionals).
    """

    def distance(
        self,
        t: int,
        backend: mixing.Backend = "numpy",
        device: str | None = None,
        method: mixing.Method = "auto",
    ) -> float:
        """Worst-start TV distance ``d(t) = max_x ||P^t(x, .) - mu||_TV``.

        See :func:`glauber.exact.mixing.distance_curve` for ``backend``, ``device`` and
        ``method`` (dense squaring up to 4096 states, sparse stepping above).
        """
        return float(self.distance_curve([t], backend, device, method)[0])

    def distance_curve(
        self,
        ts: Iterable[int],
        backend: mixing.Backend = "numpy",
        device: str | None = None,
        method: mixing.Method = "auto",
    ) -> np.ndarray:
        """``d(t)`` at each time in ``ts`` (see :meth:`distance`).

        Raises
        ------
        BracketOnlyError
            With ``method="auto"`` above :data:`EXACT_TMIX_MAX_STATES` states (use
            :meth:`mixing_bracket`).
        """
        if self._beyond_exact(method):
            raise BracketOnlyError(
                f"the worst-start d(t) of this {self.num_states}-state chain is out of exact "
                f"reach (every start would be stepped; the limit is EXACT_TMIX_MAX_STATES = "
                f"{EXACT_TMIX_MAX_STATES}); mixing_bracket() gives rigorous t_mix bounds, "
                "method='stepping' forces the exact computation")
        return mixing.distance_curve(
            self._mixing_matrix(method, backend), self._stationary_for_distances(), ts, backend,
            device,
            method=method,
        )

    def distance_from(self, starts: Any, ts: Iterable[int]) -> np.ndarray:
        """``||mu_0 P^t - pi||_TV`` at each time in ``ts``, from the start law ``mu_0`` of
        ``starts`` (uniform over its rows, repeats counted), exactly in float64.

        The distance from one start law, not the worst start ``d(t)``: what a sampler started
        from ``starts`` sees after ``t`` steps (LPW 2nd ed., Section 4.1), and what the
        lag-coupling estimate (:func:`glauber.estimators.lag_coupling_bound`) bounds. One sparse
        product per step, up to ``max(ts)``.

        Parameters
        ----------
        starts : array of int, shape (n,) or (S, n)
            A state, or ``S`` states drawn uniformly.
        ts : iterable of int
            Times ``t >= 0``.

        Returns
        -------
        ndarray of float, one per time of ``ts``, in its order.

        Raises
        ------
        InvalidParameterError
            If ``starts`` is empty or a time is negative.
        SequenceLengthError, VocabularyError
            If a state is not a state of the chain.
        """
        Pt = self.transition_matrix().T.tocsr()
        return self._distances_stepped(starts, ts, lambda mu: Pt @ mu)

    def _distances_stepped(self, starts: Any, ts: Iterable[int],
                           step: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """:meth:`distance_from` with ``step(mu) = mu P`` given (sparse or matrix-free)."""
        index = np.atleast_1d(self.index_of(np.atleast_2d(np.asarray(starts))))
        if index.size == 0:
            raise InvalidParameterError("starts is empty: give a start state or some states")
        times = [int(t) for t in ts]
        if any(t < 0 for t in times):
            raise InvalidParameterError(f"times must be >= 0, got {times}")
        mu = np.bincount(index, minlength=self.num_states) / index.size
        pi = self.stationary()
        out, wanted, last = {}, set(times), max(times, default=-1)
        for t in range(last + 1):
            if t in wanted:
                out[t] = 0.5 * float(np.abs(mu - pi).sum())
            if t < last:
                mu = step(mu)
        return np.array([out[t] for t in times], dtype=np.float64)

    def mixing_time(
        self,
        eps: float = 0.25,
        backend: mixing.Backend = "numpy",
        device: str | None = None,
        method: mixing.Method = "auto",
        max_steps: int = mixing.DEFAULT_MAX_STEPS,
    ) -> int:
        """Worst-start ``t_mix(eps) = min{t : d(t) <= eps}`` (LPW 2nd ed., Section 4.5).

        ``method``: ``"squaring"`` (doubling and bisection, dense, up to 4096 states),
        ``"stepping"`` (sparse point-mass stepping, any size that fits two ``S x b`` blocks),
        ``"factored"`` (doubling and bisection on the ``n q^(n-1)``-class factor of the kernel,
        :mod:`~glauber.exact.factored`) or ``"auto"`` (factored where :attr:`factored`,
        else see :func:`glauber.exact.mixing.mixing_time`); all are exact.
        ``max_steps`` bounds the steps of one start when stepping (a metastable chain's ``t_mix``
        can be far beyond what stepping every start can reach in minutes); squaring and
        factoring reach any ``t`` in about ``2 log2 t`` products.

        Raises
        ------
        InvalidProbabilityError
            If ``eps`` is not in (0, 1).
        ConvergenceError
            If the chain has not mixed by ``t = 2**62`` (squaring) or within ``max_steps`` steps
            (stepping).
        StateSpaceTooLargeError
            If ``method="squaring"`` is asked of more than 4096 states.
        BracketOnlyError
            With ``method="auto"`` above :data:`EXACT_TMIX_MAX_STATES` states, unless the rigorous
            bounds of :meth:`mixing_bracket` meet (then their common value is returned): the
            error holds the bracket (monotone models), or says that only the spectral bracket
            is available (any other model).
        """
        if self._beyond_exact(method):
            return self._bracketed_tmix(eps)
        return mixing.mixing_time(
            self._mixing_matrix(method, backend), self._stationary_for_distances(), eps, backend,
            device,
            method=method,
            max_steps=max_steps,
        )

    def _beyond_exact(self, method: str) -> bool:
        return (method == "auto" and self.num_states > EXACT_TMIX_MAX_STATES
                and not self.factored)

    def _bracketed_tmix(self, eps: float) -> int:
        if not (self.is_monotone() or self.kernel.is_plain):
            raise BracketOnlyError(
                f"t_mix of this {self.num_states}-state chain cannot be computed exactly (every "
                f"start would be stepped: the limit is EXACT_TMIX_MAX_STATES = "
                f"{EXACT_TMIX_MAX_STATES}) and the {self.kernel.label} kernel is not the paper's "
                "heat bath, so neither the coupling nor the influence bounds apply: only the "
                "spectral bracket is available (mixing_bracket(); its upper end is an estimate "
                "for a Lanczos gap)")
        bracket = self.mixing_bracket(eps)
        if bracket.exact is not None:
            return bracket.exact
        raise BracketOnlyError(
            f"t_mix of this {self.num_states}-state chain is not computable exactly (the limit is "
            f"EXACT_TMIX_MAX_STATES = {EXACT_TMIX_MAX_STATES}); rigorous bounds: "
            f"{bracket.summary()} (error.bracket holds them)", bracket)

    # ---------------------------------------------------------------------------- brackets
    def monotonicity_defect(self) -> float:
        """Largest violation of stochastic monotonicity of the conditionals
        (:func:`glauber.exact.brackets.monotonicity_defect`; 0 for ferromagnetic Ising)."""
        return self._cached("monotone", lambda: brackets.monotonicity_defect(self.conditionals()))

    def is_monotone(self) -> bool:
        """Whether the heat-bath grand coupling is monotone: every conditional stochastically
        increasing in the context (:mod:`glauber.exact.brackets`). Decided by the model's
        ``is_monotone()`` where it has one (from its parameters, e.g. ``J >= 0``), else exactly
        on the float64 conditionals (:meth:`monotonicity_defect` is 0). Never for another
        kernel than the paper's: the sandwich is the heat-bath grand coupling's."""
        if not self.kernel.is_plain:
            return False
        declared = getattr(self.model, "is_monotone", None)
        if callable(declared):
            return bool(declared())
        return self.monotonicity_defect() == 0.0

    def mixing_bracket(self, eps: float = 0.25,
                       max_steps: int = brackets.DEFAULT_BRACKET_STEPS,
                       method: Literal["auto", "sparse"] = "auto") -> MixingBracket:
        """Rigorous bounds on the worst-start ``t_mix(eps)``, each labelled (no dense algebra).

        * monotone models (:meth:`is_monotone`): the grand-coupling sandwich from the two
          extreme states, both bounds rigorous (:mod:`glauber.exact.brackets`), stepping at most
          ``max_steps`` steps;
        * reversible chains: LPW Theorems 12.5 (lower, rigorous) and 12.4 (upper: rigorous with
          the dense gap, an estimate with a Lanczos gap), from :meth:`spectral_estimate` and
          ``log pi_min``;
        * ``bracket.exact`` when the rigorous bounds meet.

        A non-reversible, non-monotone chain gets neither: its bracket is ``0 <= t_mix`` with no
        upper bound, and says so in its claims. ``method="sparse"`` takes the sparse path's
        stationary law and gap (joint or solve, Lanczos or Arnoldi) at any size (``"auto"``:
        dense up to 4096 states, whose spectral upper bound is then rigorous).

        Raises
        ------
        InvalidProbabilityError
            If ``eps`` is not in (0, 1).
        """
        eps = check_eps(eps)
        if method not in ("auto", "sparse"):
            raise InvalidParameterError(f"method must be 'auto' or 'sparse', got {method!r}")
        dense = method == "auto" and self.algebra == "dense"

        def compute() -> MixingBracket:
            subject = repr(self)
            claims = []
            if self.is_monotone():
                solution = (self.stationary_solution() if dense else
                            self.sparse_stationary().solution)
                pi = self._stationary_for_distances() if dense else solution.pi
                claims += brackets.monotone_bracket(
                    self.transition_matrix(), pi, self.n, self.q,
                    eps, subject,
                    None if solution.method in ("gth", "joint") else solution.residual_l1,
                    max_steps, float(np.abs(self.log_site_rows()).max()))
            if self.is_reversible():
                try:
                    estimate = self.spectral_estimate("auto" if dense else "lanczos")
                except GapBelowFloorError as exc:  # the gap is proved tiny: t_mix is large
                    claims.append(brackets.spectral_lower_claim(exc.gap_upper, "lanczos", eps,
                                                                subject))
                except PrecisionError as exc:
                    claims.append(brackets.unavailable_claim(subject, str(exc)))
                else:
                    claims += brackets.spectral_claims(
                        estimate, float(self.log_stationary().min()), eps, subject)
            if not claims and self.kernel.is_plain:
                claims += self._influence_bracket(eps, max_steps, dense, subject)
            if not claims:
                claims.append(brackets.unavailable_claim(
                    subject, "the chain is neither monotone nor reversible: no bound applies"))
            return brackets.combine(claims, eps, self.is_monotone(), subject)

        return self._cached(f"bracket:{eps!r}:{max_steps}:{dense}", compute)

    def _influence_bracket(self, eps: float, max_steps: int, dense: bool,
                           subject: str) -> list:
        """The bracket of a chain of the paper's kernel that is neither monotone nor reversible
        (a masked LM's window): the corrected Theorem 5 certificate of the exact influence
        matrix above (rigorous, with the entries' rounding), the distances from a few starts
        below (the mode of ``mu``, the likeliest state differing from it at every site, the
        least likely state), with ``mu``'s error from its solve's residual and the certificate's
        ``t_mix(1/4)`` (:func:`glauber.exact.sparse.stationary_tv_error_bound`), and half their
        largest TV from one another, which needs no ``mu`` (:func:`brackets.starts_claims`)."""
        C, entry_error = self.influence_matrix(), self.influence_rounding()
        upper = brackets.influence_upper_claim(
            certify_contraction(C, eps, entry_error=entry_error), subject)
        solution = self.stationary_solution() if dense else self.sparse_stationary().solution
        pi = self._stationary_for_distances() if dense else solution.pi
        solved = solution.method not in ("gth", "joint")
        quarter = certify_contraction(C, 0.25, entry_error=entry_error).best_bound
        states = self.states()
        mode = int(np.argmax(pi))
        far = np.flatnonzero((states != states[mode]).all(axis=1))
        starts = [mode, int(np.argmin(pi))]
        if far.size:
            starts.insert(1, int(far[np.argmax(pi[far])]))
        lower = brackets.starts_claims(
            self.transition_matrix(), pi, np.array(list(dict.fromkeys(starts))), eps, subject,
            solution.residual_l1 if solved else None, quarter, max_steps,
            float(np.abs(self.log_site_rows()).max()))
        return [upper, *lower]

    @property
    def factored(self) -> bool:
        """Whether ``t_mix`` and ``d(t)`` go through the chain's ``n q^(n-1)``-class factor by
        default (numpy; :func:`~glauber.exact.factored.factorable`): exact at any ``t``,
        with no step limit (:mod:`~glauber.exact.factored`); never for Metropolis-Hastings
        updates, whose site laws depend on the site's own token."""
        return factorable(self.n, self.q) and not self.kernel.metropolis

    def _mixing_matrix(self, method: str, backend: str = "numpy") -> Any:
        """The kernel from the conditionals
        (:class:`~glauber.exact.stepping.GlauberKernel`) where it factors
        (:mod:`~glauber.exact.factored`) or ``method="factored"`` asks for it; else the
        cached dense ``P`` where squaring may run; for stepping, the kernel (numpy, ``q >= 4``:
        cheaper than the sparse product) or the sparse ``P``."""
        gibbs = not self.kernel.metropolis  # Metropolis rows depend on x_i: no Glauber factor
        if gibbs and (method == "factored" or (method == "auto" and backend == "numpy"
                                               and self.factored)):
            return self._cached("kernel", lambda: GlauberKernel(self.site_rows()))
        if method != "stepping" and self.num_states <= mixing.MAX_DENSE_STATES:
            return self.dense_transition_matrix()
        if backend == "numpy" and self.q >= 4:
            if not gibbs:
                return self._cached("kernel", lambda: SiteRowsKernel(self.site_rows()))
            return self._cached("kernel", lambda: GlauberKernel(self.site_rows()))
        return self.transition_matrix()
