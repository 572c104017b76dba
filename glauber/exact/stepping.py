"""Mixing from every start by stepping point masses with the sparse kernel, in column blocks.

``P^t(x, .)`` for a block of starts ``x`` is evolved one step at a time,
``D_{t+1} = P^T D_t`` with ``D_0`` the block's point masses as columns, so a step costs one sparse
product (``2 nnz(P)`` flops per start) and memory is two ``S x b`` float64 blocks, not a dense
``S x S`` matrix per stored power as in the repeated squaring of :mod:`~glauber.exact.mixing`.
This is what makes exact worst-start mixing times of ``2^16``-state chains fit on one accelerator.

Each start's distance ``d_x(t) = ||P^t(x, .) - pi||_TV`` is non-increasing in ``t``
(Levin–Peres–Wilmer 2nd ed., Exercise 4.2: TV does not increase under a stochastic matrix), so
the per-start mixing time ``t_x(eps) = min{t : d_x(t) <= eps}`` is the first crossing, a start
can be dropped from its block once it has crossed, and the worst-start
``t_mix(eps) = max_x t_x(eps)`` (LPW Section 4.5). Cost: ``sum_x t_x(eps)`` column-steps of
``2 nnz(P)`` flops, against about ``2 log2(t_mix)`` dense products of ``2 S^3`` flops for
squaring: stepping wins for fast chains on large state spaces, squaring for slow chains.

Accuracy: a step multiplies non-negative numbers and adds them, so each entry of ``D_t`` carries a
relative error of at most about ``t (n + 1) u`` (``u = 1.1e-16``); no renormalisation is made.
"""

from __future__ import annotations

import warnings
from typing import Any, Iterable, Iterator

import numpy as np
import scipy.sparse as sp

from glauber.core.validation import check_eps, check_nonnegative_int, check_positive_int
from glauber.errors import InvalidParameterError, StepLimitError
from glauber.exact.array_backend import resolve_array_backend

#: Default memory for the two evolving blocks on the CPU (each start's column is ``8 S`` bytes).
DEFAULT_BLOCK_BYTES = 2**30
#: Default limit on the steps of one start before :class:`ConvergenceError` is raised.
DEFAULT_MAX_STEPS = 10**7
#: Rows per chunk of the distance computation (bounds its scratch to ``chunk x b`` entries).
TV_CHUNK_ELEMENTS = 2**22
#: Entries of one block at most: below 2^31, so that sparse kernels with 32-bit offsets into the
#: dense operand (some cuSPARSE paths) are never handed a larger one.
MAX_BLOCK_ELEMENTS = 2**31 - 1


class GlauberKernel:
    """The Glauber kernel given by its conditionals, applied without forming ``P``.

    ``mu P (y) = (1/n) sum_i p_i(y_i | y_{-i}) sum_a mu(y^(i -> a))`` (the paper's kernel): one
    step of a block of distributions costs ``3 n S`` operations per column (a sum over each
    site's axis, a product, an accumulation) against ``2 nnz(P) = 2 n q S`` for the sparse
    matrix, so it is the cheaper step once ``q`` exceeds a few tokens (a window of three sites
    over 20 amino acids steps about seven times faster).

    Parameters
    ----------
    conditionals : numpy.ndarray, shape (n, q**n, q)
        ``p_tau(a | x_{-i})`` for every site and state (mixed radix, site 0 most significant).

    Examples
    --------
    >>> p = np.full((2, 4, 2), 0.5)  # two independent fair coins
    >>> K = GlauberKernel(p)
    >>> (K.T @ np.eye(4)[:, [0]]).ravel().tolist()  # from (0, 0): half a step on each site
    [0.5, 0.25, 0.25, 0.0]
    """

    def __init__(self, conditionals: np.ndarray) -> None:
        n, S, q = conditionals.shape
        self.n, self.q, self.shape = n, q, (S, S)
        digits = (np.arange(S)[:, None] // q ** np.arange(n - 1, -1, -1)[None, :]) % q
        #: ``w[i, y] = p_i(y_i | y_{-i})``: the probability of landing on ``y`` from its site-i
        #: neighbours.
        self.w = np.take_along_axis(conditionals, digits.T[:, :, None], axis=2)[..., 0]
        #: Operations per column and step (what the ski-rental budget compares).
        self.nnz = 3 * n * S

    @property
    def T(self) -> "GlauberKernel":
        """``self`` (its ``@`` is the transpose product ``P^T D``: see :meth:`__matmul__`)."""
        return self

    def __matmul__(self, D: np.ndarray) -> np.ndarray:
        """``P^T D``: each column ``mu`` of ``D`` becomes ``mu P``."""
        S, b = D.shape
        out = np.zeros_like(D)
        for i in range(self.n):
            view = D.reshape(self.q**i, self.q, self.q ** (self.n - 1 - i), b)
            mass = view.sum(axis=1, keepdims=True)  # sum_a mu(y^(i -> a)), shared by y_i
            out += (np.broadcast_to(mass, view.shape).reshape(S, b)) * self.w[i][:, None]
        out /= self.n
        return out


class SiteRowsKernel:
    """A random scan of arbitrary site updates, ``P = (1/n) sum_i K_i``, applied without forming
    ``P``: ``K_i(x, x^(i -> a)) = rows[i, x, a]`` may depend on ``x_i`` (Metropolis-Hastings
    updates, :mod:`glauber.exact.kernels`), so each class ``x_{-i}`` carries its own ``q x q``
    matrix and a step is one batched product per site (``2 n q S`` flops per column, as the
    sparse matrix, but in dense blocks).

    Parameters
    ----------
    rows : numpy.ndarray, shape (n, q**n, q)
        Site rows (each row a law over ``a``).

    Examples
    --------
    >>> rows = np.full((1, 2, 2), 0.5)  # one fair coin
    >>> (SiteRowsKernel(rows).T @ np.eye(2)[:, [0]]).ravel().tolist()
    [0.5, 0.5]
    """

    def __init__(self, rows: np.ndarray) -> None:
        n, S, q = rows.shape
        self.n, self.q, self.shape = n, q, (S, S)
        #: ``blocks[i][p, s, a, y]``: from token ``a`` to ``y`` at site ``i`` in the class with
        #: prefix ``p`` and suffix ``s`` (transposed for ``P^T``).
        self.blocks = [
            np.ascontiguousarray(
                rows[i].reshape(q**i, q, q ** (n - 1 - i), q).transpose(0, 2, 3, 1))
            for i in range(n)
        ]
        #: Operations per column and step.
        self.nnz = 2 * n * q * S

    @property
    def T(self) -> "SiteRowsKernel":
        """``self`` (its ``@`` is the transpose product ``P^T D``)."""
        return self

    def __matmul__(self, D: np.ndarray) -> np.ndarray:
        """``P^T D``: each column ``mu`` of ``D`` becomes ``mu P``."""
        S, b = D.shape
        out = np.zeros_like(D)
        n, q = self.n, self.q
        for i in range(n):
            view = D.reshape(q**i, q, q ** (n - 1 - i), b).transpose(0, 2, 1, 3)
            moved = np.matmul(self.blocks[i], view)  # [p, s, y, b]
            out += moved.transpose(0, 2, 1, 3).reshape(S, b)
        out /= n
        return out


class PointMassBlocks:
    """The sparse kernel ``P^T`` and ``pi`` in numpy/scipy or torch float64, stepping blocks of
    point masses (LPW 2nd ed., Section 4.5).

    Parameters
    ----------
    P : sparse matrix or array_like, shape (S, S)
        Row-stochastic matrix (kept sparse: CSR).
    pi : array_like, shape (S,)
        Its stationary distribution.
    backend : {"numpy", "torch"}
        numpy/scipy on the CPU, or torch float64 (sparse CSR) on ``device``.
    device : str, optional
        Torch device (default ``"cuda"`` when available, else ``"cpu"``); numpy accepts only the
        CPU.
    block_bytes : int, optional
        Memory for the two evolving blocks; starts are processed ``block_bytes // (16 S)`` at a
        time (and fewer than ``2^31 / S``, see :data:`MAX_BLOCK_ELEMENTS`). Default:
        :data:`DEFAULT_BLOCK_BYTES` on the CPU, half the free memory on CUDA.

    Raises
    ------
    InvalidParameterError
        If shapes disagree, the backend or device is unknown, or ``block_bytes`` is not positive.
    DeviceUnavailableError
        If CUDA is requested but not available.
    """

    def __init__(
        self,
        P: Any,
        pi: Any,
        backend: str = "numpy",
        device: str | None = None,
        block_bytes: int | None = None,
    ) -> None:
        if isinstance(P, (GlauberKernel, SiteRowsKernel)):
            if backend != "numpy":
                raise InvalidParameterError(
                    f"a {type(P).__name__} steps in numpy; pass the sparse P for "
                    "backend='torch'"
                )
            PT = P.T
        else:
            PT = sp.csr_matrix(P, dtype=np.float64).T.tocsr()
        pi = np.asarray(pi, dtype=np.float64)
        S = PT.shape[0]
        if PT.shape != (S, S) or pi.shape != (S,):
            raise InvalidParameterError(
                f"P must be [S, S] and pi [S]; got P {PT.shape} and pi {pi.shape}"
            )
        self.num_states = S
        #: Stored entries of ``P`` (a step costs ``2 nnz`` flops per start).
        self.nnz = int(PT.nnz)
        self.torch, device = resolve_array_backend(backend, device)
        if self.torch is None:
            self.PT, self.pi = PT, pi
            default_bytes = DEFAULT_BLOCK_BYTES
        else:
            torch = self.torch
            with warnings.catch_warnings():  # "sparse CSR support is in beta": CSR x dense is used
                warnings.simplefilter("ignore", UserWarning)
                self.PT = torch.sparse_csr_tensor(
                    torch.from_numpy(PT.indptr.astype(np.int64)),
                    torch.from_numpy(PT.indices.astype(np.int64)),
                    torch.from_numpy(PT.data),
                    size=(S, S),
                    device=device,
                    check_invariants=True,
                )
            self.pi = torch.as_tensor(pi, device=device)
            on_cuda = self.pi.device.type == "cuda"
            default_bytes = (
                torch.cuda.mem_get_info(self.pi.device)[0] // 2 if on_cuda else DEFAULT_BLOCK_BYTES
            )
        block_bytes = default_bytes if block_bytes is None else block_bytes
        check_positive_int(block_bytes, "block_bytes")
        width = max(1, min(S, block_bytes // (16 * S), MAX_BLOCK_ELEMENTS // S))
        #: Starts per block (two ``S x width`` float64 blocks fit in ``block_bytes``), evened
        #: out over the blocks.
        self.width = int(-(-S // -(-S // width)))

    def blocks(self) -> Iterator[tuple[int, int]]:
        """``(first, stop)`` start indices of each block, in order."""
        for lo in range(0, self.num_states, self.width):
            yield lo, min(lo + self.width, self.num_states)

    def point_masses(self, lo: int, hi: int) -> Any:
        """``D_0``: the point masses of starts ``lo .. hi - 1`` as columns, ``S x (hi - lo)``."""
        if self.torch is None:
            D = np.zeros((self.num_states, hi - lo))
            D[np.arange(lo, hi), np.arange(hi - lo)] = 1.0
            return D
        torch = self.torch
        D = torch.zeros((self.num_states, hi - lo), dtype=torch.float64, device=self.pi.device)
        cols = torch.arange(hi - lo, device=self.pi.device)
        D[lo + cols, cols] = 1.0
        return D

    def step(self, D: Any, out: Any | None = None) -> Any:
        """One step ``P^T D`` (each column ``mu`` becomes ``mu P``); torch writes into ``out``."""
        if self.torch is None:
            return self.PT @ D
        if out is None or out.shape != D.shape:
            return self.torch.mm(self.PT, D)
        return self.torch.mm(self.PT, D, out=out)

    def distances(self, D: Any) -> np.ndarray:
        """``0.5 * sum_y |D(y, c) - pi(y)|`` for each column ``c``, on the host (float64).

        Summed over chunks of rows, so the scratch is at most ``TV_CHUNK_ELEMENTS`` entries.
        """
        S, width = D.shape
        rows = max(1, TV_CHUNK_ELEMENTS // max(width, 1))
        if self.torch is None:
            total = np.zeros(width)
            for lo in range(0, S, rows):
                total += np.abs(D[lo : lo + rows] - self.pi[lo : lo + rows, None]).sum(0)
            return 0.5 * total
        total = self.torch.zeros(width, dtype=self.torch.float64, device=D.device)
        for lo in range(0, S, rows):
            total += (D[lo : lo + rows] - self.pi[lo : lo + rows, None]).abs_().sum(0)
        return 0.5 * total.cpu().numpy()

    def select(self, D: Any, keep: np.ndarray) -> Any:
        """The columns ``keep`` (a boolean host mask) of ``D``, as a new block."""
        if self.torch is None:
            return D[:, keep]
        index = self.torch.from_numpy(np.flatnonzero(keep)).to(D.device)
        return D.index_select(1, index)


def crossing_times(
    P: Any,
    pi: Any,
    eps: float = 0.25,
    backend: str = "numpy",
    device: str | None = None,
    block_bytes: int | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> np.ndarray:
    """Per-start mixing times ``t_x(eps) = min{t >= 0 : ||P^t(x, .) - pi||_TV <= eps}``.

    The worst-start mixing time is their maximum (LPW 2nd ed., Section 4.5); see the module
    docstring for the algorithm, its cost and accuracy.

    Parameters
    ----------
    P, pi, backend, device, block_bytes
        As in :class:`PointMassBlocks`.
    eps : float
        Threshold in (0, 1).
    max_steps : int
        Give up (:class:`ConvergenceError`) when a start has not crossed after this many steps.

    Returns
    -------
    numpy.ndarray of int64, shape (S,)

    Raises
    ------
    InvalidProbabilityError
        If ``eps`` is not in (0, 1).
    StepLimitError
        If some start needs more than ``max_steps`` steps (a :class:`ConvergenceError`).
    InvalidParameterError, DeviceUnavailableError
        As in :class:`PointMassBlocks`.

    Examples
    --------
    >>> P = np.array([[0.5, 0.5], [0.25, 0.75]])  # d_0(t) = (2/3) 4^-t, d_1(t) = (1/3) 4^-t
    >>> crossing_times(P, np.array([1 / 3, 2 / 3]), eps=0.03).tolist()
    [3, 2]
    """
    eps = check_eps(eps)
    max_steps = check_nonnegative_int(max_steps, "max_steps")
    blocks = PointMassBlocks(P, pi, backend, device, block_bytes)
    times = _crossing_times(blocks, eps, max_steps)
    if times is None:
        raise StepLimitError(
            f"some start is still more than eps = {eps} from pi in total variation after "
            f"max_steps = {max_steps} steps; raise max_steps, use method='squaring' (fast for "
            "slow chains on small state spaces), or raise the temperature", max_steps
        )
    return times


def _crossing_times(blocks: PointMassBlocks, eps: float, max_steps: int) -> np.ndarray | None:
    """:func:`crossing_times`, or ``None`` as soon as a start exceeds ``max_steps`` steps.

    A block is compacted (crossed columns dropped) once at least an eighth of its columns have
    crossed, so at most an eighth of the work is spent on columns that are already done.
    """
    times = np.zeros(blocks.num_states, dtype=np.int64)
    for lo, hi in blocks.blocks():
        D, spare = blocks.point_masses(lo, hi), None
        starts = np.arange(lo, hi)  # the start of each column of D
        live = np.ones(hi - lo, dtype=bool)  # columns that have not crossed yet
        t = 0
        while True:
            crossed = live & (blocks.distances(D) <= eps)
            times[starts[crossed]] = t
            live &= ~crossed
            if not live.any():
                break
            if t == max_steps:
                return None
            if (~live).sum() * 8 >= len(live):
                D, spare = blocks.select(D, live), None
                starts, live = starts[live], live[live]
            D, spare = blocks.step(D, spare), D
            t += 1
    return times


def stepping_distance_curve(
    P: Any,
    pi: Any,
    ts: Iterable[int],
    backend: str = "numpy",
    device: str | None = None,
    block_bytes: int | None = None,
) -> np.ndarray:
    """Worst-start ``d(t) = max_x ||P^t(x, .) - pi||_TV`` at each time of ``ts``, by stepping.

    Every start is stepped to ``max(ts)`` (``max(ts)`` sparse products per block); no start can
    be dropped, since all of them enter the maximum at every requested time.

    Returns
    -------
    numpy.ndarray of float, shape (len(ts),)
    """
    times = [check_nonnegative_int(t, "time t") for t in ts]
    blocks = PointMassBlocks(P, pi, backend, device, block_bytes)
    wanted = {t: 0.0 for t in times}
    horizon = max(times, default=0)
    for lo, hi in blocks.blocks():
        D, spare = blocks.point_masses(lo, hi), None
        for t in range(horizon + 1):
            if t in wanted:
                wanted[t] = max(wanted[t], float(blocks.distances(D).max()))
            if t < horizon:
                D, spare = blocks.step(D, spare), D
    return np.array([wanted[t] for t in times], dtype=np.float64)


__all__ = [
    "crossing_times",
    "DEFAULT_BLOCK_BYTES",
    "DEFAULT_MAX_STEPS",
    "GlauberKernel",
    "MAX_BLOCK_ELEMENTS",
    "PointMassBlocks",
    "SiteRowsKernel",
    "stepping_distance_curve",
    "TV_CHUNK_ELEMENTS",
]
