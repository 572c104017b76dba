"""Per-site score margins, traps, and Assumption 1 / Theorem 8 on a basin.

The paper's trap diagnostic (Appendix A.1): ``Delta_i(x) = s_i(x_i; x_{-i}) - max_{a != x_i} s_i(a;
x_{-i})`` at ``tau = 1``; a state is a *perfect* trap if every ``Delta_i(x) > 0`` (each token is the
model's strict argmax), an *approximate* one otherwise. ``Delta_star`` is the smallest margin.

With a basin ``B``, Assumption 1 only concerns *exit-causing* sites (some ``a`` has
``x^{i->a}`` outside ``B``) and exit-causing tokens: ``x_i`` must be an argmax and
``s_i(x_i) - s_i(a) >= Delta_star`` for every exit-causing ``a``. Then Theorem 8 gives
``P_tau(x, B^c) <= |V| e^{-Delta_star/tau}`` (and the sharper ``(k/n)(|V|-1) e^{-Delta_star/tau}``),
and ``t_mix(1/4) >= e^{Delta_star/tau} / (4|V|)`` if ``mu_tau(B) <= 1/2`` (true as printed; see
:mod:`glauber.theory.escape`). Over sampled basin states these are estimates; over every state of
the basin (a toy) they are exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from glauber.errors import InvalidParameterError
from glauber.core.arrays import JsonResult, like, namespace, take_rows, to_numpy
from glauber.core.conditionals import host_states, iter_log_conditionals
from glauber.estimators.escape import Basin, basin_states, exit_mask
from glauber.core.protocol import ConditionalModel
from glauber.theory.escape import (
    sharper_escape_bound,
    theorem8_escape_bound,
    theorem8_tmix_lower_bound,
)
from glauber.core.validation import check_positive_int, check_tau


@dataclass(frozen=True)
class BasinMargins(JsonResult):
    """Assumption 1 and Theorem 8 on the basin states of :func:`margins`.

    Attributes
    ----------
    exit_sites : ndarray of bool, shape (S, n)
        Exit-causing sites.
    exit_margin : ndarray, shape (S, n)
        ``s_i(x_i) - max over exit-causing a of s_i(a)``; ``inf`` (``"inf"`` in JSON) at sites
        that are not exit-causing.
    argmax_at_exit_sites : bool
        Every exit-causing site holds an argmax token (``Delta_i(x) >= 0`` there).
    delta_star : float
        Smallest exit margin (``inf`` if no state has an exit-causing site).
    k : int
        Largest number of exit-causing sites of a state.
    assumption1 : bool
        Assumption 1 holds on these states: ``delta_star > 0`` and the argmax condition.
    tau : float or None
    escape_bound, sharper_escape_bound, tmix_lower_bound : float or None
        Theorem 8's three bounds at ``tau`` (``None`` without ``tau`` or when Assumption 1
        fails). ``tmix_lower_bound`` further needs ``mu_tau(B) <= 1/2``, which a sample cannot
        check.
    """

    exit_sites: np.ndarray
    exit_margin: np.ndarray
    argmax_at_exit_sites: bool
    delta_star: float
    k: int
    assumption1: bool
    tau: float | None
    escape_bound: float | None
    sharper_escape_bound: float | None
    tmix_lower_bound: float | None


@dataclass(frozen=True)
class MarginsResult(JsonResult):
    """Result of :func:`margins`.

    Attributes
    ----------
    margins : ndarray, shape (S, n)
        ``Delta_i(x)`` at ``tau = 1``.
    state_min, state_mean : ndarray, shape (S,)
        Per state: the smallest margin (``Delta_star`` of the state) and the mean ``Delta-bar``.
    perfect : ndarray of bool, shape (S,)
        Every ``Delta_i(x) > 0`` (a perfect trap); False marks an approximate trap.
    n_perfect : int
    delta_star : float
        Smallest margin over all states and sites.
    tau : float or None
    trap_escape_bound, trap_sharper_escape_bound, trap_tmix_lower_bound : ndarray or None
        With ``tau``: Theorem 8 for each *perfect* trap ``x`` taken as the one-state basin
        ``{x}`` (every site and token is exit-causing, ``Delta_star = state_min``):
        ``|V| e^{-Delta_star/tau}``, ``(|V| - 1) e^{-Delta_star/tau}`` and
        ``e^{Delta_star/tau} / (4|V|)`` (the paper's Appendix A.1 use); NaN (``None`` in JSON)
        for approximate traps.
    basin : BasinMargins or None
        Present when a basin was given.
    """

    margins: np.ndarray
    state_min: np.ndarray
    state_mean: np.ndarray
    perfect: np.ndarray
    n_perfect: int
    delta_star: float
    tau: float | None
    trap_escape_bound: np.ndarray | None
    trap_sharper_escape_bound: np.ndarray | None
    trap_tmix_lower_bound: np.ndarray | None
    basin: BasinMargins | None


def margins(
    model: ConditionalModel,
    states: Any,
    tau: float | None = None,
    basin: Basin | None = None,
    batch_size: int = 4096,
) -> MarginsResult:
    """Per-site margins ``Delta_i(x)`` (Appendix A.1) and, with a basin, Assumption 1 / Theorem 8.

    Margins are differences of scores of one conditional, so they are read from the
    log-conditionals at ``tau = 1`` (the normaliser cancels): ``S n`` rows in one batched pass.

    Parameters
    ----------
    model : ConditionalModel
    states : array of int, shape (S, n)
        States to examine (with ``basin``, every one must lie in it).
    tau : float, optional
        Temperature at which to evaluate Theorem 8's bounds (for each perfect trap, and for the
        basin when one is given).
    basin : callable, optional
        ``basin(states[B, n]) -> bool[B]``.
    batch_size : int
        Most rows per :meth:`scores` call.

    Returns
    -------
    MarginsResult

    Raises
    ------
    BasinError
        With ``basin``: no states given, or a state outside the basin.
    InvalidParameterError
        If ``states`` is empty.
    InvalidTemperatureError, SequenceLengthError, VocabularyError
        On a bad temperature or bad states.
    """
    batch_size = check_positive_int(batch_size, "batch_size")
    if tau is not None:
        tau = check_tau(tau)
    if basin is not None:
        xs = basin_states(model, states, basin)
    else:
        xs = host_states(model, states)
        if xs.shape[0] == 0:
            raise InvalidParameterError("states is empty; pass at least one state [1, n]")
    mask = exit_mask(model, xs, basin) if basin is not None else None
    marg, exit_marg = _site_margins(model, xs, mask, batch_size)
    state_min = marg.min(axis=1)
    perfect = state_min > 0
    basin_result = None
    if mask is not None:
        basin_result = _basin_margins(model, marg, exit_marg, mask, tau)
    traps = _trap_bounds(model, state_min, tau) if tau is not None else (None, None, None)
    return MarginsResult(
        margins=marg,
        state_min=state_min,
        state_mean=marg.mean(axis=1),
        perfect=perfect,
        n_perfect=int(perfect.sum()),
        delta_star=float(state_min.min()),
        tau=tau,
        trap_escape_bound=traps[0],
        trap_sharper_escape_bound=traps[1],
        trap_tmix_lower_bound=traps[2],
        basin=basin_result,
    )


def _trap_bounds(
    model: ConditionalModel, state_min: np.ndarray, tau: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Theorem 8 for each perfect trap as a one-state basin (NaN for approximate traps)."""
    out = np.full((3, len(state_min)), np.nan)
    for s in np.flatnonzero(state_min > 0):
        d = float(state_min[s])
        out[0, s] = theorem8_escape_bound(model.q, d, tau)
        out[1, s] = sharper_escape_bound(model.n, model.n, model.q, d, tau)
        out[2, s] = theorem8_tmix_lower_bound(model.q, d, tau)
    return out[0], out[1], out[2]


def _site_margins(
    model: ConditionalModel, xs: np.ndarray, mask: np.ndarray | None, batch_size: int
) -> tuple[np.ndarray, np.ndarray | None]:
    """Margins over all other tokens, and over exit-causing tokens (``inf`` where none)."""
    s_count, n = xs.shape
    flat_states = np.repeat(xs, n, axis=0)
    flat_sites = np.tile(np.arange(n), s_count)
    own = xs.reshape(-1)
    marg = np.empty(s_count * n)
    exit_marg = np.empty(s_count * n) if mask is not None else None
    flat_mask = mask.reshape(s_count * n, model.q) if mask is not None else None
    cols = None
    for lo, hi, lp in iter_log_conditionals(
        model, s_count * n, lambda lo, hi: (flat_states[lo:hi], flat_sites[lo:hi]), 1.0, batch_size
    ):
        xp = namespace(lp)
        cols = like(lp, np.arange(model.q)) if cols is None else cols
        cur = take_rows(lp, own[lo:hi])
        others = cols[None, :] != like(lp, own[lo:hi])[:, None]  # built on the model's device
        marg[lo:hi] = to_numpy(cur - xp.amax(xp.where(others, lp, -math.inf), axis=-1))
        if flat_mask is not None:
            m = like(lp, flat_mask[lo:hi], dtype="bool")
            exit_marg[lo:hi] = to_numpy(cur - xp.amax(xp.where(m, lp, -math.inf), axis=-1))
    return marg.reshape(s_count, n), (
        exit_marg.reshape(s_count, n) if exit_marg is not None else None
    )


def _basin_margins(
    model: ConditionalModel,
    marg: np.ndarray,
    exit_marg: np.ndarray,
    mask: np.ndarray,
    tau: float | None,
) -> BasinMargins:
    exit_sites = mask.any(axis=2)
    argmax_ok = bool(np.all(marg[exit_sites] >= 0))
    delta_star = float(exit_marg.min())
    k = int(exit_sites.sum(axis=1).max())
    holds = argmax_ok and delta_star > 0
    esc = sharp = tmix = None
    if tau is not None and holds:
        if math.isinf(delta_star):  # no exit-causing move from any state: no escape in one step
            esc, sharp, tmix = 0.0, 0.0, math.inf
        else:
            esc = theorem8_escape_bound(model.q, delta_star, tau)
            sharp = sharper_escape_bound(model.n, k, model.q, delta_star, tau)
            tmix = theorem8_tmix_lower_bound(model.q, delta_star, tau)
    return BasinMargins(
        exit_sites=exit_sites,
        exit_margin=exit_marg,
        argmax_at_exit_sites=argmax_ok,
        delta_star=delta_star,
        k=k,
        assumption1=holds,
        tau=tau,
        escape_bound=esc,
        sharper_escape_bound=sharp,
        tmix_lower_bound=tmix,
    )
