"""Lemma 6's oscillation of a masked LM whose head ends in LayerNorm -> linear decoder.

The scores of such a model at a site are ``s_a = W_a . LN(x) + b_a`` for the hidden vector
``x`` the rest of the network produces there. ``LN(x) = gamma * z + beta`` with
``z = (x - mean x) / sqrt(var x + eps)``: ``z`` is centred and ``||z||_2 = sqrt(d var/(var +
eps)) <= sqrt(d)``, whatever ``x`` is. So with ``w_a = centre(W_a * gamma)`` (the mean removed:
``z`` is centred, so ``(W_a * gamma) . z = w_a . z``) and ``k_a = W_a . beta + b_a``,

    ``s_a - s_b = (w_a - w_b) . z + (k_a - k_b)``, ``|(w_a - w_b) . z| <= sqrt(d) ||w_a - w_b||``

(Cauchy–Schwarz), for every context. Lemma 6's oscillation between any two contexts is
``max_{a, b} [(s_a - s_b)(x) - (s_a - s_b)(y)] <= 2 max_{a != b} R_ab`` with
``R_ab = sqrt(d) ||w_a - w_b||``, so ``Delta_ij <= 2 max R_ab`` for every pair of sites and
``c_ij(tau) <= tanh(Delta_ij / (4 tau))``. Without more about ``x`` this is the best bound
from the head: ``z = +-sqrt(d) (w_a - w_b)/||w_a - w_b||`` is the limit of ``LN(t v)`` for
``v`` along it as ``t -> inf`` (docs/theory.md, "Upper bounds on influence").

**What is bounded, in floating point.** The function bounded is the scores the library
returns: glauber evaluates the last two layers of such a head itself, in float64, by the
algorithm below (:mod:`glauber.mlm_backend.heads`), from whatever hidden vector ``x`` the
network computed in its own precision (float32, bfloat16; any such ``x``), and returns
float32 scores:

1. ``m = fl(sum_k x_k) / d``; ``a_k = fl(x_k - m)`` (``m`` need not be accurate);
2. ``v = fl(sum_k a_k^2) / d``; ``r = fl(1 / fl(sqrt(fl(v + eps))))``;
3. ``z_k = fl(a_k r)``;
4. ``l_a = fl(sum_k w_ak z_k + k_a)`` (any summation order, fused multiply-adds allowed);
5. ``s_a = float32(l_a)`` (round to nearest).

Since ``v + eps >= (1 - gamma_{d+2}) sum a_k^2 / d`` whatever ``m`` was,
``||z||_2 <= sqrt(d) rho`` with ``rho^2 = (1 + u)^4 / ((1 - u)^4 (1 - gamma_{d+3}))``
(``u = 2^-53``): the computed ``z`` is not exactly centred, which Cauchy–Schwarz does not need.
Steps 4 and 5 add at most ``E_a = gamma_{d+1} (||w_a|| sqrt(d) rho + |k_a|) + u_32 L_a`` to
``s_a`` (``L_a`` a bound on ``|l_a|``, ``u_32 = 2^-24``), plus subnormal terms. Hence
``R_ab = sqrt(d) rho ||w_a - w_b|| + E_a + E_b``, computed with every operation rounded up.
(Bounding torch's own float32 LayerNorm instead is not possible a priori: its error grows like
``u |mean x| / sqrt(var x + eps)``, unbounded for ``eps = 1e-12`` as AntiBERTy has.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from glauber.core.validation import as_real_array
from glauber.errors import InvalidParameterError
from glauber.theory.floating import (
    SMALLEST_SUBNORMAL,
    UNIT_ROUNDOFF,
    gamma,
    round_up,
    unit_roundoff,
)

_U = UNIT_ROUNDOFF["float64"]
_ETA = SMALLEST_SUBNORMAL["float64"]
#: Largest vocabulary whose pairwise distances ``||w_a - w_b||`` are formed one by one (a
#: ``q x q`` Gram matrix); larger ones use ``||w_a - c|| + ||w_b - c||`` about the mean row.
PAIRWISE_MAX_TOKENS = 4096
#: Smallest LayerNorm ``eps`` accepted (the proof needs ``eps`` above the float64 underflow).
MIN_EPS = 2.0**-900


@dataclass(frozen=True)
class HeadEnclosure:
    """Every score difference of a LayerNorm -> linear head, enclosed for every context.

    ``s_a - s_b`` lies in ``[centre[a] - centre[b] - radius[a, b], ... + radius[a, b]]`` for
    every hidden vector, floating point included (module docstring).

    Attributes
    ----------
    radius : numpy.ndarray, shape (q, q)
        ``R_ab`` (zero diagonal), rounded up.
    centre : numpy.ndarray, shape (q,)
        ``k_a = W_a . beta + b_a`` as the head uses it.
    oscillation : float
        ``2 max_{a != b} R_ab``: a bound on Lemma 6's oscillation between ANY two contexts.
    pair : tuple of int
        The tokens ``(a, b)`` attaining the maximum.
    norm_radius : float
        ``sqrt(d) rho``, the radius of the ball that holds the computed normalised vector.
    rounding : float
        The largest floating-point term ``E_a + E_b`` in a radius.
    pairwise : bool
        Distances ``||w_a - w_b||`` formed pair by pair (else about the mean row, for
        vocabularies above :data:`PAIRWISE_MAX_TOKENS`).
    """

    radius: np.ndarray
    centre: np.ndarray
    oscillation: float
    pair: tuple[int, int]
    norm_radius: float
    rounding: float
    pairwise: bool


def layernorm_head_enclosure(
    weights: np.ndarray, offsets: np.ndarray, eps: float, out_dtype: str = "float32"
) -> HeadEnclosure:
    """Enclose every score difference of a LayerNorm -> linear head (module docstring).

    Parameters
    ----------
    weights : numpy.ndarray, shape (q, d)
        ``w_a``: the rows the head multiplies the normalised vector with, exactly as it uses
        them (float64; the centred ``W_a * gamma`` of the allowed tokens).
    offsets : numpy.ndarray, shape (q,)
        ``k_a`` (float64), as the head adds them.
    eps : float
        The LayerNorm's ``eps`` as the head adds it (>= :data:`MIN_EPS`).
    out_dtype : str
        Format of the returned scores (``"float32"``).

    Returns
    -------
    HeadEnclosure

    Raises
    ------
    InvalidParameterError
        If the arrays are not finite of matching shapes with ``q >= 2``, ``eps`` is below
        :data:`MIN_EPS` or not finite, or the scores could exceed the output format's range.

    Examples
    --------
    >>> w = np.array([[1.0, -1.0], [0.0, 0.0]])
    >>> enc = layernorm_head_enclosure(w, np.zeros(2), 1e-5)
    >>> 4.0 < enc.oscillation < 4.0 + 1e-6  # 2 sqrt(2) ||w_0 - w_1|| = 2 sqrt(2) sqrt(2)
    True
    """
    w = as_real_array(weights, "head weights")
    k = as_real_array(offsets, "head offsets")
    if w.ndim != 2 or w.shape[0] < 2 or k.shape != (w.shape[0],):
        raise InvalidParameterError(
            f"weights must be (q, d) with q >= 2 and offsets (q,), got {w.shape} and {k.shape}"
        )
    if not (np.isfinite(w).all() and np.isfinite(k).all()):
        raise InvalidParameterError("head weights and offsets must be finite")
    if not (math.isfinite(eps) and eps >= MIN_EPS):
        raise InvalidParameterError(
            f"LayerNorm eps = {eps!r}: the bound needs a finite eps >= 2^-900 (with eps = 0 a "
            "constant hidden vector gives 0/0)"
        )
    q, d = w.shape
    rho = round_up(math.sqrt(round_up((1 + _U) ** 4 / ((1 - _U) ** 4 * (1 - gamma(d + 3, _U))))))
    # ||z|| <= sqrt(d) rho, plus sqrt(d) subnormal roundings of step 3
    norm_radius = round_up(round_up(math.sqrt(d)) * rho * (1 + 2 * _U) + d * _ETA)
    row_norms = _row_norms_upper(w)
    g = gamma(d + 1, _U)
    mag = np.nextafter(row_norms * norm_radius * (1 + 2 * _U) + np.abs(k) * (1 + _U), np.inf)
    dot_err = np.nextafter(g * mag * (1 + 2 * _U) + (d + 1) * _ETA, np.inf)
    logit_bound = np.nextafter((mag + dot_err) * (1 + 2 * _U), np.inf)
    uo = unit_roundoff(out_dtype)
    finfo = np.finfo(out_dtype if out_dtype != "bfloat16" else "float32")
    if not np.all(logit_bound < float(finfo.max) / 2):
        raise InvalidParameterError(
            "the head's scores could exceed the float32 range (weights too large); no bound"
        )
    out_err = np.nextafter(uo * logit_bound * (1 + 2 * _U) + float(finfo.tiny), np.inf)
    err = np.nextafter((dot_err + out_err) * (1 + 2 * _U), np.inf)  # E_a
    dist = _pair_distances_upper(w)
    pairwise = q <= PAIRWISE_MAX_TOKENS
    rounding = np.nextafter((err[:, None] + err[None, :]) * (1 + 2 * _U), np.inf)
    radius = np.nextafter((dist * norm_radius * (1 + 2 * _U) + rounding) * (1 + 2 * _U), np.inf)
    np.fill_diagonal(radius, 0.0)
    flat = int(np.argmax(radius))
    a, b = divmod(flat, q)
    return HeadEnclosure(
        radius=radius,
        centre=k.copy(),
        oscillation=round_up(2.0 * float(radius[a, b])),
        pair=(int(a), int(b)),
        norm_radius=float(norm_radius),
        rounding=float(rounding[~np.eye(q, dtype=bool)].max()),
        pairwise=pairwise,
    )


def _row_norms_upper(w: np.ndarray) -> np.ndarray:
    """Floats ``>= ||w_a||_2`` (each square within u, the sum within gamma_d, sqrt within u)."""
    d = w.shape[1]
    sq = np.einsum("ij,ij->i", w, w)
    return np.nextafter(np.sqrt(sq * (1 + gamma(d + 2, _U)) + d * _ETA) * (1 + 2 * _U), np.inf)


def _pair_distances_upper(w: np.ndarray) -> np.ndarray:
    """Floats ``>= ||w_a - w_b||_2`` for every pair (zero diagonal).

    Up to :data:`PAIRWISE_MAX_TOKENS` rows: ``||w_a||^2 + ||w_b||^2 - 2 w_a . w_b`` from a Gram
    matrix, plus ``4 gamma_{d+3} (||w_a||^2 + ||w_b||^2 + 2 |w_a . w_b|)`` for its rounding
    (each of the three dot products is within ``gamma_d`` of its absolute sum, which
    Cauchy–Schwarz bounds by the squared norms). Beyond: ``||w_a - c|| + ||w_b - c||`` about the
    mean row ``c`` (the triangle inequality), at most twice the pairwise value.
    """
    q, d = w.shape
    if q > PAIRWISE_MAX_TOKENS:
        c = w.mean(axis=0)
        diff = w - c
        # each difference within u relative: ||exact|| <= ||computed|| / (1 - u)
        r = _row_norms_upper(diff) / (1 - _U)
        r = np.nextafter(r * (1 + _U), np.inf)
        out = np.nextafter((r[:, None] + r[None, :]) * (1 + _U), np.inf)
        np.fill_diagonal(out, 0.0)
        return out
    gram = w @ w.T
    sq = np.diag(gram).copy()
    raw = sq[:, None] + sq[None, :] - 2.0 * gram
    slack = 4.0 * gamma(d + 3, _U) * (sq[:, None] + sq[None, :] + 2.0 * np.abs(gram))
    total = np.maximum(raw, 0.0) + slack + 4 * d * _ETA
    out = np.nextafter(np.sqrt(np.nextafter(total * (1 + 2 * _U), np.inf)) * (1 + 2 * _U),
                       np.inf)
    np.fill_diagonal(out, 0.0)
    return out


__all__ = [
    "HeadEnclosure",
    "MIN_EPS",
    "PAIRWISE_MAX_TOKENS",
    "layernorm_head_enclosure",
]
