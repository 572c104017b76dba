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

Margins are differences of two computed log-probabilities, so each carries a rounding error
(:func:`glauber.theory.rectangle.log_ratio_rounding_bound`, with the model's precision and the
assumed accuracy of its scores, as in the rectangle test). Theorem 8's bounds are evaluated at the
*lower* margins ``margin - error``: a margin that rounding could have made positive certifies
nothing, and a bound is never computed from a margin larger than the true one.
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
from glauber.core.conditionals import host_states, iter_scaled_log_conditionals
from glauber.core.protocol import ConditionalModel
from glauber.core.validation import (
    check_nonnegative_float,
    check_positive_int,
    check_tau,
)
from glauber.errors import InvalidParameterError
from glauber.estimators.escape import Basin, basin_states, exit_mask
from glauber.estimators.precision import DEFAULT_SCORE_ERROR_ULPS, model_precision
from glauber.theory.escape import (
    BasinMargins,
    basin_margins,
    sharper_escape_bound,
    theorem8_escape_bound,
    theorem8_tmix_lower_bound,
)
from glauber.theory.floating import RoundingFormats, coarsest
from glauber.theory.rectangle import log_ratio_rounding_bound


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
        With ``tau``: Theorem 8 for each trap ``x`` taken as the one-state basin ``{x}`` (every
        site and token is exit-causing, ``Delta_star = state_min_lower``):
        ``|V| e^{-Delta_star/tau}``, ``(|V| - 1) e^{-Delta_star/tau}`` and
        ``e^{Delta_star/tau} / (4|V|)`` (the paper's Appendix A.1 use); NaN (``None`` in JSON)
        where ``state_min_lower <= 0`` (an approximate trap, or one only rounding makes perfect).
    escape : ndarray or None, shape (S,)
        With ``tau``: the exact one-step probability ``P_tau(x, {x}^c)`` of leaving each state
        (summed over the moves, never formed as ``1 - P(x, x)``).
    basin : BasinMargins or None
        Present when a basin was given (Assumption 1 over the given states).
    basin_escape : ndarray or None, shape (S,)
        With a basin and ``tau``: the exact ``P_tau(x, B^c)`` of each state (the left side of
        Theorem 8, as :func:`escape_probability` computes it).
    margin_error : ndarray, shape (S, n)
        Rounding bound of each margin.
    state_min_lower : ndarray, shape (S,)
        Per state: ``min_i (margin - margin_error)``, the margin Theorem 8 is evaluated at.
    precision : str
        The model's compute precision used in the rounding bounds.
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
    margin_error: np.ndarray
    state_min_lower: np.ndarray
    precision: str

    @property
    def best_trap(self) -> int | None:
        """Index of the trap with the largest margin that rounding cannot undo
        (``state_min_lower > 0``), or None without one."""
        if not (self.state_min_lower > 0).any():
            return None
        return int(np.argmax(np.where(self.state_min_lower > 0, self.state_min_lower, -np.inf)))


def margins(
    model: ConditionalModel,
    states: Any,
    tau: float | None = None,
    basin: Basin | None = None,
    batch_size: int = 4096,
    basin_complete: bool = False,
    score_error_ulps: float = DEFAULT_SCORE_ERROR_ULPS,
    precision: Any = None,
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
    score_error_ulps : float, optional
        Assumed accuracy of the scores (see :func:`glauber.estimators.rectangle.rectangle_test`).
    precision : dtype or str, optional
        The model's compute precision (default: from the scores and the model's attributes).

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
    score_error_ulps = check_nonnegative_float(score_error_ulps, "score_error_ulps")
    mask = exit_mask(model, xs, basin) if basin is not None else None
    sm = _site_margins(model, xs, mask, tau, batch_size, score_error_ulps, precision)
    marg, exit_marg = sm.margins, sm.exit_margins
    state_min = marg.min(axis=1)
    state_min_lower = (marg - sm.errors).min(axis=1)
    perfect = state_min > 0
    basin_result = None
    if mask is not None:
        basin_result = basin_margins(
            exit_marg, marg, mask.sum(axis=2), model.q, tau=tau, complete=basin_complete,
            exit_margin_error=sm.exit_errors, site_gap_error=sm.errors,
        )
    traps = _trap_bounds(model, state_min_lower, tau) if tau is not None else (None, None, None)
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
        escape=None if sm.leave is None else sm.leave.mean(axis=1),
        basin=basin_result,
        basin_escape=None if sm.exits is None else sm.exits.mean(axis=1),
        margin_error=sm.errors,
        state_min_lower=state_min_lower,
        precision=sm.precision,
    )


def _trap_bounds(
    model: ConditionalModel, state_min: np.ndarray, tau: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Theorem 8 for each trap with a positive lower margin as a one-state basin (else NaN)."""
    out = np.full((3, len(state_min)), np.nan)
    for s in np.flatnonzero(state_min > 0):
        d = float(state_min[s])
        out[0, s] = theorem8_escape_bound(model.q, d, tau)
        out[1, s] = sharper_escape_bound(model.n, model.n, model.q, d, tau)
        out[2, s] = theorem8_tmix_lower_bound(model.q, d, tau)
    return out[0], out[1], out[2]


@dataclass(frozen=True)
class _SiteMargins:
    margins: np.ndarray  # [S, n]
    exit_margins: np.ndarray | None  # [S, n], inf where no exit-causing token
    errors: np.ndarray  # [S, n] rounding bound of margins
    exit_errors: np.ndarray | None  # [S, n] rounding bound of exit_margins (0 where inf)
    precision: str
    leave: np.ndarray | None  # [S, n] at tau: P(token of site i changes | site i picked)
    exits: np.ndarray | None  # [S, n] at tau: P(x^{i->a} leaves the basin | site i picked)


def _site_margins(
    model: ConditionalModel,
    xs: np.ndarray,
    mask: np.ndarray | None,
    tau: float | None,
    batch_size: int,
    score_error_ulps: float,
    precision: Any,
) -> _SiteMargins:
    """Margins over all other tokens and over exit-causing tokens, with their rounding bounds,
    and at ``tau`` the probabilities of leaving the token and of leaving the basin.

    One pass of log-conditionals at ``tau = 1``; ``log_softmax(lp / tau)`` of a log-softmax
    ``lp`` is the log-conditional at ``tau`` (the normaliser is a constant in ``a``).
    """
    s_count, n = xs.shape
    rows = s_count * n
    flat_states = np.repeat(xs, n, axis=0)
    flat_sites = np.tile(np.arange(n), s_count)
    own = xs.reshape(-1)
    flat_mask = mask.reshape(rows, model.q) if mask is not None else None
    cur_lp, best_lp, exit_lp, scale = (np.empty(rows) for _ in range(4))
    leave = np.empty(rows) if tau is not None else None
    exits = np.empty(rows) if tau is not None and mask is not None else None
    score_dtypes, work_dtypes = [], []
    cols = None
    for lo, hi, lp, row_scale, score_dtype in iter_scaled_log_conditionals(
        model, rows, lambda lo, hi: (flat_states[lo:hi], flat_sites[lo:hi]), 1.0, batch_size
    ):
        xp = namespace(lp)
        cols = like(lp, np.arange(model.q)) if cols is None else cols
        cur = take_rows(lp, own[lo:hi])
        others = cols[None, :] != like(lp, own[lo:hi])[:, None]  # built on the model's device
        cur_lp[lo:hi] = to_numpy(cur)
        best_lp[lo:hi] = to_numpy(xp.amax(xp.where(others, lp, -math.inf), axis=-1))
        m = None if flat_mask is None else like(lp, flat_mask[lo:hi], dtype="bool")
        if m is not None:
            exit_lp[lo:hi] = to_numpy(xp.amax(xp.where(m, lp, -math.inf), axis=-1))
        if tau is not None:
            p = xp.exp(log_softmax(lp / tau))
            leave[lo:hi] = to_numpy(xp.sum(xp.where(others, p, 0.0), axis=-1))
            if m is not None:
                exits[lo:hi] = to_numpy(xp.sum(xp.where(m, p, 0.0), axis=-1))
        scale[lo:hi] = row_scale
        score_dtypes.append(score_dtype)
        work_dtypes.append(str(lp.dtype).removeprefix("torch."))
    score_dtype = coarsest(*score_dtypes)
    model_dtype = model_precision(model, score_dtype, precision)
    formats = RoundingFormats(score_dtype, coarsest(*work_dtypes), model_dtype, score_error_ulps)

    def bounded(best: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # the subtraction is done in the working format (float32 for MLMs): one more rounding
        margin = cur_lp - best
        finite = np.isfinite(best)
        err = np.zeros(rows)
        err[finite] = log_ratio_rounding_bound(
            cur_lp[finite], best[finite], scale[finite], 1.0, formats
        ) + formats.u_w * np.abs(margin[finite])
        return margin.reshape(s_count, n), err.reshape(s_count, n)

    marg, err = bounded(best_lp)
    exit_marg, exit_err = bounded(exit_lp) if flat_mask is not None else (None, None)
    def shaped(a: np.ndarray | None) -> np.ndarray | None:
        return None if a is None else a.reshape(s_count, n)

    return _SiteMargins(marg, exit_marg, err, exit_err, model_dtype, shaped(leave), shaped(exits))


__all__ = [
    "margins",
    "MarginsResult",
]
