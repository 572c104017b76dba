"""The exact chain of a sweep or a shuffled scan: what ``ExactChain(model, tau, kernel="sweep")``
returns.

One step is one pass over the sites (:mod:`glauber.core.kernel_spec`); the matrices come from
:mod:`glauber.exact.kernels`. Which of :class:`~glauber.exact.chain.ExactChain`'s algorithms
assume the random scan, and what replaces them here:

* the transition matrix is a product of site kernels, not ``(1/n) sum_i K_i``: its moves are not
  single-site, so every quantity formed from the single-site moves (``log P``, reversibility,
  conductance, escape probabilities) is formed from the matrix itself (``log P`` is the log of
  the float64 matrix: entries that underflow are lost, which :meth:`stationary` reports);
* the factor of :mod:`glauber.exact.factored` (``n q^(n-1)`` classes of the random scan) does
  not apply; a scan of Gibbs updates has its own factor (:class:`~glauber.exact.kernels.
  ScanFactor`: ``q^(n-1)`` classes for a sweep), which carries ``t_mix``, ``d(t)``, the
  stationary law (``nu G``) and the spectral gap (the eigenvalues of ``M = G A``);
* the same-site maximal coupling (:meth:`one_step_hamming`) is a random-scan coupling: refused.

Everything else (influence, oscillation, margins, rectangles, score tables) describes the model
and is inherited unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from glauber.errors import (
    InvalidKernelError,
    InvalidParameterError,
    StateSpaceTooLargeError,
    UnderflowError,
)
from glauber.exact import basins, kernels, mixing, spectral
from glauber.exact.chain import ExactChain
from glauber.exact.chain_spectrum import GapMethod
from glauber.exact.stationary import (
    StationaryMethod,
    StationarySolution,
    stationary_distribution,
)


class FactorSource:
    """A scan's factor ``(classes, G)`` handed to :func:`glauber.exact.mixing.mixing_time`, which
    builds its squaring algebra (:class:`~glauber.exact.kernels.ScanFactor`) from it."""

    def __init__(self, classes: np.ndarray, G: np.ndarray) -> None:
        self.classes, self.G = classes, G
        self.shape = (G.shape[1], G.shape[1])

    def factored_algebra(self, pi: np.ndarray, threshold: float | None = None
                         ) -> kernels.ScanFactor:
        """The algebra of ``M = G A`` for ``pi`` (``threshold``: see ``ScanFactor``)."""
        return kernels.ScanFactor(self.classes, self.G, pi, threshold)


class ScanChain(ExactChain, scans=("sweep", "shuffled")):
    """:class:`~glauber.exact.chain.ExactChain` for ``kernel="sweep"`` or ``"shuffled"`` (any
    site update): one step is one pass. Build it as ``ExactChain(model, tau, kernel=...)``."""

    # ----------------------------------------------------------------------------- the factor
    def _factor(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(classes, G)`` with ``P = A G`` for scans of Gibbs updates (a shuffled scan only
        when its ``n q^(n-1)`` classes are fewer than the states), else None."""

        def compute() -> tuple[np.ndarray, np.ndarray] | None:
            if self.kernel.metropolis:
                return None
            if self.kernel.scan == "sweep":
                return kernels.sweep_factor(self.site_rows())
            if self.n < self.q:
                return kernels.shuffled_factor(self.site_rows())
            return None

        return self._cached("factor", compute)

    @property
    def factored(self) -> bool:
        """Whether ``t_mix``, ``d(t)``, the stationary law and the gap go through the scan's
        factor (:class:`~glauber.exact.kernels.ScanFactor`)."""
        return self._factor() is not None

    def class_matrix(self) -> np.ndarray:
        """``M = G A`` of the factor (its non-zero eigenvalues are those of ``P``).

        Raises
        ------
        InvalidKernelError
            If the scan does not factor (Metropolis-Hastings updates, or a shuffled scan with
            ``n >= q``).
        """
        factor = self._factor()
        if factor is None:
            raise InvalidKernelError(
                f"the {self.kernel.label} kernel has no class factor here; use "
                "transition_matrix()"
            )
        return self._cached("M", lambda: kernels.class_matrix(*factor))

    # ------------------------------------------------------------------------------ the matrix
    def transition_matrix(self) -> sp.csr_matrix:
        """One pass: ``K_0 ... K_{n-1}`` (sweep) or its average over the ``n!`` orders
        (shuffled), CSR ``[S, S]`` (see :mod:`glauber.exact.kernels`)."""

        def compute() -> sp.csr_matrix:
            factor = self._factor()
            if factor is not None:
                return sp.csr_matrix(kernels.factor_rows(*factor, np.arange(self.num_states)))
            if self.kernel.scan == "sweep":
                return kernels.sweep_matrix(self.site_rows())
            return kernels.shuffled_matrix(self.site_rows())

        return self._cached("P", compute)

    def step_law(self, mu: Any) -> np.ndarray:
        """``mu P`` (through the factor where there is one)."""
        factor = self._factor()
        if factor is None:
            return super().step_law(mu)
        mu = np.asarray(mu, dtype=np.float64)
        if mu.shape != (self.num_states,):
            raise InvalidParameterError(
                f"mu must be a law over the {self.num_states} states, got shape {mu.shape}"
            )
        return kernels.factor_step(*factor, mu)[0]

    def _log_moves(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every transition ``x -> y != x`` of positive probability:
        ``(x, y, log P(x, y), log P(y, x))`` from the dense float64 matrix."""
        if self.num_states > mixing.MAX_DENSE_STATES:
            raise StateSpaceTooLargeError(
                f"the {self.kernel.label} kernel moves every site at once: its log-space "
                f"quantities need the dense matrix, over the limit of {mixing.MAX_DENSE_STATES} "
                "states; use the linear ones (stationary, conductance, escape_probabilities)"
            )

        def compute() -> tuple[np.ndarray, ...]:
            P = self.dense_transition_matrix()
            with np.errstate(divide="ignore"):
                logP = np.log(P)
            x, y = np.nonzero((P > 0) & ~np.eye(self.num_states, dtype=bool))
            return x, y, logP[x, y], logP[y, x]

        return self._cached("log_moves", compute)

    # --------------------------------------------------------------------------- stationary
    def stationary_solution(self, method: StationaryMethod = "auto") -> StationarySolution:
        """The stationary law, from ``M`` where the scan factors (``pi = nu G``, ``nu M = nu``),
        else from ``P`` (see :func:`glauber.exact.stationary.stationary_distribution`)."""
        factor = self._factor()
        if factor is None:
            return super().stationary_solution(method)

        def compute() -> StationarySolution:
            nu = stationary_distribution(self.class_matrix(), method)
            pi = nu.pi @ factor[1]
            pi = pi / pi.sum()
            residual = float(np.abs(kernels.factor_step(*factor, pi)[0] - pi).sum())
            return StationarySolution(pi, f"factored:{nu.method}", residual, nu.clipped_mass)

        return self._cached(f"pi:{method}", compute)

    def stationary(self, method: StationaryMethod = "auto") -> np.ndarray:
        """The stationary law of one pass (float64; no log-space recomputation here).

        Raises
        ------
        UnderflowError
            If an entry is below the smallest normal float64.
        ConvergenceError
            If the solve's residual exceeds its tolerance.
        """

        def compute() -> np.ndarray:
            pi = self.stationary_solution(method).pi
            if (pi < np.finfo(np.float64).tiny).any():
                raise UnderflowError(
                    f"a stationary probability of the {self.kernel.label} chain is below the "
                    "smallest float64; raise tau (scan kernels have no log-space solver here)"
                )
            return pi

        return self._cached(f"pi_checked:{method}", compute)

    def log_stationary(self, method: StationaryMethod = "auto") -> np.ndarray:
        """``log`` of :meth:`stationary` (the float64 law; scan kernels have no log-space GTH)."""
        return self._cached(f"log_pi:{method}", lambda: np.log(self.stationary(method)))

    # -------------------------------------------------------------------------------- mixing
    def _mixing_matrix(self, method: str, backend: str = "numpy") -> Any:
        factor = self._factor()
        if factor is not None and backend == "numpy" and method in ("auto", "factored"):
            return self._cached("factor_source", lambda: FactorSource(*factor))
        if method == "factored":
            raise InvalidParameterError(
                f"the {self.kernel.label} kernel has no class factor here (numpy only; not for "
                "Metropolis-Hastings updates); use method='squaring' or 'stepping'"
            )
        if method != "stepping" and self.num_states <= mixing.MAX_DENSE_STATES:
            return self.dense_transition_matrix()
        return self.transition_matrix()

    # ------------------------------------------------------------------------------ spectrum
    def spectral_gap(self, method: GapMethod = "auto") -> float:
        """The absolute gap ``1 - max{|lambda| : lambda != 1}`` of one pass where the scan
        factors (the eigenvalues of ``M``; a pass is not reversible in general), else as
        :meth:`ExactChain.spectral_gap` on ``P`` (also for ``method="lanczos"``)."""
        if self._factor() is None or method == "lanczos":
            return super().spectral_gap(method)
        return self.absolute_spectral_gap(method)

    def absolute_spectral_gap(self, method: GapMethod = "auto") -> float:
        """``1 - max{|lambda| : lambda != 1}`` of one pass: from the dense ``M`` where the scan
        factors (``"auto"`` or ``"dense"``), else as :meth:`ExactChain.absolute_spectral_gap`.

        Raises
        ------
        InvalidParameterError
            On a method other than ``"auto"``, ``"dense"`` or ``"lanczos"``.
        """
        self._dense_gap(method)  # checks the method's name
        if self._factor() is None or method == "lanczos":
            return super().absolute_spectral_gap(method)
        return self._cached("abs_gap", lambda: spectral.absolute_spectral_gap(
            self.class_matrix(), None, reversible=False))

    # -------------------------------------------------------------------------------- basins
    def escape_probabilities(self, mask: Any) -> np.ndarray:
        """Exact ``P(x, B^c)`` of one pass for each ``x`` in ``B`` (increasing index), as a sum of
        the pass's probabilities over ``B^c`` (no subtraction)."""
        inside = basins.check_mask(mask, self.num_states)
        states = np.flatnonzero(inside)
        factor = self._factor()
        if factor is not None:
            classes, G = factor
            return (G[:, ~inside].sum(axis=1))[classes[:, states]].mean(axis=0)
        P = self.transition_matrix()
        return np.asarray(P[states][:, np.flatnonzero(~inside)].sum(axis=1)).ravel()

    def log_escape_probabilities(self, mask: Any) -> np.ndarray:
        """``log`` of :meth:`escape_probabilities` (formed linearly for scan kernels)."""
        with np.errstate(divide="ignore"):
            return np.log(self.escape_probabilities(mask))

    def log_conductance(self, mask: Any) -> float:
        """``log Phi(B)`` of one pass, ``Phi(B) = sum_{x in B} mu(x) P(x, B^c) / mu(B)``."""
        inside = basins.check_mask(mask, self.num_states)
        pi = self.stationary()
        with np.errstate(divide="ignore"):
            return float(np.log((pi[inside] * self.escape_probabilities(inside)).sum())
                         - np.log(pi[inside].sum()))

    # ----------------------------------------------------------------------------- couplings
    def _coupled_rows(self) -> np.ndarray:
        raise InvalidKernelError(
            "the same-site maximal coupling (one_step_hamming) is a random-scan coupling; the "
            f"{self.kernel.label} kernel updates every site in a step (see "
            "glauber.theory.systematic_scan for its contraction)"
        )


__all__ = [
    "FactorSource",
    "ScanChain",
]
