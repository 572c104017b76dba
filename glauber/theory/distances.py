"""Distances between laws on the vocabulary: total variation and Hilbert projective distance.

Total variation is HALF the L1 distance (the paper's Section 5.1 convention). The Hilbert
projective distance between two positive laws ``softmax(s)`` and ``softmax(t)`` is the
oscillation of the score difference, ``max_a (s_a - t_a) - min_a (s_a - t_a)``; it ignores
additive constants, so raw scores, logits and log-probabilities give the same value. It is the
bracket inside Lemma 6's score oscillation ``Delta_ij``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from glauber.core.validation import as_real_array, check_tau, check_vocab_size
from glauber.errors import InvalidParameterError, NonFiniteScoresError
from glauber.theory.floating import (
    UNIT_ROUNDOFF,
    RoundingFormats,
    elementary_error,
    gamma,
    round_up_array,
    unit_roundoff,
)


def tv_distance(p: ArrayLike, q: ArrayLike, axis: int = -1) -> np.ndarray | float:
    """Total-variation distance ``0.5 * sum_a |p_a - q_a|`` along ``axis`` (broadcasting).

    Parameters
    ----------
    p, q : array_like
        Probability vectors (or batches of them) that broadcast against each other.
    axis : int, optional
        The axis that indexes the vocabulary.

    Returns
    -------
    float or numpy.ndarray
        The distance, in ``[0, 1]`` for probability vectors; one value per batch element.

    Raises
    ------
    InvalidParameterError
        If the inputs hold NaN or infinite entries or non-real values, have different sizes
        along ``axis`` (the vocabulary), or their other axes do not broadcast.

    Examples
    --------
    >>> float(tv_distance([1.0, 0.0], [0.5, 0.5]))
    0.5
    """
    a = as_real_array(p, "p")
    b = as_real_array(q, "q")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise InvalidParameterError("tv_distance needs finite probability vectors; got NaN/inf")
    diff = _difference(a, b, axis, "p and q")
    return 0.5 * np.sum(np.abs(diff), axis=axis)


def hilbert_distance(s: ArrayLike, t: ArrayLike, axis: int = -1) -> np.ndarray | float:
    """Hilbert projective distance between ``softmax(s)`` and ``softmax(t)``.

    Defined as the oscillation ``max_a (s_a - t_a) - min_a (s_a - t_a)`` along ``axis``. For
    score vectors of site ``i`` in two contexts that differ only at site ``j`` this is the
    bracket of Lemma 6's ``Delta_ij``; by the sharper form of Lemma 6,
    ``tv_distance(softmax(s), softmax(t)) <= tanh(hilbert_distance(s, t) / 4)``.

    Parameters
    ----------
    s, t : array_like
        Score vectors (logits, scores or log-probabilities; constants cancel), broadcastable.
    axis : int, optional
        The axis that indexes the vocabulary.

    Returns
    -------
    float or numpy.ndarray
        The distance, >= 0; one value per batch element.

    Raises
    ------
    NonFiniteScoresError
        If a score is NaN or infinite (a zero-probability token has infinite Hilbert distance
        from any positive law; drop it from the vocabulary instead).
    InvalidParameterError
        If the inputs do not broadcast.

    Examples
    --------
    >>> float(hilbert_distance([0.0, 1.0, 5.0], [0.0, 0.0, 2.0]))
    3.0
    """
    a = as_real_array(s, "s")
    b = as_real_array(t, "t")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise NonFiniteScoresError(
            "hilbert_distance needs finite scores; a NaN or infinite score was passed (mask "
            "zero-probability tokens out of the vocabulary first)"
        )
    diff = _difference(a, b, axis, "s and t")
    return np.max(diff, axis=axis) - np.min(diff, axis=axis)


def hilbert_distance_upper(top: ArrayLike, bottom: ArrayLike, dtype: Any = "float64") -> np.ndarray:
    """An upper bound on the exact oscillation of ``d = s - t`` from its computed extremes.

    ``top`` and ``bottom`` are the largest and smallest entries of ``fl(s - t)``, the score
    difference rounded in ``dtype`` (unit roundoff ``u``). Each computed entry is
    ``d_a (1 + theta_a)`` with ``|theta_a| <= u`` (exact below the normal range: a difference
    that is subnormal is exact), so ``max_a d_a <= top + gamma_1 |top|`` and
    ``min_a d_a >= bottom - gamma_1 |bottom|`` (Higham 2002, Section 2.2), and the exact
    oscillation is at most ``top - bottom + gamma_1(u) (|top| + |bottom|)``; that sum is formed
    in float64, enlarged by ``gamma_3`` and rounded up. No elementary function is involved, so
    the bound holds for any ``exp``/``log``: it is what makes Lemma 6's ``Delta_ij`` (and
    Corollary 7) rigorous however small the scores (``1e-17`` scores read from
    log-probabilities lose every digit to ``log q``).

    Parameters
    ----------
    top, bottom : array_like
        ``max_a fl(s_a - t_a)`` and ``min_a fl(s_a - t_a)`` (same shape).
    dtype : dtype or str
        Format the difference was rounded in.

    Returns
    -------
    numpy.ndarray
        ``>=`` the exact ``max_a (s_a - t_a) - min_a (s_a - t_a)``, entrywise.

    Examples
    --------
    >>> float(hilbert_distance_upper(1e-17, -1e-17)) > 2e-17  # never below the exact 2e-17
    True
    """
    hi = np.asarray(top, dtype=np.float64)
    lo = np.asarray(bottom, dtype=np.float64)
    u = unit_roundoff(dtype)
    spread = (hi - lo) + gamma(1, u) * (np.abs(hi) + np.abs(lo))
    return round_up_array(spread * (1.0 + gamma(3, UNIT_ROUNDOFF["float64"])))


def tv_rounding_bound(
    q: int,
    score_scale: ArrayLike,
    log_p_scale: ArrayLike,
    tau: float,
    formats: RoundingFormats = RoundingFormats(),
) -> np.ndarray:
    """Bound on ``|computed TV - exact TV|`` for two conditionals computed as the library does.

    **What is bounded.** Each conditional is computed from its scores ``s`` (``q`` tokens) as
    ``x = fl(s / tau)`` in the scores' format (``u_s``, smallest subnormal ``eta_s``), then
    ``lp = log_softmax(x)`` in the working format (``u``, ``eta``: ``m = max x``,
    ``z = fl(x - m)``, ``L = fl(log(fl(sum fl(exp z))))``, ``lp = fl(z - L)``),
    ``p = fl(exp(lp))``, and ``TV = fl(0.5 fl(sum fl|p - p'|))``. The exact value is the TV of
    ``softmax(s / tau)`` and ``softmax(s' / tau)`` for the scores as returned.

    **Derivation** (standard model, Higham 2002, Section 2.2; ``exp`` and ``log`` within
    :data:`~glauber.theory.floating.ELEMENTARY_ULPS` ulps, relative error ``e``). With
    ``M = max_a |s_a|`` and ``Lambda`` a bound on ``max_a |lp_a|`` of the computed row:

    1. *Division*: ``|x_a - s_a / tau| <= u_s M / tau + eta_s / 2 =: e_1``; log-softmax is
       2-Lipschitz in the max norm, so the exact log-softmax of ``x`` is within ``2 e_1`` of that
       of ``s / tau``.
    2. *Log-softmax*: ``|z_a|`` is at most ``|lp_a|`` (``L >= 0``), so the subtractions err by
       ``u Lambda`` each; the ``q`` exponentials (``z_b <= 0``, the largest is ``exp(0) = 1``
       exactly) err by ``e + u Lambda`` relative, the sum by ``gamma_{q-1}``, underflow by ``q eta``
       absolute against a sum ``>= 1``, so ``log`` of the sum errs by at most
       ``theta = e + u Lambda + gamma_{q-1} + q eta`` (over ``1 - theta``), and ``log`` itself by
       ``e (log q + 1)``. In all ``delta = 2 e_1 + 2 u Lambda + theta / (1 - theta) + e (log q + 1)``
       bounds ``|lp_a - exact log p_a|`` for every ``a``.
    3. *Exponential*: ``p_a = exp(lp_a)(1 + e)`` (plus ``eta / 2`` absolute below the normal
       range), so ``sum_a |p_a - exact p_a| <= A = exp(delta)(1 + e) - 1 + q eta``.
    4. *TV*: the ``q`` absolute differences, their sum and the halving err by ``gamma_q`` of a
       value at most ``1 + A``; the exact TV moves by at most ``(A + A') / 2``.

    The bound returned is ``(A + A') / 2 + gamma_q (1 + A)`` with ``A`` from the larger of the
    two rows' ``M`` and ``Lambda``, formed in float64 and enlarged by ``1 + gamma_8`` (its own
    rounding and the second-order terms). It is of the order of ``u (M / tau + Lambda + q)``:
    ``~1e-14`` at ``tau = 0.05`` for unit scores, which matters only when ``C`` sits within that
    of a threshold (a spectral radius within ``1e-9`` of 1 moves ``t`` by a relative ``~1e-5``).

    Parameters
    ----------
    q : int
        Vocabulary size.
    score_scale : array_like
        ``max_a |s_a|`` at ``tau = 1`` over both rows (elementwise: one value per pair).
    log_p_scale : array_like
        ``max_a |lp_a|`` of the computed log-conditionals over both rows.
    tau : float
        Temperature, > 0.
    formats : RoundingFormats
        ``score_dtype``: format of the scores (``s / tau`` is rounded in it); ``work_dtype``:
        format of the log-softmax and TV. The bound is for the scores as returned, so
        ``model_dtype`` must be None and ``score_error_ulps`` 0.

    Returns
    -------
    numpy.ndarray
        The bound; ``inf`` where ``delta`` exceeds the range of float64's ``exp`` (``M / tau``
        above about ``3e18`` for float64 scores): the computed TV then says nothing.

    Raises
    ------
    InvalidParameterError
        If ``formats`` sets ``model_dtype`` or a non-zero ``score_error_ulps``: a bound that
        silently left them out would be too small for what the caller meant.

    Examples
    --------
    >>> bool(1e-16 < tv_rounding_bound(2, 1.0, 21.0, 0.05) < 1e-13)
    True
    """
    tau = check_tau(tau)
    q = check_vocab_size(q)
    if formats.model_dtype is not None or formats.score_error_ulps != 0.0:
        raise InvalidParameterError(
            "tv_rounding_bound bounds the TV of the scores as returned: pass RoundingFormats "
            "with model_dtype=None and score_error_ulps=0 (the model's own error is not in it)")
    M = as_real_array(score_scale, "score_scale")
    lam = as_real_array(log_p_scale, "log_p_scale")
    u, eta = formats.u_w, formats.eta_w
    e = elementary_error(formats.work_dtype)
    e1 = formats.u_s * M / tau + formats.eta_s / 2
    theta = e + u * lam + gamma(max(q - 1, 1), u) + q * eta
    delta = 2 * e1 + 2 * u * lam + theta / (1 - theta) + e * (np.log(q) + 1)
    with np.errstate(over="ignore"):  # delta > 709: a vacuous bound, inf
        A = np.expm1(delta) * (1 + e) + e + q * eta
        total = A + gamma(q, u) * (1 + A)
    return round_up_array(total * (1 + gamma(8, UNIT_ROUNDOFF["float64"])))


def _difference(a: np.ndarray, b: np.ndarray, axis: int, names: str) -> np.ndarray:
    """``a - b`` for two arrays over the same vocabulary along ``axis`` (batch axes broadcast)."""
    try:
        size_a = a.shape[axis] if a.ndim else None
        size_b = b.shape[axis] if b.ndim else None
    except IndexError as exc:
        raise InvalidParameterError(
            f"axis {axis} is out of range for {names} of shapes {a.shape} and {b.shape}"
        ) from exc
    if size_a is None or size_b is None or size_a != size_b:
        raise InvalidParameterError(
            f"{names} must have the same vocabulary size along axis {axis}, got shapes "
            f"{a.shape} and {b.shape} (a length-1 axis is not broadcast over the vocabulary)"
        )
    try:
        return a - b
    except ValueError as exc:
        raise InvalidParameterError(
            f"{names} must broadcast together, got shapes {a.shape} and {b.shape}"
        ) from exc


__all__ = [
    "hilbert_distance",
    "hilbert_distance_upper",
    "tv_distance",
    "tv_rounding_bound",
]
