"""Exact data of the uniform local margin condition (Assumption 1) on a basin, by enumeration.

For ``x`` in the basin ``B``, a site ``i`` is *exit-causing* if some token ``a != x_i`` has
``x^(i -> a)`` outside ``B``; such ``a`` are the exit-causing tokens. Assumption 1 (as printed)
asks, at every exit-causing ``(x, i)``: ``x_i`` is a maximiser of ``s_i(.; x_{-i})`` and
``s_i(x_i) - s_i(a) >= Delta_star > 0`` for every exit-causing ``a``. Scores are at ``tau = 1``.

The escape bound of Theorem 8 uses only the margin over exit-causing tokens, since
``p_tau(a | x_{-i}) <= exp((s_i(a) - s_i(x_i)) / tau)`` whatever the other tokens score:
``P(x, B^c) <= (k / n) m exp(-Delta_star / tau) <= |V| exp(-Delta_star / tau)`` with ``k``
exit-causing sites and at most ``m <= |V| - 1`` exit-causing tokens per site.
"""

from __future__ import annotations

import numpy as np

from glauber.core.enumeration import all_states, neighbour_indices
from glauber.exact.basins import check_mask
from glauber.theory.escape import BasinMargins, basin_margins


def exact_basin_margins(scores: np.ndarray, mask: np.ndarray) -> BasinMargins:
    """Exact Assumption 1 data of the basin ``mask`` from the scores at every site and state.

    Parameters
    ----------
    scores : numpy.ndarray, shape (n, q**n, q)
        ``s_i(a; x_{-i})`` at ``tau = 1``, states in mixed-radix order.
    mask : array of bool, shape (q**n,)
        The basin ``B``.

    Returns
    -------
    BasinMargins
        Built by :func:`glauber.theory.escape.basin_margins` over every state of the basin
        (``complete``; ``worst_state`` is a chain state index).

    Raises
    ------
    InvalidParameterError, BasinError
        If the mask is malformed, empty or the whole state space.

    Examples
    --------
    Two sites that both prefer token 0 by a score margin of 3; the basin is the single state (0, 0):

    >>> s = np.zeros((2, 4, 2)); s[..., 0] = 3.0
    >>> m = exact_basin_margins(s, np.array([True, False, False, False]))
    >>> (m.delta_star, m.holds, m.k)
    (3.0, True, 2)
    """
    n, num_states, q = scores.shape
    inside = check_mask(mask, num_states)
    members = np.flatnonzero(inside)
    s = scores[:, members, :]  # [n, |B|, q]
    exits = ~inside[neighbour_indices(n, q)[:, members, :]]  # x^(i->a) leaves B; False at a = x_i
    own_token = all_states(n, q)[members].T[:, :, None]  # [n, |B|, 1]
    own = np.take_along_axis(s, own_token, axis=-1)[..., 0]
    others = s.copy()
    np.put_along_axis(others, own_token, -np.inf, axis=-1)
    margin = own - np.where(exits, s, -np.inf).max(axis=-1)  # inf where no exit-causing token
    return basin_margins(
        margin.T, (own - others.max(axis=-1)).T, exits.sum(axis=-1).T, q,
        state_ids=members, complete=True,
    )


__all__ = [
    "exact_basin_margins",
]
