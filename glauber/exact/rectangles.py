"""Every rectangle of a small chain (Proposition 4), from its exact log-conditionals.

A rectangle is a state ``x``, two sites ``i != j`` and replacements ``a' != x_i``, ``b' != x_j``;
with ``y = x^(i->a')``, ``w = x^(j->b')`` and ``L_k(c | z) = log p_tau(c | z_{-k})``,

    delta = [L_i(a'|x) - L_i(x_i|x)] + [L_j(b'|y) - L_j(x_j|y)]
          - [L_j(b'|x) - L_j(x_j|x)] - [L_i(a'|w) - L_i(x_i|w)],

which is 0 in every rectangle when a joint law has these conditionals (Proposition 4). Counted
over all ``x``, all unordered pairs ``{i, j}`` and all replacements (a rectangle and its mirror
image ``i <-> j`` have opposite ``delta``, so each is counted once).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from glauber.core.arrays import JsonResult
from glauber.core.enumeration import all_states, neighbour_indices


@dataclass(frozen=True)
class RectangleSummary(JsonResult):
    """``|delta|`` over every rectangle of a chain.

    Attributes
    ----------
    count : int
        Rectangles: ``q^n (n choose 2) (q - 1)^2``.
    max_abs_delta, mean_abs_delta : float
        Largest and mean ``|delta|`` (at the chain's temperature; ``delta`` scales as ``1/tau``).
    worst_state, worst_i, worst_j, worst_a, worst_b : int
        A rectangle attaining the maximum: state index, sites, replacement tokens.
    """

    count: int
    max_abs_delta: float
    mean_abs_delta: float
    worst_state: int
    worst_i: int
    worst_j: int
    worst_a: int
    worst_b: int


def rectangle_summary(log_conditionals: np.ndarray) -> RectangleSummary:
    """``|delta|`` of every rectangle from ``L[k, x, c] = log p_tau(c | x_{-k})``.

    Parameters
    ----------
    log_conditionals : numpy.ndarray, shape (n, q**n, q)

    Returns
    -------
    RectangleSummary

    Examples
    --------
    >>> L = np.log(np.full((2, 4, 2), 0.5))  # independent fair coins: a joint law, delta = 0
    >>> s = rectangle_summary(L)
    >>> s.count, s.max_abs_delta
    (4, 0.0)
    """
    n, num_states, q = log_conditionals.shape
    states = all_states(n, q)
    nb = neighbour_indices(n, q)  # [n, S, q]: index of x^(k -> c)
    rows = np.arange(num_states)
    total, count, best = 0.0, 0, (-1.0, 0, 0, 0, 0, 0)
    for i in range(n):
        Li = log_conditionals[i]
        own_i = Li[rows, states[:, i]]  # L_i(x_i | x)
        t1 = Li - own_i[:, None]  # [S, a']
        for j in range(i + 1, n):
            Lj = log_conditionals[j]
            own_j = Lj[rows, states[:, j]]
            t3 = Lj - own_j[:, None]  # [S, b']
            y = nb[i]  # [S, a'] index of x^(i->a')
            t2 = Lj[y] - Lj[y, states[:, j][:, None]][..., None]  # [S, a', b']
            w = nb[j]  # [S, b'] index of x^(j->b')
            t4 = Li[w] - Li[w, states[:, i][:, None]][..., None]  # [S, b', a']
            delta = t1[:, :, None] + t2 - t3[:, None, :] - t4.transpose(0, 2, 1)
            valid = (np.arange(q)[None, :, None] != states[:, i][:, None, None]) & (
                np.arange(q)[None, None, :] != states[:, j][:, None, None]
            )
            a = np.abs(np.where(valid, delta, 0.0))
            total += float(a.sum())
            count += int(valid.sum())
            k = int(np.argmax(a))
            if a.flat[k] > best[0]:
                x, ap, bp = np.unravel_index(k, a.shape)
                best = (float(a.flat[k]), int(x), i, j, int(ap), int(bp))
    return RectangleSummary(
        count=count, max_abs_delta=max(best[0], 0.0),
        mean_abs_delta=total / count if count else 0.0, worst_state=best[1], worst_i=best[2],
        worst_j=best[3], worst_a=best[4], worst_b=best[5],
    )


__all__ = ["RectangleSummary", "rectangle_summary"]
