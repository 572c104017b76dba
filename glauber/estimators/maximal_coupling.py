"""The maximal coupling of two site laws, row by row: ``P(a != b) = ||p - q||_TV``.

The coupling of Theorem 5's proof (docs/theory.md): two chains updating the same site couple
their conditionals maximally (Levin–Peres–Wilmer 2nd ed., Proposition 4.7). Used by the coupled
steps of :mod:`glauber.estimators.coupling` and :mod:`glauber.estimators.kernel_steps`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glauber.core.arrays import is_torch, namespace
from glauber.estimators.random_draws import sample_categorical, uniform


def maximal_coupling_step(log_p: Any, log_q: Any, generator: Any) -> tuple[Any, Any]:
    """Draw ``(a, b)`` with ``a ~ p``, ``b ~ q`` and ``P(a != b) = ||p - q||_TV`` for every row.

    With probability ``1 - TV`` both take one draw from the overlap ``min(p, q)`` (normalised);
    otherwise ``a`` and ``b`` are drawn independently from the normalised residuals
    ``p - min(p, q)`` and ``q - min(p, q)``, whose supports are disjoint, so they differ
    (Levin–Peres–Wilmer 2nd ed., Proposition 4.7: this coupling attains the TV distance).

    Parameters
    ----------
    log_p, log_q : array, shape (B, q)
        Normalised log-probabilities (numpy or torch, same library and device).
    generator : numpy.random.Generator or torch.Generator
        The source of randomness for that library (see
        :func:`glauber.estimators.random_draws.device_generator`).

    Returns
    -------
    (a, b) : arrays of int, shape (B,)
        In the library and on the device of ``log_p``.
    """
    xp = namespace(log_p)
    p, q = xp.exp(log_p), xp.exp(log_q)
    overlap = xp.minimum(p, q)
    tv = 0.5 * xp.sum(xp.abs(p - q), axis=-1)
    agree = uniform(log_p, int(log_p.shape[0]), generator) >= tv  # exact when p == q (tv = 0)
    common = sample_categorical(_log(overlap), generator)
    a_rest = sample_categorical(_log(p - overlap), generator)
    b_rest = sample_categorical(_log(q - overlap), generator)
    return xp.where(agree, common, a_rest), xp.where(agree, common, b_rest)


def _log(w: Any) -> Any:
    """Elementwise log of non-negative weights, ``-inf`` at zeros (no warnings)."""
    if is_torch(w):
        return namespace(w).log(w.clamp_min(0.0))
    w = np.asarray(w)
    out = np.full(w.shape, -np.inf)
    np.log(w, out=out, where=w > 0)
    return out


__all__ = [
    "maximal_coupling_step",
]
