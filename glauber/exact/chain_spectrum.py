"""The spectrum of an exact chain: reversibility, the spectral gap and its error bound.

The queries of :class:`~glauber.exact.chain.ExactChain` about detailed balance (Theorem 3) and the
gap (LPW 2nd ed., Section 12.2): dense eigenvalues (:mod:`glauber.exact.spectral`) up to 4096
states, Lanczos and Arnoldi with their labels above (:mod:`glauber.exact.krylov`).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from glauber.errors import EstimateOnlyError, GlauberError, InvalidParameterError
from glauber.exact import krylov, mixing, spectral
from glauber.exact.factored import factor_matrix
from glauber.exact.krylov import SpectralEstimate
from glauber.theory.gap_bound import absolute_gap_lower_bound
from glauber.theory.kernels import REVERSIBILITY_RTOL

GapMethod = Literal["auto", "dense", "lanczos"]
EstimateMethod = Literal["auto", "dense", "lanczos", "arnoldi"]


class SpectrumQueries:
    """Reversibility, ``1 - lambda_2``, the absolute gap and ``t_rel``.

    A mixin of :class:`~glauber.exact.chain.ExactChain`, which holds what it reads (the
    cache, the kernel, the transition matrix, the log-conditionals).
    """

    def is_reversible(self, rtol: float = REVERSIBILITY_RTOL) -> bool:
        """Detailed balance ``mu(x) P(x, y) = mu(y) P(y, x)`` to relative ``rtol`` (Theorem 3).

        Each flow is compared relative to its own size in log space
        (:func:`glauber.theory.kernels.flow_defect` on
        :meth:`log_stationary`), so flows whose ``mu`` underflows float64 are checked as strictly
        as flows of order 1.

        Raises
        ------
        InvalidParameterError
            If ``rtol`` is not a finite number >= 0.
        """
        if not np.isfinite(rtol) or rtol < 0:
            raise InvalidParameterError(f"rtol must be a finite number >= 0, got {rtol!r}")
        return self._reversibility_defect() <= rtol

    def spectral_gap(self, method: GapMethod = "auto") -> float:
        """``1 - lambda_2`` if reversible (sqrt(pi) symmetrisation), else the absolute gap.

        ``"dense"`` (``"auto"`` up to 4096 states): to relative accuracy 1e-6; gaps float64
        cannot resolve are recomputed in extended precision on chains of at most 32 states, and
        refused above (:func:`glauber.exact.spectral.spectral_gap`). ``"lanczos"`` (``"auto"``
        above 4096 states, reversible chains): :func:`glauber.exact.krylov.lanczos_gap`, whose
        error bound and labels :meth:`spectral_estimate` returns.

        Raises
        ------
        PrecisionError
            If the gap is below float64's resolution on a chain of more than 32 states, or below
            :data:`~glauber.exact.krylov.LANCZOS_GAP_FLOOR` on the sparse path.
        EstimateOnlyError
            If the chain is not reversible and above the dense limit: only an Arnoldi estimate
            exists (``spectral_estimate(method="arnoldi")``).
        StateSpaceTooLargeError
            If ``method="dense"`` is asked of more than 4096 states.
        """
        if self._dense_gap(method):
            return self._cached(
                "gap",
                lambda: spectral.spectral_gap(
                    self.dense_transition_matrix(), None, reversible=self.is_reversible(),
                    log_P=self.log_transition_matrix,
                ),
            )
        return self._lanczos(method).gap

    def absolute_spectral_gap(self, method: GapMethod = "auto") -> float:
        """``1 - max{|lambda| : lambda != 1}`` (LPW 2nd ed., Section 12.2).

        Accuracy and methods as :meth:`spectral_gap`. Above the dense limit, ``"auto"`` on a
        chain that :attr:`factored` reads it off the dense ``n q^(n-1)``-class factor
        ``M = BA`` of ``P = AB`` (:func:`~glauber.exact.factored.factor_matrix`: the same
        non-zero eigenvalues; reversible or not, to the dense path's accuracy): 1,200 classes
        for a 3-site window of 8,000 states. On the Lanczos path (reversible chains only) it
        equals the gap: a reversible heat-bath kernel has no negative eigenvalue
        (:mod:`glauber.exact.krylov`).

        Raises
        ------
        PrecisionError, EstimateOnlyError, StateSpaceTooLargeError
            As :meth:`spectral_gap`.
        """
        if self._dense_gap(method):
            return self._cached(
                "abs_gap",
                lambda: spectral.absolute_spectral_gap(
                    self.dense_transition_matrix(), None, reversible=self.is_reversible(),
                    log_P=self.log_transition_matrix,
                ),
            )
        if method == "auto" and self.factored:  # the kernel t_mix's factored path caches
            return self._cached("abs_gap_factor", lambda: spectral.absolute_spectral_gap(
                factor_matrix(self._mixing_matrix("factored")), None, reversible=False))
        estimate = self._lanczos(method)
        if not self.kernel.metropolis:
            return estimate.absolute_gap
        # a Metropolis-Hastings site kernel need not be positive semi-definite: 1 + lambda_min
        # of the symmetrisation too. Gershgorin on P (similar to it): every eigenvalue lies
        # within 1 - P(x, x) of some P(x, x), so 1 + lambda_min >= 2 min_x P(x, x); when that
        # reaches the gap, lambda_min cannot set the absolute gap. Else ARPACK (an estimate,
        # as the Lanczos gap).
        if 2.0 * float(self.transition_matrix().diagonal().min()) >= estimate.absolute_gap:
            return estimate.absolute_gap
        return self._cached("abs_gap_mh", lambda: min(
            estimate.absolute_gap, 1.0 + krylov.smallest_eigenvalue(
                self._cached("A_sym", self._symmetrisation))))

    def absolute_gap_lower_bound(self) -> float:
        """A proved lower bound on :meth:`absolute_spectral_gap`, reversible or not.

        Corrected Theorem 5's eigenvalue bound on the exact influence matrix, enclosed against
        its rounding (:func:`glauber.theory.gap_bound.absolute_gap_lower_bound`): every
        eigenvalue ``lambda != 1`` has ``|lambda| <= 1 - (1 - rho(C))/n``. 0.0 where
        ``rho(C) >= 1`` (nothing is proved). It needs only the influence matrix, so it is
        available where no gap is (the matrix-free chain of a 5-site window).

        Raises
        ------
        InvalidParameterError
            If the kernel is not the paper's (random scan of Gibbs updates): the bound is
            proved for that coupling only.
        """
        if not self.kernel.is_plain:
            raise InvalidParameterError(
                f"the influence bound on the gap is proved for the paper's kernel (random scan "
                f"of Gibbs updates), not {self.kernel.label!r}; build the chain with "
                "kernel='random'")
        return self._cached("abs_gap_lower", lambda: absolute_gap_lower_bound(
            self.influence_matrix(), self.influence_rounding()))

    def _dense_gap(self, method: str) -> bool:
        if method not in ("auto", "dense", "lanczos"):
            raise InvalidParameterError(
                f"unknown gap method {method!r}; use 'auto', 'dense' or 'lanczos' (an Arnoldi "
                "estimate is spectral_estimate(method='arnoldi'))")
        return method == "dense" or (method == "auto" and self.algebra == "dense")

    def _lanczos(self, method: str) -> SpectralEstimate:
        if not self.is_reversible():
            raise EstimateOnlyError(
                f"{self!r} is not reversible (detailed-balance defect "
                f"{self._reversibility_defect():.2g}), so Lanczos on the symmetrised kernel does "
                f"not apply, and its {self.num_states} states are over the dense limit of "
                f"{mixing.MAX_DENSE_STATES}; spectral_estimate(method='arnoldi') returns an "
                "Arnoldi estimate labelled as such, mixing_bracket() the t_mix bounds")
        return self.spectral_estimate("lanczos")

    def spectral_estimate(self, method: EstimateMethod = "auto", seed: int = 0
                          ) -> SpectralEstimate:
        """The spectral gap with its error bound and what of it is proved.

        ``"auto"``: ``"dense"`` up to 4096 states, above it ``"lanczos"`` for a reversible chain
        (:func:`glauber.exact.krylov.lanczos_gap`: the upper bound on the gap rigorous, the
        two-sided residual bound an estimate) and ``"arnoldi"`` otherwise
        (:func:`glauber.exact.krylov.arnoldi_gap_estimate`: an estimate, no bound).
        ``estimate.method`` says which ran.

        Raises
        ------
        EstimateOnlyError
            If ``method="lanczos"`` is asked of a chain that is not reversible.
        PrecisionError, ConvergenceError
            As the method run.
        """
        if method not in ("auto", "dense", "lanczos", "arnoldi"):
            raise InvalidParameterError(
                f"unknown spectral method {method!r}; use 'auto', 'dense', 'lanczos' or "
                "'arnoldi'")
        if method == "auto":
            method = ("dense" if self.algebra == "dense" else
                      "lanczos" if self.is_reversible() else "arnoldi")

        def compute() -> SpectralEstimate:
            if method == "dense":
                return krylov.dense_estimate(self.spectral_gap("dense"),
                                             self.absolute_spectral_gap("dense"),
                                             self.is_reversible())
            if method == "lanczos":
                if not self.is_reversible():
                    return self._lanczos(method)  # raises
                self.transition_matrix()  # builds the symmetrisation beside P on the sparse path
                return krylov.lanczos_gap(
                    self._cached("A_sym", self._symmetrisation),
                    self.log_stationary(), float(np.abs(self.log_site_rows()).max()), seed)
            try:
                pi = self.stationary_solution().pi
            except GlauberError:
                pi = None
            return krylov.arnoldi_gap_estimate(self.transition_matrix(), pi, seed)

        return self._cached(f"estimate:{method}:{seed}", compute)

    def relaxation_time(self) -> float:
        """``t_rel = 1 / absolute_spectral_gap()`` (LPW 2nd ed., Section 12.2)."""
        gap = self.absolute_spectral_gap()
        return float(np.inf) if gap <= 0.0 else 1.0 / gap
