"""Settings of :func:`glauber.testing.models` and small exact references for the verification.

The random models come from :mod:`glauber.testing` (every family, ``q**n <= 256`` by default, so
each example enumerates its chain exactly in milliseconds); this module only names the family
choices the verification tests share, and the slow references they compare against.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import logsumexp

from glauber.core.enumeration import all_states
from glauber.testing import FAMILIES, temperatures

#: Families whose every model is compatible: each has a closed-form Gibbs law
#: (``model.log_weight``; Theorem 3). A family registered later joins them by its record.
GIBBS = tuple(name for name, family in FAMILIES.items()
              if family.compatible_draws(family.defaults) is True)
#: Asymmetric Ising models, symmetric ones (compatible) included.
ASYM_ISING = {"asym-ising": {"min_asym": 0.0}}

TEMPERATURES = temperatures(0.4, 4.0)


def gibbs_law(model: Any, tau: float) -> np.ndarray:
    """``pi_tau(x) ∝ exp(log_weight(x) / tau)`` over all states (log-space normalisation)."""
    logw = model.log_weight(all_states(model.n, model.q)) / tau
    return np.exp(logw - logsumexp(logw))


def tv_from_each_start(P: np.ndarray, pi: np.ndarray, t: int) -> np.ndarray:
    """``||P^t(x, .) - pi||_TV`` for every start ``x`` (dense power; slow reference)."""
    return 0.5 * np.abs(np.linalg.matrix_power(P, t) - pi[None, :]).sum(axis=1)


def absorbing_hit_within(P: np.ndarray, target: np.ndarray, T: int) -> np.ndarray:
    """``P_x(hit target within T)`` from the T-th power of the absorbed chain (dense reference)."""
    Q = P.copy()
    Q[target] = 0.0
    Q[target, target] = 1.0
    return np.linalg.matrix_power(Q, T)[:, target].sum(axis=1)


#: Rounding allowance when ``d(t)`` is compared with ``eps`` (a bound can be attained exactly).
TIE = 1e-9


def mixes_by(chain: Any, t: float, eps: float = 0.25) -> bool:
    """``t_mix(eps) <= t``, i.e. ``d(floor(t)) <= eps`` (up to :data:`TIE`)."""
    return chain.distance(int(np.floor(t))) <= eps + TIE


def not_mixed_before(chain: Any, bound: float, eps: float = 0.25) -> bool:
    """``t_mix(eps) >= bound``, i.e. ``d(ceil(bound) - 1) > eps`` (up to :data:`TIE`)."""
    t = int(np.ceil(bound)) - 1
    return t < 0 or chain.distance(t) > eps - TIE


def tau_near_threshold(model: Any, factor: float) -> float:
    """``factor`` times Corollary 7's threshold temperature ``max_i sum_j Delta_ij / 4``.

    Keeps each drawn chain at a temperature on the scale of its own interactions, around the
    point where the high-temperature certificates start to hold (factor ~ 1).
    """
    from glauber.exact.chain import ExactChain

    Delta = ExactChain(model, 1.0).oscillation_matrix()
    return max(factor * float(Delta.sum(axis=1).max()) / 4.0, 0.05)
