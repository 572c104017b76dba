"""The exact Glauber chain of a small model over ``V^n``: a thin caching class over free functions.

``P_tau(x, x') = (1/n) sum_i 1{x_{-i} = x'_{-i}} p_tau(x'_i | x_{-i})`` (the paper's kernel,
Proposition 1), or another kernel of :mod:`glauber.core.kernel_spec` (``kernel=``,
``epsilon=``): a random scan of other site updates is built here from its site rows
(:mod:`glauber.exact.kernels`), a sweep or a shuffled scan by
:class:`glauber.exact.scan_chain.ScanChain`, which ``ExactChain(...)`` returns for them. States
are indexed in mixed radix with site 0 most significant (:mod:`glauber.core.enumeration`).

This module holds the chain's construction: the score table, the conditionals, the kernel's site
rows and its transition matrix, computed once and cached. Its queries stand on them, one concept
per module: the stationary law (:mod:`~glauber.exact.chain_stationary`), worst-start mixing and
its brackets (:mod:`~glauber.exact.chain_mixing`), the spectrum
(:mod:`~glauber.exact.chain_spectrum`), and basins, influence, margins, rectangles and coupling
(:mod:`~glauber.exact.chain_basins`), each a mixin that this class combines. The algorithms
themselves live in :mod:`~glauber.exact.stationary`, :mod:`~glauber.exact.mixing`,
:mod:`~glauber.exact.spectral`, :mod:`~glauber.exact.basins`, :mod:`~glauber.exact.influence`,
:mod:`~glauber.exact.margins` and :mod:`~glauber.exact.coupling`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from glauber.core.arrays import log_softmax
from glauber.core.enumeration import all_states, neighbour_indices, state_index
from glauber.core.kernel_spec import KernelSpec, check_kernel
from glauber.core.protocol import ConditionalModel
from glauber.core.site_model import SiteScoreModel
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import (
    InvalidKernelError,
    InvalidParameterError,
    NonFiniteScoresError,
    NonPositiveConditionalError,
    SequenceLengthError,
    StateSpaceTooLargeError,
    VocabularyError,
)
from glauber.exact import kernels, mixing, sparse, window
from glauber.exact.chain_basins import BasinQueries
from glauber.exact.chain_mixing import MixingQueries
from glauber.exact.chain_spectrum import SpectrumQueries
from glauber.exact.chain_stationary import StationaryQueries
from glauber.exact.score_table import DEFAULT_BATCH_SIZE, score_table
from glauber.theory.kernels import flow_defect


class ExactChain(StationaryQueries, MixingQueries, SpectrumQueries, BasinQueries):
    """Exact Glauber chain of ``model`` at temperature ``tau`` over all ``q**n`` states.

    Parameters
    ----------
    model : ConditionalModel
        A model with ``n`` sites and ``q`` tokens (toy models answer in float64 numpy).
    tau : float
        Temperature, finite and > 0 (``tau = 1 / beta`` for the Ising heat bath).
    max_states : int, optional
        Refuse state spaces with more than this many states (default
        :data:`~glauber.exact.sparse.SPARSE_MAX_STATES`, ``2**20``: the sparse path). Above
        ``2**20`` states the paper's kernel over more tokens than sites is the matrix-free
        :class:`~glauber.exact.window_chain.WindowChain` that ``ExactChain(...)`` returns, up to
        :data:`~glauber.exact.window.WINDOW_MAX_STATES` (``20^5``) by default.
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
    executor : object, optional
        Where the table's missing shards are computed (``map(fn, items)`` in order, e.g.
        :class:`glauber.experiments.executor.RayExecutor`; the model must pickle); default in
        this process (:func:`glauber.exact.score_table.score_table`).
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
    by sparse stepping up to :data:`~glauber.exact.chain_mixing.EXACT_TMIX_MAX_STATES` states
    and as rigorous brackets above (:meth:`mixing_bracket`, :mod:`~glauber.exact.brackets`).

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
    #: The matrix-free chain of the paper's kernel above
    #: :data:`~glauber.exact.sparse.SPARSE_MAX_STATES` states, registered the same way
    #: (:class:`glauber.exact.window_chain.WindowChain`, ``matrix_free=True``).
    _MATRIX_FREE: list[type] = []

    def __init_subclass__(cls, scans: tuple[str, ...] = (), matrix_free: bool = False,
                          **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for scan in scans:
            ExactChain._SCAN_CLASSES[scan] = cls
        if matrix_free:
            ExactChain._MATRIX_FREE[:] = [cls]

    def __new__(cls, *args: Any, kernel: str | KernelSpec = "random",
                epsilon: float | None = None, **kwargs: Any) -> "ExactChain":
        if cls is ExactChain:
            spec = check_kernel(kernel, epsilon)
            if spec.scan != "random":
                return super().__new__(ExactChain._SCAN_CLASSES[spec.scan])
            model = args[0] if args else kwargs.get("model")
            if (spec.is_plain and ExactChain._MATRIX_FREE and model is not None
                    and window.matrix_free(int(model.n), int(model.q))):
                return super().__new__(ExactChain._MATRIX_FREE[0])
        return super().__new__(cls)

    def __init__(
        self,
        model: ConditionalModel,
        tau: float,
        max_states: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        cache: bool | str | Path | None = None,
        progress: Callable[[int, int], Any] | None = None,
        *,
        kernel: str | KernelSpec = "random",
        epsilon: float | None = None,
        executor: Any = None,
    ) -> None:
        self.kernel = check_kernel(kernel, epsilon)
        self.tau = check_tau(tau)
        self.model = model
        self.n = int(model.n)
        self.q = int(model.q)
        self.num_states = sparse.check_sparse_size(
            self.n, self.q, sparse.SPARSE_MAX_STATES if max_states is None else max_states)
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.cache = cache
        self.progress = progress
        self.executor = executor
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
            "scores", lambda: score_table(self.model, batch, self.cache, self.progress,
                                         executor=self.executor),
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

    # ------------------------------------------------------------------ detailed balance
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


#: Rows per score-table call for host numpy models (toy models, score tables); ``batch_size``
#: still bounds the calls of device models (masked LMs), where it sets the memory.
HOST_BATCH_SIZE = 2**14


__all__ = [
    "ExactChain",
]
