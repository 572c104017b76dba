"""Closed forms for heat-bath Ising dynamics (oracles; Levin–Peres–Wilmer, 2nd ed., 2017).

Convention: spins ``s_v in {-1, +1}``, ``pi(s) ∝ exp(beta sum_{edges uv} s_u s_v)`` (zero field),
Glauber (heat-bath) dynamics: pick a site uniformly, resample it from its conditional
``p(+1 | S) = (1 + tanh(beta S)) / 2`` where ``S`` is the sum of the neighbouring spins. In the
library's token convention, token 0 is spin -1 and token 1 is spin +1, and ``tau = 1/beta``.
"""

from __future__ import annotations

import math
import sys

from glauber.core.validation import (
    check_eps,
    check_finite_float,
    check_nonnegative_float,
    check_nonnegative_int,
    check_positive_int,
)
from glauber.errors import InvalidParameterError, PrecisionError
from glauber.theory.floating import exp_decay

_LOG_MAX = math.log(sys.float_info.max)


def ising_cycle_relaxation_time(n: int, beta: float) -> float:
    """Relaxation time ``n / (1 - tanh(2 beta))`` of heat-bath Ising on the n-cycle.

    Levin–Peres–Wilmer 2nd ed. Theorem 15.5. (The magnetisation ``sum_i s_i`` is an
    eigenfunction: ``E[s_i' | s] = tanh(2 beta) (s_{i-1} + s_{i+1}) / 2`` because the neighbour
    sum is -2, 0 or 2, which gives the eigenvalue ``1 - (1 - tanh 2 beta)/n``.)

    Parameters
    ----------
    n : int
        Cycle length, >= 3.
    beta : float
        Inverse temperature, finite and >= 0.

    Returns
    -------
    float
        ``1 / gap``, the inverse spectral gap of the transition matrix, evaluated in the stable
        form ``n (1 + e^{4 beta}) / 2`` (``1 - tanh(2 beta) = 2 / (1 + e^{4 beta})``), accurate
        to a few ulps at every ``beta`` (the printed form loses all digits above beta ~ 9 and
        divides by zero above ~ 19).

    Raises
    ------
    InvalidParameterError
        If ``n < 3`` or ``beta`` is negative or not finite.
    PrecisionError
        If the value exceeds the largest float64 (``beta`` above about 177).

    Examples
    --------
    >>> ising_cycle_relaxation_time(4, 0.0)
    4.0
    >>> f"{ising_cycle_relaxation_time(5, 20.0):.6e}"
    '1.385156e+35'
    """
    n = check_positive_int(n, "cycle length n")
    if n < 3:
        raise InvalidParameterError(f"a cycle needs n >= 3 sites, got n = {n}")
    beta = check_nonnegative_float(beta, "beta")
    log_value = math.log(n / 2.0) + _log1p_exp(4.0 * beta)
    if log_value > _LOG_MAX:
        raise PrecisionError(
            f"the relaxation time n (1 + e^(4 beta)) / 2 at beta = {beta!r} is "
            f"10^{log_value / math.log(10):.1f}, beyond the largest float64"
        )
    if beta == 0.0:
        return float(n)
    return n * (1.0 + math.exp(4.0 * beta)) / 2.0 if 4.0 * beta < 700 else math.exp(log_value)


def _log1p_exp(x: float) -> float:
    """``log(1 + e^x)`` without overflow."""
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def ising_neighbour_influence(beta: float, degree: int) -> float:
    """Exact influence of one neighbour on a site of degree ``degree`` (heat bath, zero field).

    Flipping one neighbour moves the neighbour sum from ``S - 1`` to ``S + 1``, where ``S`` is the
    sum of the other ``degree - 1`` neighbours (``S in {-(d-1), -(d-3), ..., d-1}``), so the
    influence (Definition 2) is

        max_S |tanh(beta (S + 1)) - tanh(beta (S - 1))| / 2.

    It is attained at the ``S`` closest to 0 (the difference is half the integral of the
    symmetric unimodal ``beta sech^2(beta u)`` over ``[S - 1, S + 1]``), so it equals
    ``tanh(|beta|)`` when ``S = 0`` is possible (odd degree) and ``tanh(2 |beta|) / 2`` otherwise
    (even degree); both are ``<= tanh(|beta|)``, the per-neighbour influence used by LPW 2nd ed.
    Theorem 15.1.

    Parameters
    ----------
    beta : float
        Coupling (inverse temperature), finite; the sign does not matter.
    degree : int
        Degree of the site, >= 1.

    Returns
    -------
    float
        The influence ``c_ij`` of any one neighbour ``j`` on the site ``i``.

    Raises
    ------
    InvalidParameterError
        If ``beta`` is not finite or ``degree`` is not a positive integer.

    Examples
    --------
    >>> round(ising_neighbour_influence(0.5, 3), 6) == round(math.tanh(0.5), 6)
    True
    """
    beta = check_finite_float(beta, "beta")
    degree = check_positive_int(degree, "degree")
    # |tanh(b(S+1)) - tanh(b(S-1))| / 2 is half the integral of b sech^2(b u) over [S-1, S+1]:
    # a window of width 2 over a symmetric unimodal function, largest at the S closest to 0.
    if degree % 2 == 1:  # S = 0 is possible
        return math.tanh(abs(beta))
    return math.tanh(2.0 * abs(beta)) / 2.0  # S = +-1


def dobrushin_ising_bound(n: int, max_degree: int, beta: float, t: int) -> float:
    """LPW 2nd ed. Theorem 15.1: ``d(t) <= n (1 - c/n)^t`` with ``c = 1 - max_degree tanh(beta)``.

    Parameters
    ----------
    n : int
        Number of sites, >= 1.
    max_degree : int
        Maximum degree of the graph, >= 0.
    beta : float
        Inverse temperature, finite and >= 0.
    t : int
        Number of steps, >= 0.

    Returns
    -------
    float
        The bound, or ``math.inf`` when the hypothesis ``max_degree tanh(beta) < 1`` fails.

    Raises
    ------
    InvalidParameterError
        If an argument is out of range.

    Examples
    --------
    >>> round(dobrushin_ising_bound(10, 2, 0.1, 100), 6)
    0.002375
    """
    n = check_positive_int(n, "n")
    max_degree = check_nonnegative_int(max_degree, "max_degree")
    beta = check_nonnegative_float(beta, "beta")
    t = check_nonnegative_int(t, "t")
    c = _dobrushin_c(max_degree, beta)
    if c <= 0.0:
        return math.inf
    return _decay_bound(n, c, t)


def _dobrushin_c(max_degree: int, beta: float) -> float:
    """``1 - max_degree tanh(beta)``; for degree 1 in the stable form ``2 / (1 + e^{2 beta})``."""
    if max_degree == 1:
        e = math.exp(-2.0 * beta)
        return 2.0 * e / (1.0 + e)
    return 1.0 - max_degree * math.tanh(beta)


def _decay_bound(n: int, c: float, t: int) -> float:
    """``n (1 - c/n)^t`` for ``0 < c <= n`` and any integer ``t`` (log space: 0 at ``10**400``)."""
    if c >= n:  # (1 - c/n)^t is 0 for t >= 1
        return float(n) if t == 0 else 0.0
    return exp_decay(math.log(n), t, math.log1p(-c / n))


def dobrushin_ising_tmix_bound(n: int, max_degree: int, beta: float, eps: float = 0.25) -> float:
    """LPW 2nd ed. Theorem 15.1: ``t_mix(eps) <= ceil(n (log n + log 1/eps) / c)``.

    Parameters
    ----------
    n : int
        Number of sites, >= 1.
    max_degree : int
        Maximum degree, >= 0.
    beta : float
        Inverse temperature, finite and >= 0.
    eps : float, optional
        Target distance in (0, 1).

    Returns
    -------
    float
        The bound (a whole number), or ``math.inf`` when ``max_degree tanh(beta) >= 1``.

    Raises
    ------
    InvalidParameterError
        If an argument is out of range.
    InvalidProbabilityError
        If ``eps`` is not in (0, 1).

    Examples
    --------
    >>> dobrushin_ising_tmix_bound(10, 2, 0.1)
    47.0
    """
    n = check_positive_int(n, "n")
    max_degree = check_nonnegative_int(max_degree, "max_degree")
    beta = check_nonnegative_float(beta, "beta")
    eps = check_eps(eps)
    c = _dobrushin_c(max_degree, beta)
    if c <= 0.0:
        return math.inf
    return float(math.ceil(n * (math.log(n) + math.log(1.0 / eps)) / c))


def curie_weiss_fast_bound(n: int, alpha: float, t: int) -> float:
    """Curie–Weiss, high temperature (LPW 2nd ed. Theorem 15.4): ``d(t) <= n (1 - (1-alpha)/n)^t``.

    Model: the complete graph on ``n`` sites with coupling ``beta = alpha / n`` per edge,
    ``pi(s) ∝ exp((alpha/n) sum_{u < v} s_u s_v)``. One neighbour's influence is at most
    ``tanh(alpha/n)``, so every row sum of the influence matrix is at most
    ``(n - 1) tanh(alpha/n) < alpha`` and Dobrushin's bound applies with ``c = 1 - alpha``.

    Parameters
    ----------
    n : int
        Number of sites, >= 1.
    alpha : float
        Scaled inverse temperature, finite and >= 0; the bound needs ``alpha < 1``.
    t : int
        Number of steps, >= 0.

    Returns
    -------
    float
        The bound, or ``math.inf`` when ``alpha >= 1`` (no fast-mixing certificate).

    Raises
    ------
    InvalidParameterError
        If an argument is out of range.

    Examples
    --------
    >>> round(curie_weiss_fast_bound(10, 0.5, 100), 6)
    0.059205
    """
    n = check_positive_int(n, "n")
    alpha = check_nonnegative_float(alpha, "alpha")
    t = check_nonnegative_int(t, "t")
    if alpha >= 1.0:
        return math.inf
    return _decay_bound(n, 1.0 - alpha, t)


def curie_weiss_tmix_bound(n: int, alpha: float, eps: float = 0.25) -> float:
    """Curie–Weiss, high temperature: ``t_mix(eps) <= ceil(n (log n + log 1/eps) / (1 - alpha))``.

    Parameters
    ----------
    n : int
        Number of sites, >= 1.
    alpha : float
        Scaled inverse temperature, finite and >= 0.
    eps : float, optional
        Target distance in (0, 1).

    Returns
    -------
    float
        The bound (a whole number), or ``math.inf`` when ``alpha >= 1``.

    Raises
    ------
    InvalidParameterError
        If an argument is out of range.
    InvalidProbabilityError
        If ``eps`` is not in (0, 1).

    Examples
    --------
    >>> curie_weiss_tmix_bound(10, 0.5)
    74.0
    """
    n = check_positive_int(n, "n")
    alpha = check_nonnegative_float(alpha, "alpha")
    eps = check_eps(eps)
    if alpha >= 1.0:
        return math.inf
    return float(math.ceil(n * (math.log(n) + math.log(1.0 / eps)) / (1.0 - alpha)))


__all__ = [
    "curie_weiss_fast_bound",
    "curie_weiss_tmix_bound",
    "dobrushin_ising_bound",
    "dobrushin_ising_tmix_bound",
    "ising_cycle_relaxation_time",
    "ising_neighbour_influence",
]
