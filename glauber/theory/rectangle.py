"""Proposition 4 (the rectangle test), true as printed, and its closed forms.

A rectangle: a state ``x``, sites ``i != j`` with current tokens ``A = x_i``, ``B = x_j`` and
replacements ``A'``, ``B'``; ``y = x(i -> A')``, ``w = x(j -> B')``, ``z`` = both. Each edge has a
log-ratio from ONE conditional, e.g. ``s_{x->y} = log p(A' | x_{-i}) - log p(A | x_{-i})``, and

    delta = (s_{x->y} + s_{y->z}) - (s_{x->w} + s_{w->z}).

Proposition 4: a compatible joint ``pi`` makes each edge ``log pi(target) / pi(source)``, so both
paths telescope to ``log pi(z) / pi(x)`` and ``delta = 0``. Because an edge log-ratio is a
difference of two entries of one conditional, raw scores give the same value as
log-probabilities, and ``delta`` at temperature ``tau`` is ``delta`` at 1 divided by ``tau``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from glauber.core.validation import (
    as_real_array,
    check_nonnegative_int,
    check_square_matrix,
    check_tau,
)
from glauber.errors import (
    InvalidParameterError,
    NonFiniteScoresError,
    VocabularyError,
)
from glauber.theory.floating import UNIT_ROUNDOFF, RoundingFormats, gamma


def rectangle_delta_from_edges(
    s_xy: ArrayLike, s_yz: ArrayLike, s_xw: ArrayLike, s_wz: ArrayLike
) -> np.ndarray | float:
    """Proposition 4's ``delta = (s_{x->y} + s_{y->z}) - (s_{x->w} + s_{w->z})``, elementwise.

    Parameters
    ----------
    s_xy, s_yz, s_xw, s_wz : float or array_like
        The four edge log-ratios (broadcastable).

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> rectangle_delta_from_edges(1.0, 2.0, 0.5, 2.0)
    0.5
    """
    out = (np.asarray(s_xy, float) + np.asarray(s_yz, float)) - (
        np.asarray(s_xw, float) + np.asarray(s_wz, float)
    )
    return float(out) if out.ndim == 0 else out


def _edge(lp: ArrayLike, old: ArrayLike, new: ArrayLike, name: str) -> np.ndarray:
    arr = as_real_array(lp, name)
    if arr.ndim < 1:
        raise InvalidParameterError(f"{name} must have a vocabulary axis (last), got a scalar")
    q = arr.shape[-1]
    batch = arr.shape[:-1]
    picked = []
    for tok in (old, new):
        idx = np.asarray(tok)
        if not np.issubdtype(idx.dtype, np.integer):
            raise VocabularyError(f"tokens must be integer indices into 0..{q - 1}, got {tok!r}")
        if np.any(idx < 0) or np.any(idx >= q):
            raise VocabularyError(f"token index out of range 0..{q - 1} in {name}: {tok!r}")
        try:
            idx = np.broadcast_to(idx, batch)
        except ValueError as exc:
            raise InvalidParameterError(
                f"tokens of shape {idx.shape} do not broadcast to the batch shape {batch} of {name}"
            ) from exc
        picked.append(np.take_along_axis(arr, idx[..., None], axis=-1)[..., 0])
    if not (np.all(np.isfinite(picked[0])) and np.all(np.isfinite(picked[1]))):
        raise NonFiniteScoresError(
            f"{name} has a NaN or infinite log-probability at a rectangle token; the rectangle "
            "test needs positive conditionals there (pick other replacement tokens)"
        )
    return picked[1] - picked[0]


def rectangle_delta(
    lp_x_i: ArrayLike,
    lp_y_j: ArrayLike,
    lp_x_j: ArrayLike,
    lp_w_i: ArrayLike,
    a: ArrayLike,
    a_new: ArrayLike,
    b: ArrayLike,
    b_new: ArrayLike,
) -> np.ndarray | float:
    """Proposition 4's rectangle incompatibility ``delta`` from the four conditionals.

    The rectangle is ``x``, ``y = x(i -> a_new)``, ``w = x(j -> b_new)``, ``z`` = both, with
    ``a = x_i`` and ``b = x_j``. The four edges use four conditionals:

    ============  ======================  ==================================
    edge          conditional             argument
    ============  ======================  ==================================
    ``x -> y``    site i given ``x_{-i}``  ``lp_x_i`` (``a -> a_new``)
    ``y -> z``    site j given ``y_{-j}``  ``lp_y_j`` (``b -> b_new``)
    ``x -> w``    site j given ``x_{-j}``  ``lp_x_j`` (``b -> b_new``)
    ``w -> z``    site i given ``w_{-i}``  ``lp_w_i`` (``a -> a_new``)
    ============  ======================  ==================================

    Parameters
    ----------
    lp_x_i, lp_y_j, lp_x_j, lp_w_i : array_like, shape (..., q)
        Log-conditionals (or raw scores: per-conditional constants cancel) over the
        vocabulary, last axis; leading axes are a batch of rectangles. Scores at ``tau = 1``
        give ``delta`` at ``tau = 1``.
    a, a_new, b, b_new : int or array_like of int
        Token indices (broadcast to the batch shape).

    Returns
    -------
    float or numpy.ndarray
        ``(s_{x->y} + s_{y->z}) - (s_{x->w} + s_{w->z})``; 0 for compatible conditionals.

    Raises
    ------
    VocabularyError
        If a token is not an integer index into the vocabulary.
    NonFiniteScoresError
        If a used entry is NaN or infinite.
    InvalidParameterError
        If the shapes do not fit.

    Examples
    --------
    A product law (independent sites) is compatible:

    >>> import numpy as np
    >>> li, lj = np.log([0.2, 0.8]), np.log([0.6, 0.4])
    >>> abs(rectangle_delta(li, lj, lj, li, 0, 1, 0, 1)) < 1e-12
    True
    """
    out = rectangle_delta_from_edges(
        _edge(lp_x_i, a, a_new, "lp_x_i"),
        _edge(lp_y_j, b, b_new, "lp_y_j"),
        _edge(lp_x_j, b, b_new, "lp_x_j"),
        _edge(lp_w_i, a, a_new, "lp_w_i"),
    )
    return out


def rectangle_rounding_bound(
    lp_old: ArrayLike,
    lp_new: ArrayLike,
    score_scale: ArrayLike,
    tau: float,
    formats: RoundingFormats = RoundingFormats(),
) -> np.ndarray:
    """Bound on the rounding error of a computed rectangle ``delta`` (Proposition 4), per rectangle.

    Inputs have shape ``(4, R)``: one row per edge of ``R`` rectangles (``x -> y``, ``y -> z``,
    ``x -> w``, ``w -> z``, in any order), each edge read from one conditional.

    **What is bounded.** The library computes ``x = fl(s / tau)`` in the scores' format
    (unit roundoff ``u_s``), ``lp = log_softmax(x)`` in the working format ``u_w``, gathers
    ``lp`` exactly into float64 and forms ``e = lp_new - lp_old`` per edge and
    ``delta = (e_xy + e_yz) - (e_xw + e_wz)`` in float64 (``u = 2**-53``). In exact arithmetic the
    normaliser of each conditional cancels in its edge, so the exact value is
    ``delta* = sum_e +-(s*_e(new) - s*_e(old)) / tau`` with ``s*`` the model's exact scores.

    **Derivation** (standard model ``fl(a op b) = (a op b)(1 + theta)``, ``|theta| <= u``, plus
    an absolute ``eta/2`` below the normal range, ``eta`` the smallest subnormal; Higham 2002,
    Section 2.2). Per edge, with ``M_e = max_a |s_e(a)|`` the largest score magnitude of its
    conditional at ``tau = 1``:

    1. *Scores* (an assumption, not arithmetic of ours): the returned scores are within
       ``k u_m M_e`` of the exact ones, ``u_m`` the unit roundoff of the precision the model
       computes in and ``k = formats.score_error_ulps``. Two scores per edge:
       ``2 k u_m M_e / tau``.
    2. *Division*: ``|x_a - s_a / tau| <= u_s |s_a| / tau + eta_s / 2``; two entries:
       ``2 u_s M_e / tau + eta_s``.
    3. *Log-softmax*: with ``m = max_b x_b`` (exact) and ``L`` the computed log-sum-exp, either
       ``z_a = fl(x_a - m)``, ``lp_a = fl(z_a - L)`` or ``lp_a = fl(x_a - fl(m + L))``. ``L`` (or
       ``m + L``) is the same float for both entries of a row, so its own error cancels in
       ``lp_new - lp_old``; what remains are the roundings of the subtractions,
       ``u_w |z_a| + u_w |lp_a| <= (2 u_w + u_w^2) |lp_a|`` per entry (``L >= 0`` gives
       ``|z_a| <= |lp_a|``, rounding being monotone), so ``gamma_2(u_w) (|lp_new| + |lp_old|)
       + 2 eta_w`` per edge. The bound holds for any exp/log accuracy.
    4. *Assembly* in float64: one rounding per edge difference and three in the sums:
       ``gamma_4(u) sum_e |e_e|`` in total.

    Summing 1-4 over the four edges bounds ``|delta - delta*|``; the sum is computed in float64
    and enlarged by ``gamma_8(u)`` relative to absorb its own rounding. Every term scales with
    ``1 / tau`` as ``delta`` does (``|lp|`` grows like ``M / tau`` at small ``tau``), so the ratio
    ``|delta| / bound`` is the same at every temperature. With ``score_error_ulps = 0`` the bound
    is rigorous for the scores as returned; item 1 makes it cover the model's own rounding
    (a compatible model computed in floating point is compatible only up to it).

    Parameters
    ----------
    lp_old, lp_new : array_like, shape (4, R)
        Computed log-probabilities (at ``tau``) of the current and replacement token of each edge.
    score_scale : array_like, shape (4, R)
        ``max_a |s(a)|`` of each edge's conditional at ``tau = 1`` (scores as returned).
    tau : float
        Temperature, > 0.
    formats : RoundingFormats
        The formats of the scores (``u_s``: ``scores / tau`` is rounded in it), of the
        log-softmax (``u_w``) and of the model's computation (``u_m``; default: the scores'),
        and ``k = score_error_ulps`` of item 1.

    Returns
    -------
    numpy.ndarray, shape (R,)

    Raises
    ------
    InvalidParameterError
        If shapes differ or a value is not finite.
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.

    Examples
    --------
    >>> b = rectangle_rounding_bound(-np.ones((4, 1)), -np.ones((4, 1)), np.ones((4, 1)), 1.0)
    >>> bool(1e-15 < b[0] < 1e-14)
    True
    """
    old = as_real_array(lp_old, "lp_old")
    new = as_real_array(lp_new, "lp_new")
    if old.ndim != 2 or old.shape[0] != 4:
        raise InvalidParameterError(
            f"lp_old, lp_new and score_scale must have the shape (4, R), got {old.shape}"
        )
    per_edge = log_ratio_rounding_bound(old, new, score_scale, tau, formats)
    u = UNIT_ROUNDOFF["float64"]
    total = per_edge.sum(axis=0) + gamma(4, u) * np.abs(new - old).sum(axis=0)
    return total * (1.0 + gamma(8, u))


def log_ratio_rounding_bound(
    lp_old: ArrayLike,
    lp_new: ArrayLike,
    score_scale: ArrayLike,
    tau: float,
    formats: RoundingFormats = RoundingFormats(),
) -> np.ndarray:
    """Bound on the rounding error of ``lp_new - lp_old``, two entries of one log-conditional.

    Items 1-3 of :func:`rectangle_rounding_bound` for one edge (the final subtraction is not
    included: add ``u |lp_new - lp_old|`` in the format it is done in):
    ``2 (k u_m + u_s) M / tau + eta_s + gamma_2(u_w) (|lp_old| + |lp_new|) + 2 eta_w``, elementwise.
    Also bounds a score margin ``s(x_i) - s(a)`` read from log-conditionals.

    Parameters
    ----------
    lp_old, lp_new, score_scale : array_like
        Same shape: the two computed log-probabilities (at ``tau``) and ``max_a |s(a)|`` of their
        conditional at ``tau = 1``.
    tau, formats :
        As :func:`rectangle_rounding_bound`.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    InvalidParameterError
        If shapes differ or a value is not finite.
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.

    Examples
    --------
    >>> bool(log_ratio_rounding_bound(-1.0, -2.0, 3.0, 1.0) < 1e-14)
    True
    """
    tau = check_tau(tau)
    old = as_real_array(lp_old, "lp_old")
    new = as_real_array(lp_new, "lp_new")
    scale = as_real_array(score_scale, "score_scale")
    if not (old.shape == new.shape == scale.shape):
        raise InvalidParameterError(
            f"lp_old, lp_new and score_scale must share one shape, got {old.shape}, "
            f"{new.shape} and {scale.shape}"
        )
    if not (np.isfinite(old).all() and np.isfinite(new).all() and np.isfinite(scale).all()):
        raise InvalidParameterError("the rounding bound needs finite log-probabilities and scales")
    f = formats
    return (
        2.0 * (f.score_error_ulps * f.u_m + f.u_s) * (scale / tau)
        + f.eta_s
        + gamma(2, f.u_w) * (np.abs(old) + np.abs(new))
        + 2.0 * f.eta_w
    )


def delta_at_tau(delta1: ArrayLike, tau: float) -> np.ndarray | float:
    """Rectangle ``delta`` at temperature ``tau`` from ``delta`` at ``tau = 1``: ``delta1 / tau``.

    Every edge log-ratio is ``(s(new) - s(old)) / tau``, so ``delta`` scales by ``1/tau``.

    Parameters
    ----------
    delta1 : float or array_like
        ``delta`` at ``tau = 1``.
    tau : float
        Temperature, > 0.

    Returns
    -------
    float or numpy.ndarray

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.

    Examples
    --------
    >>> delta_at_tau(0.8, 2.0)
    0.4
    """
    tau = check_tau(tau)
    out = as_real_array(delta1, "delta1") / tau
    return float(out) if out.ndim == 0 else out


def asymmetric_ising_rectangle_delta(
    J: ArrayLike, i: int, j: int, tau: float = 1.0, x_i: int = 1, x_j: int = 1
) -> float:
    """Closed-form ``delta`` for flipping both spins ``i`` and ``j`` of an asymmetric Ising model.

    Model: spins ``x_k in {-1, +1}``, local field ``f_i = h_i + sum_{k != i} J[i, k] x_k``, score
    of spin ``s`` at site ``i`` equal to ``s * f_i`` (so ``p(s | x_{-i}) ∝ exp(s f_i / tau)``).
    The rectangle flips ``A = x_i -> -x_i`` and ``B = x_j -> -x_j``. With ``g_i`` the field at ``i``
    from everything but ``j`` (and likewise ``g_j``), the edge log-ratios are
    ``s_{x->y} = -2A (g_i + J_ij B)/tau``, ``s_{y->z} = -2B (g_j - J_ji A)/tau``,
    ``s_{x->w} = -2B (g_j + J_ji A)/tau``, ``s_{w->z} = -2A (g_i - J_ij B)/tau``, so

        delta = 4 x_i x_j (J_ji - J_ij) / tau,

    independent of the fields and of the other spins; ``|delta| = 4 |J_ij - J_ji| / tau``, zero iff
    ``J_ij = J_ji`` (checked symbolically in :mod:`glauber.theory.symbolic`).

    Parameters
    ----------
    J : array_like, shape (n, n)
        Couplings; ``J[i, k]`` is the weight of spin ``k`` in site ``i``'s field (the diagonal is
        unused).
    i, j : int
        Distinct sites.
    tau : float, optional
        Temperature, > 0.
    x_i, x_j : int, optional
        Current spins at ``i`` and ``j`` (each -1 or +1); they set the sign.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If ``J`` is not a finite square matrix, ``i``/``j`` are not distinct sites, or a spin is
        not -1 or +1.
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.

    Examples
    --------
    >>> asymmetric_ising_rectangle_delta([[0.0, 0.5], [0.2, 0.0]], 0, 1)
    -1.2
    """
    arr = check_square_matrix(J, "couplings J", nonnegative=False)
    n = arr.shape[0]
    i = check_nonnegative_int(i, "site i")
    j = check_nonnegative_int(j, "site j")
    if i >= n or j >= n or i == j:
        raise InvalidParameterError(f"sites i, j must be distinct and in 0..{n - 1}, got {i}, {j}")
    tau = check_tau(tau)
    for name, spin in (("x_i", x_i), ("x_j", x_j)):
        if isinstance(spin, bool) or spin not in (-1, 1):
            raise InvalidParameterError(f"{name} must be a spin, -1 or +1, got {spin!r}")
    return float(4.0 * x_i * x_j * (arr[j, i] - arr[i, j]) / tau)


__all__ = [
    "asymmetric_ising_rectangle_delta",
    "delta_at_tau",
    "log_ratio_rounding_bound",
    "rectangle_delta",
    "rectangle_delta_from_edges",
    "rectangle_rounding_bound",
]
