"""The Curie–Weiss model (Ising on the complete graph) and its exact lumped Glauber chain.

``pi(x) ∝ exp((alpha/n) sum_{i<j} s_i s_j + h sum_i s_i)`` (Levin–Peres–Wilmer 2nd ed.,
Section 15.2, "The complete graph"). Heat-bath Glauber dynamics with a uniformly chosen site is
invariant under permutations of the sites, so the number ``k`` of ``+`` spins is itself a Markov
chain (the chain is lumpable): a birth–death chain on ``0..n``, exact for ``n`` in the thousands
where ``2**n`` states are out of reach.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigvalsh_tridiagonal
from scipy.special import expit, gammaln, logsumexp

from glauber.errors import ConvergenceError
from glauber.core.validation import (
    check_eps,
    check_finite_float,
    check_nonnegative_int,
    check_positive_int,
    check_tau,
)
from glauber.toy_models.base import ToyModel
from glauber.toy_models.ising import spins

Matrix = np.ndarray | sp.csr_matrix

#: Sparse products switch to dense once a power of the tridiagonal matrix is this full.
_DENSE_FILL = 0.2


def _dense(mat: Matrix) -> np.ndarray:
    return mat.toarray() if sp.issparse(mat) else mat


def _product(a: Matrix, b: Matrix) -> Matrix:
    """``a @ b``: sparse while both factors are sparse and the product is banded, else dense.

    Powers of a tridiagonal matrix are banded (``P^t`` has bandwidth ``t``), so the first
    ``log2(n)`` squarings cost ``O(n t^2)`` instead of ``O(n^3)``.
    """
    if sp.issparse(a) and sp.issparse(b):
        out = (a @ b).tocsr()
        return out.toarray() if out.nnz > _DENSE_FILL * out.shape[0] ** 2 else out
    return np.asarray(a @ b)


class CurieWeissModel(ToyModel):
    """Curie–Weiss model as a conditional model.

    ``s_i(s; x_{-i}) = s (h + (alpha/n) sum_{k != i} s_k)`` for the spin ``s`` of token 0 / 1.

    The same as ``IsingModel(nx.complete_graph(n), coupling=alpha/n, field=h)``, computed in
    ``O(n)`` per state. At temperature ``tau`` the Glauber chain is heat-bath for
    ``pi_tau(x) ∝ exp(((alpha/n) sum_{i<j} s_i s_j + h sum_i s_i) / tau)``.

    Parameters
    ----------
    n : int
        Number of sites, >= 1.
    alpha : float
        Total interaction strength; the pair coupling is ``alpha / n``. ``alpha < 1`` is the
        high-temperature phase, ``alpha > 1`` the low-temperature (bimodal) phase at ``tau = 1``.
    field : float, default 0.0
        Uniform external field ``h``.
    name : str, optional

    Raises
    ------
    InvalidParameterError
        If ``n < 1`` or ``alpha``, ``field`` are not finite reals.
    """

    def __init__(
        self, n: int, alpha: float, field: float = 0.0, name: str | None = None
    ) -> None:
        super().__init__(check_positive_int(n, "n"), 2, name=name or "curie-weiss",
                         labels=("-1", "+1"))
        self.alpha = check_finite_float(alpha, "alpha")
        self.field = check_finite_float(field, "field")

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        s = spins(states)
        others = s.sum(axis=1) - s[:, site]
        f = self.field + (self.alpha / self.n) * others
        return np.stack([-f, f], axis=1)

    def log_weight(self, states: np.ndarray) -> np.ndarray:
        """Gibbs log-weight at ``tau = 1``: ``(alpha/n) sum_{i<j} s_i s_j + h sum_i s_i``.

        Uses ``sum_{i<j} s_i s_j = (M^2 - n) / 2`` with ``M = sum_i s_i``.
        """
        m = spins(self.as_states(states)).sum(axis=1)
        return (self.alpha / self.n) * (m * m - self.n) / 2.0 + self.field * m


class CurieWeissLumpedChain:
    """Exact Glauber chain of the Curie–Weiss model lumped to ``k`` = number of ``+`` spins.

    From a configuration with ``k`` plus spins, a uniformly chosen site holds ``+`` with
    probability ``k/n``; resampled from the heat-bath conditional at temperature ``tau`` it
    becomes ``-`` with probability ``sigmoid(-2 f_+(k) / tau)``, ``f_+(k) = h + (alpha/n)(2k-n-1)``.
    A ``-`` site (probability ``(n-k)/n``) becomes ``+`` with probability
    ``sigmoid(2 f_-(k) / tau)``, ``f_-(k) = h + (alpha/n)(2k-n+1)``. These rates depend on the
    configuration only through ``k``, so ``k`` is itself a Markov chain (lumpability).

    What the lumped distance means. Let ``X_t`` be the full chain and ``K_t`` its number of
    plus spins. For every start ``x`` with ``k`` plus spins, ``K_t`` is the lumped chain from
    ``k``, and the TV distance can only shrink under the map ``x -> k``, so
    ``||P^t(k, .) - pi_lumped||_TV <= ||P^t(x, .) - pi||_TV``: the lumped worst-start distance
    :meth:`distance` (and :meth:`mixing_time`) is a **lower bound** on the full chain's. Equality
    holds for an exchangeable start (the all-minus ``k = 0`` or all-plus ``k = n`` configuration,
    or the uniform mixture over a level): the law of ``X_t`` is then exchangeable, so given
    ``K_t`` it is uniform on the level, as is ``pi`` given ``K``, and both TVs are equal.
    Likewise every eigenvalue of the lumped chain is one of the full chain (an eigenfunction
    ``f`` of the lumped chain lifts to the eigenfunction ``x -> f(k(x))``), so the full chain's
    spectral gap is at most :meth:`spectral_gap`.

    Parameters
    ----------
    n : int
        Number of sites, >= 1.
    alpha : float
        Interaction strength (pair coupling ``alpha / n``).
    tau : float, default 1.0
        Temperature (scores divided by ``tau``: inverse temperature ``1 / tau``).
    field : float, default 0.0
        Uniform field ``h``.

    Raises
    ------
    InvalidParameterError, InvalidTemperatureError
        On a bad ``n``, ``alpha``, ``field`` or ``tau``.

    Examples
    --------
    >>> c = CurieWeissLumpedChain(4, alpha=0.5)
    >>> c.transition_matrix().shape
    (5, 5)
    >>> float(c.stationary().sum())
    1.0
    """

    def __init__(self, n: int, alpha: float, tau: float = 1.0, field: float = 0.0) -> None:
        self.n = check_positive_int(n, "n")
        self.alpha = check_finite_float(alpha, "alpha")
        self.tau = check_tau(tau)
        self.field = check_finite_float(field, "field")
        k = np.arange(self.n + 1, dtype=np.float64)
        n_f = float(self.n)
        f_plus = self.field + (self.alpha / n_f) * (2.0 * k - n_f - 1.0)
        f_minus = self.field + (self.alpha / n_f) * (2.0 * k - n_f + 1.0)
        #: ``up[k] = P(k, k+1)`` (zero at ``k = n``); ``down[k] = P(k, k-1)`` (zero at ``k = 0``).
        self.up = (n_f - k) / n_f * expit(2.0 * f_minus / self.tau)
        self.down = k / n_f * expit(-2.0 * f_plus / self.tau)
        self.up.flags.writeable = False
        self.down.flags.writeable = False

    def magnetisation_levels(self) -> np.ndarray:
        """Total magnetisation ``M = sum_i s_i = 2k - n`` of each level ``k = 0..n`` (int array)."""
        return 2 * np.arange(self.n + 1) - self.n

    def transition_matrix(self) -> sp.csr_matrix:
        """Tridiagonal ``(n+1) x (n+1)`` transition matrix of the lumped chain (scipy CSR)."""
        stay = 1.0 - self.up - self.down
        return sp.diags(
            [self.down[1:], stay, self.up[:-1]], offsets=[-1, 0, 1], format="csr"
        )

    def log_stationary(self) -> np.ndarray:
        """Log stationary law of the lumped chain, ``log pi(k)`` for ``k = 0..n``.

        ``pi(k) ∝ C(n, k) exp(((alpha/n)(M^2 - n)/2 + h M) / tau)`` with ``M = 2k - n``: the
        Gibbs weight of one configuration with ``k`` plus spins times their number. Computed
        in log space (``gammaln`` and ``logsumexp``), so it stays accurate when the weights span
        hundreds of orders of magnitude.
        """
        n = self.n
        k = np.arange(n + 1, dtype=np.float64)
        m = 2.0 * k - n
        log_binom = gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)
        log_w = log_binom + ((self.alpha / n) * (m * m - n) / 2.0 + self.field * m) / self.tau
        return log_w - logsumexp(log_w)

    def stationary(self) -> np.ndarray:
        """Stationary law of the lumped chain: the law of ``k`` under the Gibbs measure."""
        return np.exp(self.log_stationary())

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
        configuration; the others are lower bounds on the full chain's TV from any
        configuration in that level (see the class docstring).

        Raises
        ------
        InvalidParameterError
            If ``t`` is not an integer >= 0.
        """
        t = check_nonnegative_int(t, "t")
        return self._row_tv(self._power(t), self.stationary())

    def distance(self, t: int) -> float:
        """Worst start over levels: ``max_k ||P^t(k, .) - pi||_TV``, a lower bound on the full
        chain's ``d(t)`` (exact for the exchangeable starts, see the class docstring)."""
        return float(self.level_distances(t).max())

    def mixing_time(self, eps: float = 0.25, max_t: int = 2**40) -> int:
        """``min{t : max_k ||P^t(k, .) - pi||_TV <= eps}`` of the lumped chain.

        Repeated squaring finds the first power of two that mixes, then a binary descent over
        the stored powers ``P^(2^j)`` finds the exact ``t``: ``O(log t)`` products of size
        ``n + 1``, sparse while the powers are banded. The TV distance from each start is
        non-increasing in ``t`` (``||mu P - pi||_TV <= ||mu - pi||_TV`` as ``pi P = pi``), so
        the descent only carries the rows not yet within ``eps``. A lower bound on the full
        chain's ``t_mix(eps)`` (see the class docstring).

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
            f"Curie-Weiss lumped chain (n={self.n}, alpha={self.alpha}, tau={self.tau}) has not "
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

    def __repr__(self) -> str:
        return (
            f"CurieWeissLumpedChain(n={self.n}, alpha={self.alpha}, tau={self.tau}, "
            f"field={self.field})"
        )


__all__ = ["CurieWeissLumpedChain", "CurieWeissModel"]
