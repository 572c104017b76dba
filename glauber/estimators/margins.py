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

from glauber.core.arrays import (
    JsonResult,
    like,
    log_softmax,
    namespace,
    take_rows,
    to_numpy,
)
from glauber.core.conditionals import host_states, iter_log_conditionals
from glauber.core.protocol import ConditionalModel
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import InvalidParameterError
from glauber.estimators.escape import Basin, basin_states, exit_mask
from glauber.theory.escape import (
    BasinMargins,
    basin_margins,
    sharper_escape_bound,
    theorem8_escape_bound,
    theorem8_tmix_lower_bound,
)


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
    escape : ndarray or None, shape (S,)
        With ``tau``: the exact one-step probability ``P_tau(x, {x}^c)`` of leaving each state
        (summed over the moves, never formed as ``1 - P(x, x)``).
    basin : BasinMargins or None
        Present when a basin was given (Assumption 1 over the given states).
    basin_escape : ndarray or None, shape (S,)
        With a basin and ``tau``: the exact ``P_tau(x, B^c)`` of each state (the left side of
        Theorem 8, as :func:`escape_probability` computes it).
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
    escape: np.ndarray | None
    basin: BasinMargins | None
    basin_escape: np.ndarray | None

    @property
    def best_trap(self) -> int | None:
        """Index of the perfect trap with the largest margin, or None without a perfect trap."""
        if not self.n_perfect:
            return None
        return int(np.argmax(np.where(self.perfect, self.state_min, -np.inf)))


def margins(
    model: ConditionalModel,
    states: Any,
    tau: float | None = None,
    basin: Basin | None = None,
    batch_size: int = 4096,
    basin_complete: bool = False,
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
    basin_complete : bool
        ``states`` are every state of the basin (e.g. enumerated on a toy), so Assumption 1 is
        decided exactly (``BasinMargins.complete``).

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
    marg, exit_marg, leave, exits = _site_margins(model, xs, mask, tau, batch_size)
    state_min = marg.min(axis=1)
    perfect = state_min > 0
    basin_result = None
    if mask is not None:
        basin_result = basin_margins(
            exit_marg, marg, mask.sum(axis=2), model.q, tau=tau, complete=basin_complete
        )
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
        escape=None if leave is None else leave.mean(axis=1),
        basin=basin_result,
        basin_escape=None if exits is None else exits.mean(axis=1),
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
    model: ConditionalModel,
    xs: np.ndarray,
    mask: np.ndarray | None,
    tau: float | None,
    batch_size: int,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """Per (state, site): the margin over all other tokens, over exit-causing tokens (``inf``
    where none) and, at ``tau``, the probability of leaving the token and of leaving the basin.

    One pass of log-conditionals at ``tau = 1``; ``log_softmax(lp / tau)`` of a log-softmax
    ``lp`` is the log-conditional at ``tau`` (the normaliser is a constant in ``a``).
    """
    s_count, n = xs.shape
    rows = s_count * n
    flat_states = np.repeat(xs, n, axis=0)
    flat_sites = np.tile(np.arange(n), s_count)
    own = xs.reshape(-1)
    marg = np.empty(rows)
    exit_marg = np.empty(rows) if mask is not None else None
    leave = np.empty(rows) if tau is not None else None
    exits = np.empty(rows) if tau is not None and mask is not None else None
    flat_mask = mask.reshape(rows, model.q) if mask is not None else None
    cols = None
    for lo, hi, lp in iter_log_conditionals(
        model, rows, lambda lo, hi: (flat_states[lo:hi], flat_sites[lo:hi]), 1.0, batch_size
    ):
        xp = namespace(lp)
        cols = like(lp, np.arange(model.q)) if cols is None else cols
        cur = take_rows(lp, own[lo:hi])
        others = cols[None, :] != like(lp, own[lo:hi])[:, None]  # built on the model's device
        marg[lo:hi] = to_numpy(cur - xp.amax(xp.where(others, lp, -math.inf), axis=-1))
        m = None if flat_mask is None else like(lp, flat_mask[lo:hi], dtype="bool")
        if m is not None:
            exit_marg[lo:hi] = to_numpy(cur - xp.amax(xp.where(m, lp, -math.inf), axis=-1))
        if tau is not None:
            p = xp.exp(log_softmax(lp / tau))
            leave[lo:hi] = to_numpy(xp.sum(xp.where(others, p, 0.0), axis=-1))
            if m is not None:
                exits[lo:hi] = to_numpy(xp.sum(xp.where(m, p, 0.0), axis=-1))

    def shaped(a: np.ndarray | None) -> np.ndarray | None:
        return None if a is None else a.reshape(s_count, n)

    return marg.reshape(s_count, n), shaped(exit_marg), shaped(leave), shaped(exits)


__all__ = [
    "margins",
    "MarginsResult",
]
