"""Checkers of Definition 2, Lemma 6 and its tanh form, Corollary 7 and Theorem 5 (as printed,
refuted; corrected; its t_mix certificates), evaluated exactly on one toy instance
(docs/theory.md).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from glauber.core.claims import Claim
from glauber.exact.coupling import worst_pair
from glauber.theory import contraction, influence_bounds
from glauber.verification.instances import ChainInstance, Instance
from glauber.verification.statement_checks import (
    ATOL,
    EPS,
    RTOL,
    distance_points,
    finite_or_none,
    instance_cached,
    label_of,
    make_claim,
    mixing_time_of,
    not_evaluated,
    off_diagonal,
    snap_slack,
    tolerance,
    upper,
)

#: All pairs of states enter the Theorem 5 contraction check up to this many states.
ALL_PAIRS_MAX_STATES = 256


def _influence_check(inst: Instance, bound_fn: Callable[[np.ndarray, float], Any]) -> list[Claim]:
    if not isinstance(inst, ChainInstance):
        return []
    C = inst.chain.influence_matrix()
    Delta = inst.chain.oscillation_matrix()
    bound = np.asarray(bound_fn(Delta, inst.tau), dtype=np.float64)
    off = off_diagonal(C)
    slack = float((bound - C)[off].min()) if C.shape[0] > 1 else 0.0
    holds = bool(np.all(C[off] <= bound[off] * (1.0 + RTOL) + ATOL))
    positive = off & (bound > 0)
    tight = float((C[positive] / bound[positive]).max()) if positive.any() else None
    return [
        make_claim(
            label_of(inst), True, holds, float(bound[off].max()) if off.any() else 0.0,
            float(C[off].max()) if off.any() else 0.0, snap_slack(slack, 1.0, 1.0), tight,
            {"max_influence": float(C.max()), "max_oscillation": float(Delta.max())},
        )
    ]


def check_lemma6(inst: Instance) -> list[Claim]:
    """Definition 2 + Lemma 6: ``c_ij <= Delta_ij / (4 tau)`` for every ``i != j``."""
    return _influence_check(inst, influence_bounds.lemma6_bound)


def check_tanh(inst: Instance) -> list[Claim]:
    """Sharper Lemma 6: ``c_ij <= tanh(Delta_ij / (4 tau))``."""
    return _influence_check(inst, influence_bounds.tanh_bound)


def check_cor7(inst: Instance) -> list[Claim]:
    """Corollary 7: ``max_i sum_j Delta_ij < 4 tau`` implies ``alpha <= bound < 1``."""
    if not isinstance(inst, ChainInstance):
        return []
    Delta = inst.chain.oscillation_matrix()
    label = label_of(inst)
    if not influence_bounds.corollary7_holds(Delta, inst.tau):
        return [not_evaluated(label)]
    alpha = contraction.alpha_row(inst.chain.influence_matrix())
    bound = influence_bounds.corollary7_alpha_bound(Delta, inst.tau)
    return [upper(label, True, bound, alpha, ok=alpha < 1.0)]


# -------------------------------------------------------------------------------- Theorem 5


def _worst_pair(inst: ChainInstance) -> dict[str, Any]:
    """Largest ``E[d_H(X_1, Y_1)] / d_H(x, y)`` under the same-site maximal coupling.

    Over all pairs of distinct states up to :data:`ALL_PAIRS_MAX_STATES` states (exactly:
    ``E = (1/n) sum_i [d_H - 1{x_i != y_i} + TV_i(x, y)]``), else over adjacent pairs.
    """

    def compute() -> dict[str, Any]:
        chain = inst.chain
        if chain.num_states > ALL_PAIRS_MAX_STATES:
            worst = chain.one_step_hamming_all_pairs_adjacent()
            return {"ratio": worst.expected_distance, "x": worst.x_index, "y": worst.y_index,
                    "pairs": "adjacent"}
        worst = worst_pair(chain.conditionals())
        return {"ratio": worst.ratio, "x": worst.x_index, "y": worst.y_index, "pairs": "all"}

    return instance_cached(inst, "worst_pair", compute)


def _pair_details(inst: ChainInstance, worst: dict[str, Any]) -> dict[str, Any]:
    states = inst.chain.states()
    out = {
        "worst_pair": [states[worst["x"]].tolist(), states[worst["y"]].tolist()],
        "pairs_checked": worst["pairs"],
    }
    cx = inst.counterexample
    if cx is not None and cx.y_index is not None:
        out["counterexample"] = {
            **cx.summary,
            "pair": [states[cx.x_index].tolist(), states[cx.y_index].tolist()],
            "expected_d_H_after_one_step": inst.chain.one_step_hamming(cx.x_index, cx.y_index),
        }
    return out


def check_thm5_printed(inst: Instance) -> list[Claim]:
    """Theorem 5 as printed: ``alpha_row < 1`` gives the one-step Hamming contraction."""
    if not isinstance(inst, ChainInstance):
        return []
    C = inst.chain.influence_matrix()
    a = contraction.alpha_row(C)
    label = label_of(inst)
    if not a < 1.0:
        return [not_evaluated(label, alpha_row=a)]
    worst = _worst_pair(inst)
    kappa = contraction.theorem5_contraction_factor(inst.chain.n, a)
    return [upper(label, True, kappa, worst["ratio"], alpha_row=a,
                  **_pair_details(inst, worst))]


def check_thm5_corrected(inst: Instance) -> list[Claim]:
    """Theorem 5 corrected: ``E[d_H(X_1, Y_1)] <= (1 - (1 - alpha_col)/n) d_H(x, y)`` always.

    Also each adjacent pair differing at ``j`` obeys :func:`adjacent_pair_hamming_bound`.
    The hypothesis ``alpha_col < 1`` is when this is a contraction.
    """
    if not isinstance(inst, ChainInstance):
        return []
    chain = inst.chain
    C = chain.influence_matrix()
    a = contraction.alpha_col(C)
    worst = _worst_pair(inst)
    kappa = contraction.theorem5_contraction_factor(chain.n, a)
    adjacent = chain.one_step_hamming_all_pairs_adjacent()
    per_site = contraction.adjacent_pair_hamming_bound(C, adjacent.site)
    ok = adjacent.expected_distance <= per_site + tolerance(per_site, adjacent.expected_distance)
    return [upper(label_of(inst), a < 1.0, kappa, worst["ratio"], ok=ok, alpha_col=a,
                  worst_adjacent=adjacent.expected_distance, adjacent_site_bound=per_site,
                  **_pair_details(inst, worst))]


def check_thm5_tmix(inst: Instance) -> list[Claim]:
    """Corrected Theorem 5: ``t_mix(1/4)`` <= every finite certificate; ``d(t) <= 1^T M^t 1``."""
    if not isinstance(inst, ChainInstance):
        return []
    C = inst.chain.influence_matrix()
    cert = contraction.certify_contraction(C, EPS)
    label = label_of(inst)
    bounds = {"row": cert.tmix_row, "col": cert.tmix_col, "spectral": cert.tmix_spectral,
              "matrix_power": cert.tmix_matrix_power}
    details = {"certificates": {k: finite_or_none(v) for k, v in bounds.items()},
               "best": cert.best, "spectral_radius": cert.spectral_radius}
    if cert.best == "none":
        return [not_evaluated(label, **details)]
    t_mix = mixing_time_of(inst)
    finite_ok = all(t_mix <= v for v in bounds.values() if math.isfinite(v))
    curve_ok = all(
        d <= contraction.coupling_distance_bound(C, t) + ATOL
        for t, d in distance_points(inst).items()
    )
    return [upper(label, True, cert.best_bound, t_mix, ok=finite_ok and curve_ok, **details)]
