"""Exact lumped Glauber chain of a token count, for exchangeable toy models at large ``n``.

If a model's conditional at a site depends on the context only through the number ``c`` of
*other* sites holding a token ``t``, and all tokens but ``t`` score alike, then the count
``X = #{i : x_i = t}`` of the Glauber chain is itself a Markov chain (the chain is lumpable): a
birth–death chain on ``0..n``. From level ``k`` a site holding ``t`` is picked with probability
``k/n`` and loses ``t`` with probability ``1 - p(k - 1)``; another site (probability
``(n - k)/n``) takes ``t`` with probability ``p(k)``, where
``p(c) = 1 / (1 + (q - 1) e^{-g(c)/tau})`` and ``g(c)`` is the score of ``t`` minus the score of
any other token. The Curie–Weiss model (``t`` = spin +1, :func:`curie_weiss_gap`; its class
:class:`~glauber.toy_models.curie_weiss.CurieWeissLumpedChain`) and the planted basin with zero
base scores (:func:`planted_gap`) are of this kind.

Everything a basin statement needs is exact for the full chain at every state of a level:
``P(x, B^c)``, the conductance of a level set ``B``, the drift of ``X``, hitting probabilities
and expected exit times (all functions of the level alone).

What the lumped distance means. For every start ``x`` with ``k`` tokens ``t``, ``X_t`` is the
lumped chain from ``k``, and the TV distance can only shrink under the map ``x -> X(x)``, so the
lumped worst-start distance (and ``t_mix``) is a LOWER bound on the full chain's: the right
direction for the lower bounds of Theorem 8 and Levin–Peres–Wilmer Theorem 7.4. Equality holds
for an exchangeable start (all sites ``t``, or none, or the uniform mixture over a level): the
law of ``X_t`` is then exchangeable, so given ``X_t`` it is uniform on the level, as is ``pi``
given ``X``. Every eigenvalue of the lumped chain is one of the full chain (an eigenfunction
``f`` lifts to ``x -> f(X(x))``), so the full chain's spectral gap is at most the lumped one's.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.linalg import eigvalsh_tridiagonal
from scipy.special import expit, logsumexp

from glauber.core.validation import (
    check_eps,
    check_nonnegative_int,
    check_positive_int,
    check_tau,
    check_vocab_size,
)
from glauber.errors import ConvergenceError, InvalidParameterError
from glauber.exact.basins import hitting_probability_within

Matrix = np.ndarray | sp.csr_matrix

#: Sparse products switch to dense once a power of the tridiagonal matrix is this full.
_DENSE_FILL = 0.2


def _dense(mat: Matrix) -> np.ndarray:
    return mat.toarray() if sp.issparse(mat) else mat


def _product(a: Matrix, b: Matrix) -> Matrix:
    """``a @ b`` of stochastic matrices, each row renormalised to sum 1.

    Sparse while both factors are sparse and the product is banded, else dense: powers of a
    tridiagonal matrix are banded (``P^t`` has bandwidth ``t``), so the first ``log2(n)``
    squarings cost ``O(n t^2)`` instead of ``O(n^3)``. A product of stochastic matrices is
    exactly stochastic; renormalising removes the rounding drift of the row sums, which
    otherwise compounds over the ~60 squarings of a slow chain (as in
    :mod:`glauber.exact.mixing`).
    """
    if sp.issparse(a) and sp.issparse(b):
        out = (a @ b).tocsr()
        out = sp.csr_matrix(sp.diags(1.0 / np.asarray(out.sum(axis=1)).ravel()) @ out)
        return out.toarray() if out.nnz > _DENSE_FILL * out.shape[0] ** 2 else out
    out = np.asarray(a @ b)
    return out / out.sum(axis=1, keepdims=True)


class CountChain:
    """Birth–death chain of a token count ``X`` on levels ``0..n`` (see the module docstring).

    Parameters
    ----------
    n : int
        Number of sites, >= 1.
    q : int
        Vocabulary size, >= 2 (the ``q - 1`` other tokens score alike).
    score_gap : array_like, shape (n,)
        ``g(c)`` at ``tau = 1`` for ``c = 0..n-1`` other sites holding the token: the score of the
        token minus the score of any other token.
    tau : float
        Temperature, > 0.

    Raises
    ------
    InvalidParameterError
        If ``n < 1`` or ``score_gap`` does not hold ``n`` finite values.
    VocabularyError
        If ``q < 2``.
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.

    Examples
    --------
    >>> chain = CountChain(3, 2, [0.0, 0.0, 0.0], tau=1.0)  # independent fair coins
    >>> chain.stationary().round(3).tolist()
    [0.125, 0.375, 0.375, 0.125]
    """

    def __init__(self, n: int, q: int, score_gap: ArrayLike, tau: float) -> None:
        self.n = check_positive_int(n, "n")
        self.q = check_vocab_size(q)
        gap = np.asarray(score_gap, dtype=np.float64)
        if gap.shape != (self.n,) or not np.isfinite(gap).all():
            raise InvalidParameterError(
                f"score_gap must hold n = {self.n} finite values g(0..n-1), got shape {gap.shape}"
            )
        self.tau = check_tau(tau)
        self.score_gap = gap
        logit = gap / self.tau - math.log(self.q - 1)
        k = np.arange(self.n + 1, dtype=np.float64)
        n_f = float(self.n)
        #: ``up[k] = P(k, k + 1)``, zero at ``k = n``.
        self.up = np.zeros(self.n + 1)
        self.up[:-1] = (n_f - k[:-1]) / n_f * expit(logit)
        #: ``down[k] = P(k, k - 1)``, zero at ``k = 0``.
        self.down = np.zeros(self.n + 1)
        self.down[1:] = k[1:] / n_f * expit(-logit)
        self.up.flags.writeable = False
        self.down.flags.writeable = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self.n}, q={self.q}, tau={self.tau})"

    def levels(self) -> np.ndarray:
        """The levels ``0..n`` (int64)."""
        return np.arange(self.n + 1)

    def transition_matrix(self) -> sp.csr_matrix:
        """Tridiagonal ``(n + 1) x (n + 1)`` transition matrix (scipy CSR)."""
        stay = 1.0 - self.up - self.down
        return sp.diags(
            [self.down[1:], stay, self.up[:-1]], offsets=[-1, 0, 1], format="csr"
        )

    def log_stationary(self) -> np.ndarray:
        """``log pi(k)`` from detailed balance ``pi(k) up[k] = pi(k + 1) down[k + 1]``."""
        steps = np.log(self.up[:-1]) - np.log(self.down[1:])
        log_w = np.concatenate([[0.0], np.cumsum(steps)])
        return log_w - logsumexp(log_w)

    def stationary(self) -> np.ndarray:
        """Stationary law of the level."""
        return np.exp(self.log_stationary())

    def drift(self) -> np.ndarray:
        """Exact one-step drift ``E[X_1 - X_0 | X_0 = k] = up[k] - down[k]`` per level."""
        return self.up - self.down

    def distance_curve(self, ts: Iterable[int]) -> np.ndarray:
        """Worst-start ``d(t)`` of the lumped chain at each time (a lower bound on the full one)."""
        return np.array([self.distance(t) for t in ts])

    def _power(self, t: int) -> Matrix:
        """``P^t`` by repeated squaring (``O(log t)`` products, see :func:`_product`)."""
        result: Matrix = sp.identity(self.n + 1, format="csr")
        base: Matrix = self.transition_matrix()
        while t:
            if t & 1:
                result = _product(result, base)
            t >>= 1
            if t:
                base = _product(base, base)
        return _dense(result)

    @staticmethod
    def _row_tv(power: Matrix, pi: np.ndarray) -> np.ndarray:
        """TV of each row of a stochastic matrix from ``pi``: ``1 - sum_l min(row(l), pi(l))``."""
        if sp.issparse(power):
            overlap = np.minimum(power.data, pi[power.indices])
            return 1.0 - np.add.reduceat(overlap, power.indptr[:-1])
        return 1.0 - np.minimum(power, pi[None, :]).sum(axis=1)

    def level_distances(self, t: int) -> np.ndarray:
        """``||P^t(k, .) - pi||_TV`` for every starting level ``k = 0..n``.

        Entries ``0`` and ``n`` equal the full chain's TV from the all-minus / all-plus
        configuration (for an exchangeable model); the others are lower bounds on the full
        chain's TV from any configuration in that level (see the module docstring).

        Raises
        ------
        InvalidParameterError
            If ``t`` is not an integer >= 0.
        """
        t = check_nonnegative_int(t, "t")
        return self._row_tv(self._power(t), self.stationary())

    def distance(self, t: int) -> float:
        """Worst start over levels: ``max_k ||P^t(k, .) - pi||_TV``, a lower bound on the full
        chain's ``d(t)`` (exact for the exchangeable starts, see the module docstring)."""
        return float(self.level_distances(t).max())

    def mixing_time(self, eps: float = 0.25, max_t: int = 2**62) -> int:
        """``min{t : max_k ||P^t(k, .) - pi||_TV <= eps}`` of the lumped chain.

        Repeated squaring finds the first power of two that mixes, then a binary descent over
        the stored powers ``P^(2^j)`` finds the exact ``t``: ``O(log t)`` products of size
        ``n + 1``, sparse while the powers are banded. The TV distance from each start is
        non-increasing in ``t`` (``||mu P - pi||_TV <= ||mu - pi||_TV`` as ``pi P = pi``), so
        the descent only carries the rows not yet within ``eps``. A lower bound on the full
        chain's ``t_mix(eps)`` (see the module docstring).

        Raises
        ------
        InvalidProbabilityError
            If ``eps`` is not in (0, 1).
        InvalidParameterError
            If ``max_t`` is not an integer >= 1.
        ConvergenceError
            If the chain has not mixed to ``eps`` by ``max_t`` steps (raise ``max_t``; at
            ``alpha > 1`` the mixing time grows exponentially in ``n``).
        """
        eps = check_eps(eps)
        max_t = check_positive_int(max_t, "max_t")
        pi = self.stationary()
        if self._row_tv(np.eye(self.n + 1), pi).max() <= eps:
            return 0
        powers: list[Matrix] = [self.transition_matrix()]  # powers[j] = P^(2^j)
        while (tv := self._row_tv(powers[-1], pi)).max() > eps:
            if 2 ** (len(powers) - 1) >= max_t:
                raise self._not_mixed(eps, max_t)
            powers.append(_product(powers[-1], powers[-1]))
            last_tv = tv
        top = len(powers) - 1
        if top == 0:
            return 1
        # Invariant: t_lo is the largest t known with d(t) > eps; `rows` holds the rows of
        # P^t_lo whose TV still exceeds eps (the other starts are within eps from then on).
        t_lo = 2 ** (top - 1)
        rows = _dense(powers[top - 1])[last_tv > eps]
        for j in range(top - 2, -1, -1):
            candidate = _product(rows, powers[j])
            late = self._row_tv(candidate, pi) > eps
            if late.any():
                t_lo, rows = t_lo + 2**j, candidate[late]
        if t_lo + 1 > max_t:
            raise self._not_mixed(eps, max_t)
        return t_lo + 1

    def _not_mixed(self, eps: float, max_t: int) -> ConvergenceError:
        return ConvergenceError(
            f"{self!r} has not "
            f"mixed to eps={eps} within max_t={max_t} steps; raise max_t or the temperature"
        )

    def spectral_gap(self) -> float:
        """Spectral gap ``1 - lambda_2`` of the lumped chain, to high relative accuracy.

        For a birth–death chain, ``Pi^{1/2} (I - P) Pi^{-1/2} = A^T A`` with ``A`` the
        ``n x (n+1)`` upper bidiagonal matrix with ``A[k, k] = -sqrt(up[k])`` and
        ``A[k, k+1] = sqrt(down[k+1])``, so the gap is the squared smallest singular value of
        ``A``. It is found by bisection on the Golub–Kahan matrix (zero diagonal), which resolves
        tiny singular values to high relative accuracy (Demmel & Kahan, SIAM J. Sci. Stat.
        Comput. 11 (1990)); the gap is exact to rounding even when it is ``1e-100`` (``alpha > 1``).
        All eigenvalues of heat-bath Glauber are >= 0 (it is an average of projections), so this
        is also the absolute spectral gap. It upper-bounds the full chain's gap.
        """
        n = self.n
        off = np.empty(2 * n)
        off[0::2] = np.sqrt(self.up[:-1])
        off[1::2] = np.sqrt(self.down[1:])
        sigma = eigvalsh_tridiagonal(
            np.zeros(2 * n + 1), off, select="i", select_range=(n + 1, n + 1),
            lapack_driver="stebz", tol=np.finfo(np.float64).tiny,
        )[0]
        return float(sigma * sigma)

    def relaxation_time(self) -> float:
        """``1 / spectral_gap()``."""
        return 1.0 / self.spectral_gap()

    def expected_exit_times(self, b: int) -> np.ndarray:
        """``E_k[time to reach a level < b]`` for ``k = b..n`` (index ``k - b``).

        For a birth–death chain the passage time from ``j`` down to ``j - 1`` has mean
        ``pi([j, n]) / (pi(j) down[j])`` (Levin–Peres–Wilmer 2nd ed., Section 2.5), so
        ``E_k = sum_{j=b}^{k} pi([j, n]) / (pi(j) down[j])``, computed in log space.

        Raises
        ------
        InvalidParameterError
            If ``b`` is not in ``1..n``.
        """
        if not 1 <= b <= self.n:
            raise InvalidParameterError(f"the basin threshold b must lie in 1..{self.n}, got {b}")
        log_pi = self.log_stationary()
        tails = np.array([logsumexp(log_pi[j:]) for j in range(b, self.n + 1)])
        log_steps = tails - log_pi[b:] - np.log(self.down[b:])
        return np.exp(np.logaddexp.accumulate(log_steps))

    def hitting_probability(self, a: int, horizon: int) -> np.ndarray:
        """``P_k(X_t <= a for some t <= horizon)`` for every level ``k`` (exact).

        Raises
        ------
        InvalidParameterError
            If ``a`` is not in ``0..n-1`` or ``horizon`` is negative.
        """
        if not 0 <= a < self.n:
            raise InvalidParameterError(f"the level a must lie in 0..{self.n - 1}, got {a}")
        return hitting_probability_within(self.transition_matrix(), self.levels() <= a, horizon)


def curie_weiss_gap(n: int, alpha: float, field: float = 0.0) -> np.ndarray:
    """``g(c) = 2 (h + (alpha/n)(2c - n + 1))``: spin +1 minus spin -1 with ``c`` other + spins.

    The score of spin ``s`` is ``s f`` with ``f = h + (alpha/n) sum_{k != i} s_k`` (Levin–Peres–
    Wilmer 2nd ed., Section 15.2); ``sum_{k != i} s_k = c - (n - 1 - c)``.
    """
    c = np.arange(n, dtype=np.float64)
    return 2.0 * (field + (alpha / n) * (2.0 * c - n + 1.0))


def planted_gap(n: int, strength: float) -> np.ndarray:
    """``g(c) = strength c / (n - 1)``: the planted token (zero base scores) over any other."""
    return strength * np.arange(n, dtype=np.float64) / (n - 1)


__all__ = ["CountChain", "curie_weiss_gap", "planted_gap"]
