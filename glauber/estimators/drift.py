"""One-step drift of a token count (paper §5.4) and the band certificate (corrected §5.4).

For a token ``t`` and the count ``X(x) = #{i : x_i = t}``, the expected one-step change under the
Glauber kernel is exact given the state:

    delta_tau(x) = (1/n) [ sum_{i: x_i != t} p_tau(t | x_{-i})
                           - sum_{i: x_i = t} (1 - p_tau(t | x_{-i})) ]
                 = (1/n) sum_i ( p_tau(t | x_{-i}) - 1{x_i = t} ).

As printed, §5.4 checks ``delta_tau > 0`` at sampled *boundary* states and concludes exponentially
slow escape; that does not follow (docs/theory.md, `drift-band`). The corrected certificate
(:func:`glauber.theory.drift.band_drift_escape_bound`) needs ``delta_tau >= eps > 0`` at EVERY state
with ``a < X < b``: ``P(escape below a within T steps | X_0 >= b) <= T exp(-2 eps (b - a - 1))``.
From a sample of band states the minimum drift is an estimate of ``eps`` (an upper bound on the
true minimum), so the certificate is rigorous only when ``states`` holds every band state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from glauber.core.arrays import JsonResult, to_numpy
from glauber.core.conditionals import host_states, iter_log_conditionals
from glauber.core.protocol import ConditionalModel
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import InvalidParameterError, VocabularyError
from glauber.theory.drift import (
    BandDriftBound,
    band_drift_escape_bound,
    boundary_drift_as_printed,
)


@dataclass(frozen=True)
class DriftResult(JsonResult):
    """Result of :func:`drift`.

    Attributes
    ----------
    token : int
        The counted token (vocabulary index).
    tau : float
    per_state : ndarray, shape (S,)
        ``delta_tau(x)``: the exact expected one-step change of the count.
    counts : ndarray of int, shape (S,)
        ``X(x)`` per state.
    min, median, mean : float
    all_positive : bool
        The paper's §5.4 criterion as printed (every given state has positive drift); when the
        states are boundary samples this is the printed check, which proves nothing by itself.
    band : tuple of float or None
        ``(a, b)`` when a band was given.
    n_in_band : int
        States with ``a < X < b``.
    band_min_drift : float or None
        Smallest drift over those states (the ``eps`` of the certificate).
    band_states_complete : bool
        The caller declared that ``states`` holds every state of the band (then the certificate
        is rigorous; otherwise it is an estimate).
    certificate : BandDriftBound or None
        ``band_drift_escape_bound(band_min_drift, a, b, T)``; ``None`` when the band drift is not
        positive (no certificate).
    vacuous : bool or None
        ``certificate.bound >= 1``, or True when there is no certificate; ``None`` without a band.
    rigorous : bool
        A non-vacuous certificate on a complete band.
    """

    token: int
    tau: float
    per_state: np.ndarray
    counts: np.ndarray
    min: float
    median: float
    mean: float
    all_positive: bool
    band: tuple[float, float] | None
    n_in_band: int
    band_min_drift: float | None
    band_states_complete: bool
    certificate: BandDriftBound | None
    vacuous: bool | None
    rigorous: bool


def drift(
    model: ConditionalModel,
    states: Any,
    statistic_token: int,
    tau: float,
    band: tuple[float, float] | None = None,
    T: int | None = None,
    band_states_complete: bool = False,
    batch_size: int = 4096,
) -> DriftResult:
    """Exact one-step drift of the count of ``statistic_token`` at each state (paper §5.4).

    Parameters
    ----------
    model : ConditionalModel
    states : array of int, shape (S, n)
        States to evaluate (e.g. boundary samples, or every state of a band on a toy).
    statistic_token : int
        Vocabulary index ``t`` of the counted token.
    tau : float
        Temperature > 0.
    band : (a, b), optional
        Count band of the corrected certificate, ``a < b``.
    T : int, optional
        Time horizon of the certificate (required with ``band``).
    band_states_complete : bool
        Declare that ``states`` contains every state with ``a < X < b``.
    batch_size : int
        Most rows per :meth:`scores` call (``S n`` rows in all).

    Returns
    -------
    DriftResult

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.
    VocabularyError
        If ``statistic_token`` is not in ``0..q-1``, or states are malformed.
    InvalidParameterError
        If ``states`` is empty, ``band`` is given without ``T`` (or is malformed), or no state
        lies strictly inside the band.
    """
    tau = check_tau(tau)
    batch_size = check_positive_int(batch_size, "batch_size")
    if (
        isinstance(statistic_token, bool)
        or not isinstance(statistic_token, (int, np.integer))
        or not 0 <= statistic_token < model.q
    ):
        raise VocabularyError(
            f"statistic_token must be a vocabulary index in 0..{model.q - 1}, got "
            f"{statistic_token!r} (use the backend's encoding of the token)"
        )
    t = int(statistic_token)
    xs = host_states(model, states)
    if xs.shape[0] == 0:
        raise InvalidParameterError("states is empty; pass at least one state [1, n]")
    s_count, n = xs.shape
    flat_states = np.repeat(xs, n, axis=0)
    flat_sites = np.tile(np.arange(n), s_count)
    p_t = np.empty(s_count * n)
    for lo, hi, lp in iter_log_conditionals(
        model, s_count * n, lambda lo, hi: (flat_states[lo:hi], flat_sites[lo:hi]), tau, batch_size
    ):
        p_t[lo:hi] = np.exp(to_numpy(lp[:, t]).astype(np.float64))
    per_state = (p_t.reshape(s_count, n) - (xs == t)).mean(axis=1)
    counts = (xs == t).sum(axis=1)

    band_t: tuple[float, float] | None = None
    n_in = 0
    eps_band = cert = vacuous = None
    if band is not None:
        a, b = _band(band)
        band_t = (a, b)
        if T is None:
            raise InvalidParameterError("band needs a time horizon T (steps), e.g. T=10_000")
        inside = (counts > a) & (counts < b)
        n_in = int(inside.sum())
        if n_in == 0:
            raise InvalidParameterError(
                f"no state has a count strictly between a = {a} and b = {b}; pass states from "
                "inside the band"
            )
        eps_band = float(per_state[inside].min())
        cert = band_drift_escape_bound(min(eps_band, 1.0), a, b, T) if eps_band > 0 else None
        vacuous = cert is None or cert.vacuous
    return DriftResult(
        token=t,
        tau=tau,
        per_state=per_state,
        counts=counts,
        min=float(per_state.min()),
        median=float(np.median(per_state)),
        mean=float(per_state.mean()),
        all_positive=boundary_drift_as_printed(per_state),
        band=band_t,
        n_in_band=n_in,
        band_min_drift=eps_band,
        band_states_complete=bool(band_states_complete),
        certificate=cert,
        vacuous=vacuous,
        rigorous=bool(band_states_complete and vacuous is False),
    )


def _band(band: tuple[float, float]) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in band)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"band must be a pair (a, b) of numbers, got {band!r}") from exc
    if not (np.isfinite(a) and np.isfinite(b) and a < b):
        raise InvalidParameterError(f"band must satisfy a < b (finite), got {band!r}")
    return a, b


__all__ = [
    "drift",
    "DriftResult",
]
