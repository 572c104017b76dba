"""The exact Glauber chain of a small model over ``V^n``: a thin caching class over free functions.

``P_tau(x, x') = (1/n) sum_i 1{x_{-i} = x'_{-i}} p_tau(x'_i | x_{-i})`` (the paper's kernel,
Proposition 1). States are indexed in mixed radix with site 0 most significant
(:mod:`glauber.core.enumeration`). The algorithms live in
:mod:`~glauber.toy_models.stationary`, :mod:`~glauber.toy_models.mixing`,
:mod:`~glauber.toy_models.exact_spectral`, :mod:`~glauber.toy_models.exact_basins`,
:mod:`~glauber.toy_models.exact_influence`, :mod:`~glauber.toy_models.exact_margins` and
:mod:`~glauber.toy_models.exact_coupling`; this class computes the conditionals, the transition
matrix and the stationary distribution once and passes them on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import scipy.sparse as sp

from glauber.core.arrays import log_softmax
from glauber.core.enumeration import (
    all_states,
    check_state_space,
    neighbour_indices,
    state_index,
)
from glauber.core.protocol import ConditionalModel
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import NonPositiveConditionalError, StateSpaceTooLargeError
from glauber.theory.escape import BasinMargins
from glauber.theory.kernels import REVERSIBILITY_RTOL, is_reversible
from glauber.toy_models import (
    exact_basins,
    exact_coupling,
    exact_influence,
    exact_margins,
    exact_spectral,
    mixing,
)
from glauber.toy_models.exact_basins import Bottleneck
from glauber.toy_models.exact_coupling import WorstAdjacentPair
from glauber.toy_models.score_table import DEFAULT_BATCH_SIZE, score_table
from glauber.toy_models.stationary import (
    StationaryMethod,
    StationarySolution,
    stationary_distribution,
)


class ExactChain:
    """Exact Glauber chain of ``model`` at temperature ``tau`` over all ``q**n`` states.

    Parameters
    ----------
    model : ConditionalModel
        A model with ``n`` sites and ``q`` tokens (toy models answer in float64 numpy).
    tau : float
        Temperature, finite and > 0 (``tau = 1 / beta`` for the Ising heat bath).
    max_states : int
        Refuse state spaces with more than this many states (default ``2**16``).
    batch_size : int
        Most rows per :meth:`scores` call of the model while the score table is built.
    cache : bool, str, Path or None
        Where the score table is kept on disk (see
        :func:`glauber.toy_models.score_table.score_table`; by default only for models with a
        ``cache_key``, e.g. a restricted masked LM).
    progress : callable, optional
        ``progress(rows_done, rows_total)`` while the score table is built.

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and positive.
    StateSpaceTooLargeError
        If ``q**n > max_states``.

    Notes
    -----
    Everything is computed lazily and cached. The conditionals are checked on first use: a
    conditional that underflows to exactly 0 raises :class:`NonPositiveConditionalError` (tiny
    positive ones such as ``1e-40`` are legitimate and kept exactly). Dense algorithms (GTH up to
    4096 states, matrix powers and eigenvalues up to 4096) refuse larger chains with
    :class:`StateSpaceTooLargeError`; distances and mixing times switch to sparse stepping there.

    Examples
    --------
    >>> from glauber.toy_models.base import FunctionModel
    >>> copy = FunctionModel(2, 2, lambda x, i: np.where(x[:, [1 - i]] == np.arange(2), 1.0, 0.0))
    >>> chain = ExactChain(copy, tau=1.0)
    >>> chain.stationary().round(6).tolist()  # Gibbs law exp(1{x_0 = x_1}) / Z
    [0.365529, 0.134471, 0.134471, 0.365529]
    >>> chain.mixing_time(0.25)
    3
    """

    def __init__(
        self,
        model: ConditionalModel,
        tau: float,
        max_states: int = 2**16,
        batch_size: int = DEFAULT_BATCH_SIZE,
        cache: bool | str | Path | None = None,
        progress: Callable[[int, int], Any] | None = None,
    ) -> None:
        self.tau = check_tau(tau)
        self.model = model
        self.n = int(model.n)
        self.q = int(model.q)
        self.num_states = check_state_space(self.n, self.q, max_states)
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.cache = cache
        self.progress = progress
        self._cache: dict[str, Any] = {}

    def __repr__(self) -> str:
        name = getattr(self.model, "name", type(self.model).__name__)
        return f"ExactChain(model={name!r}, n={self.n}, q={self.q}, tau={self.tau})"

    def _cached(self, key: str, compute: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    # ----------------------------------------------------------------- states and conditionals
    def states(self) -> np.ndarray:
        """All states, int64 ``[q**n, n]``, in mixed-radix order (site 0 most significant)."""
        return self._cached("states", lambda: all_states(self.n, self.q))

    def index_of(self, states: Any) -> np.ndarray:
        """Mixed-radix index of each state (``[B, n] -> [B]``, or ``[n]`` -> a scalar array)."""
        return state_index(states, self.q)

    def scores(self) -> np.ndarray:
        """Scores ``s_i(a; x_{-i})`` at ``tau = 1`` for every site and state: ``[n, q**n, q]``.

        Built once by :func:`glauber.toy_models.score_table.score_table` (``n q^(n-1)`` queries,
        batched; on disk for models with a ``cache_key``) and shared by :meth:`at` with the
        chains of every other temperature.
        """
        return self._cached(
            "scores",
            lambda: score_table(self.model, self.batch_size, self.cache, self.progress),
        )

    def at(self, tau: float) -> "ExactChain":
        """The exact chain of the same model at another temperature, sharing the score table.

        A sweep over temperatures costs one table build (scores are tau-free).

        Raises
        ------
        InvalidTemperatureError
            If ``tau`` is not finite and > 0.
        """
        chain = ExactChain(self.model, tau, self.num_states, self.batch_size, self.cache)
        chain._cache["scores"] = self.scores()
        return chain

    def conditionals(self) -> np.ndarray:
        """Exact conditionals ``p_tau(a | x_{-i})`` for every site and state: ``[n, q**n, q]``.

        ``softmax(s / tau)`` of the score table in float64 (the one temperature scaling of
        :func:`glauber.core.conditionals.log_conditionals`, applied to the table).

        Raises
        ------
        NonPositiveConditionalError
            If a conditional underflows to exactly 0 (positivity, Proposition 1, fails in float64).
        NonFiniteScoresError
            If the model returns non-finite scores.
        """

        def compute() -> np.ndarray:
            p = np.exp(log_softmax(self.scores() / self.tau))
            if not (p > 0.0).all():
                i, x, a = (int(v) for v in np.argwhere(p <= 0.0)[0])
                raise NonPositiveConditionalError(
                    f"the conditional p(a={a} | x_-{i}) at state {self.states()[x].tolist()} "
                    f"underflows to 0 at tau = {self.tau}; positivity (Proposition 1) fails in "
                    "float64: raise tau or reduce the score differences"
                )
            return p

        return self._cached("conditionals", compute)

    # ------------------------------------------------------------------------ kernel and pi
    def transition_matrix(self) -> sp.csr_matrix:
        """The Glauber kernel ``P_tau`` as scipy CSR ``[q**n, q**n]``, built vectorised."""

        def compute() -> sp.csr_matrix:
            p = self.conditionals()
            S = self.num_states
            rows = np.broadcast_to(np.arange(S)[None, :, None], p.shape)
            cols = neighbour_indices(self.n, self.q)
            P = sp.coo_matrix(
                ((p / self.n).ravel(), (rows.ravel(), cols.ravel())), shape=(S, S)
            ).tocsr()  # duplicate entries (the n self-loop terms) are summed
            return P

        return self._cached("P", compute)

    def dense_transition_matrix(self) -> np.ndarray:
        """``P_tau`` as a dense float64 array (cached); the dense algorithms start from it.

        Raises
        ------
        StateSpaceTooLargeError
            If the chain has more than ``mixing.MAX_DENSE_STATES`` (4096) states.
        """
        if self.num_states > mixing.MAX_DENSE_STATES:
            raise StateSpaceTooLargeError(
                f"dense algorithms (matrix powers, eigenvalues) need an {self.num_states} x "
                f"{self.num_states} matrix, over the limit of {mixing.MAX_DENSE_STATES} states; "
                "use a smaller model (the sparse quantities, e.g. conductance, still work)"
            )
        return self._cached("P_dense", lambda: self.transition_matrix().toarray())

    def stationary_solution(self, method: StationaryMethod = "auto") -> StationarySolution:
        """Stationary distribution with its diagnostics (residual, clipped mass, method used).

        See :func:`glauber.toy_models.stationary.stationary_distribution`.
        """
        return self._cached(
            f"pi:{method}", lambda: stationary_distribution(self.transition_matrix(), method)
        )

    def stationary(self, method: StationaryMethod = "auto") -> np.ndarray:
        """Stationary distribution ``mu_tau`` (Corollary 2: unique when conditionals are positive).

        ``"gth"`` is accurate to relative precision on every entry (also ``1e-40``); ``"sparse"``
        (direct) and ``"iterative"`` (Krylov) only normwise; ``"auto"`` uses GTH up to 4096
        states, the direct solve up to 8192 and the Krylov solve above.

        Raises
        ------
        ConvergenceError
            If the sparse solve's residual exceeds its tolerance.
        """
        return self.stationary_solution(method).pi

    # -------------------------------------------------------------------------------- mixing
    def distance(
        self,
        t: int,
        backend: mixing.Backend = "numpy",
        device: str | None = None,
        method: mixing.Method = "auto",
    ) -> float:
        """Worst-start TV distance ``d(t) = max_x ||P^t(x, .) - mu||_TV``.

        See :func:`glauber.toy_models.mixing.distance_curve` for ``backend``, ``device`` and
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
        """``d(t)`` at each time in ``ts`` (see :meth:`distance`)."""
        return mixing.distance_curve(
            self._mixing_matrix(method), self.stationary(), ts, backend, device, method=method
        )

    def mixing_time(
        self,
        eps: float = 0.25,
        backend: mixing.Backend = "numpy",
        device: str | None = None,
        method: mixing.Method = "auto",
    ) -> int:
        """Worst-start ``t_mix(eps) = min{t : d(t) <= eps}`` (LPW 2nd ed., Section 4.5).

        ``method``: ``"squaring"`` (doubling and bisection, dense, up to 4096 states),
        ``"stepping"`` (sparse point-mass stepping, any size that fits two ``S x b`` blocks) or
        ``"auto"`` (see :func:`glauber.toy_models.mixing.mixing_time`); all are exact.

        Raises
        ------
        InvalidProbabilityError
            If ``eps`` is not in (0, 1).
        ConvergenceError
            If the chain has not mixed by ``t = 2**62`` (squaring) or within the stepping limit.
        StateSpaceTooLargeError
            If ``method="squaring"`` is asked of more than 4096 states.
        """
        return mixing.mixing_time(
            self._mixing_matrix(method), self.stationary(), eps, backend, device, method=method
        )

    def _mixing_matrix(self, method: str) -> Any:
        """The cached dense ``P`` where squaring may run, else the sparse one."""
        if method != "stepping" and self.num_states <= mixing.MAX_DENSE_STATES:
            return self.dense_transition_matrix()
        return self.transition_matrix()

    # ------------------------------------------------------------------------------ spectrum
    def is_reversible(self, rtol: float = REVERSIBILITY_RTOL) -> bool:
        """Detailed balance ``mu(x) P(x, y) = mu(y) P(y, x)`` to relative ``rtol`` (Theorem 3).

        See :func:`glauber.theory.kernels.is_reversible`. Each flow is compared relative to its
        own size, which needs ``mu`` accurate entrywise: GTH (up to 4096 states) gives that;
        above, the normwise solvers can fail tiny flows.
        """
        return is_reversible(self.transition_matrix(), self.stationary(), rtol)

    def spectral_gap(self) -> float:
        """``1 - lambda_2`` if reversible (sqrt(pi) symmetrisation), else the absolute gap.

        See :func:`glauber.toy_models.exact_spectral.spectral_gap`.
        """
        return self._cached(
            "gap",
            lambda: exact_spectral.spectral_gap(self.dense_transition_matrix(), self.stationary()),
        )

    def absolute_spectral_gap(self) -> float:
        """``1 - max{|lambda| : lambda != 1}`` (LPW 2nd ed., Section 12.2)."""
        return self._cached(
            "abs_gap",
            lambda: exact_spectral.absolute_spectral_gap(
                self.dense_transition_matrix(), self.stationary()
            ),
        )

    def relaxation_time(self) -> float:
        """``t_rel = 1 / absolute_spectral_gap()`` (LPW 2nd ed., Section 12.2)."""
        gap = self.absolute_spectral_gap()
        return float(np.inf) if gap <= 0.0 else 1.0 / gap

    # -------------------------------------------------------------------------------- basins
    def conductance(self, mask: Any) -> float:
        """``Phi(S) = sum_{x in S} mu(x) P(x, S^c) / mu(S)`` (Theorem 8's definition).

        Raises
        ------
        BasinError
            If the set is empty or the whole state space.
        """
        return exact_basins.conductance(self.transition_matrix(), self.stationary(), mask)

    def bottleneck(self) -> Bottleneck:
        """Minimising set and value of ``Phi_*`` (chains of at most 16 states)."""
        return self._cached(
            "bottleneck",
            lambda: exact_basins.bottleneck(self.transition_matrix(), self.stationary()),
        )

    def bottleneck_ratio(self) -> float:
        """``Phi_* = min{Phi(S) : mu(S) <= 1/2}`` by enumeration (at most 16 states).

        Raises
        ------
        StateSpaceTooLargeError
            If the chain has more than 16 states.
        """
        return self.bottleneck().ratio

    def escape_probabilities(self, mask: Any) -> np.ndarray:
        """Exact ``P(x, B^c)`` for each ``x`` in ``B`` (in increasing state index)."""
        return exact_basins.escape_probabilities(self.transition_matrix(), mask)

    def expected_hitting_times(self, target_mask: Any) -> np.ndarray:
        """``E_x[min{t >= 0 : X_t in A}]`` for every state ``x`` (0 on ``A``)."""
        return exact_basins.expected_hitting_times(self.transition_matrix(), target_mask)

    def hitting_probability_within(self, target_mask: Any, horizon: int) -> np.ndarray:
        """``P_x(X_t in A for some t <= horizon)`` for every state ``x`` (exact).

        See :func:`glauber.toy_models.exact_basins.hitting_probability_within`.
        """
        return exact_basins.hitting_probability_within(
            self.transition_matrix(), target_mask, horizon
        )

    # ------------------------------------------------------------ influence, margins, coupling
    def influence_matrix(self) -> np.ndarray:
        """``C[i, j] = c_ij(tau)``: the influence of site ``j`` on site ``i`` (Definition 2)."""
        return self._cached("C", lambda: exact_influence.influence_matrix(self.conditionals()))

    def oscillation_matrix(self) -> np.ndarray:
        """Exact score oscillation ``Delta[i, j]`` of Lemma 6 (scores at ``tau = 1``)."""
        return self._cached("Delta", lambda: exact_influence.oscillation_matrix(self.scores()))

    def margins(self, mask: Any) -> BasinMargins:
        """Exact Assumption 1 data of the basin ``mask`` (see :class:`BasinMargins`)."""
        return exact_margins.exact_basin_margins(self.scores(), mask)

    def one_step_hamming(self, x_index: int, y_index: int) -> float:
        """Exact ``E[d_H(X_1, Y_1)]`` under the same-site maximal coupling from ``(x, y)``."""
        return exact_coupling.one_step_hamming(self.conditionals(), x_index, y_index)

    def one_step_hamming_all_pairs_adjacent(self) -> WorstAdjacentPair:
        """Max of the exact one-step ``E[d_H]`` over adjacent pairs (path coupling, LPW 14.6)."""
        return self._cached(
            "adjacent", lambda: exact_coupling.worst_adjacent_pair(self.conditionals())
        )


__all__ = [
    "ExactChain",
]
