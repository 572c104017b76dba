"""Verified arithmetic for the corrected Theorem 5 certificates: bounds rounding cannot break.

The certificates of :mod:`glauber.theory.contraction` compare a computed number with a
threshold: ``1^T M^t 1 <= eps`` (matrix power), ``a < 1`` and ``n/(1 - a)(log n + log 1/eps)``
(row, column, spectral). Near the threshold float64 can decide wrongly (issue: with
``C = [[0, c], [c, 0]]``, ``c = 1 - 3e-10``, float64 bisection returns 13862942364 steps where
the exact answer is 13862942464). This module decides each comparison rigorously:

* :func:`power_sum_bounds`: enclosures ``lo <= 1^T M^t 1 <= hi`` in float64 with the standard
  error bound of a non-negative matrix product, ``|fl(XY) - XY| <= gamma_n XY`` entrywise for
  any summation order (Higham 2002, Section 3.5), inflated or deflated at every product. Cheap
  (``2 log2 t`` products); decides unless the relative margin ``|1^T M^t 1 / eps - 1|`` is below
  about ``8 t (n + 2) 2**-53``: the documented *threshold distance*.
* :func:`exact_power_search`: the doubling-and-bisection search of ``min{t : 1^T M^t 1 <= eps}``
  in interval fixed-point arithmetic on Python integers (``M = ((n - 1) I + C) / n`` is rational
  and non-negative, so products rounded down/up give exact lower/upper enclosures), with the
  precision doubled until every comparison is decided. It returns the exact answer for a
  non-increasing ``t -> 1^T M^t 1`` (every column sum of ``C`` at most 1) and a verified valid
  ``t`` otherwise; the cost grows like ``n^3 log t`` big-integer operations, so it is used only
  near the threshold and for ``n <= EXACT_MAX_SITES``.
* :func:`alpha_gap_lower`: a lower bound on ``1 - a`` for the row, column and spectral ``a`` of
  ``C``, from exact rational row/column sums and, for the largest singular value, the
  Collatz–Wielandt bound ``rho(B) <= max_i (B v)_i / v_i`` (``B = C^T C >= 0``, any ``v > 0``)
  evaluated exactly; :func:`tmix_upper` turns it into an upward-rounded
  ``ceil(n / (1 - a) (log n + log 1/eps))``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from glauber.theory.floating import (
    SMALLEST_SUBNORMAL,
    UNIT_ROUNDOFF,
    round_down,
    round_up,
)

#: :func:`exact_power_search` runs only for at most this many sites (``n^3`` big-integer
#: operations per product).
EXACT_MAX_SITES = 24
#: Precisions (bits) tried in turn by :func:`exact_power_search`.
EXACT_PRECISIONS = (128, 256, 512, 1024, 2048, 4096)

_U = UNIT_ROUNDOFF["float64"]
_ETA = SMALLEST_SUBNORMAL["float64"]


# ----------------------------------------------------------------------- float enclosures
def _contraction_bounds(C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float matrices ``L <= M <= H`` entrywise for ``M = (1 - 1/n) I + C / n`` (exact M)."""
    n = C.shape[0]
    lo = np.empty_like(C)
    hi = np.empty_like(C)
    for i in range(n):
        for j in range(n):
            exact = Fraction(n - 1, n) if i == j else Fraction(float(C[i, j])) / n
            value = float(exact)  # correctly rounded
            lo[i, j] = value if Fraction(value) <= exact else round_down(value)
            hi[i, j] = value if Fraction(value) >= exact else round_up(value)
    return np.maximum(lo, 0.0), hi


def _product(X: np.ndarray, Y: np.ndarray, upward: bool) -> np.ndarray:
    """An entrywise upper (``upward``) or lower bound on ``X @ Y`` for non-negative X, Y."""
    k = X.shape[-1]
    with np.errstate(over="ignore", invalid="ignore"):
        Z = X @ Y
        slack = 4.0 * (k + 2) * _U
        # underflow slack only where some term is non-zero (exact zeros stay exact)
        tiny = (k + 1) * _ETA * (((X > 0).astype(np.float64) @ (Y > 0)) > 0)
        if upward:  # an overflowed (inf, or inf * 0 = NaN) upper bound is +inf
            return np.nan_to_num(Z * (1.0 + slack) + tiny, nan=np.inf)
        return np.maximum(np.nan_to_num(Z * (1.0 - slack) - tiny, nan=0.0), 0.0)


def _sum_bound(v: np.ndarray, upward: bool) -> float:
    """Upper or lower bound on ``sum(v)`` (``math.fsum`` is correctly rounded)."""
    try:
        total = math.fsum(v.tolist())
    except OverflowError:  # the exact sum exceeds the largest float
        return math.inf if upward else float(np.finfo(np.float64).max)
    return round_up(total) if upward else max(round_down(total), 0.0)


@dataclass(frozen=True)
class PowerSumBounds:
    """Rigorous enclosure ``lower <= 1^T M^t 1 <= upper`` of the coupling bound at time ``t``."""

    t: int
    lower: float
    upper: float


class _FloatPowers:
    """Enclosures of ``M^(2^k)`` by repeated squaring, extended on demand."""

    def __init__(self, C: np.ndarray) -> None:
        lo, hi = _contraction_bounds(C)
        self.lo, self.hi = [lo], [hi]

    def get(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        while len(self.lo) <= k:
            self.lo.append(_product(self.lo[-1], self.lo[-1], upward=False))
            self.hi.append(_product(self.hi[-1], self.hi[-1], upward=True))
        return self.lo[k], self.hi[k]

    def bounds(self, t: int) -> PowerSumBounds:
        n = self.lo[0].shape[0]
        v_lo, v_hi = np.ones(n), np.ones(n)
        k = 0
        rest = t
        while rest:
            if rest & 1:
                P_lo, P_hi = self.get(k)
                v_lo = _product(v_lo, P_lo, upward=False)
                v_hi = _product(v_hi, P_hi, upward=True)
                if not v_hi.any():  # the upper bound reached 0: so do all later ones
                    return PowerSumBounds(t, 0.0, 0.0)
            rest >>= 1
            k += 1
        return PowerSumBounds(t, _sum_bound(v_lo, False), _sum_bound(v_hi, True))


def power_sum_bounds(C: np.ndarray, ts: list[int]) -> list[PowerSumBounds]:
    """Rigorous enclosures of ``1^T M^t 1`` (``M = (1 - 1/n) I + C / n``) for each ``t``.

    Float64 products are widened by their a-priori error bound (``4 (n + 2) u`` relative and
    ``(n + 1)`` smallest subnormals absolute per product), so ``lower <= 1^T M^t 1 <= upper``
    holds in exact arithmetic. The relative width grows like ``8 t (n + 2) u``; any ``t``
    (also ``10**400``) costs ``2 log2 t`` products.

    Parameters
    ----------
    C : numpy.ndarray, shape (n, n)
        Non-negative influence matrix with zero diagonal (checked by the caller).
    ts : list of int
        Times, >= 0.

    Returns
    -------
    list of PowerSumBounds
    """
    powers = _FloatPowers(C)
    return [powers.bounds(int(t)) for t in ts]


# --------------------------------------------------------------- exact fixed-point search
def _fixed_contraction(C: np.ndarray, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer matrices with ``lo <= 2^p M <= hi`` entrywise (``M`` exact, rational)."""
    n = C.shape[0]
    lo = np.empty((n, n), dtype=object)
    hi = np.empty((n, n), dtype=object)
    for i in range(n):
        for j in range(n):
            exact = Fraction(n - 1, n) if i == j else Fraction(float(C[i, j])) / n
            scaled = exact * (1 << p)
            lo[i, j] = scaled.numerator // scaled.denominator
            hi[i, j] = -((-scaled.numerator) // scaled.denominator)
    return lo, hi


def _fixed_product(X: np.ndarray, Y: np.ndarray, p: int, upward: bool) -> np.ndarray:
    Z = X.dot(Y)
    return -((-Z) >> p) if upward else Z >> p


class _Undecided(Exception):
    """A comparison with eps fell inside an enclosure: more precision is needed."""


def _compare(lo_sum: int, hi_sum: int, eps_scaled: Fraction) -> bool:
    """``1^T M^t 1 <= eps``, decided from the enclosure ``[lo_sum, hi_sum] / 2^p``."""
    if hi_sum <= eps_scaled:
        return True
    if lo_sum > eps_scaled:
        return False
    raise _Undecided


def _search_at(C: np.ndarray, eps: float, p: int, max_doublings: int) -> int | None:
    """Doubling and bisection at ``p`` bits; ``None`` when ``f(2^max_doublings) > eps``."""
    lo, hi = _fixed_contraction(C, p)
    eps_scaled = Fraction(eps) * (1 << p)
    one = 1 << p
    powers = [(lo, hi)]
    ones = np.full(C.shape[0], one, dtype=object)

    def f_of(v_lo: np.ndarray, v_hi: np.ndarray) -> bool:
        return _compare(int(v_lo.sum()), int(v_hi.sum()), eps_scaled)

    def apply(v_lo, v_hi, k):
        P_lo, P_hi = powers[k]
        return _fixed_product(v_lo, P_lo, p, False), _fixed_product(v_hi, P_hi, p, True)

    while not f_of(*apply(ones, ones, len(powers) - 1)):
        if len(powers) > max_doublings:
            return None
        P_lo, P_hi = powers[-1]
        powers.append((_fixed_product(P_lo, P_lo, p, False), _fixed_product(P_hi, P_hi, p, True)))
    k = len(powers) - 1
    if k == 0:
        return 1
    below = 1 << (k - 1)  # f(below) > eps was decided at the previous doubling
    v_lo, v_hi = apply(ones, ones, k - 1)
    for j in range(k - 2, -1, -1):
        t_lo, t_hi = apply(v_lo, v_hi, j)
        if not f_of(t_lo, t_hi):
            below += 1 << j
            v_lo, v_hi = t_lo, t_hi
    return below + 1


@dataclass(frozen=True)
class ExactSearch:
    """Result of :func:`exact_power_search`.

    Attributes
    ----------
    t : int or float
        ``t`` with ``1^T M^t 1 <= eps`` and ``1^T M^(t-1) 1 > eps``, both decided exactly
        (``math.inf`` when ``1^T M^(2^max_doublings) 1 > eps``); ``None`` when undecided at
        every precision tried.
    bits : int
        Fixed-point precision that decided every comparison.
    """

    t: int | float | None
    bits: int


def exact_power_search(C: np.ndarray, eps: float, max_doublings: int = 62) -> ExactSearch:
    """``t`` with ``1^T M^t 1 <= eps < 1^T M^(t-1) 1``, decided in exact interval arithmetic.

    ``M = ((n - 1) I + C) / n`` has rational entries (each float of ``C`` is a dyadic rational).
    Integer matrices ``lo <= 2^p M^(2^k) <= hi`` are built by squaring with products rounded
    down for ``lo`` and up for ``hi`` (non-negative entries make both monotone), then the same
    doubling and bisection as :func:`glauber.theory.contraction.matrix_power_certificate`
    runs on row vectors, each comparison with ``eps`` decided from its enclosure; an undecided
    comparison restarts at twice the precision (:data:`EXACT_PRECISIONS`). The bisection keeps
    ``f(below) > eps`` and ``f(below + 2^(j+1)) <= eps`` at every step, so the returned ``t``
    satisfies both inequalities whatever the shape of ``f``; it is the minimum when ``f`` is
    non-increasing.

    Parameters
    ----------
    C : numpy.ndarray, shape (n, n)
        Non-negative influence matrix, zero diagonal.
    eps : float
        Target in (0, 1).
    max_doublings : int
        Largest ``k`` tried for ``f(2^k) <= eps``.

    Returns
    -------
    ExactSearch
    """
    for bits in EXACT_PRECISIONS:
        try:
            t = _search_at(C, eps, bits, max_doublings)
        except _Undecided:
            continue
        return ExactSearch(math.inf if t is None else t, bits)
    return ExactSearch(None, EXACT_PRECISIONS[-1])


def columns_at_most_one(C: np.ndarray) -> bool:
    """Every column sum of ``C`` is ``<= 1`` exactly (then ``t -> 1^T M^t 1`` is non-increasing).

    ``f(t+1) - f(t) = (1/n) sum_j (colsum_j - 1) (M^t 1)_j`` with ``M^t 1 >= 0``.
    """
    return all(
        sum((Fraction(float(c)) for c in C[:, j]), Fraction(0)) <= 1 for j in range(C.shape[1])
    )


# --------------------------------------------------------------------- norm certificates
def _exact_gap(entries: np.ndarray) -> Fraction:
    """``1 - sum(entries)`` exactly."""
    return 1 - sum((Fraction(float(c)) for c in entries), Fraction(0))


def _lower_float(value: Fraction) -> float:
    """The largest float ``<= value`` (``-inf`` never: value is finite)."""
    f = float(value)
    return f if Fraction(f) <= value else round_down(f)


def _dyadic_ints(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Integers ``m`` and a shift ``e`` with ``values == m * 2**-e`` exactly (finite floats)."""
    fracs = [Fraction(float(v)) for v in values.ravel()]
    e = max((f.denominator.bit_length() - 1 for f in fracs), default=0)
    ints = np.array([f.numerator * ((1 << e) // f.denominator) for f in fracs], dtype=object)
    return ints.reshape(values.shape), e


def _block_perron_vector(B: np.ndarray) -> np.ndarray:
    """Approximate Perron vector of each irreducible block of the symmetric ``B >= 0``, each
    scaled to maximum 1 (a reducible ``B``, e.g. a bipartite influence pattern, has one per
    block; Collatz–Wielandt needs each block's own to be tight)."""
    _, labels = connected_components(sp.csr_matrix(B > 0), directed=False)
    v = np.ones(B.shape[0])
    for label in np.unique(labels):
        idx = np.flatnonzero(labels == label)
        block = B[np.ix_(idx, idx)]
        if block.any():
            _, vectors = np.linalg.eigh(block)
            w = np.abs(vectors[:, -1])
            v[idx] = w / w.max()
    return v


def spectral_norm_upper(C: np.ndarray) -> float:
    """A float ``>= ||C||_2`` (largest singular value), proved by exact Collatz–Wielandt.

    ``||C||_2^2 = rho(B)`` with ``B = C^T C >= 0``, and ``rho(B) <= max_i (B v)_i / v_i`` for any
    positive ``v`` (Collatz–Wielandt; Horn and Johnson, *Matrix Analysis*, 2nd ed., Theorem
    8.1.26). ``v`` is the float Perron vector of each irreducible block of ``B``, floored to be
    positive; ``B v`` is evaluated exactly in integers, the ratio and its square root rounded up.
    """
    if not C.any():
        return 0.0
    B = C.T @ C
    top = _block_perron_vector(B)
    c_int, ce = _dyadic_ints(C)
    ratio = None
    for floor in (1e-3, 1e-6, 1e-9, 1e-12):  # any v > 0 is valid; keep the tightest
        v = np.maximum(top, floor)
        v_int, _ = _dyadic_ints(v)
        w = c_int.dot(v_int)  # C v * 2^(ce + ve)
        z = c_int.T.dot(w)  # C^T C v * 2^(2 ce + ve)
        r = max(Fraction(int(z[i]), int(v_int[i])) for i in range(len(v))) / (1 << (2 * ce))
        ratio = r if ratio is None else min(ratio, r)
    bound = float(ratio)
    if Fraction(bound) < ratio:
        bound = round_up(bound)
    root = round_up(math.sqrt(bound))  # sqrt is correctly rounded (IEEE 754)
    return root


@dataclass(frozen=True)
class AlphaGaps:
    """Rigorous lower bounds on ``1 - a`` (negative or 0: no certificate) for each norm."""

    row: float
    col: float
    spectral: float


def alpha_gap_lower(C: np.ndarray) -> AlphaGaps:
    """Lower bounds on ``1 - alpha_row``, ``1 - alpha_col`` and ``1 - alpha_spectral`` of ``C``.

    Row and column sums are exact rational sums; ``1 - a`` is formed exactly and rounded down,
    so no digit is lost when ``a`` is within ``1e-12`` of 1. The spectral gap uses
    :func:`spectral_norm_upper`.
    """
    row = min(_exact_gap(C[i]) for i in range(C.shape[0]))
    col = min(_exact_gap(C[:, j]) for j in range(C.shape[1]))
    sigma = spectral_norm_upper(C)
    return AlphaGaps(_lower_float(row), _lower_float(col), _lower_float(1 - Fraction(sigma)))


def alpha_upper(C: np.ndarray, axis: int) -> float:
    """A float ``>=`` the largest row (``axis=1``) or column (``axis=0``) sum of ``C``: exact
    rational sums, the largest rounded up."""
    lines = C if axis == 1 else C.T
    best = max(sum((Fraction(float(c)) for c in line), Fraction(0)) for line in lines)
    value = float(best)
    return value if Fraction(value) >= best else round_up(value)


def _perron_candidates(C: np.ndarray) -> list[np.ndarray]:
    """Positive vectors near the Perron vector of ``C >= 0`` (one per floor), each max 1."""
    vals, vecs = np.linalg.eig(C)
    top = np.abs(vecs[:, int(np.argmax(vals.real))].real)
    top = top / top.max() if top.max() > 0 else np.ones(C.shape[0])
    # the Perron vector of C^T + C catches reducible patterns the eigenvector of C misses
    _, svecs = np.linalg.eigh(C + C.T)
    sym = np.abs(svecs[:, -1])
    sym = sym / sym.max() if sym.max() > 0 else np.ones(C.shape[0])
    out = [np.maximum(w, floor) for w in (top, sym) for floor in (1e-2, 1e-4, 1e-8, 1e-12)]
    # resolvent vectors v = (I - C/s)^-1 1 for s just above rho: C v = s (v - 1) <= s v, which
    # stays tight on reducible and nilpotent patterns (a star's leaves copying its hub)
    rho = float(np.max(np.abs(vals)))
    scale = float(C.sum(axis=1).max())
    for delta in (1e-2, 1e-4, 1e-7):
        s = rho * (1.0 + delta) + delta * scale
        try:
            v = np.linalg.solve(np.eye(C.shape[0]) - C / s, np.ones(C.shape[0]))
        except np.linalg.LinAlgError:
            continue
        if np.all(np.isfinite(v)) and np.all(v > 0):
            out.append(v / v.max())
    return out


def collatz_wielandt_upper(C: np.ndarray) -> tuple[float, np.ndarray]:
    """``(r, v)``: a float ``r >= max_i (C v)_i / v_i >= rho(C)`` and the positive ``v`` giving it.

    For a non-negative ``C`` and any positive ``v``, ``rho(C) <= max_i (C v)_i / v_i``
    (Collatz–Wielandt; Horn and Johnson, *Matrix Analysis*, 2nd ed., Theorem 8.1.26), and
    ``C v <= r v`` entrywise. ``C v`` is a sum of non-negative products, so its float64 value is
    within ``gamma_n`` relative (plus ``(n + 1)`` smallest subnormals) of the exact one (Higham
    2002, Section 3.5); the ratio is widened by that and rounded up. ``v`` is the tightest of a
    few floored Perron-vector estimates.
    """
    n = C.shape[0]
    if not C.any():
        return 0.0, np.ones(n)
    best: tuple[float, np.ndarray] | None = None
    for v in _perron_candidates(C):
        w = C @ v
        exact_max = (w + (n + 1) * _ETA) / (1.0 - 2.0 * (n + 2) * _U)
        r = round_up(float(np.max(exact_max / v)) * (1.0 + 2.0 * _U))
        if best is None or r < best[0]:
            best = (r, v)
    return best


def rho_upper(C: np.ndarray) -> float:
    """A float ``>= rho(C)`` for non-negative ``C`` (:func:`collatz_wielandt_upper`)."""
    return collatz_wielandt_upper(C)[0]


def weighted_tmix_upper(C: np.ndarray, eps: float) -> tuple[float, float]:
    """``(r, t)``: the Collatz–Wielandt bound ``r >= rho(C)`` and, when ``r < 1``, a ``t`` with
    ``t_mix(eps) <= t`` proved (``math.inf`` otherwise).

    With ``C v <= r v`` and ``M = (1 - 1/n) I + C / n``: ``M v <= kappa v``,
    ``kappa = 1 - (1 - r)/n``. Under the same-site maximal coupling ``beta_t <= M^t 1 <=
    M^t v / v_min <= kappa^t v / v_min`` (docs/theory.md, Theorem 5 corrected), so
    ``d(t) <= kappa^t S`` with ``S = sum(v) / v_min``, and since ``-log kappa >= (1 - r)/n``,
    ``t = ceil(n / (1 - r) (log S + log 1/eps))`` suffices. Every step rounded up. This is the
    matrix-power certificate's existence made explicit: it needs only ``rho(C) < 1``.
    """
    r, v = collatz_wielandt_upper(C)
    if r >= 1.0:
        return r, math.inf
    n = C.shape[0]
    gap = 1.0 - r if r >= 0.5 else round_down(1.0 - r)  # exact for r >= 1/2 (Sterbenz)
    scale = round_up(round_up(math.fsum(v.tolist())) / float(v.min()))
    log_s = round_up(round_up(math.log(scale)))
    log_inv_eps = round_up(round_up(-math.log(eps)))
    value = round_up(round_up(n / gap) * round_up(log_s + log_inv_eps))
    return r, float(math.ceil(round_up(value)))


def tmix_upper(n: int, gap: float, eps: float) -> float:
    """``ceil(n / gap (log n + log 1/eps))`` rounded so that it is never below the exact value.

    ``gap`` is a rigorous lower bound on ``1 - a`` (``math.inf`` is returned for ``gap <= 0``).
    Each operation is nudged one ulp up; ``math.log`` is within one ulp in glibc, so two ulps
    cover it.
    """
    if gap <= 0.0:
        return math.inf
    log_n = round_up(round_up(math.log(n))) if n > 1 else 0.0
    log_inv_eps = round_up(round_up(-math.log(eps)))
    value = round_up(round_up(n / gap) * round_up(log_n + log_inv_eps))
    return float(math.ceil(round_up(value)))


__all__ = [
    "EXACT_MAX_SITES",
    "EXACT_PRECISIONS",
    "AlphaGaps",
    "ExactSearch",
    "PowerSumBounds",
    "alpha_gap_lower",
    "alpha_upper",
    "collatz_wielandt_upper",
    "rho_upper",
    "weighted_tmix_upper",
    "columns_at_most_one",
    "exact_power_search",
    "power_sum_bounds",
    "spectral_norm_upper",
    "tmix_upper",
]
