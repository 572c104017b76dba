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
from typing import Any, Callable, Iterable, Literal

import numpy as np
import scipy.sparse as sp

from glauber.core.arrays import log_softmax, logsumexp
from glauber.core.enumeration import (
    all_states,
    neighbour_indices,
    state_index,
)
from glauber.core.kernel_spec import KernelSpec, check_kernel
from glauber.core.protocol import ConditionalModel
from glauber.core.site_model import SiteScoreModel
from glauber.core.validation import check_eps, check_positive_int, check_tau
from glauber.errors import (
    BracketOnlyError,
    EstimateOnlyError,
    GapBelowFloorError,
    GlauberError,
    InvalidKernelError,
    InvalidParameterError,
    NonFiniteScoresError,
    NonPositiveConditionalError,
    PrecisionError,
    SequenceLengthError,
    StateSpaceTooLargeError,
    UnderflowError,
    VocabularyError,
)
from glauber.exact import (
    basins,
    brackets,
    coupling,
    influence,
    kernels,
    krylov,
    margins,
    mixing,
    rectangles,
    sparse,
    spectral,
)
from glauber.exact.basins import Bottleneck
from glauber.exact.brackets import MixingBracket
from glauber.exact.coupling import WorstAdjacentPair
from glauber.exact.factored import factor_matrix, factorable
from glauber.exact.krylov import SpectralEstimate
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
        Refuse state spaces with more than this many states (default
        :data:`~glauber.exact.sparse.SPARSE_MAX_STATES`, ``2**20``: the sparse path).
    batch_size : int
        Most rows per :meth:`scores` call of the model while the score table is built (host
        numpy models, :class:`~glauber.core.site_model.SiteScoreModel`, use at least
        :data:`HOST_BATCH_SIZE`).
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
        If ``q**n > max_states`` (the message says which limit and what would fit).
    InvalidKernelError, InvalidProbabilityError
        On an unknown kernel or ``epsilon`` outside ``[0, 1]``.

    Notes
    -----
    Everything is computed lazily and cached. The conditionals are checked on first use: a
    conditional that underflows to exactly 0 raises :class:`NonPositiveConditionalError` (tiny
    positive ones such as ``1e-40`` are legitimate and kept exactly). Dense algorithms (GTH up to
    4096 states, matrix powers and eigenvalues up to 4096) refuse larger chains with
    :class:`StateSpaceTooLargeError`; ``"auto"`` switches to the sparse path there
    (:attr:`algebra` says which): the stationary law from the model's log-joint
    (:mod:`~glauber.exact.sparse`) or a sparse solve, the gap of a reversible chain by Lanczos
    (:mod:`~glauber.exact.krylov`, :meth:`spectral_estimate` gives its error bound), mixing times
    by sparse stepping up to :data:`EXACT_TMIX_MAX_STATES` states and as rigorous brackets above
    (:meth:`mixing_bracket`, :mod:`~glauber.exact.brackets`).

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

    #: The chain class of each other scan (``"sweep"``, ``"shuffled"``), registered by the
    #: subclass itself (``class ScanChain(ExactChain, scans=...)``, imported by the package
    #: ``__init__``), so that ``ExactChain(..., kernel=...)`` returns it without this module
    #: importing the module above it.
    _SCAN_CLASSES: dict[str, type] = {}

    def __init_subclass__(cls, scans: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for scan in scans:
            ExactChain._SCAN_CLASSES[scan] = cls

    def __new__(cls, *args: Any, kernel: str | KernelSpec = "random",
                epsilon: float | None = None, **kwargs: Any) -> "ExactChain":
        if cls is ExactChain:
            scan = check_kernel(kernel, epsilon).scan
            if scan != "random":
                return super().__new__(ExactChain._SCAN_CLASSES[scan])
        return super().__new__(cls)

    def __init__(
        self,
        model: ConditionalModel,
        tau: float,
        max_states: int = sparse.SPARSE_MAX_STATES,
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
        self.num_states = sparse.check_sparse_size(self.n, self.q, max_states)
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
        batch = self.batch_size
        if isinstance(self.model, SiteScoreModel):  # numpy on the host: a call's overhead
            batch = max(batch, HOST_BATCH_SIZE)  # dominates small batches, memory does not
        return self._cached(
            "scores", lambda: score_table(self.model, batch, self.cache, self.progress),
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

        return self._cached("P", self._build_kernel)

    def _build_kernel(self) -> sp.csr_matrix:
        """``P``; on the sparse path its symmetrisation too, in the same pass (cached for
        :meth:`spectral_estimate`, sharing the index arrays)."""
        if self.algebra == "dense" or not self.kernel.is_plain:
            return sparse.glauber_csr(self.site_rows())
        P, A = sparse.kernel_and_symmetrisation(self.conditionals(), self.log_conditionals())
        self._cache["A_sym"] = A
        return P

    def _symmetrisation(self) -> sp.csr_matrix:
        """``A(x, y) = sqrt(P(x, y) P(y, x))``: from the log-conditionals for the paper's kernel
        (:func:`glauber.exact.sparse.symmetrised_csr`, whose fibre formula needs site laws that
        ignore ``x_i``), else from ``P`` itself (a random scan's moves come in pairs)."""
        if self.kernel.is_plain:
            return sparse.symmetrised_csr(self.log_conditionals())
        P = self.transition_matrix()
        return P.multiply(P.T).sqrt().tocsr()

    @property
    def algebra(self) -> str:
        """What ``"auto"`` uses for this chain: ``"dense"`` (at most 4096 states: GTH, dense
        eigenvalues, squaring) or ``"sparse"`` (the joint or a sparse solve, Lanczos, stepping
        and brackets)."""
        return "dense" if self.num_states <= mixing.MAX_DENSE_STATES else "sparse"

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
        return smallest < np.log(_SMALLEST_NORMAL)

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
        if not self.is_monotone():
            raise BracketOnlyError(
                f"t_mix of this {self.num_states}-state chain cannot be computed exactly (every "
                f"start would be stepped: the limit is EXACT_TMIX_MAX_STATES = "
                f"{EXACT_TMIX_MAX_STATES}) and the model is not monotone (largest violation "
                f"{self.monotonicity_defect():.2g}), so no coupling bound applies: only the "
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
            if not claims:
                claims.append(brackets.unavailable_claim(
                    subject, "the chain is neither monotone nor reversible: no bound applies"))
            return brackets.combine(claims, eps, self.is_monotone(), subject)

        return self._cached(f"bracket:{eps!r}:{max_steps}:{dense}", compute)

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
        if not (self.kernel.is_plain and type(self) is ExactChain):
            # another kernel's site law depends on x_i: flow_defect over every move
            return self._cached("rev_defect",
                                lambda: self._flow_defect(self.log_stationary()))
        # flow_defect over every move, taken fibre by fibre (no move arrays)
        return self._cached("rev_defect", lambda: sparse.fiber_defect(
            self.log_stationary(), self.log_conditionals()))

    def _flow_defect(self, log_pi: np.ndarray) -> float:
        """Detailed-balance defect of ``log_pi`` over every move of the kernel
        (:func:`glauber.theory.kernels.flow_defect`)."""
        x, y, log_p, log_back = self._log_moves()
        return flow_defect(log_pi[x] + log_p, log_pi[y] + log_back)

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

#: Rows per score-table call for host numpy models (toy models, score tables); ``batch_size``
#: still bounds the calls of device models (masked LMs), where it sets the memory.
HOST_BATCH_SIZE = 2**14

#: Largest chain whose worst-start ``t_mix`` and ``d(t)`` ``"auto"`` computes exactly (dense
#: squaring, the factor, or stepping every start); above, only :meth:`ExactChain.mixing_bracket`.
EXACT_TMIX_MAX_STATES = 2**16

#: Stationary methods of the chain: those of
#: :func:`glauber.exact.stationary.stationary_distribution` and ``"joint"`` (the model's
#: log-joint).
PiMethod = Literal["auto", "gth", "sparse", "iterative", "joint"]
GapMethod = Literal["auto", "dense", "lanczos"]
EstimateMethod = Literal["auto", "dense", "lanczos", "arnoldi"]


def _check_normal(log_pi: np.ndarray, states: Callable[[], np.ndarray]) -> None:
    """Refuse a law with an entry below the smallest normal float64 (use ``log_stationary``)."""
    if (log_pi < np.log(_SMALLEST_NORMAL)).any():
        k = int(np.argmin(log_pi))
        raise UnderflowError(
            f"the stationary probability of state {states()[k].tolist()} is "
            f"10^{log_pi[k] / np.log(10):.1f}, below the smallest float64; use "
            "log_stationary() (log pi, exact to relative precision) instead of stationary()"
        )


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
