"""Worst-start distances of a Glauber chain through its low-rank factorisation ``P = A B``.

A step of the paper's kernel (Proposition 1) picks a site ``s`` with probability ``1/n`` and
redraws ``x_s`` from ``p_s(. | x_{-s})``, which depends on ``x`` only through the *class*
``c = (s, x_{-s})``. With ``R = n q^(n-1)`` classes,

- ``A`` (``S x R``): ``A[x, c] = 1/n`` for the ``n`` classes ``c_s(x) = (s, x_{-s})`` of ``x``;
- ``B`` (``R x S``): ``B[c, y] = p_s(y_s | x_{-s})`` when ``y_{-s} = x_{-s}`` (row ``c`` is the
  law after redrawing site ``s``);

so ``P = A B`` and ``P^t = A M^(t-1) B`` for ``t >= 1``, with ``M = B A`` a row-stochastic
``R x R`` matrix. The row of ``P^t`` from ``x`` is the average of the ``n`` rows ``c_s(x)`` of
``G_t = M^(t-1) B``: powers of ``M`` are formed by repeated squaring
(:func:`glauber.exact.mixing.mixing_time`'s doubling and bisection), and ``G_t`` from
``M^(t-1)`` costs one pass over ``n`` products of ``R x S`` entries (``B`` has ``q`` entries a
row, applied through the kernel's structure). For a window of ``k`` sites over ``q`` tokens
with ``k < q`` this is exact and far cheaper than stepping every start: 3 amino-acid sites give
``R = 1,200`` classes for ``S = 8,000`` states, and ``t_mix ~ 10^5`` (a metastable window)
costs about 40 such evaluations.

The worst start needs every ``x`` only in principle. With ``e_c = ||G_t[c] - pi||_TV``, the
triangle inequality gives ``d_x(t) <= u_x = (1/n) sum_s e_{c_s(x)}``; starts are evaluated
exactly in decreasing order of ``u_x`` until the largest distance found is at least the next
``u_x``, which is then ``d(t) = max_x d_x(t)`` exactly (LPW 2nd ed., Section 4.4), usually
after a few starts.

Accuracy: products and sums of non-negative numbers (``M^m`` carries a componentwise relative
error of about ``m R u``, as repeated squaring does in
:mod:`~glauber.exact.mixing`); ``d(t)`` itself an absolute error near ``1e-16``.
"""

from __future__ import annotations

import numpy as np

from glauber.errors import InvalidParameterError, StateSpaceTooLargeError
from glauber.exact.stepping import GlauberKernel

#: Most entries of one ``R x S`` (or ``R x R``) float64 array the factorisation may form
#: (``2**26`` entries is 512 MiB); larger chains step (:mod:`~glauber.exact.stepping`).
FACTORED_MAX_ELEMENTS = 2**26
#: Candidate starts evaluated exactly per block (bounds the scratch to ``n x block x S``).
_CANDIDATE_BLOCK = 64
#: Rows of ``Q B`` formed at a time (a chunk and its scratch stay in a CPU's cache).
_CHUNK_ROWS = 32
#: Worst starts of a full evaluation that the next evaluation tries first.
_SUSPECTS = 4


def factorable(n: int, q: int, max_elements: int = FACTORED_MAX_ELEMENTS) -> bool:
    """Whether the factorisation of a chain of ``n`` sites over ``q`` tokens pays and fits:
    ``2 R <= S`` and ``R max(R, S) <= max_elements`` (``R = n q^(n-1)``, ``S = q^n``).

    ``2 R <= S`` exactly when ``2 n <= q`` (so that is what is tested): binary spins never
    factor usefully.

    Examples
    --------
    >>> factorable(3, 20)  # a window of three amino acids: 1,200 classes for 8,000 states
    True
    >>> factorable(3, 2)  # three spins: 12 classes for 8 states
    False
    """
    return 2 * n <= q and _fits(n, q, max_elements)


def _fits(n: int, q: int, max_elements: int) -> bool:
    """Whether the ``R x S`` and ``R x R`` arrays of the factor have at most ``max_elements``
    entries each (``R = n q^(n-1)`` classes, ``S = q^n`` states)."""
    R = n * q ** (n - 1)
    return R * max(R, q**n) <= max_elements


def factor_matrix(kernel: GlauberKernel) -> np.ndarray:
    """The factor ``M = B A`` (``R x R``, ``R = n q^(n-1)`` classes ``(s, x_{-s})``) of a
    random-scan kernel ``P = A B`` whose site laws depend on ``x_{-s}`` only.

    Row ``(s, x_{-s})`` puts ``p_s(y_s | .) / n`` on each class ``c_{s'}(y)`` of every ``y`` it
    can reach (``s' = s``: itself). ``P`` and ``M`` have the same non-zero eigenvalues (with
    multiplicity), and ``P``'s other ``S - R`` eigenvalues are 0, so ``P``'s absolute spectral
    gap is read off ``M`` (:meth:`glauber.exact.chain.ExactChain.absolute_spectral_gap`).

    Examples
    --------
    >>> p = np.full((2, 9, 3), 1 / 3)  # two independent uniform sites
    >>> M = factor_matrix(GlauberKernel(p))
    >>> M.shape, np.allclose(M.sum(axis=1), 1)
    ((6, 6), True)
    """
    n, q = kernel.n, kernel.q
    return _factor(kernel, _classes(n, q), n * q ** (n - 1))


def _classes(n: int, q: int) -> np.ndarray:
    """``classes[s, x] = c_s(x)``, the class ``(s, x_{-s})`` of state ``x`` at site ``s``."""
    x = np.arange(q**n)
    width = q ** (n - 1)
    return np.stack([s * width + (x // q ** (n - s)) * q ** (n - 1 - s) + x % q ** (n - 1 - s)
                     for s in range(n)])


def _factor(kernel: GlauberKernel, classes: np.ndarray, R: int) -> np.ndarray:
    n = kernel.n
    flat = np.zeros(R * R)
    for s in range(n):
        for other in range(n):
            flat += np.bincount(classes[s] * R + classes[other], weights=kernel.w[s] / n,
                                minlength=R * R)
    return flat.reshape(R, R)


class FactoredGlauber:
    """The algebra of ``M = B A`` for the squaring of
    :func:`glauber.exact.mixing.mixing_time`.

    It offers what that algebra needs (``P``, :meth:`empty`, :meth:`matmul`, :meth:`distance`),
    with the time shifted by one: the matrix ``Q = M^m`` stands for ``t = m + 1`` steps, and
    ``None`` (``M^0``) for ``t = 1``. :meth:`distance_at_zero` gives ``d(0)``.

    Parameters
    ----------
    kernel : GlauberKernel
        The chain's conditionals (``kernel.w[s, y] = p_s(y_s | y_{-s})``).
    pi : numpy.ndarray, shape (S,)
        Its stationary distribution.
    threshold : float, optional
        Where only the side of each distance matters (``t_mix(eps)`` passes ``eps``):
        :meth:`distance` may then stop early.

    Raises
    ------
    InvalidParameterError
        If ``pi`` does not have one entry per state.
    StateSpaceTooLargeError
        If an ``R x S`` array would exceed :data:`FACTORED_MAX_ELEMENTS` entries (any chain
        within it factors, but only a :func:`factorable` one gains from it).

    Examples
    --------
    >>> p = np.full((2, 9, 3), 1 / 3)  # two independent uniform sites: pi uniform
    >>> f = FactoredGlauber(GlauberKernel(p), np.full(9, 1 / 9))
    >>> # d(1): half the time site 0 redrawn, half site 1; mass 1/3 on x, 1/6 on its 4
    >>> # neighbours, 0 elsewhere: TV to uniform (1/3 - 1/9) + 4 (1/6 - 1/9) = 4/9
    >>> round(f.distance(None), 12)
    0.444444444444
    """

    def __init__(self, kernel: GlauberKernel, pi: np.ndarray,
                 threshold: float | None = None) -> None:
        n, q, S = kernel.n, kernel.q, kernel.shape[0]
        pi = np.asarray(pi, dtype=np.float64)
        if pi.shape != (S,):
            raise InvalidParameterError(f"pi must have {S} entries, got shape {pi.shape}")
        R = n * S // q
        if not _fits(n, q, FACTORED_MAX_ELEMENTS):
            raise StateSpaceTooLargeError(
                f"the factor of this chain ({R} classes x {S} states) is over "
                f"FACTORED_MAX_ELEMENTS = {FACTORED_MAX_ELEMENTS} entries; use "
                "method='stepping'"
            )
        self.n, self.q, self.S, self.pi, self.kernel = n, q, S, pi, kernel
        #: Where only the side of ``d(t)`` matters (``t_mix``'s ``eps``), or None.
        self.threshold = threshold
        self.width = q ** (n - 1)
        #: ``R`` classes ``(s, x_{-s})``, site-major.
        self.R = R
        #: ``classes[s, x] = c_s(x)``: the class of ``x`` at site ``s``.
        self.classes = _classes(n, q)
        #: ``M = B A`` (row-stochastic ``R x R``), :func:`factor_matrix`.
        self.P = _factor(kernel, self.classes, R)
        #: Starts of largest distance at the last full evaluation, tried first by the next.
        self.suspects = np.zeros(0, dtype=np.int64)

    def B(self, Q: np.ndarray) -> np.ndarray:
        """``Q B`` (rows: laws over the ``S`` states): ``sum_s Q[:, (s, y_{-s})] p_s(y_s | .)``.

        Formed in chunks of :data:`_CHUNK_ROWS` rows, whose scratch stays in cache.
        """
        n, q, R = self.n, self.q, Q.shape[0]
        out = np.empty((R, self.S))
        scratch = np.empty((min(R, _CHUNK_ROWS), self.S))
        for lo in range(0, R, _CHUNK_ROWS):
            rows = out[lo:lo + _CHUNK_ROWS]
            r = rows.shape[0]
            for s in range(n):
                shape = (r, q**s, q, q ** (n - 1 - s))
                block = Q[lo:lo + r, s * self.width:(s + 1) * self.width]
                w = self.kernel.w[s].reshape(1, *shape[1:])
                if s == 0:
                    np.multiply(block.reshape(r, q**s, 1, -1), w, out=rows.reshape(shape))
                else:
                    np.multiply(block.reshape(r, q**s, 1, -1), w,
                                out=scratch[:r].reshape(shape))
                    rows += scratch[:r]
        return out

    def empty(self) -> np.ndarray:
        """An uninitialised ``R x R`` buffer."""
        return np.empty((self.R, self.R))

    def matmul(self, A: np.ndarray, B: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``out <- A @ B`` with rows renormalised to sum 1 (``M^m`` is exactly stochastic)."""
        np.matmul(A, B, out=out)
        out /= out.sum(1)[:, None]
        return out

    def distance_at_zero(self) -> float:
        """``d(0) = max_x (1 - pi(x))`` (point masses)."""
        return float(1.0 - self.pi.min())

    def start_distances(self, Q: np.ndarray | None, starts: np.ndarray) -> np.ndarray:
        """``d_x(m + 1)`` of each start ``x`` in ``starts``, for ``Q = M^m`` (``None``:
        ``m = 0``), from its ``n`` class rows only."""
        classes = self.classes[:, starts].ravel()
        rows = self.B(np.eye(self.R)[classes] if Q is None else Q[classes])
        law = rows.reshape(self.n, len(starts), self.S).mean(axis=0)
        return 0.5 * np.abs(law - self.pi).sum(axis=1)

    def distance(self, Q: np.ndarray | None) -> float:
        """``d(m + 1)`` for ``Q = M^m`` (``None``: ``m = 0``), exactly (see the module docstring).

        Starts are evaluated in decreasing order of their bound ``u_x`` until the largest
        distance found reaches the next bound. With :attr:`threshold` set, only the side of it
        matters: the :attr:`suspects` (the worst starts of the last full evaluation) are tried
        first, at the cost of ``n`` rows each, and the search stops once the side is known (a
        distance above the threshold is found, or every remaining bound is at most it); the
        value returned is then on the same side as ``d(m + 1)``, and a lower bound on it.
        """
        stop = -np.inf if self.threshold is None else self.threshold
        if self.suspects.size and self.threshold is not None:
            worst = float(self.start_distances(Q, self.suspects).max())
            if worst > stop:
                return worst
        G = self.B(np.eye(self.R) if Q is None else Q)
        e = 0.5 * np.abs(G - self.pi).sum(axis=1)
        bound = e[self.classes].mean(axis=0)
        order = np.argsort(-bound, kind="stable")
        worst, found = 0.0, []
        for lo in range(0, self.S, _CANDIDATE_BLOCK):
            block = order[lo:lo + _CANDIDATE_BLOCK]
            if bound[block[0]] <= max(worst, stop) or worst > stop > -np.inf:
                break
            rows = G[self.classes[:, block]].mean(axis=0)
            d = 0.5 * np.abs(rows - self.pi).sum(axis=1)
            found.append((d, block))
            worst = max(worst, float(d.max()))
        if found:
            d, block = (np.concatenate(parts) for parts in zip(*found))
            self.suspects = block[np.argsort(-d, kind="stable")[:_SUSPECTS]]
        return worst


__all__ = [
    "FACTORED_MAX_ELEMENTS",
    "FactoredGlauber",
    "factor_matrix",
    "factorable",
]
