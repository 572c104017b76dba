"""Theorem 5 (high-temperature contraction), CORRECTED, and the certificates it yields.

Notation: ``C[i, j] = c_ij(tau)`` is the influence OF site ``j`` ON site ``i`` (Definition 2);
the diagonal is ignored everywhere (set to zero).

As printed, Theorem 5 assumes the row-sum ``alpha = max_i sum_j C[i, j] < 1`` and claims the
one-step contraction ``E[d_H(X_1, Y_1)] <= (1 - (1 - alpha)/n) d_H(x, y)`` under "same site +
maximal coupling". Its proof bounds the COLUMN sum ``sum_i c_ij`` of the site ``j`` where an
adjacent pair differs, so the contraction is false as printed (a star whose hub ignores the
leaves while each leaf copies the hub has row sums < 1 but ``E[d_H] > 1``). Corrected:

* the one-step contraction holds with ``alpha_col = max_j sum_i C[i, j]``: for ``x, y`` differing
  only at ``j``, ``E[d_H(X_1, Y_1)] <= 1 - 1/n + (1/n) sum_i C[i, j]``
  (:func:`adjacent_pair_hamming_bound`);
* the mixing bound holds with several norms. Let ``beta_t(i) = P(X_t(i) != Y_t(i))`` under the
  same-site maximal coupling. Resampling site ``i`` makes the two copies disagree with
  probability the TV distance of the two conditionals, which the triangle inequality along a
  one-site-at-a-time path bounds by ``sum_j C[i, j] 1{X_t(j) != Y_t(j)}``; hence
  ``beta_{t+1} <= M beta_t`` entrywise with ``M = (1 - 1/n) I + C / n``
  (:func:`contraction_matrix`), and ``d(t) <= P(X_t != Y_t) <= 1^T M^t 1``
  (:func:`coupling_distance_bound`). Since ``1^T M^t 1 <= n ||M||^t`` for the l-infinity, l1
  and l2 operator norms, and ``||M|| <= 1 - (1 - a)/n`` for ``a`` = max row sum, max column sum
  or largest singular value of ``C``, ``t_mix(eps) <= n/(1 - a) (log n + log 1/eps)`` for each
  (:func:`theorem5_tmix_bound`). The tightest certificate is
  ``min{t : 1^T M^t 1 <= eps}`` (:func:`matrix_power_certificate`), finite iff the spectral
  radius of ``C`` is < 1 (Hayes 2006; Dyer–Goldberg–Jerrum 2009).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from glauber.core.validation import (
    check_eps,
    check_nonnegative_float,
    check_nonnegative_int,
    check_positive_int,
    check_square_matrix,
)
from glauber.errors import InvalidParameterError, PrecisionError
from glauber.theory import verified_power
from glauber.theory.floating import round_down

#: Names of the certificates, in the order ties are broken (the paper's row sum first).
CERTIFICATE_NAMES = ("row", "col", "spectral", "matrix_power")


def _influence(C: ArrayLike) -> np.ndarray:
    arr = check_square_matrix(C, "influence matrix C").copy()
    np.fill_diagonal(arr, 0.0)
    return arr


def alpha_row(C: ArrayLike) -> float:
    """The paper's ``alpha``: the largest row sum ``max_i sum_{j != i} C[i, j]``.

    ``C[i, j]`` is the influence of site ``j`` on site ``i`` (Definition 2), so a row sum is the
    total influence ON a site (Dobrushin's condition). Theorem 5 as printed assumes it is < 1;
    it does bound ``t_mix`` (corrected Theorem 5) but does not give the one-step contraction.

    Parameters
    ----------
    C : array_like, shape (n, n)
        Non-negative influence matrix; the diagonal is ignored.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If ``C`` is not a finite non-negative square matrix.

    Examples
    --------
    >>> alpha_row([[0.0, 0.5], [0.1, 0.0]])
    0.5
    """
    return float(_influence(C).sum(axis=1).max())


def alpha_col(C: ArrayLike) -> float:
    """Largest column sum ``max_j sum_{i != j} C[i, j]``: the total influence OF a site.

    Theorem 5 corrected: ``alpha_col < 1`` gives the one-step contraction
    ``E[d_H(X_1, Y_1)] <= (1 - (1 - alpha_col)/n) d_H(x, y)``.

    Parameters
    ----------
    C : array_like, shape (n, n)
        Non-negative influence matrix; the diagonal is ignored.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If ``C`` is not a finite non-negative square matrix.

    Examples
    --------
    >>> alpha_col([[0.0, 0.5], [0.1, 0.0]])
    0.5
    """
    return float(_influence(C).sum(axis=0).max())


def alpha_spectral(C: ArrayLike) -> float:
    """Largest singular value of ``C`` (diagonal ignored): the l2 version of ``alpha``.

    Theorem 5 corrected: ``t_mix(eps) <= n/(1 - a)(log n + log 1/eps)`` with this ``a``; it is
    never larger than ``sqrt(alpha_row * alpha_col)``.

    Parameters
    ----------
    C : array_like, shape (n, n)
        Non-negative influence matrix; the diagonal is ignored.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If ``C`` is not a finite non-negative square matrix.
    """
    return float(np.linalg.norm(_influence(C), ord=2))


def spectral_radius(C: ArrayLike) -> float:
    """Spectral radius of ``C`` (diagonal ignored): the largest ``|eigenvalue|``.

    ``spectral_radius(C) < 1`` is exactly when :func:`matrix_power_certificate` is finite; it
    is never larger than any of the three ``alpha`` values.

    Parameters
    ----------
    C : array_like, shape (n, n)
        Non-negative influence matrix; the diagonal is ignored.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If ``C`` is not a finite non-negative square matrix.
    """
    return float(np.max(np.abs(np.linalg.eigvals(_influence(C)))))


def contraction_matrix(C: ArrayLike) -> np.ndarray:
    """The disagreement-propagation matrix ``M = (1 - 1/n) I + C / n`` (corrected Theorem 5).

    Under the same-site maximal coupling ``beta_{t+1} <= M beta_t`` entrywise, where
    ``beta_t(i) = P(X_t(i) != Y_t(i))``.

    Parameters
    ----------
    C : array_like, shape (n, n)
        Non-negative influence matrix; the diagonal is ignored.

    Returns
    -------
    numpy.ndarray, shape (n, n)

    Raises
    ------
    InvalidParameterError
        If ``C`` is not a finite non-negative square matrix.
    """
    arr = _influence(C)
    n = arr.shape[0]
    return (1.0 - 1.0 / n) * np.eye(n) + arr / n


def adjacent_pair_hamming_bound(C: ArrayLike, j: int) -> float:
    """Bound on ``E[d_H(X_1, Y_1)]`` for a pair that differs only at site ``j`` (corrected).

    Under the same-site maximal coupling this is ``1 - 1/n + (1/n) sum_{i != j} C[i, j]``
    (the ``j``-th column sum of :func:`contraction_matrix`), with equality when every
    influence ``C[i, j]`` is attained by the pair. It exceeds 1 when site ``j`` influences the
    others by more than 1 in total, whatever the row sums: the counterexample to Theorem 5 as
    printed.

    Parameters
    ----------
    C : array_like, shape (n, n)
        Non-negative influence matrix; the diagonal is ignored.
    j : int
        The site where the pair differs, ``0 <= j < n``.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If ``C`` is not a finite non-negative square matrix or ``j`` is not a site.

    Examples
    --------
    >>> adjacent_pair_hamming_bound([[0, 0, 0], [0.9, 0, 0], [0.9, 0, 0]], 0)
    1.2666666666666666
    """
    arr = _influence(C)
    n = arr.shape[0]
    j = check_nonnegative_int(j, "site j")
    if j >= n:
        raise InvalidParameterError(f"site j must lie in 0..{n - 1}, got {j}")
    return float(1.0 - 1.0 / n + arr[:, j].sum() / n)


def theorem5_contraction_factor(n: int, a: float) -> float:
    """Theorem 5's one-step factor ``1 - (1 - a)/n``.

    Valid as a Hamming contraction for ``a = alpha_col`` (corrected); with the paper's row-sum
    ``a = alpha_row`` it is false as printed. ``a = alpha_row`` or ``alpha_spectral`` still bound
    the corresponding operator norm of :func:`contraction_matrix`.

    Parameters
    ----------
    n : int
        Number of sites, >= 1.
    a : float
        An ``alpha`` value, finite and >= 0.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If ``n`` is not a positive integer or ``a`` is not finite and >= 0.

    Examples
    --------
    >>> theorem5_contraction_factor(4, 0.2)
    0.8
    """
    n = check_positive_int(n, "n")
    a = check_nonnegative_float(a, "alpha")
    return 1.0 - (1.0 - a) / n


def theorem5_tmix_bound(n: int, a: float, eps: float = 0.25, integer: bool = False) -> float:
    """Theorem 5's mixing bound ``n/(1 - a) (log n + log 1/eps)`` (``math.inf`` if ``a >= 1``).

    Corrected Theorem 5: valid for ``a`` = :func:`alpha_row`, :func:`alpha_col` or
    :func:`alpha_spectral`, since ``d(t) <= n (1 - (1 - a)/n)^t <= n exp(-(1 - a) t / n)``.

    Parameters
    ----------
    n : int
        Number of sites, >= 1.
    a : float
        An ``alpha`` value, finite and >= 0.
    eps : float, optional
        Target distance in (0, 1).
    integer : bool, optional
        Round up to a whole number of steps (``t_mix`` is an integer, and it is the ceiling of
        the printed real bound that the proof reaches). Every floating-point step is then
        rounded upward, so the integer is never below the exact ceiling for this ``a``.

    Returns
    -------
    float
        The bound, or ``math.inf`` when ``a >= 1`` (no certificate).

    Raises
    ------
    InvalidParameterError
        If ``n`` is not a positive integer or ``a`` is not finite and >= 0.
    InvalidProbabilityError
        If ``eps`` is not in (0, 1).

    Examples
    --------
    >>> round(theorem5_tmix_bound(10, 0.5, 0.25), 6)
    73.777589
    """
    n = check_positive_int(n, "n")
    a = check_nonnegative_float(a, "alpha")
    eps = check_eps(eps)
    if a >= 1.0:
        return math.inf
    if integer:  # every rounding upward: the whole number is never below the exact ceiling
        gap = 1.0 - a if a >= 0.5 else round_down(1.0 - a)  # exact for a >= 1/2 (Sterbenz)
        return verified_power.tmix_upper(n, gap, eps)
    return n / (1.0 - a) * (math.log(n) + math.log(1.0 / eps))


def coupling_distance_bound(C: ArrayLike, t: int) -> float:
    """The coupling bound ``1^T M^t 1`` on the worst-start distance ``d(t)`` (corrected Thm 5).

    Parameters
    ----------
    C : array_like, shape (n, n)
        Non-negative influence matrix (or an entrywise upper bound on it); diagonal ignored.
    t : int
        Number of steps, >= 0 (computed by repeated squaring: ``log t`` products).

    Returns
    -------
    float
        A float64 upper bound on ``1^T M^t 1`` with ``M`` = :func:`contraction_matrix` (the
        products are widened by their rounding bound, relative width about
        ``8 t (n + 2) 2**-53``, see :func:`glauber.theory.verified_power.power_sum_bounds`);
        ``d(t)`` is at most this. Any ``t`` works, also ``10**400``.

    Raises
    ------
    InvalidParameterError
        If ``C`` is not a finite non-negative square matrix or ``t`` is not an integer >= 0.

    Examples
    --------
    >>> coupling_distance_bound([[0.0]], 1)
    0.0
    """
    t = check_nonnegative_int(t, "t")
    return verified_power.power_sum_bounds(_influence(C), [t])[0].upper


def _first_crossing_scan(M: np.ndarray, eps: float, t_max: int) -> int | None:
    """First ``t`` in ``[0, t_max]`` with ``1^T M^t 1 <= eps``, in ``O(t_max n)`` flops.

    Writes ``t = k B + r`` with ``B ~ sqrt(t_max)``: ``1^T M^t 1 = (1^T M^{kB}) (M^r 1)``, so
    ``B`` vectors ``M^r 1`` and ``t_max / B`` row vectors ``1^T M^{kB}`` suffice.
    """
    n = M.shape[0]
    block = math.isqrt(t_max) + 1
    columns = np.empty((n, block))
    u = np.ones(n)
    for r in range(block):
        columns[:, r] = u
        u = M @ u
    jump = np.linalg.matrix_power(M, block)
    w = np.ones(n)
    for k in range(t_max // block + 1):
        hits = np.flatnonzero(w @ columns <= eps)
        if hits.size:
            t = k * block + int(hits[0])
            return t if t <= t_max else None
        w = w @ jump
    return None


def _ones_form(G: np.ndarray) -> float:
    """``1^T (I - G) 1``."""
    return float(G.shape[0] - G.sum())


@dataclass(frozen=True)
class MatrixPowerResult:
    """:func:`matrix_power_search`: the matrix-power certificate with its floating-point status.

    Attributes
    ----------
    t : int or float
        The certificate (``math.inf``: none).
    rigorous : bool
        ``1^T M^t 1 <= eps`` is proved (rigorous enclosure or exact arithmetic), so
        ``t_mix(eps) <= t``; always True for ``t = inf`` (it claims nothing).
    minimal : bool
        ``t`` is proved to be the minimum (``1^T M^(t-1) 1 > eps`` proved and ``f`` is
        non-increasing: every column sum of ``C`` is at most 1).
    method : str
        ``"float64"`` (enclosure decided), ``"exact(<bits> bits)"`` (fixed-point interval
        search), ``"float64, raised"`` (the float answer failed and a later ``t`` was proved) or
        ``"float64, unverified"``.
    reason : str
        Why the result is not rigorous or not minimal ("" when it is both).
    """

    t: int | float
    rigorous: bool
    minimal: bool
    method: str
    reason: str


def matrix_power_search(
    C: ArrayLike,
    eps: float = 0.25,
    max_doublings: int = 62,
    scan_budget: int = 10**8,
    exact_max_sites: int = verified_power.EXACT_MAX_SITES,
) -> MatrixPowerResult:
    """:func:`matrix_power_certificate` with a proof that rounding did not break it.

    The float64 search (see :func:`matrix_power_certificate`) gives ``t0``. Then
    ``1^T M^t0 1 <= eps`` and ``1^T M^(t0-1) 1 > eps`` are decided on rigorous float64
    enclosures (:func:`glauber.theory.verified_power.power_sum_bounds`). These decide unless
    ``1^T M^t 1`` lies within a relative ``~8 t (n + 2) 2**-53`` of ``eps``: the *threshold
    distance*; near criticality (``1 - rho(C)`` comparable to ``n t 2**-53``) that happens. Then,
    for ``n <= exact_max_sites``, the search is redone in exact interval arithmetic
    (:func:`glauber.theory.verified_power.exact_power_search`), which returns the exact answer;
    for larger ``n`` later times ``t0 + 1, t0 + 2, t0 + 4, ...`` (up to ``2 t0``) are tried on
    the enclosures, and if none is proved the float answer is returned marked not rigorous.

    Parameters
    ----------
    C, eps, max_doublings, scan_budget :
        As :func:`matrix_power_certificate`.
    exact_max_sites : int, optional
        Largest ``n`` for the exact search.

    Returns
    -------
    MatrixPowerResult

    Raises
    ------
    InvalidParameterError
        If ``C`` is not a finite non-negative square matrix, or a budget is not a positive int.
    InvalidProbabilityError
        If ``eps`` is not in (0, 1).

    Examples
    --------
    The issue's near-critical reproducer (float64 alone answers 13862942364):

    >>> c = 1 - 3e-10
    >>> r = matrix_power_search([[0, c], [c, 0]], 0.25)
    >>> r.t, r.rigorous, r.minimal
    (13862942464, True, True)
    """
    eps = check_eps(eps)
    arr = _influence(C)
    exact_max_sites = check_nonnegative_int(exact_max_sites, "exact_max_sites")
    t0 = _float_certificate(arr, eps, max_doublings, scan_budget)
    if math.isinf(t0):
        return MatrixPowerResult(math.inf, True, False, "float64",
                                 "no certificate: the spectral radius of C is >= 1 in float64")
    monotone = verified_power.columns_at_most_one(arr)
    prev, at = verified_power.power_sum_bounds(arr, [t0 - 1, t0])
    if at.upper <= eps and (prev.lower > eps or arr.shape[0] > exact_max_sites):
        minimal = prev.lower > eps and monotone
        return MatrixPowerResult(t0, True, minimal, "float64", "" if minimal else (
            "minimality unproved: some column sum of C exceeds 1, so 1^T M^t 1 may rise "
            "before it falls" if prev.lower > eps else
            "minimality unproved: 1^T M^(t-1) 1 is within rounding of eps"))
    if arr.shape[0] <= exact_max_sites:
        exact = verified_power.exact_power_search(arr, eps, max_doublings)
        if exact.t is not None:
            method = f"exact({exact.bits} bits)"
            if math.isinf(exact.t):
                return MatrixPowerResult(math.inf, True, False, method,
                                         f"no certificate: 1^T M^(2^{max_doublings}) 1 > eps")
            return MatrixPowerResult(int(exact.t), True, monotone, method, "" if monotone else (
                "minimality unproved: some column sum of C exceeds 1"))
    step = 1
    while step <= t0:
        if verified_power.power_sum_bounds(arr, [t0 + step])[0].upper <= eps:
            return MatrixPowerResult(t0 + step, True, False, "float64, raised",
                                     f"the float64 answer {t0} was not proved; {t0 + step} is")
        step *= 2
    return MatrixPowerResult(
        t0, False, False, "float64, unverified",
        f"1^T M^t 1 is within rounding of eps = {eps:g} near t = {t0} (spectral radius of C "
        f"{spectral_radius(arr):.17g}, within about n t 2**-53 of 1) and n = {arr.shape[0]} > "
        f"{exact_max_sites} sites is too many for the exact search",
    )


def matrix_power_certificate(
    C: ArrayLike,
    eps: float = 0.25,
    max_doublings: int = 62,
    scan_budget: int = 10**8,
) -> int | float:
    """The tightest certificate from ``C``: ``min{t >= 0 : 1^T M^t 1 <= eps}`` (corrected Thm 5).

    Returns the result of :func:`matrix_power_search`, which proves ``1^T M^t 1 <= eps`` for the
    returned ``t`` (exactly when float64 cannot decide), and raises :class:`PrecisionError`
    when it cannot; see there. The float64 search is described below.

    ``M`` = :func:`contraction_matrix`. Since ``d(t) <= 1^T M^t 1`` and ``d`` is non-increasing,
    ``t_mix(eps)`` is at most the returned ``t``; mathematically it is never larger than the
    ceiling of any norm-based :func:`theorem5_tmix_bound`.

    Algorithm: doubling (``M, M^2, M^4, ...``) until ``1^T M^{2^k} 1 <= eps``, then bisection on
    the binary digits of ``t``: about ``2 log2 t`` matrix products, so ``t ~ 1e9`` costs ~60.
    Powers are held as ``M^t = I - G_t``, which keeps the relative precision of the small
    deviation from ``I`` near criticality. Bisection finds the minimum when
    ``f(t) = 1^T M^t 1`` is non-increasing, which holds whenever every column sum of ``C`` is
    <= 1 (``f(t+1) - f(t) = (1/n) sum_j (colsum_j - 1) (M^t 1)_j``). Otherwise ``f`` can rise
    before it falls, and the first crossing is found by an exact scan of ``[0, t]`` when
    ``t * n <= scan_budget``; beyond that budget the bisection value is returned: still a valid
    bound (``f <= eps`` there), possibly not the minimum.

    Accuracy: float64 fixes the spectral gap only to a relative ``~1e-16 / (1 - rho)`` with
    ``rho = spectral_radius(C)``, and the float64 ``t`` inherits that relative error (e.g.
    ~1e-7 at ``rho = 1 - 2e-9``); :func:`matrix_power_search` detects and repairs this.

    Parameters
    ----------
    C : array_like, shape (n, n)
        Non-negative influence matrix (or an entrywise upper bound on it); diagonal ignored.
    eps : float, optional
        Target distance in (0, 1).
    max_doublings : int, optional
        Give up (return ``math.inf``) if ``1^T M^{2^k} 1 > eps`` for every ``k <= max_doublings``;
        this only happens when the spectral radius is within rounding of 1.
    scan_budget : int, optional
        Largest ``t * n`` for which a possibly non-monotone ``f`` is scanned exactly.

    Returns
    -------
    int or float
        The certificate (an int >= 1), or ``math.inf`` when ``spectral_radius(C) >= 1``.

    Raises
    ------
    InvalidParameterError
        If ``C`` is not a finite non-negative square matrix, or a budget is not a positive int.
    InvalidProbabilityError
        If ``eps`` is not in (0, 1).
    PrecisionError
        If the certificate could not be proved (near criticality with more than
        :data:`glauber.theory.verified_power.EXACT_MAX_SITES` sites); the unproved value is in
        ``matrix_power_search(C, eps).t``.

    Examples
    --------
    >>> matrix_power_certificate([[0.0, 0.0], [0.0, 0.0]], eps=0.25)
    3
    """
    result = matrix_power_search(C, eps, max_doublings, scan_budget)
    if not result.rigorous:
        raise PrecisionError(
            f"the matrix-power certificate is not proved: {result.reason}; "
            "matrix_power_search(C, eps) returns the unverified value, and the row, column and "
            "spectral certificates (certify_contraction) stay rigorous"
        )
    return result.t


def _float_certificate(
    arr: np.ndarray, eps: float, max_doublings: int, scan_budget: int
) -> int | float:
    """The float64 doubling, bisection and scan of :func:`matrix_power_certificate`."""
    max_doublings = check_positive_int(max_doublings, "max_doublings")
    scan_budget = check_positive_int(scan_budget, "scan_budget")
    n = arr.shape[0]
    if spectral_radius(arr) >= 1.0:
        return math.inf
    # M^t = I - G_t, and (I - A)(I - B) = I - (A + B - AB).
    powers = [(np.eye(n) - arr) / n]  # G_1
    # f(0) = n >= 1 > eps, so the answer is >= 1.
    while _ones_form(powers[-1]) > eps:
        if len(powers) > max_doublings:
            return math.inf
        G = powers[-1]
        powers.append(2.0 * G - G @ G)
    k = len(powers) - 1
    if k == 0:
        return 1
    below = 1 << (k - 1)  # f(below) > eps
    acc = powers[k - 1]
    for j in range(k - 2, -1, -1):
        trial = acc + powers[j] - acc @ powers[j]
        if _ones_form(trial) > eps:
            below += 1 << j
            acc = trial
    t = below + 1
    if alpha_col(arr) > 1.0 and t * n <= scan_budget:
        earlier = _first_crossing_scan(contraction_matrix(arr), eps, t - 1)
        if earlier is not None:
            t = earlier
    return t


@dataclass(frozen=True)
class ContractionCertificate:
    """All Theorem 5 certificates from one influence matrix (corrected Theorem 5).

    Attributes
    ----------
    n : int
        Number of sites.
    eps : float
        Target distance.
    alpha_row, alpha_col, alpha_spectral, spectral_radius : float
        The four summaries of ``C`` (diagonal ignored).
    tmix_row, tmix_col, tmix_spectral : float
        ``ceil(n/(1 - a)(log n + log 1/eps))`` for each ``alpha``; ``inf`` when ``a >= 1``.
    tmix_matrix_power : float
        :func:`matrix_power_certificate` (``inf`` when the spectral radius is >= 1).
    best : str
        Name of the tightest finite certificate (one of :data:`CERTIFICATE_NAMES`), or
        ``"none"`` when all are infinite.
    best_bound : float
        Its value (``inf`` when ``best == "none"``); ``t_mix(eps) <= best_bound``.
    contraction_as_printed_holds : bool
        ``alpha_row < 1``: Theorem 5's hypothesis as printed (which bounds ``t_mix`` but does
        not give its claimed one-step contraction). Decided on exact row sums.
    contraction_corrected_holds : bool
        ``alpha_col < 1``: the one-step ``E[d_H]`` contraction that is true (exact column sums).
    rigorous : tuple of str
        The certificates whose finite value is proved despite rounding: ``row``, ``col`` and
        ``spectral`` always (exact sums, an exact Collatz–Wielandt bound on the largest
        singular value, every step rounded up), ``matrix_power`` when
        :func:`matrix_power_search` proved it. ``best`` is chosen among these.
    matrix_power_minimal : bool
        The matrix-power value is proved to be the minimum ``t``.
    precision_note : str
        How the matrix-power value was decided, and why it is not rigorous or not minimal.
    entry_error : float
        The error allowed each entry of ``C``: every number above is of ``C + entry_error``
        (see :func:`certify_contraction`); 0 for a ``C`` taken as exact.
    """

    n: int
    eps: float
    alpha_row: float
    alpha_col: float
    alpha_spectral: float
    spectral_radius: float
    tmix_row: float
    tmix_col: float
    tmix_spectral: float
    tmix_matrix_power: float
    best: str
    best_bound: float
    contraction_as_printed_holds: bool
    contraction_corrected_holds: bool
    rigorous: tuple[str, ...] = ("row", "col", "spectral", "matrix_power")
    matrix_power_minimal: bool = False
    precision_note: str = ""
    entry_error: float = 0.0

    def to_dict(self, json_safe: bool = False) -> dict[str, Any]:
        """Return the fields as a dict; with ``json_safe`` infinite bounds become ``"inf"``.

        (``json.dumps`` writes ``inf`` as ``Infinity``, which strict JSON parsers reject.)
        """
        out = asdict(self)
        out["rigorous"] = list(self.rigorous)
        if json_safe:
            out = {
                k: ("inf" if isinstance(v, float) and math.isinf(v) else v) for k, v in out.items()
            }
        return out


def certify_contraction(
    C: ArrayLike, eps: float = 0.25, entry_error: float = 0.0
) -> ContractionCertificate:
    """Compute every corrected-Theorem-5 certificate for ``C`` and pick the tightest.

    Parameters
    ----------
    C : array_like, shape (n, n)
        Non-negative influence matrix ``C[i, j]`` = influence of ``j`` on ``i`` (or an entrywise
        upper bound, e.g. :func:`glauber.theory.influence_bounds.influence_matrix_bound`).
    eps : float, optional
        Target distance in (0, 1).
    entry_error : float, optional
        A bound on ``|C[i, j] - exact c_ij|`` (e.g. the rounding of computed TVs,
        :func:`glauber.theory.distances.tv_rounding_bound`). The certificates are then those of
        the upper enclosure ``min(1, C + entry_error)``, rounded up: entrywise at least the
        exact matrix, so (every certificate being monotone in ``C``) never below the exact
        matrix's own, however close its spectral radius is to 1.

    Returns
    -------
    ContractionCertificate

    Raises
    ------
    InvalidParameterError
        If ``C`` is not a finite non-negative square matrix.
    InvalidProbabilityError
        If ``eps`` is not in (0, 1).

    Examples
    --------
    >>> cert = certify_contraction([[0, 0, 0], [0.6, 0, 0], [0.6, 0, 0]])
    >>> cert.contraction_as_printed_holds, cert.contraction_corrected_holds, cert.best
    (True, False, 'matrix_power')
    """
    arr = _influence(C)
    eps = check_eps(eps)
    entry_error = check_nonnegative_float(entry_error, "entry_error")
    n = arr.shape[0]
    if entry_error > 0.0:
        arr = np.minimum(1.0, np.nextafter(arr + entry_error, np.inf))
        np.fill_diagonal(arr, 0.0)
    alphas = {
        "row": alpha_row(arr),
        "col": alpha_col(arr),
        "spectral": alpha_spectral(arr),
    }
    gaps = verified_power.alpha_gap_lower(arr)
    bounds: dict[str, float] = {
        name: verified_power.tmix_upper(n, getattr(gaps, name), eps) for name in alphas
    }
    power = matrix_power_search(arr, eps)
    bounds["matrix_power"] = float(power.t)
    rigorous = ("row", "col", "spectral") + (("matrix_power",) if power.rigorous else ())
    best, best_bound = "none", math.inf
    for name in CERTIFICATE_NAMES:
        if name in rigorous and bounds[name] < best_bound:
            best, best_bound = name, bounds[name]
    return ContractionCertificate(
        n=n,
        eps=eps,
        alpha_row=alphas["row"],
        alpha_col=alphas["col"],
        alpha_spectral=alphas["spectral"],
        spectral_radius=spectral_radius(arr),
        tmix_row=bounds["row"],
        tmix_col=bounds["col"],
        tmix_spectral=bounds["spectral"],
        tmix_matrix_power=bounds["matrix_power"],
        best=best,
        best_bound=best_bound,
        contraction_as_printed_holds=gaps.row > 0.0,
        contraction_corrected_holds=gaps.col > 0.0,
        rigorous=rigorous,
        matrix_power_minimal=power.minimal,
        precision_note=f"matrix power decided by {power.method}"
        + (f"; {power.reason}" if power.reason else ""),
        entry_error=entry_error,
    )


__all__ = [
    "adjacent_pair_hamming_bound",
    "alpha_col",
    "alpha_row",
    "alpha_spectral",
    "CERTIFICATE_NAMES",
    "certify_contraction",
    "contraction_matrix",
    "ContractionCertificate",
    "coupling_distance_bound",
    "matrix_power_certificate",
    "matrix_power_search",
    "MatrixPowerResult",
    "spectral_radius",
    "theorem5_contraction_factor",
    "theorem5_tmix_bound",
]
