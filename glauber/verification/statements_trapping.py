"""Checkers of Theorem 8 (escape, conductance, t_mix lower bound), LPW Theorem 7.4 (the bottleneck
bound) and Section 5.4 (the boundary drift as printed, refuted; the band certificate), evaluated
exactly on one toy instance (docs/theory.md).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from glauber.core.claims import Claim
from glauber.exact.basins import (
    NamedMask,
    conductance,
    escape_probabilities,
    hitting_probability_within,
)
from glauber.theory import drift, escape
from glauber.toy_models.counterexamples import DRIFT_HORIZON_PER_SITE
from glauber.verification.instances import ChainInstance, Instance, LumpedInstance
from glauber.verification.statement_checks import (
    ATOL,
    EPS,
    distance_points,
    finite_or_none,
    label_of,
    lower,
    mixing_time_of,
    not_evaluated,
    tolerance,
    upper,
)


def _margins(inst: Instance, basin: NamedMask) -> tuple[float, int, bool]:
    """``(Delta_star, k, Assumption 1 holds)`` for a basin (closed form on lumped chains)."""
    if isinstance(inst, LumpedInstance):
        b = basin.count.threshold  # exits only from level b: its b token sites, q - 1 tokens each
        delta_star = float(inst.chain.score_gap[b - 1])
        return delta_star, b, delta_star > 0.0
    m = inst.chain.margins(basin.mask)
    return m.delta_star, m.k, bool(m.holds and math.isfinite(m.delta_star))


def _escape_rows(inst: Instance, basin: NamedMask) -> np.ndarray:
    return escape_probabilities(inst.chain.transition_matrix(), basin.mask)


def _conductance(inst: Instance, mask: np.ndarray) -> float:
    return conductance(inst.chain.transition_matrix(), inst.chain.stationary(), mask)


def basin_checks(
    inst: Instance, one: Callable[[NamedMask, float, int, str], Claim]
) -> list[Claim]:
    out = []
    for basin in inst.basins:
        label = label_of(inst, basin)
        delta_star, k, holds = _margins(inst, basin)
        if not holds:
            out.append(not_evaluated(label, delta_star=finite_or_none(delta_star)))
            continue
        out.append(one(basin, delta_star, k, label))
    return out


def check_thm8_escape(inst: Instance) -> list[Claim]:
    """Theorem 8: ``P(x, B^c) <= |V| e^{-Delta_star/tau}`` on ``B``, and the sharper form."""
    q, n = inst.chain.q, inst.chain.n

    def one(basin: NamedMask, delta_star: float, k: int, label: str) -> Claim:
        exact = float(_escape_rows(inst, basin).max())
        bound = escape.theorem8_escape_bound(q, delta_star, inst.tau)
        sharper = escape.sharper_escape_bound(n, k, q, delta_star, inst.tau)
        return upper(label, True, bound, exact, ok=exact <= sharper + tolerance(sharper, exact),
                     delta_star=delta_star, k=k, sharper_bound=sharper)

    return basin_checks(inst, one)


def check_thm8_conductance(inst: Instance) -> list[Claim]:
    """Theorem 8: ``Phi(B) <= |V| e^{-Delta_star/tau}``."""
    q = inst.chain.q

    def one(basin: NamedMask, delta_star: float, k: int, label: str) -> Claim:
        exact = _conductance(inst, basin.mask)
        bound = escape.theorem8_escape_bound(q, delta_star, inst.tau)
        return upper(label, True, bound, exact, delta_star=delta_star)

    return basin_checks(inst, one)


def check_thm8_tmix(inst: Instance) -> list[Claim]:
    """Theorem 8: ``mu(B) <= 1/2`` gives ``t_mix(1/4) >= e^{Delta_star/tau} / (4 |V|)``."""
    q = inst.chain.q
    pi = inst.chain.stationary()

    def one(basin: NamedMask, delta_star: float, k: int, label: str) -> Claim:
        mass = float(pi[basin.mask].sum())
        if mass > 0.5 * (1.0 + 1e-12):
            return not_evaluated(label, delta_star=delta_star, mu_B=mass)
        bound = escape.theorem8_tmix_lower_bound(q, delta_star, inst.tau)
        lumped = isinstance(inst, LumpedInstance)
        return lower(label, True, bound, mixing_time_of(inst), delta_star=delta_star, mu_B=mass,
                     tmix_is_lumped_lower_bound=lumped)

    return basin_checks(inst, one)


def check_lpw74(inst: Instance) -> list[Claim]:
    """LPW Theorem 7.4 (no reversibility): ``d(t) >= 1 - pi(A) - t Phi(A)`` and its ``t_mix`` form.

    Sets: the instance's basins and, on chains of at most 16 states, the bottleneck set.
    """
    pi = inst.chain.stationary()
    sets = [(b.name, b.mask) for b in inst.basins]
    if isinstance(inst, ChainInstance) and inst.chain.num_states <= 16:
        sets.append(("bottleneck", inst.chain.bottleneck().mask))
    out = []
    for name, mask in sets:
        label = f"{inst.name} [{name}]"
        mass = float(pi[mask].sum())
        if not 0.0 < mass < 1.0:
            out.append(not_evaluated(label, pi_A=mass))
            continue
        phi = _conductance(inst, mask)
        t_mix = mixing_time_of(inst)
        bound = escape.bottleneck_tmix_lower_bound(mass, phi, EPS)
        curve_ok = all(
            d >= escape.bottleneck_distance_lower_bound(t, mass, phi) - ATOL
            for t, d in distance_points(inst).items()
        )
        out.append(lower(label, mass <= 0.5 * (1.0 + 1e-12), bound, t_mix, ok=curve_ok,
                         pi_A=mass, phi_A=phi))
    return out


# ---------------------------------------------------------------------------- Section 5.4


def _count_data(inst: Instance, basin: NamedMask) -> tuple[np.ndarray, np.ndarray]:
    """``(X, drift)`` per state (per level on a lumped chain) for the basin's token."""
    if isinstance(inst, LumpedInstance):
        return inst.chain.levels(), inst.chain.drift()
    token = basin.count.token
    held = inst.chain.states() == token
    p = inst.chain.conditionals()[:, :, token].T  # [S, n]
    return held.sum(axis=1), (p - held).sum(axis=1) / inst.chain.n


def _count_basins(inst: Instance) -> list[NamedMask]:
    return [b for b in inst.basins if b.count is not None]


def _leave_probability(inst: Instance, basin: NamedMask, horizon: int) -> np.ndarray:
    """``P_x(X_t < b for some t <= horizon)`` for every state (level) ``x``."""
    counts, _ = _count_data(inst, basin)
    return hitting_probability_within(
        inst.chain.transition_matrix(), counts < basin.count.threshold, horizon
    )


def check_drift_printed(inst: Instance) -> list[Claim]:
    """Section 5.4 as printed: positive drift at the boundary level ``X = b`` => slow escape.

    The printed conclusion ("escape times exponential in N") is read quantitatively as in
    :mod:`glauber.toy_models.counterexamples`: started on the boundary, the chain stays in
    ``B = {X >= b}`` for ``T = 10 n`` steps with probability at least 1/2. Leniently, the
    boundary state that stays longest is used; the claim fails when even it leaves ``B`` within
    ``T`` with probability above 1/2.
    """
    out = []
    for basin in _count_basins(inst):
        label = label_of(inst, basin)
        counts, drifts = _count_data(inst, basin)
        on_boundary = counts == basin.count.threshold
        boundary = drifts[on_boundary]
        if not drift.boundary_drift_as_printed(boundary):
            out.append(not_evaluated(label, min_boundary_drift=float(boundary.min())))
            continue
        horizon = DRIFT_HORIZON_PER_SITE * inst.chain.n
        leave = float(_leave_probability(inst, basin, horizon)[on_boundary].min())
        details: dict[str, Any] = {"min_boundary_drift": float(boundary.min()),
                                   "b": basin.count.threshold, "T": horizon}
        if isinstance(inst, ChainInstance) and inst.counterexample is not None:
            details["counterexample"] = inst.counterexample.summary
        out.append(upper(label, True, 0.5, leave, **details))
    return out


def check_drift_band(inst: Instance) -> list[Claim]:
    """Corrected Section 5.4: drift ``>= eps > 0`` on ``a < X < b`` bounds escape below ``a``."""
    out = []
    for basin in _count_basins(inst):
        label = label_of(inst, basin)
        a, b, horizon = basin.count.band_low, basin.count.threshold, basin.count.horizon
        counts, drifts = _count_data(inst, basin)
        band = (counts > a) & (counts < b)
        eps = float(drifts[band].min()) if band.any() else -math.inf
        if not eps > 0.0:
            out.append(not_evaluated(label, band_min_drift=finite_or_none(eps), a=a, b=b))
            continue
        cert = drift.band_drift_escape_bound(min(eps, 1.0), a, b, horizon)
        hit = hitting_probability_within(inst.chain.transition_matrix(), counts <= a, horizon)
        exact = float(hit[counts >= b].max())
        out.append(upper(label, True, cert.bound, exact, eps=eps, a=a, b=b, T=horizon,
                         vacuous=cert.vacuous, exponent=cert.exponent))
    return out
