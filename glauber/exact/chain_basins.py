"""Basins, influence, margins, rectangles and the one-step coupling of an exact chain.

The queries of :class:`~glauber.exact.chain.ExactChain` behind Theorem 8 (conductance, escape and
hitting, :mod:`glauber.exact.basins`; margins, :mod:`glauber.exact.margins`), Definition 2 and
Lemma 6 (:mod:`glauber.exact.influence`), Proposition 4 (:mod:`glauber.exact.rectangles`) and path
coupling (LPW 14.6, :mod:`glauber.exact.coupling`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glauber.core.arrays import logsumexp
from glauber.errors import InvalidKernelError, UnderflowError
from glauber.exact import (
    basins,
    coupling,
    influence,
    margins,
    rectangles,
)
from glauber.exact.basins import Bottleneck
from glauber.exact.chain_stationary import SMALLEST_NORMAL
from glauber.exact.coupling import WorstAdjacentPair
from glauber.exact.rectangles import RectangleSummary
from glauber.exact.score_table import TabulatedModel
from glauber.exact.stationary import TRUSTED_MIN_PROBABILITY
from glauber.theory.distances import tv_rounding_bound
from glauber.theory.escape import BasinMargins
from glauber.theory.floating import RoundingFormats


class BasinQueries:
    """Conductance, escape and hitting, ``C`` and ``Delta``, margins, rectangles, coupling.

    A mixin of :class:`~glauber.exact.chain.ExactChain`, which holds what it reads (the
    cache, the kernel, the transition matrix, the log-conditionals).
    """

    def conductance(self, mask: Any) -> float:
        """``Phi(S) = sum_{x in S} mu(x) P(x, S^c) / mu(S)`` (Theorem 8's definition).

        Formed in log space (:meth:`log_conductance`), so a set whose stationary mass underflows
        float64 still gets its true conductance.

        Raises
        ------
        BasinError
            If the set is empty or the whole state space.
        UnderflowError
            If the conductance itself is below the smallest normal float64 (use
            :meth:`log_conductance`).
        """
        return _checked_exp(self.log_conductance(mask), "conductance", "log_conductance(mask)")

    def log_conductance(self, mask: Any) -> float:
        """``log Phi(S)`` from :meth:`log_stationary` (finite for every proper subset of a chain
        with positive conditionals).

        Raises
        ------
        BasinError
            If the set is empty or the whole state space.
        """
        inside = basins.check_mask(mask, self.num_states)
        log_pi = self.log_stationary()
        x, y, log_p, _ = self._log_moves()
        leaving = inside[x] & ~inside[y]
        log_flow = logsumexp(log_pi[x[leaving]] + log_p[leaving])
        return log_flow - logsumexp(log_pi[inside])

    def log_escape_probabilities(self, mask: Any) -> np.ndarray:
        """``log P(x, B^c)`` for each ``x`` in ``B`` (increasing index), from the log-conditionals:
        finite for every state with an exit, however small.

        Raises
        ------
        InvalidParameterError, BasinError
            If the mask is not a proper subset of the states.
        """
        inside = basins.check_mask(mask, self.num_states)
        x, y, log_p, _ = self._log_moves()
        leaving = inside[x] & ~inside[y]
        out = np.full(self.num_states, -np.inf)
        np.logaddexp.at(out, x[leaving], log_p[leaving])
        return out[inside]

    def bottleneck(self) -> Bottleneck:
        """Minimising set and value of ``Phi_*`` (chains of at most 16 states).

        Masses and flows are formed in log space when a stationary probability is tiny
        (``Bottleneck.log_ratio`` is then set).
        """

        def compute() -> Bottleneck:
            log_pi = self.log_stationary()
            if (log_pi >= np.log(TRUSTED_MIN_PROBABILITY)).all() and not self._subnormal_moves():
                return basins.bottleneck(self.transition_matrix(), self.stationary())
            return basins.bottleneck(
                self.transition_matrix(), np.exp(log_pi), log_pi,
                log_P=self.log_transition_matrix(),
            )

        return self._cached("bottleneck", compute)

    def bottleneck_ratio(self) -> float:
        """``Phi_* = min{Phi(S) : mu(S) <= 1/2}`` by enumeration (at most 16 states).

        Raises
        ------
        StateSpaceTooLargeError
            If the chain has more than 16 states.
        UnderflowError
            If ``Phi_*`` is below the smallest normal float64 (read ``bottleneck().log_ratio``).
        """
        b = self.bottleneck()
        if b.log_ratio is None:
            return b.ratio
        return _checked_exp(b.log_ratio, "bottleneck ratio", "bottleneck().log_ratio")

    def escape_probabilities(self, mask: Any) -> np.ndarray:
        """Exact ``P(x, B^c)`` for each ``x`` in ``B`` (in increasing state index)."""
        return basins.escape_probabilities(self.transition_matrix(), mask)

    def expected_hitting_times(self, target_mask: Any) -> np.ndarray:
        """``E_x[min{t >= 0 : X_t in A}]`` for every state ``x`` (0 on ``A``)."""
        return basins.expected_hitting_times(self.transition_matrix(), target_mask)

    def hitting_probability_within(self, target_mask: Any, horizon: int) -> np.ndarray:
        """``P_x(X_t in A for some t <= horizon)`` for every state ``x`` (exact).

        See :func:`glauber.exact.basins.hitting_probability_within`.
        """
        return basins.hitting_probability_within(
            self.transition_matrix(), target_mask, horizon
        )

    # ------------------------------------------------------------ influence, margins, coupling
    def influence_matrix(self) -> np.ndarray:
        """``C[i, j] = c_ij(tau)``: the influence of site ``j`` on site ``i`` (Definition 2)."""
        return self._cached("C", lambda: influence.influence_matrix(self.conditionals()))

    def influence_rounding(self) -> float:
        """A bound on the rounding error of every entry of :meth:`influence_matrix`: its TVs
        are computed from the score table as :func:`glauber.theory.distances.tv_rounding_bound`
        describes (what :func:`glauber.theory.contraction.certify_contraction` adds to ``C``
        for a rigorous certificate)."""
        scores = self.scores()
        return float(tv_rounding_bound(self.q, float(np.abs(scores).max()),
                                       float(np.abs(self.log_conditionals()).max()), self.tau,
                                       RoundingFormats(scores.dtype, "float64")))

    def oscillation_matrix(self) -> np.ndarray:
        """Exact score oscillation ``Delta[i, j]`` of Lemma 6 (scores at ``tau = 1``)."""
        return self._cached("Delta", lambda: influence.oscillation_matrix(self.scores()))

    def margins(self, mask: Any) -> BasinMargins:
        """Exact Assumption 1 data of the basin ``mask`` (see :class:`BasinMargins`)."""
        return margins.exact_basin_margins(self.scores(), mask)

    def rectangles(self) -> RectangleSummary:
        """``|delta|`` over every rectangle of the chain (Proposition 4; 0 for a joint law)."""
        return self._cached(
            "rectangles", lambda: rectangles.rectangle_summary(self.log_conditionals())
        )

    def tabulated(self) -> TabulatedModel:
        """The model as its score table: a host model every estimator can enumerate for free."""
        return self._cached("tabulated", lambda: TabulatedModel(self.model, self.scores()))

    def one_step_hamming(self, x_index: int, y_index: int) -> float:
        """Exact ``E[d_H(X_1, Y_1)]`` under the same-site maximal coupling from ``(x, y)``
        (random scan of Gibbs updates, ``epsilon`` mixtures included).

        Raises
        ------
        InvalidKernelError
            For a Metropolis-Hastings kernel (its site law depends on ``x_i``).
        """
        return coupling.one_step_hamming(self._coupled_rows(), x_index, y_index)

    def one_step_hamming_all_pairs_adjacent(self) -> WorstAdjacentPair:
        """Max of the exact one-step ``E[d_H]`` over adjacent pairs (path coupling, LPW 14.6;
        kernels as :meth:`one_step_hamming`)."""
        return self._cached(
            "adjacent", lambda: coupling.worst_adjacent_pair(self._coupled_rows())
        )

    def _coupled_rows(self) -> np.ndarray:
        if self.kernel.metropolis:
            raise InvalidKernelError(
                "the same-site maximal coupling of glauber.exact.coupling couples laws that "
                f"ignore the site's own token; the {self.kernel.label} kernel's do not"
            )
        return self.site_rows()


def _checked_exp(log_value: float, what: str, instead: str) -> float:
    """``exp(log_value)``, refused when it underflows the normal float64 range."""
    if log_value < np.log(SMALLEST_NORMAL):
        raise UnderflowError(
            f"the {what} is 10^{log_value / np.log(10):.1f}, below the smallest float64; use "
            f"{instead} (its logarithm)"
        )
    return float(np.exp(log_value))
