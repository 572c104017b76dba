"""Worst-start total-variation distance and mixing time of a finite chain, by repeated squaring.

(Above ``max_dense_states`` states, and for fast chains, the sparse stepping of
:mod:`~glauber.exact.stepping` takes over: ``method="auto"``; a Glauber kernel over
``q > 2n``-ish tokens squares its small factor instead, :mod:`~glauber.exact.factored`.)

``d(t) = max_x ||P^t(x, .) - pi||_TV`` (TV is half the L1 distance) and
``t_mix(eps) = min{t >= 0 : d(t) <= eps}`` (Levin–Peres–Wilmer, 2nd ed., Sections 4.4–4.5).
``d`` is non-increasing (LPW Exercise 4.2), so ``t_mix`` can be found by doubling (``P^(2^k)``
by squaring) and then bisecting with the stored powers: about ``2 log2 t_mix`` dense products,
so a chain with ``t_mix ~ 1e6`` costs about 40 products instead of a million steps.

The dense algebra runs in numpy or, with ``backend="torch"``, in torch float64 on any device
(CUDA when available). Each product is renormalised to unit row sums (``P^t`` is exactly
stochastic), which stops rounding in the row sums from doubling with every squaring.

Accuracy: products of non-negative matrices have componentwise *relative* rounding errors, so
tiny transition probabilities (low temperature) survive squaring; the relative error of a
computed ``P^t`` entry is at most about ``t S u`` (``u = 1.1e-16``, ``S`` states) in the worst
case and far smaller in practice. ``d(t)`` itself carries an absolute error of about ``1e-16``
from subtracting ``pi``, so ``d(t)`` below ~1e-15 is rounding noise.

Memory: every product is written into a preallocated buffer (``matmul(out=...)``) and
renormalised in place, and ``d(t)`` is computed in row blocks of at most ``BLOCK_ELEMENTS``
entries, so no full-size temporary is ever made. ``mixing_time`` holds at most
``ceil(log2 t_mix) + 1`` full ``S x S`` matrices at once, ``P`` included (the stored powers; the
bisection reuses the buffers of powers it no longer needs); the values are the same, operation
for operation, as those of the straightforward ``A @ B / rowsums`` and ``|A - pi|.sum(1).max()``.
"""

from __future__ import annotations

from typing import Any, Iterable, Literal

import numpy as np
import scipy.sparse as sp

from glauber.core.validation import check_eps, check_nonnegative_int
from glauber.errors import (
    ConvergenceError,
    InvalidParameterError,
    StateSpaceTooLargeError,
)
from glauber.exact.array_backend import resolve_array_backend
from glauber.exact.factored import FactoredGlauber, factorable
from glauber.exact.stepping import (
    DEFAULT_MAX_STEPS,
    GlauberKernel,
    PointMassBlocks,
    _crossing_times,
    crossing_times,
    stepping_distance_curve,
)

#: Largest chain handled by the dense algebra by default (a 4096 x 4096 float64 matrix is 128 MiB).
MAX_DENSE_STATES = 4096
#: Doubling stops at ``t = 2**MAX_DOUBLINGS`` steps.
MAX_DOUBLINGS = 62
#: A worst-start distance below ``RESOLUTION_ULPS * S * 2**-52`` is rounding noise (the error
#: messages use it to tell an unreachable ``eps`` from a numerically reducible chain).
RESOLUTION_ULPS = 64
#: Entries per row block of the distance computation (2**22 float64 = 32 MiB of scratch).
BLOCK_ELEMENTS = 2**22

#: Dense product cost in units of one sparse step of all ``S`` starts is about
#: ``S / (nnz(P) / S) / DENSE_EFFICIENCY``: a dense product does ``S / (nnz / S)`` times the flops
#: of a sparse step but runs this many times faster per flop (measured ~26 on a 2-core CPU with
#: MKL/scipy for Ising at 4096 states; see benchmarks/exact_chain.py, part "stepping").
DENSE_EFFICIENCY = 25.0

Backend = Literal["numpy", "torch"]
Method = Literal["auto", "squaring", "stepping", "factored"]
_METHODS = ("auto", "squaring", "stepping", "factored")


class _Dense:
    """Dense stochastic-matrix algebra in numpy or torch float64 (products, worst-start TV)."""

    def __init__(
        self, P: Any, pi: np.ndarray, backend: str, device: str | None, max_dense_states: int
    ) -> None:
        S = np.shape(P)[0]
        if S > max_dense_states:
            raise StateSpaceTooLargeError(
                f"dense matrix powers need an {S} x {S} matrix per stored power, over the limit "
                f"max_dense_states = {max_dense_states}; use method='stepping' (sparse, two "
                "S x b blocks), or pass a larger max_dense_states if the machine has the memory "
                "(about 8 * S**2 bytes per power, ~log2(t_mix) powers)"
            )
        dense = P.toarray() if sp.issparse(P) else np.asarray(P, dtype=np.float64)
        pi = np.asarray(pi, dtype=np.float64)
        if dense.shape != (S, S) or pi.shape != (S,):
            raise InvalidParameterError(
                f"P must be [S, S] and pi [S]; got P {dense.shape} and pi {pi.shape}"
            )
        self.torch, device = resolve_array_backend(backend, device)
        if self.torch is None:
            self.P, self.pi = dense, pi
        else:
            self.P = self.torch.as_tensor(dense, dtype=self.torch.float64, device=device)
            self.pi = self.torch.as_tensor(pi, dtype=self.torch.float64, device=device)

    def empty(self) -> Any:
        """An uninitialised ``S x S`` float64 buffer on the algebra's device."""
        S = self.P.shape[0]
        if self.torch is None:
            return np.empty((S, S))
        return self.torch.empty((S, S), dtype=self.torch.float64, device=self.P.device)

    def matmul(self, A: Any, B: Any, out: Any) -> Any:
        """``out <- A @ B`` with each row renormalised to sum 1 in place; returns ``out``.

        ``out`` must be a buffer from :meth:`empty` that is neither ``A`` nor ``B``.
        """
        if self.torch is None:
            np.matmul(A, B, out=out)
        else:
            self.torch.matmul(A, B, out=out)
        out /= out.sum(1)[:, None]
        return out

    def distance(self, A: Any | None) -> float:
        """Worst-start TV ``max_x 0.5 * sum_y |A(x, y) - pi(y)|``; ``A = None`` is the identity.

        Computed in row blocks (:func:`worst_start_tv`), without a full-size temporary.
        """
        return worst_start_tv(A, self.pi, self.P.shape[0])


def _power(algebra: Any, t: int, cache: list[Any], work: list[Any]) -> Any | None:
    """``P^t`` of ``algebra`` (:class:`_Dense`, or
    :class:`~glauber.exact.factored.FactoredGlauber` and its ``M``) from the binary
    expansion of ``t`` (``None`` for ``t = 0``, the identity).

    ``cache[k]`` holds ``P^(2^k)`` and is extended as needed; partial products go into the
    (at most two) reusable buffers of ``work``, so the result is valid until the next call.
    """
    result = None
    k = 0
    while t >> k:
        if k == len(cache):
            cache.append(algebra.matmul(cache[-1], cache[-1], algebra.empty()))
        if (t >> k) & 1:
            if result is None:
                result = cache[k]
            else:
                free = [w for w in work if w is not result]
                if not free:
                    free = [algebra.empty()]
                    work.append(free[0])
                result = algebra.matmul(result, cache[k], free[0])
        k += 1
    return result


def worst_start_tv(A: Any | None, pi: Any, S: int | None = None) -> float:
    """Worst-start TV distance ``max_x 0.5 * sum_y |A(x, y) - pi(y)|`` in row blocks.

    Blocks of ``max(1, BLOCK_ELEMENTS // S)`` rows go through one scratch buffer, so no
    full-size temporary is made; each row's sum is formed exactly as in
    ``0.5 * abs(A - pi).sum(1).max()``, so the value is the same (LPW 2nd ed. Section 4.4).

    Parameters
    ----------
    A : numpy.ndarray or torch.Tensor of float64, shape (S, S), or None
        Row-stochastic matrix (``P^t``); ``None`` stands for the identity (``t = 0``).
    pi : numpy.ndarray or torch.Tensor of float64, shape (S,)
        Stationary distribution, of the same array library (and device) as ``A``.
    S : int, optional
        Number of states (default ``len(pi)``).

    Returns
    -------
    float
    """
    S = int(pi.shape[0]) if S is None else S
    rows = max(1, min(S, BLOCK_ELEMENTS // max(S, 1)))
    if isinstance(pi, np.ndarray):
        scratch = np.empty((rows, S))
        worst = 0.0
        for lo in range(0, S, rows):
            block = scratch[: min(rows, S - lo)]
            if A is None:
                block.fill(0.0)
                block[np.arange(len(block)), lo + np.arange(len(block))] = 1.0
                block -= pi
            else:
                np.subtract(A[lo : lo + len(block)], pi, out=block)
            np.abs(block, out=block)
            worst = max(worst, float(block.sum(1).max()))
        return 0.5 * worst
    import torch

    scratch = torch.empty((rows, S), dtype=torch.float64, device=pi.device)
    worst_t = torch.zeros((), dtype=torch.float64, device=pi.device)
    for lo in range(0, S, rows):
        block = scratch[: min(rows, S - lo)]
        if A is None:
            block.zero_()
            index = torch.arange(len(block), device=pi.device)
            block[index, lo + index] = 1.0
            block -= pi
        else:
            torch.sub(A[lo : lo + len(block)], pi, out=block)
        block.abs_()
        worst_t = torch.maximum(worst_t, block.sum(1).max())
    return float(0.5 * worst_t)


def distance_curve(
    P: Any,
    pi: np.ndarray,
    ts: Iterable[int],
    backend: Backend = "numpy",
    device: str | None = None,
    max_dense_states: int = MAX_DENSE_STATES,
    method: Method = "auto",
    block_bytes: int | None = None,
) -> np.ndarray:
    """Worst-start TV distances ``d(t)`` at each integer time in ``ts``.

    Parameters
    ----------
    P : sparse matrix or array_like, shape (S, S)
        Row-stochastic matrix.
    pi : array_like, shape (S,)
        Its stationary distribution.
    ts : iterable of int
        Times ``t >= 0``. Squaring costs at most ``2 log2 t`` dense products per time (powers
        are shared); stepping ``max(ts)`` sparse products per block of starts.
    backend : {"numpy", "torch"}
        Array library; torch runs in float64.
    device : str, optional
        Torch device (default ``"cuda"`` if available, else ``"cpu"``); numpy accepts only
        ``"cpu"``.
    max_dense_states : int
        Largest chain the dense squaring accepts (``8 S^2`` bytes per stored power).
    method : {"auto", "squaring", "stepping", "factored"}
        Dense repeated squaring, sparse stepping of point masses
        (:mod:`glauber.exact.stepping`), or squaring of the ``n q^(n-1)``-class factor of
        a Glauber kernel (:mod:`glauber.exact.factored`; ``P`` a
        :class:`~glauber.exact.stepping.GlauberKernel` in numpy). ``"auto"`` factors a
        kernel where :func:`~glauber.exact.factored.factorable`, else squares up to
        ``max_dense_states`` states and steps above.
    block_bytes : int, optional
        Memory for the stepping blocks (see :class:`~glauber.exact.stepping.PointMassBlocks`).

    Returns
    -------
    numpy.ndarray of float, shape (len(ts),)

    Raises
    ------
    InvalidParameterError
        If a time is not an integer >= 0, or the method, backend or device is unknown.
    StateSpaceTooLargeError
        If squaring is requested for more than ``max_dense_states`` states.
    DeviceUnavailableError
        If CUDA is requested but not available.
    """
    times = [check_nonnegative_int(t, "time t") for t in ts]
    factored = _factored(P, pi, method, backend)
    if factored is not None:
        cache: list[Any] = [factored.P]
        work: list[Any] = []
        return np.array(
            [factored.distance_at_zero() if t == 0 else
             factored.distance(_power(factored, t - 1, cache, work)) for t in times],
            dtype=np.float64,
        )
    if _use_stepping(method, np.shape(P)[0], max_dense_states):
        return stepping_distance_curve(P, pi, times, backend, device, block_bytes)
    algebra = _Dense(P, pi, backend, device, max_dense_states)
    cache = [algebra.P]
    work = []
    return np.array(
        [algebra.distance(_power(algebra, t, cache, work)) for t in times], dtype=np.float64
    )


def worst_start_distance(
    P: Any,
    pi: np.ndarray,
    t: int,
    backend: Backend = "numpy",
    device: str | None = None,
    max_dense_states: int = MAX_DENSE_STATES,
    method: Method = "auto",
    block_bytes: int | None = None,
) -> float:
    """Worst-start TV distance ``d(t) = max_x ||P^t(x, .) - pi||_TV`` (LPW Section 4.4).

    See :func:`distance_curve` for the parameters and errors.

    Examples
    --------
    >>> P = np.array([[0.5, 0.5], [0.25, 0.75]])
    >>> round(worst_start_distance(P, np.array([1 / 3, 2 / 3]), 1), 12)  # (2/3)(1/4)
    0.166666666667
    """
    return float(
        distance_curve(P, pi, [t], backend, device, max_dense_states, method, block_bytes)[0]
    )


def mixing_time(
    P: Any,
    pi: np.ndarray,
    eps: float = 0.25,
    backend: Backend = "numpy",
    device: str | None = None,
    max_dense_states: int = MAX_DENSE_STATES,
    method: Method = "auto",
    block_bytes: int | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> int:
    """Worst-start mixing time ``t_mix(eps) = min{t >= 0 : d(t) <= eps}`` (LPW Section 4.5).

    Two exact algorithms, equal up to rounding at a tie ``d(t) = eps``:

    ``"squaring"``: doubling finds ``k`` with ``d(2^(k-1)) > eps >= d(2^k)`` while storing
    ``P^(2^j)``; a greedy bisection over the binary digits below ``2^(k-1)`` then finds the
    largest ``t`` with ``d(t) > eps`` using the stored powers (``d`` is non-increasing). Cost:
    about ``2 log2 t_mix`` dense products; at most ``ceil(log2 t_mix) + 1`` ``S x S`` matrices are
    held at once (``P`` included), with no full-size temporaries.

    ``"stepping"``: every start's point mass is stepped with the sparse ``P`` until it is within
    ``eps`` (:func:`glauber.exact.stepping.crossing_times`); memory two ``S x b`` blocks,
    cost ``sum_x t_x`` sparse column-steps. The only choice above ``max_dense_states``.

    ``"factored"``: the doubling and bisection of squaring on the ``R x R`` factor
    ``M = B A`` of a Glauber kernel (``P^t = A M^(t-1) B``, ``R = n q^(n-1)`` classes), with the
    worst start found by a pruned search (:mod:`glauber.exact.factored`); exact, about
    ``2 log2 t_mix`` evaluations of ``R S n`` operations each, whatever ``t_mix``. For ``P`` a
    :class:`~glauber.exact.stepping.GlauberKernel` in numpy.

    ``"auto"``: a factorable kernel (:func:`~glauber.exact.factored.factorable`: fewer
    than half as many classes as states, i.e. ``2 n <= q``-ish) is factored. Otherwise, above
    ``max_dense_states`` states, stepping; below, stepping is tried first and abandoned for
    squaring once it has spent about what squaring would cost for the ``t`` reached (see
    :func:`stepping_budget`: at most about twice the cheaper method's time).

    Parameters
    ----------
    P, pi, backend, device, max_dense_states, method, block_bytes
        As in :func:`distance_curve`.
    eps : float
        Threshold in (0, 1).
    max_steps : int
        Stepping gives up (:class:`ConvergenceError`) after this many steps of one start
        (squaring and factoring reach any ``t`` up to ``2**62`` in ``2 log2 t`` products).

    Returns
    -------
    int

    Raises
    ------
    InvalidProbabilityError
        If ``eps`` is not in (0, 1).
    ConvergenceError
        If ``d(2^62) > eps`` when squaring: ``eps`` below float64's resolution of TV distances
        (about ``RESOLUTION_ULPS * S * 2**-52``; the message says so), or the chain is
        numerically reducible (raise the
        temperature), or a start needs more than ``max_steps`` steps when stepping.
    StateSpaceTooLargeError, DeviceUnavailableError, InvalidParameterError
        As in :func:`distance_curve`.

    Examples
    --------
    >>> P = np.array([[0.5, 0.5], [0.25, 0.75]])  # d(t) = (2/3)(1/4)^t
    >>> mixing_time(P, np.array([1 / 3, 2 / 3]), eps=0.02)
    3
    """
    eps = check_eps(eps)
    S = np.shape(P)[0]
    factored = _factored(P, pi, method, backend, threshold=eps)
    if factored is not None:
        if factored.distance_at_zero() <= eps:
            return 0
        return 1 + _squaring_mixing_time(factored, eps)  # its powers M^m stand for t = m + 1
    if _use_stepping(method, S, max_dense_states):
        return int(crossing_times(P, pi, eps, backend, device, block_bytes, max_steps).max())
    if method == "auto":
        blocks = PointMassBlocks(P, pi, backend, device, block_bytes)
        budget = min(stepping_budget(S, blocks.nnz), max_steps)
        times = _crossing_times(blocks, eps, budget)
        if times is not None:
            return int(times.max())
        del blocks
    return _squaring_mixing_time(_Dense(P, pi, backend, device, max_dense_states), eps)


def stepping_budget(num_states: int, nnz: int) -> int:
    """Steps after which ``"auto"`` stops stepping and squares instead (ski rental).

    Stepping every start to time ``t`` costs about ``t`` sparse steps of all starts; squaring to
    reach ``t`` costs about ``2 log2 t`` dense products, each worth ``c = S^2 / nnz /``
    :data:`DENSE_EFFICIENCY` such steps. Stepping stops at the first ``t`` with
    ``t >= 2 c log2 t``, so the work thrown away is at most what squaring then spends: the total
    is within a factor of about two of the better method (the classical ski-rental bound).

    Examples
    --------
    >>> stepping_budget(64, 448)  # a 6-spin chain: dense products are cheap, squaring at once
    8
    """
    c = num_states**2 / max(nnz, 1) / DENSE_EFFICIENCY
    t = 8
    while t < 2.0 * c * np.log2(t):
        t += max(1, t // 16)
    return int(t)


def _use_stepping(method: str, num_states: int, max_dense_states: int) -> bool:
    """Whether ``method`` (checked by :func:`_factored`, which runs first) means stepping
    outright (``"auto"`` above ``max_dense_states``)."""
    return method == "stepping" or (method == "auto" and num_states > max_dense_states)


def _factored(P: Any, pi: Any, method: str, backend: str,
              threshold: float | None = None) -> Any:
    """The factored algebra where ``method`` asks for it (``"factored"``) or ``"auto"`` finds
    a :func:`~glauber.exact.factored.factorable` kernel in numpy, or the algebra ``P`` offers
    itself (``P.factored_algebra(pi, threshold)``: a scan's factor,
    :class:`glauber.exact.scan_chain.FactorSource`); else None.
    ``threshold``: see :class:`~glauber.exact.factored.FactoredGlauber`."""
    if method not in _METHODS:
        raise InvalidParameterError(f"unknown method {method!r}; use one of {_METHODS}")
    source = getattr(P, "factored_algebra", None)  # a scan's factor (glauber.exact.scan_chain)
    if source is not None and method in ("auto", "factored") and backend == "numpy":
        return source(pi, threshold)
    if method == "factored":
        if not isinstance(P, GlauberKernel) or backend != "numpy":
            raise InvalidParameterError(
                "method='factored' needs the chain's conditionals as a GlauberKernel in numpy "
                "(ExactChain passes them); use 'squaring' or 'stepping' for a matrix P"
            )
        return FactoredGlauber(P, pi, threshold)
    if method == "auto" and backend == "numpy" and isinstance(P, GlauberKernel) \
            and factorable(P.n, P.q):
        return FactoredGlauber(P, pi, threshold)
    return None


def _squaring_mixing_time(algebra: Any, eps: float) -> int:
    """Doubling then greedy bisection with the stored powers (see :func:`mixing_time`)."""
    if algebra.distance(None) <= eps:
        return 0
    powers = [algebra.P]  # powers[k] = P^(2^k); powers[0] may be the caller's array: never written
    while (d := algebra.distance(powers[-1])) > eps:
        if len(powers) > MAX_DOUBLINGS:
            floor = RESOLUTION_ULPS * powers[0].shape[0] * np.finfo(np.float64).eps
            raise ConvergenceError(
                f"worst-start distance is still {d:.3g} > eps = {eps} at t = 2**{MAX_DOUBLINGS}; "
                + (
                    f"that is rounding: float64 resolves TV distances only to about {floor:.1g} "
                    f"for {powers[0].shape[0]} states (entries of P^t and pi carry absolute "
                    f"errors near 1e-16), so eps = {eps:g} is never reached: use eps >= "
                    f"{10 * floor:.0e}"
                    if d <= floor else
                    "the chain is numerically reducible at this temperature: raise tau"
                )
            )
        powers.append(algebra.matmul(powers[-1], powers[-1], algebra.empty()))
    k = len(powers) - 1
    if k == 0:
        return 1
    # d(last_far) > eps >= d(2^k). P^(2^k) is not needed below: its buffer becomes the spare
    # that receives each candidate, and every P^(2^j) is dropped once used, so the bisection
    # never holds more matrices than the doubling did.
    spare = powers.pop()
    last_far, current = 2 ** (k - 1), powers.pop()
    for j in range(k - 2, -1, -1):
        candidate = algebra.matmul(current, powers.pop(), spare)
        if algebra.distance(candidate) > eps:
            last_far, current, spare = last_far + 2**j, candidate, current
    return last_far + 1


__all__ = [
    "Backend",
    "BLOCK_ELEMENTS",
    "DENSE_EFFICIENCY",
    "distance_curve",
    "MAX_DENSE_STATES",
    "MAX_DOUBLINGS",
    "Method",
    "mixing_time",
    "stepping_budget",
    "worst_start_distance",
    "worst_start_tv",
]
