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
    check_nonnegative_int,
    check_square_matrix,
    check_tau,
)
from glauber.errors import (
    InvalidParameterError,
    NonFiniteScoresError,
    VocabularyError,
)


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
    arr = np.asarray(lp, dtype=np.float64)
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
    out = np.asarray(delta1, dtype=np.float64) / tau
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
    "rectangle_delta",
    "rectangle_delta_from_edges",
]
