"""Exact lumped Glauber chain of a token count, for exchangeable toy models at large ``n``.

If a model's conditional at a site depends on the context only through the number ``c`` of
*other* sites holding a token ``t``, and all tokens but ``t`` score alike, then the count
``X = #{i : x_i = t}`` of the Glauber chain is itself a Markov chain (the chain is lumpable):
from level ``k`` a site holding ``t`` is picked with probability ``k/n`` and loses ``t`` with
probability ``1 - p(k - 1)``; another site (probability ``(n - k)/n``) takes ``t`` with
probability ``p(k)``, where ``p(c) = 1 / (1 + (q - 1) e^{-g(c)/tau})`` and ``g(c)`` is the score
of ``t`` minus the score of any other token. The Curie–Weiss model (``t`` = spin +1) and the
planted basin with zero base scores are of this kind.

Everything a basin statement needs is exact for the full chain at every state of a level:
``P(x, B^c)``, the conductance of a level set ``B``, the drift of ``X``, hitting probabilities
and expected exit times (all functions of the level alone). The lumped worst-start ``t_mix``
is a LOWER bound on the full chain's (TV can only shrink under the map ``x -> X(x)``), which
is the right direction for the lower bounds of Theorem 8 and Levin–Peres–Wilmer Theorem 7.4.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.special import expit, logsumexp

from glauber.errors import InvalidParameterError
from glauber.core.validation import check_nonnegative_int, check_positive_int, check_tau
from glauber.toy_models import mixing
from glauber.toy_models.exact_basins import check_mask


class CountChain:
    """Birth–death chain of a token count ``X`` on levels ``0..n``.

    Parameters
    ----------
    n : int
        Number of sites, >= 2.
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
        If ``n < 2``, ``q < 2`` or ``score_gap`` does not hold ``n`` finite values.
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
        self.q = check_positive_int(q, "q")
        if self.n < 2 or self.q < 2:
            raise InvalidParameterError(f"a count chain needs n >= 2 and q >= 2, got {n}, {q}")
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

    def mixing_time(self, eps: float = 0.25) -> int:
        """Worst-start ``t_mix(eps)`` of the lumped chain: a lower bound on the full chain's."""
        return mixing.mixing_time(self.transition_matrix().toarray(), self.stationary(), eps)

    def distance_curve(self, ts: Iterable[int]) -> np.ndarray:
        """Worst-start ``d(t)`` of the lumped chain at each time (a lower bound on the full one)."""
        return mixing.distance_curve(self.transition_matrix().toarray(), self.stationary(), ts)

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
        """``P_k(X_t <= a for some t <= horizon)`` for every level ``k`` (exact matrix power).

        Raises
        ------
        InvalidParameterError
            If ``a`` is not in ``0..n-1`` or ``horizon`` is negative.
        """
        return absorption_probability(
            self.transition_matrix(), self.levels() <= a, horizon
        )


def absorption_probability(P: sp.spmatrix, target: np.ndarray, horizon: int) -> np.ndarray:
    """``P_x(X_t in A for some t <= horizon)`` for every state ``x``, by repeated squaring.

    The chain is stopped on ``A`` (rows of ``A`` replaced by the identity); the probability is
    then ``(P_A^horizon 1_A)(x)``, computed with ``log2(horizon)`` dense products.

    Parameters
    ----------
    P : scipy sparse matrix, shape (S, S)
    target : array of bool, shape (S,)
        The set ``A`` (non-empty, not everything).
    horizon : int
        Number of steps, >= 0.

    Returns
    -------
    numpy.ndarray, shape (S,)

    Raises
    ------
    InvalidParameterError, BasinError
        If ``target`` is malformed, empty or everything, or ``horizon`` is negative.
    """
    target = check_mask(target, P.shape[0])
    horizon = check_nonnegative_int(horizon, "horizon")
    stopped = P.toarray()
    stopped[target] = 0.0
    stopped[target, np.flatnonzero(target)] = 1.0
    power = np.linalg.matrix_power(stopped, horizon)
    return np.clip(power[:, target].sum(axis=1), 0.0, 1.0)


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


__all__ = ["CountChain", "absorption_probability", "curie_weiss_gap", "planted_gap"]
