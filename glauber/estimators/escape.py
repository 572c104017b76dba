"""Exact one-step escape probabilities ``P_tau(x, B^c)`` from a basin (Theorem 8, conductance).

For a state ``x`` and a basin ``B`` (a predicate on states),

    P_tau(x, B^c) = (1/n) sum_i sum_{a : x^{i->a} not in B} p_tau(a | x_{-i}),

exact given ``x``: one conditional per site, all states and sites in one batched pass. Averaged
under ``mu_tau(. | B)`` it is the conductance ``Phi_tau(B)`` of Theorem 8 (pass the stationary
weights of the basin states as ``weights`` for the exact value on a toy chain).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from glauber.core.arrays import JsonResult, is_torch, like, logsumexp, namespace, to_numpy
from glauber.core.conditionals import host_states, iter_log_conditionals
from glauber.core.protocol import ConditionalModel
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import BasinError, InvalidParameterError

#: A basin: ``basin(states[B, n]) -> bool[B]`` (True for states inside).
Basin = Callable[[np.ndarray], Any]


def basin_states(model: ConditionalModel, states: Any, basin: Basin) -> np.ndarray:
    """Check ``states`` and that every one lies in ``basin``; return them as host int64 ``[S, n]``.

    Raises
    ------
    BasinError
        If ``states`` is empty or a state lies outside the basin.
    InvalidParameterError
        If ``basin`` does not return one boolean per state.
    SequenceLengthError, VocabularyError
        On malformed states.
    """
    xs = host_states(model, states)
    if xs.shape[0] == 0:
        raise BasinError("the basin is empty: pass at least one state that lies in the basin")
    inside = evaluate_basin(basin, xs)
    if not inside.all():
        raise BasinError(
            f"{int((~inside).sum())} of {len(inside)} states lie outside the basin (first: "
            f"{xs[np.flatnonzero(~inside)[0]].tolist()}); pass only basin states, e.g. "
            "states[basin(states)]"
        )
    return xs


def evaluate_basin(basin: Basin, states: np.ndarray) -> np.ndarray:
    """``basin(states)`` as a numpy bool ``[B]``.

    Raises
    ------
    InvalidParameterError
        If the predicate does not return one boolean per state.
    """
    out = to_numpy(basin(states))
    if out.shape != (states.shape[0],) or not (
        out.dtype == bool or np.isin(out, (0, 1)).all()
    ):
        raise InvalidParameterError(
            f"basin must map states [B, n] to a boolean array [B]; for {states.shape[0]} states "
            f"it returned shape {out.shape}, dtype {out.dtype}"
        )
    return out.astype(bool)


def exit_mask(
    model: ConditionalModel, states: np.ndarray, basin: Basin, batch_size: int = 65536
) -> np.ndarray:
    """``M[s, i, a]``: True iff ``a != x_i`` and ``x^{i->a}`` (state ``s``, site ``i``) leaves B.

    The ``S n q`` neighbours are built and tested in chunks of ``batch_size`` states.
    """
    s_count, n = states.shape
    q = model.q
    total = s_count * n * q
    mask = np.zeros(total, dtype=bool)
    for lo in range(0, total, batch_size):
        f = np.arange(lo, min(lo + batch_size, total))
        s, rest = np.divmod(f, n * q)
        i, a = np.divmod(rest, q)
        nb = states[s]
        nb[np.arange(len(f)), i] = a
        mask[lo : lo + len(f)] = ~evaluate_basin(basin, nb)
    mask = mask.reshape(s_count, n, q)
    mask[np.arange(s_count)[:, None], np.arange(n)[None, :], states] = False
    return mask


@dataclass(frozen=True)
class EscapeResult(JsonResult):
    """Result of :func:`escape_probability`.

    Attributes
    ----------
    per_state : ndarray, shape (S,)
        ``P_tau(x, B^c)`` for each state (exact given the state).
    per_site : ndarray, shape (S, n)
        Conditional exit mass of each site (``per_state`` is its mean over sites).
    mean : float
        Average over states, weighted by ``weights`` when given: with ``weights`` = the
        stationary law on the basin states, this is the conductance ``Phi_tau(B)`` exactly.
    max, min : float
    exit_sites : ndarray of int, shape (S,)
        Number of exit-causing sites of each state.
    weighted : bool
    tau : float
    log_per_state : ndarray, shape (S,)
        ``log P_tau(x, B^c)``, formed in log space: finite for every state with an exit-causing
        site and positive conditionals, also where ``per_state`` underflows to 0 (use it for
        any bound or claim about tiny escape probabilities; ``-inf`` only without exits).
    """

    per_state: np.ndarray
    per_site: np.ndarray
    mean: float
    max: float
    min: float
    exit_sites: np.ndarray
    weighted: bool
    tau: float
    log_per_state: np.ndarray


def escape_probability(
    model: ConditionalModel,
    states: Any,
    basin: Basin,
    tau: float,
    weights: Any = None,
    batch_size: int = 4096,
) -> EscapeResult:
    """One-step escape probabilities ``P_tau(x, B^c)`` of basin states (Theorem 8's left side).

    Parameters
    ----------
    model : ConditionalModel
    states : array of int, shape (S, n)
        States of the basin (every one must satisfy ``basin``).
    basin : callable
        ``basin(states[B, n]) -> bool[B]``.
    tau : float
        Temperature > 0.
    weights : array of float, shape (S,), optional
        Non-negative weights for the average (normalised here), e.g. ``mu_tau`` on the states.
    batch_size : int
        Most rows per :meth:`scores` call (``S n`` rows in all).

    Returns
    -------
    EscapeResult

    Raises
    ------
    BasinError
        If no states are given or one lies outside the basin.
    InvalidParameterError
        If ``weights`` are malformed or the basin predicate misbehaves.
    InvalidTemperatureError, SequenceLengthError, VocabularyError
        On a bad temperature or bad states.
    """
    tau = check_tau(tau)
    batch_size = check_positive_int(batch_size, "batch_size")
    xs = basin_states(model, states, basin)
    w = _weights(weights, xs.shape[0])
    mask = exit_mask(model, xs, basin)
    per_site, log_per_site = _exit_mass(model, xs, mask, tau, batch_size)
    per_state = per_site.mean(axis=1)
    log_per_state = logsumexp(log_per_site, axis=1) - np.log(xs.shape[1])
    return EscapeResult(
        per_state=per_state,
        per_site=per_site,
        mean=float(per_state.mean() if w is None else per_state @ w),
        max=float(per_state.max()),
        min=float(per_state.min()),
        exit_sites=mask.any(axis=2).sum(axis=1),
        weighted=w is not None,
        tau=tau,
        log_per_state=log_per_state,
    )


def exit_mass(
    model: ConditionalModel, xs: np.ndarray, mask: np.ndarray, tau: float, batch_size: int
) -> np.ndarray:
    """``sum_a mask[s, i, a] p_tau(a | x_{-i})`` for every state and site: ``[S, n]``."""
    return _exit_mass(model, xs, mask, tau, batch_size)[0]


def _exit_mass(
    model: ConditionalModel, xs: np.ndarray, mask: np.ndarray, tau: float, batch_size: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`exit_mass` and its logarithm (a masked log-sum-exp: no underflow), ``[S, n]``."""
    s_count, n = xs.shape
    flat_states = np.repeat(xs, n, axis=0)
    flat_sites = np.tile(np.arange(n), s_count)
    flat_mask = mask.reshape(s_count * n, model.q)
    out = np.empty(s_count * n)
    log_out = np.empty(s_count * n)
    for lo, hi, lp in iter_log_conditionals(
        model,
        s_count * n,
        lambda lo, hi: (flat_states[lo:hi], flat_sites[lo:hi]),
        tau,
        batch_size,
    ):
        xp = namespace(lp)
        m = like(lp, flat_mask[lo:hi], dtype="bool")
        out[lo:hi] = to_numpy(xp.sum(xp.where(m, xp.exp(lp), 0.0), axis=-1))
        masked = xp.where(m, lp, -float("inf"))
        log_out[lo:hi] = (
            to_numpy(xp.logsumexp(masked, dim=-1)) if is_torch(lp) else logsumexp(masked, -1)
        )
    return out.reshape(s_count, n), log_out.reshape(s_count, n)


def _weights(weights: Any, s_count: int) -> np.ndarray | None:
    if weights is None:
        return None
    w = np.asarray(to_numpy(weights), dtype=np.float64)
    if w.shape != (s_count,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise InvalidParameterError(
            f"weights must be {s_count} finite non-negative numbers with a positive sum, got "
            f"shape {w.shape}"
        )
    return w / w.sum()


__all__ = [
    "Basin",
    "basin_states",
    "escape_probability",
    "EscapeResult",
    "evaluate_basin",
    "exit_mask",
    "exit_mass",
]
