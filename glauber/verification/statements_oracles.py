"""Checkers against the textbook oracles: path coupling (LPW Theorem 14.6), the Ising cycle's
relaxation time (LPW Theorem 15.5) and Dobrushin's influences (LPW Theorem 15.1), evaluated
exactly on one toy instance (docs/theory.md).
"""

from __future__ import annotations

import math

import numpy as np

from glauber.core.claims import Claim
from glauber.theory import ising_closed_forms, path_coupling
from glauber.verification.instances import ChainInstance, Instance
from glauber.verification.statement_checks import (
    ATOL,
    EPS,
    IDENTITY_TOL,
    distance_points,
    identity,
    label_of,
    make_claim,
    mixing_time_of,
    not_evaluated,
    upper,
)


def check_path_coupling(inst: Instance) -> list[Claim]:
    """LPW Theorem 14.6 / Corollary 14.8 with the exact adjacent-pair factor ``kappa``."""
    if not isinstance(inst, ChainInstance):
        return []
    n = inst.chain.n
    kappa = inst.chain.one_step_hamming_all_pairs_adjacent().expected_distance
    label = label_of(inst)
    if not kappa < 1.0:
        return [not_evaluated(label, kappa=kappa)]
    rate = path_coupling.rate_from_contraction_factor(kappa)
    bound = path_coupling.path_coupling_tmix_bound(rate, n, EPS)
    t_mix = mixing_time_of(inst)
    curve_ok = all(
        d <= path_coupling.path_coupling_distance_bound(t, rate, n) + ATOL
        for t, d in distance_points(inst).items()
    )
    return [upper(label, True, bound, t_mix, ok=curve_ok, kappa=kappa)]


def check_cycle_relaxation(inst: Instance) -> list[Claim]:
    """LPW Theorem 15.5: heat-bath Ising on the n-cycle has ``t_rel = n / (1 - tanh 2 beta)``."""
    if not (isinstance(inst, ChainInstance) and inst.ising is not None and inst.ising.cycle
            and inst.ising.zero_field and inst.ising.uniform_coupling is not None):
        return []
    beta = inst.ising.uniform_coupling / inst.tau
    closed = ising_closed_forms.ising_cycle_relaxation_time(inst.chain.n, beta)
    exact = inst.chain.relaxation_time()
    return [identity(label_of(inst), True, abs(exact / closed - 1.0), tol=1e-6,
                     tightness=exact / closed, beta=beta, exact_relaxation_time=exact,
                     closed_form=closed)]


def check_dobrushin(inst: Instance) -> list[Claim]:
    """LPW Theorem 15.1: exact neighbour influences of zero-field Ising, and Dobrushin's bound."""
    if not (isinstance(inst, ChainInstance) and inst.ising is not None
            and inst.ising.zero_field and inst.ising.uniform_coupling is not None):
        return []
    J = inst.ising.J
    beta = inst.ising.uniform_coupling / inst.tau
    adjacent = J != 0.0
    degree = adjacent.sum(axis=1)
    expected = np.where(
        adjacent,
        np.array([ising_closed_forms.ising_neighbour_influence(beta, max(1, int(d)))
                  for d in degree])[:, None],
        0.0,
    )
    C = inst.chain.influence_matrix()
    error = float(np.abs(C - expected).max())
    max_degree = int(degree.max())
    label = label_of(inst)
    details = {"beta": beta, "max_degree": max_degree, "influence_error": error}
    if not max_degree * math.tanh(beta) < 1.0:  # the influence identity is still checked
        return [make_claim(label, False, error <= IDENTITY_TOL, details=details)]
    bound = ising_closed_forms.dobrushin_ising_tmix_bound(inst.chain.n, max_degree, beta, EPS)
    t_mix = mixing_time_of(inst)
    curve_ok = all(
        d <= ising_closed_forms.dobrushin_ising_bound(inst.chain.n, max_degree, beta, t) + ATOL
        for t, d in distance_points(inst).items()
    )
    return [upper(label, True, bound, t_mix, ok=curve_ok and error <= IDENTITY_TOL, **details)]
