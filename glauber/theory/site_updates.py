"""What a kernel does at a visited site: the epsilon mixture and the Metropolis-Hastings correction.

Definitions (docs/theory.md, "Other kernels"; :mod:`glauber.core.kernel_spec` names them):

* **Epsilon mixture.** With probability ``epsilon`` the site is redrawn uniformly from the ``q``
  tokens: its law is ``r(a | x_{-i}) = (1 - epsilon) p_tau(a | x_{-i}) + epsilon / q``
  (:func:`mixture_log_probs`). Every ``r(a) >= epsilon / q > 0``, so a chain of such updates is
  irreducible and aperiodic whatever the model's conditionals (the ``eps-irreducible`` row).
  Influences shrink exactly: ``||r(.|x) - r(.|y)||_TV = (1 - epsilon) ||p(.|x) - p(.|y)||_TV``,
  so ``C_epsilon = (1 - epsilon) C`` (:func:`mixture_influence`).
* **Metropolis-Hastings.** For a target ``pi(x) ∝ exp(-E(x) / tau)``, propose ``y = x^(i -> a)``
  with ``a ~ r(. | x_{-i})`` and accept with probability ``min(1, R)``,

  ``R = [pi(y) r(x_i | y_{-i})] / [pi(x) r(y_i | x_{-i})] = [pi(y) r(x_i | x_{-i})] /
  [pi(x) r(a | x_{-i})]``

  since ``y_{-i} = x_{-i}``: the reverse move (from ``y`` back to ``x``, at the same site) is
  proposed from the same context. The site kernel ``K_i(x, y) = r(a | x_{-i}) min(1, R)``
  satisfies detailed balance, ``pi(x) K_i(x, y) = min(pi(x) r(a), pi(y) r(x_i)) = pi(y) K_i(y, x)``
  (the minimum is symmetric in the two moves), so ``pi`` is stationary for every scan of such
  updates and the random scan is reversible (:func:`log_acceptance`).

The energies of the issue: ``E_pll(x) = -sum_k log p_1(x_k | x_{-k})`` (the negative
pseudo-log-likelihood at ``tau = 1``) and ``E_logits(x) = -sum_k s_k(x_k; x_{-k})`` (the raw
scores); :func:`energy_from_own_terms` sums either from the per-site terms.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from glauber.core.arrays import is_torch, namespace
from glauber.core.validation import check_square_matrix
from glauber.errors import InvalidProbabilityError


def _check_epsilon(epsilon: float) -> float:
    eps = float(epsilon)
    if not 0.0 <= eps <= 1.0:
        raise InvalidProbabilityError(f"epsilon must lie in [0, 1], got {epsilon!r}")
    return eps


def mixture_log_probs(log_p: Any, epsilon: float) -> Any:
    """``log[(1 - epsilon) p + epsilon / q]`` along the last axis (``q`` its length), in the
    array library of ``log_p`` (numpy or torch), formed in log space.

    ``epsilon = 0`` returns ``log_p`` itself; ``epsilon = 1`` the uniform ``-log q``.

    Raises
    ------
    InvalidProbabilityError
        If ``epsilon`` is not in ``[0, 1]``.

    Examples
    --------
    >>> mixture_log_probs(np.log([[0.0, 1.0]]), 0.5).round(6).tolist()  # (1/4, 3/4)
    [[-1.386294, -0.287682]]
    """
    eps = _check_epsilon(epsilon)
    if eps == 0.0:
        return log_p
    q = int(log_p.shape[-1])
    uniform = math.log(eps / q)
    xp = namespace(log_p)
    if eps == 1.0:
        return xp.full_like(log_p, uniform)
    return xp.logaddexp(log_p + math.log1p(-eps), xp.full_like(log_p, uniform))


def log_acceptance(
    log_target_x: Any, log_target_y: Any, log_proposal_forward: Any, log_proposal_backward: Any
) -> Any:
    """Metropolis-Hastings ``log min(1, [pi(y) r(x_i | x_{-i})] / [pi(x) r(y_i | x_{-i})])``.

    Parameters
    ----------
    log_target_x, log_target_y : array
        ``log pi`` of the current state and of the proposal, up to one common constant (for
        ``pi ∝ exp(-E / tau)``: ``-E(x) / tau`` and ``-E(y) / tau``).
    log_proposal_forward : array
        ``log r(y_i | x_{-i})``: the probability of proposing the new token.
    log_proposal_backward : array
        ``log r(x_i | x_{-i})``: the probability of proposing the current token from the same
        context (the reverse move's proposal; ``y_{-i} = x_{-i}``).

    Returns
    -------
    array
        ``<= 0`` entrywise, in the arrays' library (numpy or torch).

    Examples
    --------
    >>> float(log_acceptance(0.0, np.log(2.0), np.log(0.5), np.log(0.25)))  # R = 2 * 0.5 = 1
    0.0
    >>> round(float(log_acceptance(0.0, 0.0, np.log(0.8), np.log(0.2))), 6)  # R = 1/4
    -1.386294
    """
    d = (log_target_y - log_target_x) + (log_proposal_backward - log_proposal_forward)
    if is_torch(d):
        return d.clamp(max=0.0)
    return np.minimum(d, 0.0)


def energy_from_own_terms(own_terms: Any) -> Any:
    """``E(x) = -sum_k t_k(x)`` along the last axis, where ``t_k`` is ``log p_1(x_k | x_{-k})``
    (PLL energy) or ``s_k(x_k; x_{-k})`` (logits energy): the score of each site's own token.

    Examples
    --------
    >>> energy_from_own_terms(np.array([[-0.5, -1.5]])).tolist()
    [2.0]
    """
    return -own_terms.sum(-1)


def mixture_influence(C: Any, epsilon: float) -> np.ndarray:
    """Influences of the epsilon mixture: ``(1 - epsilon) C``, exactly.

    ``(1 - e) p + e u`` and ``(1 - e) r + e u`` differ by ``(1 - e)(p - r)``, so their TV is
    ``(1 - e)`` times that of ``p`` and ``r``; every supremum of Definition 2 scales alike.

    Raises
    ------
    InvalidProbabilityError
        If ``epsilon`` is not in ``[0, 1]``.
    InvalidParameterError
        If ``C`` is not a square non-negative matrix.
    """
    eps = _check_epsilon(epsilon)
    return (1.0 - eps) * check_square_matrix(C, "C")


__all__ = [
    "energy_from_own_terms",
    "log_acceptance",
    "mixture_influence",
    "mixture_log_probs",
]
