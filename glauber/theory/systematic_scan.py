"""Dobrushin-type contraction for systematic and shuffled scans, and Theorem 8 per pass.

Setting (docs/theory.md, "Other kernels"): one step of the ``sweep`` kernel updates every site
once in the order ``sigma = (0, 1, ..., n - 1)``; the ``shuffled`` kernel draws ``sigma``
uniformly afresh at every step. ``C[i, j]`` is the influence of ``j`` on ``i`` (Definition 2).

**Contraction (Dobrushin 1970 for the sweep under ``alpha_row < 1``; Dyer, Goldberg and Jerrum,
"Dobrushin conditions and systematic scan", CPC 2008, and "Matrix norms and rapid mixing for
spin systems", AAP 2009, for the matrix forms).** Couple two copies by updating the same site
with the maximal coupling of their conditionals, and let ``beta(j) = P(X(j) != Y(j))``. Updating
site ``i`` replaces ``beta(i)`` by at most ``sum_j C[i, j] beta(j)`` (the TV of the two
conditionals is at most the sum of the influences of the sites where they differ) and leaves the
other entries alone: ``beta <- E_i beta`` entrywise, with ``E_i`` the identity whose row ``i``
is replaced by ``C[i, .]`` (:func:`site_update_matrix`). A pass in the order ``sigma`` gives
``beta <- E_sigma beta``, ``E_sigma = E_{sigma_n} ... E_{sigma_1}``
(:func:`scan_influence_matrix`), and for the shuffled scan, by independence of the order,
``E[beta] <- E_bar E[beta]`` with ``E_bar`` the average of ``E_sigma`` over the ``n!`` orders
(:func:`shuffled_influence_matrix`). Hence, from any two starts,

``d(t) <= P(X_t != Y_t) <= 1^T E^t 1``  (:func:`scan_distance_bound`, :func:`scan_certificate`)

for ``E = E_sigma`` (sweep) or ``E_bar`` (shuffled), ``t`` counted in passes. If
``alpha_row = max_i sum_j C[i, j] < 1`` every pass contracts the sup norm,
``||E_sigma beta||_inf <= alpha_row ||beta||_inf`` (each updated entry is at most
``alpha_row max beta``, the others are not touched after their update), so

``d(t) <= n alpha_row^t`` and ``t_mix(eps) <= ceil(log(n / eps) / log(1 / alpha_row))`` passes

(:func:`dobrushin_scan_distance_bound`, :func:`dobrushin_scan_tmix_bound`): the paper's row-sum
``alpha`` is the right quantity for a scan, where the random scan's one-step contraction needed
the column sum (Theorem 5, corrected). An ``epsilon`` mixture has influences ``(1 - epsilon) C``
(:func:`glauber.theory.site_updates.mixture_influence`).

**Theorem 8 per pass.** Under Assumption 1 (``k`` exit-causing sites, margin ``Delta_star``), a
pass leaves the basin only if one of its updates at an exit-causing site, made from a state of
the basin, draws an exit-causing token: probability at most ``(|V| - 1) e^{-Delta_star/tau}``
each, so ``P(x, B^c) <= k (|V| - 1) e^{-Delta_star/tau}`` per pass, for the sweep and the
shuffled scan (:func:`scan_escape_bound`). A Metropolis-Hastings update moves with probability
``r(a) min(1, R) <= r(a)``, so every escape bound of Theorem 8 holds for it with the proposal's
margins; the conductance and ``t_mix`` consequences follow from LPW Theorem 7.4 with the
kernel's own stationary law.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from glauber.core.validation import (
    check_eps,
    check_nonnegative_int,
    check_positive_int,
    check_square_matrix,
    check_tau,
)
from glauber.errors import InvalidParameterError, StateSpaceTooLargeError

#: Largest number of sites whose shuffled-scan matrix is formed (``n 2^(n-1)`` products).
SHUFFLED_MAX_SITES = 16
#: :func:`scan_certificate` gives up beyond ``2**CERTIFICATE_MAX_DOUBLINGS`` passes.
CERTIFICATE_MAX_DOUBLINGS = 62


def site_update_matrix(C: np.ndarray, i: int) -> np.ndarray:
    """``E_i``: the identity with row ``i`` replaced by ``C[i, .]`` (one site update's action on
    the disagreement probabilities).

    Raises
    ------
    InvalidParameterError
        If ``C`` is not a square non-negative matrix or ``i`` is not a site.

    Examples
    --------
    >>> site_update_matrix(np.array([[0.0, 0.5], [0.25, 0.0]]), 0).tolist()
    [[0.0, 0.5], [0.0, 1.0]]
    """
    C = check_square_matrix(C, "C")
    n = C.shape[0]
    if not 0 <= int(i) < n:
        raise InvalidParameterError(f"site i must lie in 0..{n - 1}, got {i!r}")
    E = np.eye(n)
    E[int(i)] = C[int(i)]
    return E


def scan_influence_matrix(C: np.ndarray, order: list[int] | None = None) -> np.ndarray:
    """``E_sigma = E_{sigma_n} ... E_{sigma_1}`` for the order ``sigma`` (default ``0..n-1``).

    Raises
    ------
    InvalidParameterError
        If ``C`` is not square and non-negative, or ``order`` is not a permutation of the sites.

    Examples
    --------
    >>> C = np.array([[0.0, 0.5], [0.5, 0.0]])  # site 0 first: beta(0) <- beta(1)/2, then
    >>> scan_influence_matrix(C).tolist()       # beta(1) <- beta(0)/2 = beta(1)/4
    [[0.0, 0.5], [0.0, 0.25]]
    """
    C = check_square_matrix(C, "C")
    n = C.shape[0]
    sigma = list(range(n)) if order is None else [int(i) for i in order]
    if sorted(sigma) != list(range(n)):
        raise InvalidParameterError(f"order must be a permutation of 0..{n - 1}, got {order!r}")
    E = np.eye(n)
    for i in sigma:
        E = site_update_matrix(C, i) @ E
    return E


def shuffled_influence_matrix(C: np.ndarray) -> np.ndarray:
    """``E_bar``: the average of :func:`scan_influence_matrix` over the ``n!`` orders.

    Computed without enumerating orders: with ``F(T)`` the sum of ``E_sigma`` over the orders of
    a subset ``T`` of the sites, ``F(T) = sum_{i in T} E_i F(T - {i})`` (``i`` the last site
    updated) and ``E_bar = F(all) / n!``: ``n 2^(n-1)`` products of ``n x n`` matrices.

    Raises
    ------
    StateSpaceTooLargeError
        If ``n > SHUFFLED_MAX_SITES``.

    Examples
    --------
    >>> C = np.array([[0.0, 0.5], [0.5, 0.0]])  # the two orders' matrices, averaged
    >>> shuffled_influence_matrix(C).tolist()
    [[0.125, 0.25], [0.25, 0.125]]
    """
    C = check_square_matrix(C, "C")
    n = C.shape[0]
    if n > SHUFFLED_MAX_SITES:
        raise StateSpaceTooLargeError(
            f"the shuffled-scan matrix of {n} sites needs n 2^(n-1) products; the limit is "
            f"{SHUFFLED_MAX_SITES} sites (use the sweep's matrix, or the row-sum bound)"
        )
    updates = [site_update_matrix(C, i) for i in range(n)]
    level = {frozenset(): np.eye(n)}
    for size in range(1, n + 1):
        level = {
            frozenset(T): sum(updates[i] @ level[frozenset(T) - {i}] for i in T)
            for T in combinations(range(n), size)
        }
    return level[frozenset(range(n))] / math.factorial(n)


def scan_distance_bound(E: np.ndarray, t: int) -> float:
    """``1^T E^t 1``: a bound on ``d(t)`` (``t`` passes) and on ``P(X_t != Y_t)`` from any pair
    of starts (see the module docstring); ``E^t`` by repeated squaring (``inf`` on overflow).

    Raises
    ------
    InvalidParameterError
        If ``E`` is not square and non-negative or ``t < 0``.
    """
    E = check_square_matrix(E, "E")
    t = check_nonnegative_int(t, "t")
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.linalg.matrix_power(E, t).sum())
    return total if np.isfinite(total) else math.inf


def scan_certificate(E: np.ndarray, eps: float = 0.25,
                     max_doublings: int = CERTIFICATE_MAX_DOUBLINGS) -> int | None:
    """A number of passes ``t`` with ``1^T E^t 1 <= eps``, hence ``t_mix(eps) <= t``; None when
    the spectral radius of ``E`` is at least 1 (no such ``t``) or ``t > 2^max_doublings``.

    Doubling (``E, E^2, E^4, ...``) until the bound is at most ``eps``, then bisection on the
    binary digits below: the least such ``t`` when ``1^T E^t 1`` is non-increasing in ``t``; the
    bound is checked at the ``t`` returned (else the doubling's ``2^k`` is returned), so the
    certificate is valid always. (``t = 0`` never: ``1^T I 1 = n >= 1 > eps``.)

    Raises
    ------
    InvalidParameterError, InvalidProbabilityError
        On a bad matrix or ``eps`` outside (0, 1).

    Examples
    --------
    >>> scan_certificate(np.array([[0.0, 0.5], [0.0, 0.25]]), 0.25)  # 1^T E^t 1 = 3/4^t (t >= 1)
    2
    """
    E = check_square_matrix(E, "E")
    eps = check_eps(eps)
    max_doublings = check_positive_int(max_doublings, "max_doublings")
    if float(np.max(np.abs(np.linalg.eigvals(E)))) >= 1.0:
        return None
    powers = [E]  # powers[k] = E^(2^k)
    while powers[-1].sum() > eps:
        if len(powers) > max_doublings:
            return None
        powers.append(powers[-1] @ powers[-1])
    if len(powers) == 1:
        return 1
    t, current = 2 ** (len(powers) - 2), powers[-2]  # bound(t) > eps >= bound(2 t)
    for k in range(len(powers) - 3, -1, -1):
        candidate = current @ powers[k]
        if candidate.sum() > eps:
            t, current = t + 2**k, candidate
    if (current @ E).sum() <= eps:
        return t + 1
    return 2 ** (len(powers) - 1)  # the bound is not monotone here: the doubling's t holds


def dobrushin_scan_distance_bound(alpha_row: float, n: int, t: int) -> float:
    """``n alpha_row^t``: ``d(t)`` after ``t`` passes of a sweep or shuffled scan when
    ``alpha_row < 1`` (see the module docstring).

    Raises
    ------
    InvalidParameterError
        If ``alpha_row`` is not in ``[0, 1)``, ``n < 1`` or ``t < 0``.
    """
    alpha = _check_alpha(alpha_row)
    return float(check_positive_int(n, "n") * alpha ** check_nonnegative_int(t, "t"))


def dobrushin_scan_tmix_bound(alpha_row: float, n: int, eps: float = 0.25) -> int:
    """``ceil(log(n / eps) / log(1 / alpha_row))`` passes (1 when ``alpha_row = 0``).

    Raises
    ------
    InvalidParameterError, InvalidProbabilityError
        If ``alpha_row`` is not in ``[0, 1)``, ``n < 1`` or ``eps`` not in (0, 1).

    Examples
    --------
    >>> dobrushin_scan_tmix_bound(0.5, 4, 0.25)  # 4 * 0.5^t <= 1/4 from t = 4
    4
    """
    alpha = _check_alpha(alpha_row)
    n = check_positive_int(n, "n")
    eps = check_eps(eps)
    if alpha == 0.0:
        return 1
    return math.ceil(math.log(n / eps) / -math.log(alpha))  # n >= 1 > eps: positive


def scan_escape_bound(k: int, q: int, delta_star: float, tau: float) -> float:
    """Theorem 8 per pass: ``k (|V| - 1) e^{-Delta_star / tau}`` (see the module docstring).

    Raises
    ------
    InvalidParameterError, InvalidTemperatureError
        On a negative ``k``, ``q < 2``, a non-positive margin or temperature.
    """
    k = check_nonnegative_int(k, "k (number of exit-causing sites)")
    q = check_positive_int(q, "q")
    tau = check_tau(tau)
    if not (math.isfinite(delta_star) and delta_star > 0):
        raise InvalidParameterError(f"delta_star must be finite and > 0, got {delta_star!r}")
    return float(k * (q - 1) * math.exp(-delta_star / tau))


def _check_alpha(alpha_row: float) -> float:
    alpha = float(alpha_row)
    if not 0.0 <= alpha < 1.0:
        raise InvalidParameterError(
            f"the Dobrushin scan bound needs 0 <= alpha_row < 1, got {alpha_row!r}; use "
            "scan_certificate (matrix powers) otherwise"
        )
    return alpha


__all__ = [
    "CERTIFICATE_MAX_DOUBLINGS",
    "dobrushin_scan_distance_bound",
    "dobrushin_scan_tmix_bound",
    "scan_certificate",
    "scan_distance_bound",
    "scan_escape_bound",
    "scan_influence_matrix",
    "shuffled_influence_matrix",
    "SHUFFLED_MAX_SITES",
    "site_update_matrix",
]
