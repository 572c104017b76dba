"""Checkers of Proposition 1 / Corollary 2 (a Markov kernel with a unique law), Theorem 3 (a
compatible joint is stationary and reversible) and Proposition 4 (the rectangle test), evaluated
exactly on one toy instance (docs/theory.md).
"""

from __future__ import annotations

import itertools
import math
from typing import Iterator

import numpy as np
from scipy.special import logsumexp

from glauber.core.claims import Claim
from glauber.core.enumeration import neighbour_indices
from glauber.errors import NonPositiveConditionalError
from glauber.exact.chain import ExactChain
from glauber.theory import kernels, rectangle
from glauber.theory.kernels import reversibility_defect
from glauber.verification.instances import ChainInstance, Instance, LumpedInstance
from glauber.verification.statement_checks import (
    distance_points,
    identity,
    label_of,
    mixing_time_of,
    not_evaluated,
)


def check_prop1(inst: Instance) -> list[Claim]:
    """Proposition 1 / Corollary 2: Markov kernel, irreducible, aperiodic, ``P^t -> mu``."""
    label = label_of(inst)
    if isinstance(inst, ChainInstance):
        try:
            inst.chain.conditionals()  # raises if a conditional is 0 in float64
        except NonPositiveConditionalError as exc:
            return [not_evaluated(label, reason=str(exc))]
    P = inst.chain.transition_matrix()
    pi = inst.chain.stationary()
    row_error = float(np.abs(np.asarray(P.sum(axis=1)).ravel() - 1.0).max())
    residual = float(np.abs(P.T @ pi - pi).sum())
    markov = kernels.is_markov_kernel(P, atol=1e-12)
    irreducible = kernels.is_irreducible(P)
    aperiodic = kernels.is_aperiodic(P)
    stationary = kernels.is_stationary(P, pi, atol=1e-10)
    # Convergence, quantitatively: d(k t_mix) <= (2 d(t_mix))^k <= 2^-k (LPW 2nd ed. (4.33)).
    t_mix = mixing_time_of(inst)
    converges = distance_points(inst)[8 * t_mix] <= 2.0**-8
    ok = markov and irreducible and aperiodic and stationary and converges
    error = max(row_error, residual) if ok else math.inf
    return [
        identity(
            label, True, error, tol=1e-10, markov=markov, irreducible=irreducible,
            aperiodic=aperiodic, stationary=stationary, row_sum_error=row_error,
            stationary_residual_l1=residual, tmix=t_mix, d_8_tmix=distance_points(inst)[8 * t_mix],
        )
    ]


def gibbs_law(inst: Instance) -> np.ndarray | None:
    if isinstance(inst, LumpedInstance):
        if inst.log_weight_levels is None:
            return None
        log_w = inst.log_weight_levels
    else:
        if inst.log_weight is None:
            return None
        log_w = np.asarray(inst.log_weight(inst.chain.states()), dtype=np.float64) / inst.tau
    return np.exp(log_w - logsumexp(log_w))


def check_thm3(inst: Instance) -> list[Claim]:
    """Theorem 3: a compatible ``pi`` is stationary and ``P`` is reversible w.r.t. it."""
    label = label_of(inst)
    P = inst.chain.transition_matrix()
    gibbs = gibbs_law(inst)
    if gibbs is None:
        return [
            not_evaluated(
                label,
                reversibility_defect_wrt_mu=reversibility_defect(P, inst.chain.stationary()),
            )
        ]
    residual = float(np.abs(P.T @ gibbs - gibbs).sum())
    defect = reversibility_defect(P, gibbs)
    tv = 0.5 * float(np.abs(inst.chain.stationary() - gibbs).sum())
    stationary = kernels.is_stationary(P, gibbs, atol=1e-10)
    reversible = kernels.is_reversible(P, gibbs, rtol=1e-9)
    error = max(residual, defect, tv) if stationary and reversible else math.inf
    return [
        identity(
            label, True, error, tol=1e-9, stationary_residual_l1=residual,
            reversibility_defect=defect, tv_exact_mu_vs_gibbs=tv,
        )
    ]


# ----------------------------------------------------------------------------- Proposition 4


def _rectangles(chain: ExactChain) -> Iterator[tuple[int, int, np.ndarray, np.ndarray,
                                                    np.ndarray, np.ndarray]]:
    """Every rectangle, batched by ``(i < j, A', B')``: ``(i, j, A, B, delta_tau, delta_1)``.

    ``delta_tau`` uses the log-conditionals at ``tau``, ``delta_1`` the raw scores (``tau = 1``);
    ``A = x_i != A'`` and ``B = x_j != B'`` over the states ``x`` of the batch.
    """
    n, q = chain.n, chain.q
    log_p = np.log(chain.conditionals())
    scores = chain.scores()
    states = chain.states()
    nbr = neighbour_indices(n, q)
    for i, j in itertools.combinations(range(n), 2):
        for a_new, b_new in itertools.product(range(q), repeat=2):
            x = np.flatnonzero((states[:, i] != a_new) & (states[:, j] != b_new))
            a, b = states[x, i], states[x, j]
            y, w = nbr[i, x, a_new], nbr[j, x, b_new]
            d_tau = rectangle.rectangle_delta(
                log_p[i, x], log_p[j, y], log_p[j, x], log_p[i, w], a, a_new, b, b_new
            )
            d_one = rectangle.rectangle_delta(
                scores[i, x], scores[j, y], scores[j, x], scores[i, w], a, a_new, b, b_new
            )
            yield i, j, a, b, np.asarray(d_tau), np.asarray(d_one)


def check_prop4(inst: Instance) -> list[Claim]:
    """Proposition 4: ``delta = 0`` on every rectangle of a compatible model, plus its facts.

    Every rectangle (state ``x``, sites ``i < j``, replacements ``A' != x_i``, ``B' != x_j``) is
    enumerated. Facts checked on every instance: ``delta_tau = delta_1 / tau``, and for
    Ising-type models ``delta_1 = 4 x_i x_j (J_ji - J_ij)`` (spins ``x = 2 token - 1``).
    """
    if not isinstance(inst, ChainInstance) or inst.model.n < 2:
        return []
    scale = max(1.0, float(np.abs(inst.chain.scores()).max()) / inst.tau)
    max_delta = scaling_error = closed_form_error = 0.0
    for i, j, a, b, d_tau, d_one in _rectangles(inst.chain):
        max_delta = max(max_delta, float(np.abs(d_tau).max()))
        expected = rectangle.delta_at_tau(d_one, inst.tau)
        scaling_error = max(scaling_error, float(np.abs(d_tau - expected).max()) / scale)
        if inst.ising is not None:  # tokens 0/1 are spins -1/+1
            table = np.array([
                [rectangle.asymmetric_ising_rectangle_delta(inst.ising.J, i, j, 1.0, si, sj)
                 for sj in (-1, 1)]
                for si in (-1, 1)
            ])
            closed_form_error = max(
                closed_form_error, float(np.abs(d_one - table[a, b]).max()) / scale
            )
    compatible = inst.log_weight is not None
    error = max(scaling_error, closed_form_error)
    if compatible:
        error = max(error, max_delta / scale)
    return [
        identity(
            label_of(inst), compatible, error, max_abs_delta=max_delta, scaling_error=scaling_error,
            ising_closed_form_error=closed_form_error if inst.ising is not None else None,
        )
    ]
