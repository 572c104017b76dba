"""The exact Glauber chain of a small model over ``V^n``: a thin caching class over free functions.

``P_tau(x, x') = (1/n) sum_i 1{x_{-i} = x'_{-i}} p_tau(x'_i | x_{-i})`` (the paper's kernel,
Proposition 1), or another kernel of :mod:`glauber.core.kernel_spec` (``kernel=``,
``epsilon=``): a random scan of other site updates is built here from its site rows
(:mod:`glauber.exact.kernels`), a sweep or a shuffled scan by
:class:`glauber.exact.scan_chain.ScanChain`, which ``ExactChain(...)`` returns for them. States are indexed in mixed radix with site 0 most significant
(:mod:`glauber.core.enumeration`). The algorithms live in
:mod:`~glauber.exact.stationary`, :mod:`~glauber.exact.mixing`,
:mod:`~glauber.exact.spectral`, :mod:`~glauber.exact.basins`,
:mod:`~glauber.exact.influence`, :mod:`~glauber.exact.margins` and
:mod:`~glauber.exact.coupling`; this class computes the conditionals, the transition
matrix and the stationary distribution once and passes them on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import scipy.sparse as sp

from glauber.core.arrays import log_softmax, logsumexp
from glauber.core.enumeration import (
    all_states,
    check_state_space,
    neighbour_indices,
    state_index,
)
from glauber.core.kernel_spec import KernelSpec, check_kernel
from glauber.core.protocol import ConditionalModel
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import (
    InvalidKernelError,
    InvalidParameterError,
    NonFiniteScoresError,
    NonPositiveConditionalError,
    SequenceLengthError,
    StateSpaceTooLargeError,
    UnderflowError,
    VocabularyError,
)
from glauber.exact import (
    basins,
    coupling,
    influence,
    kernels,
    margins,
    mixing,
    rectangles,
    spectral,
)
from glauber.exact.basins import Bottleneck
from glauber.exact.coupling import WorstAdjacentPair
from glauber.exact.factored import factorable
from glauber.exact.rectangles import RectangleSummary
from glauber.exact.score_table import (
    DEFAULT_BATCH_SIZE,
    TabulatedModel,
    score_table,
)
from glauber.exact.stationary import (
    GTH_MAX_STATES,
    LOG_GTH_MAX_STATES,
    TRUSTED_MIN_PROBABILITY,
    StationaryMethod,
    StationarySolution,
    log_gth_stationary,
    log_stationary_distribution,
    stationary_distribution,
)
from glauber.exact.stepping import GlauberKernel, SiteRowsKernel
from glauber.theory.escape import BasinMargins
from glauber.theory.kernels import REVERSIBILITY_RTOL, flow_defect


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
        :func:`glauber.exact.score_table.score_table`; by default only for models with a
        ``cache_key``, e.g. a restricted masked LM).
    progress : callable, optional
        ``progress(rows_done, rows_total)`` while the score table is built.
    kernel : str or KernelSpec
        ``"random"`` (the paper's kernel, default), ``"sweep"``, ``"shuffled"``, ``"mh:pll"``,
        ``"mh:logits"`` (see :mod:`glauber.core.kernel_spec`). Everything below is computed
        for that kernel; the influence, oscillation, margins and rectangles describe the
        model's conditionals whatever the kernel.
    epsilon : float, optional
        Probability of a uniform redraw at each site update, in ``[0, 1]`` (default: 0, or the
        ``epsilon`` of a ``KernelSpec``).

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and positive.
    StateSpaceTooLargeError
        If ``q**n > max_states``.
    InvalidKernelError, InvalidProbabilityError
        On an unknown kernel or ``epsilon`` outside ``[0, 1]``.

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

    def __new__(cls, *args: Any, kernel: str | KernelSpec = "random",
                epsilon: float | None = None, **kwargs: Any) -> "ExactChain":
        if cls is ExactChain and check_kernel(kernel, epsilon).scan != "random":
            from glauber.exact.scan_chain import ScanChain

            return super().__new__(ScanChain)
        return super().__new__(cls)

    def __init__(
        self,
        model: ConditionalModel,
        tau: float,
        max_states: int = 2**16,
        batch_size: int = DEFAULT_BATCH_SIZE,
        cache: bool | str | Path | None = None,
        progress: Callable[[int, int], Any] | None = None,
        *,
        kernel: str | KernelSpec = "random",
        epsilon: float | None = None,
    ) -> None:
        self.kernel = check_kernel(kernel, epsilon)
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
        kernel = "" if self.kernel.is_plain else f", kernel={self.kernel.label!r}"
        return f"ExactChain(model={name!r}, n={self.n}, q={self.q}, tau={self.tau}{kernel})"

    def _cached(self, key: str, compute: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    # ----------------------------------------------------------------- states and conditionals
    def states(self) -> np.ndarray:
        """All states, int64 ``[q**n, n]``, in mixed-radix order (site 0 most significant)."""
        return self._cached("states", lambda: all_states(self.n, self.q))

    def index_of(self, states: Any) -> np.ndarray:
        """Mixed-radix index of each state (``[B, n] -> [B]``, or ``[n]`` -> a scalar array).

        Raises
        ------
        SequenceLengthError
            If a state does not have ``n`` entries (or ``states`` is not ``[n]`` or ``[B, n]``).
        VocabularyError
            If an entry is not an integer in ``0..q-1``.
        """
        arr = np.asarray(states)
        if arr.ndim not in (1, 2) or arr.shape[-1] != self.n:
            raise SequenceLengthError(
                f"states must have shape [n] or [B, n] with n = {self.n}, got {arr.shape}"
            )
        if arr.size and arr.dtype.kind not in "iu":
            raise VocabularyError(
                f"states must hold integer tokens 0..{self.q - 1}, got dtype {arr.dtype}"
            )
        return state_index(arr, self.q)

    def scores(self) -> np.ndarray:
        """Scores ``s_i(a; x_{-i})`` at ``tau = 1`` for every site and state: ``[n, q**n, q]``.

        Built once by :func:`glauber.exact.score_table.score_table` (``n q^(n-1)`` queries,
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
        chain = ExactChain(self.model, tau, self.num_states, self.batch_size, self.cache,
                           kernel=self.kernel)
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
            p = np.exp(self.log_conditionals())
            if not (p > 0.0).all():
                i, x, a = (int(v) for v in np.argwhere(p <= 0.0)[0])
                raise NonPositiveConditionalError(
                    f"the conditional p(a={a} | x_-{i}) at state {self.states()[x].tolist()} "
                    f"underflows to 0 at tau = {self.tau}; positivity (Proposition 1) fails in "
                    "float64: raise tau or reduce the score differences"
                )
            return p

        return self._cached("conditionals", compute)

    def log_conditionals(self) -> np.ndarray:
        """``log p_tau(a | x_{-i})`` for every site and state: ``[n, q**n, q]`` (finite; the log
        forms of the basin and stationary quantities start from these, so conditionals that are
        subnormal, or underflow, in linear form keep their relative accuracy).

        Raises
        ------
        NonFiniteScoresError
            If the model returns non-finite scores, or ``scores / tau`` overflows.
        """

        def compute() -> np.ndarray:
            with np.errstate(over="ignore", invalid="ignore"):  # checked just below
                lp = log_softmax(self.scores() / self.tau)
            if not np.isfinite(lp).all():
                raise NonFiniteScoresError(
                    f"scores / tau overflow float64 for {self!r}; raise tau (the scores are "
                    "finite, their ratio to the temperature is not)"
                )
            return lp

        return self._cached("log_conditionals", compute)

    # ----------------------------------------------------------------- the kernel's site rows
    def log_site_rows(self) -> np.ndarray:
        """``log K_i(x, x^(i -> a))`` of the kernel's site updates, ``[n, q**n, q]``
        (:func:`glauber.exact.kernels.site_log_rows`): :meth:`log_conditionals` for Gibbs
        updates, their ``epsilon`` mixture, or the Metropolis-Hastings kernel with its rejection
        mass at ``a = x_i``."""
        if self.kernel.energy is None and self.kernel.epsilon == 0.0:
            return self.log_conditionals()
        return self._cached("log_rows", lambda: kernels.site_log_rows(
            self.log_conditionals(), self.kernel,
            self.log_target() if self.kernel.metropolis else None))

    def site_rows(self) -> np.ndarray:
        """``K_i(x, x^(i -> a))``, ``[n, q**n, q]`` (:meth:`conditionals` for the paper's kernel).

        Raises
        ------
        NonPositiveConditionalError
            If a move probability underflows to 0 (an ``epsilon`` mixture never does).
        """
        if self.kernel.energy is None and self.kernel.epsilon == 0.0:
            return self.conditionals()

        def compute() -> np.ndarray:
            rows = np.exp(self.log_site_rows())
            if not (rows > 0.0).all():
                i, x, a = (int(v) for v in np.argwhere(rows <= 0.0)[0])
                raise NonPositiveConditionalError(
                    f"the {self.kernel.label} move to token {a} at site {i} from state "
                    f"{self.states()[x].tolist()} has probability 10^"
                    f"{self.log_site_rows()[i, x, a] / np.log(10):.0f}, which underflows "
                    f"float64 at tau = {self.tau}; raise tau or use epsilon > 0"
                )
            return rows

        return self._cached("rows", compute)

    def energy(self, kind: str | None = None) -> np.ndarray:
        """``E(x)`` of every state (:func:`glauber.exact.kernels.energies`): ``kind`` ``"pll"``
        or ``"logits"``, by default the kernel's Metropolis-Hastings energy.

        Raises
        ------
        InvalidKernelError
            If ``kind`` is None and the kernel has no energy.
        """
        kind = self._energy_kind(kind)
        return self._cached(f"energy:{kind}", lambda: kernels.energies(self.scores(), kind))

    def log_target(self, kind: str | None = None) -> np.ndarray:
        """``log pi_tau(x) = -E(x)/tau - log Z``: the Metropolis-Hastings target (normalised)."""
        kind = self._energy_kind(kind)
        return self._cached(f"log_target:{kind}",
                            lambda: kernels.log_target(self.energy(kind), self.tau))

    def target(self, kind: str | None = None) -> np.ndarray:
        """``pi_tau(x) = exp(-E(x)/tau) / Z`` (see :meth:`log_target`)."""
        return np.exp(self.log_target(kind))

    def _energy_kind(self, kind: str | None) -> str:
        if kind is None:
            if self.kernel.energy is None:
                raise InvalidKernelError(
                    f"the {self.kernel.label} kernel has no energy; pass kind='pll' or 'logits'"
                )
            return self.kernel.energy
        if kind not in ("pll", "logits"):
            raise InvalidKernelError(f"energy kind must be 'pll' or 'logits', got {kind!r}")
        return kind

    def step_law(self, mu: Any) -> np.ndarray:
        """``mu P``: one step of the kernel applied to a law ``mu`` (``[S]``)."""
        mu = np.asarray(mu, dtype=np.float64)
        if mu.shape != (self.num_states,):
            raise InvalidParameterError(
                f"mu must be a law over the {self.num_states} states, got shape {mu.shape}"
            )
        return np.asarray(self.transition_matrix().T @ mu)

    def _log_moves(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every move ``x -> y = x^(i -> a)``, ``a != x_i``: ``(x, y, log P(x,y), log P(y,x))``."""

        def compute() -> tuple[np.ndarray, ...]:
            lp = self.log_site_rows()
            nb = neighbour_indices(self.n, self.q)  # [n, S, q]
            states = self.states()
            i, x, a = np.nonzero(np.arange(self.q)[None, None, :] != states.T[:, :, None])
            y = nb[i, x, a]
            log_n = np.log(self.n)
            return x, y, lp[i, x, a] - log_n, lp[i, y, states[x, i]] - log_n

        return self._cached("log_moves", compute)

    def log_transition_matrix(self) -> np.ndarray:
        """Dense ``log P_tau`` off the diagonal (``-inf`` off the moves; the diagonal, never used
        by GTH, is ``-inf`` too), from :meth:`log_conditionals`.

        Raises
        ------
        StateSpaceTooLargeError
            If the chain has more than 4096 states.
        """
        if self.num_states > mixing.MAX_DENSE_STATES:
            raise StateSpaceTooLargeError(
                f"a dense log P of {self.num_states} states exceeds the limit of "
                f"{mixing.MAX_DENSE_STATES}; use a smaller model"
            )

        def compute() -> np.ndarray:
            x, y, log_p, _ = self._log_moves()
            out = np.full((self.num_states, self.num_states), -np.inf)
            out[x, y] = log_p
            return out

        return self._cached("log_P", compute)

    # ------------------------------------------------------------------------ kernel and pi
    def transition_matrix(self) -> sp.csr_matrix:
        """The kernel ``P_tau`` as scipy CSR ``[q**n, q**n]``, built vectorised (random scan:
        ``(1/n) sum_i K_i`` from :meth:`site_rows`)."""

        def compute() -> sp.csr_matrix:
            p = self.site_rows()
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

        See :func:`glauber.exact.stationary.stationary_distribution`.
        """
        return self._cached(
            f"pi:{method}", lambda: stationary_distribution(self.transition_matrix(), method)
        )

    def stationary(self, method: StationaryMethod = "auto") -> np.ndarray:
        """Stationary distribution ``mu_tau`` (Corollary 2: unique when conditionals are positive).

        ``"gth"`` is accurate to relative precision on every entry (also ``1e-40``); ``"sparse"``
        (direct) and ``"iterative"`` (Krylov) only normwise; ``"auto"`` uses GTH up to 4096
        states, the direct solve up to 8192 and the Krylov solve above. A GTH law with entries
        below :data:`~glauber.exact.stationary.TRUSTED_MIN_PROBABILITY` is recomputed from
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

    def _checked_stationary(self, method: StationaryMethod) -> np.ndarray:
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
        if (log_pi < np.log(_SMALLEST_NORMAL)).any():
            k = int(np.argmin(log_pi))
            raise UnderflowError(
                f"the stationary probability of state {self.states()[k].tolist()} is "
                f"10^{log_pi[k] / np.log(10):.1f}, below the smallest float64; use "
                "log_stationary() (log pi, exact to relative precision) instead of stationary()"
            )
        return np.exp(log_pi)

    def log_stationary(self, method: StationaryMethod = "auto") -> np.ndarray:
        """``log mu_tau``, with no entry lost to underflow (entries of ``1e-392`` are ``-901.6``).

        GTH carried out in log space up to 1024 states
        (:func:`glauber.exact.stationary.log_gth_stationary`), else the log of the float64
        law when none of its entries is below
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
            if self._subnormal_moves():
                raise UnderflowError(
                    "some transition probabilities are subnormal in float64 (no relative "
                    f"accuracy) and log-space GTH is limited to {LOG_GTH_MAX_STATES} states; "
                    "raise tau or use a smaller chain"
                )
            return log_stationary_distribution(self.transition_matrix(), method)

        return self._cached(f"log_pi:{method}", compute)

    def _subnormal_moves(self) -> bool:
        """Some transition probability is below the normal float64 range (inexact linearly)."""
        return bool((self._log_moves()[2] < np.log(_SMALLEST_NORMAL)).any())

    def _stationary_for_distances(self) -> np.ndarray:
        """``mu`` to absolute accuracy (underflowed entries 0): all a TV distance needs."""
        try:
            return self.stationary()
        except UnderflowError:
            return np.exp(self.log_stationary())

    # -------------------------------------------------------------------------------- mixing
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
        """``d(t)`` at each time in ``ts`` (see :meth:`distance`)."""
        return mixing.distance_curve(
            self._mixing_matrix(method, backend), self._stationary_for_distances(), ts, backend,
            device,
            method=method,
        )

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
        """
        return mixing.mixing_time(
            self._mixing_matrix(method, backend), self._stationary_for_distances(), eps, backend,
            device,
            method=method,
            max_steps=max_steps,
        )

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

    # ------------------------------------------------------------------------------ spectrum
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

    def _reversibility_defect(self) -> float:

        def compute() -> float:
            log_pi = self.log_stationary()
            x, y, log_p, log_back = self._log_moves()
            return flow_defect(log_pi[x] + log_p, log_pi[y] + log_back)

        return self._cached("rev_defect", compute)

    def spectral_gap(self) -> float:
        """``1 - lambda_2`` if reversible (sqrt(pi) symmetrisation), else the absolute gap.

        To relative accuracy 1e-6: gaps float64 cannot resolve are recomputed in extended
        precision on chains of at most 32 states, and refused above. See
        :func:`glauber.exact.spectral.spectral_gap`.

        Raises
        ------
        PrecisionError
            If the gap is below float64's resolution on a chain of more than 32 states.
        """
        return self._cached(
            "gap",
            lambda: spectral.spectral_gap(
                self.dense_transition_matrix(), None, reversible=self.is_reversible(),
                log_P=self.log_transition_matrix,
            ),
        )

    def absolute_spectral_gap(self) -> float:
        """``1 - max{|lambda| : lambda != 1}`` (LPW 2nd ed., Section 12.2).

        Accuracy as :meth:`spectral_gap`; above the dense limit (4096 states) by ARPACK
        (:func:`glauber.exact.spectral.sparse_absolute_spectral_gap`), to absolute
        accuracy ~1e-10 and refusing gaps below 1e-6.

        Raises
        ------
        PrecisionError
            If the gap is below float64's resolution on a chain of more than 32 states.
        """
        if self.num_states > mixing.MAX_DENSE_STATES:
            return self._cached(
                "abs_gap",
                lambda: spectral.sparse_absolute_spectral_gap(self.transition_matrix()),
            )
        return self._cached(
            "abs_gap",
            lambda: spectral.absolute_spectral_gap(
                self.dense_transition_matrix(), None, reversible=self.is_reversible(),
                log_P=self.log_transition_matrix,
            ),
        )

    def relaxation_time(self) -> float:
        """``t_rel = 1 / absolute_spectral_gap()`` (LPW 2nd ed., Section 12.2)."""
        gap = self.absolute_spectral_gap()
        return float(np.inf) if gap <= 0.0 else 1.0 / gap

    # -------------------------------------------------------------------------------- basins
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


_SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)


def _checked_exp(log_value: float, what: str, instead: str) -> float:
    """``exp(log_value)``, refused when it underflows the normal float64 range."""
    if log_value < np.log(_SMALLEST_NORMAL):
        raise UnderflowError(
            f"the {what} is 10^{log_value / np.log(10):.1f}, below the smallest float64; use "
            f"{instead} (its logarithm)"
        )
    return float(np.exp(log_value))


__all__ = [
    "ExactChain",
]
