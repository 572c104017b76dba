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

from dataclasses import dataclass

import numpy as np

from glauber.toy_models.exact_basins import check_mask
from glauber.core.enumeration import all_states, neighbour_indices


@dataclass(frozen=True)
class BasinMargins:
    """Assumption 1 data of a basin (scores at ``tau = 1``).

    Attributes
    ----------
    delta_star : float
        ``min`` over exit-causing ``(x, i)`` of ``s_i(x_i) - max_{exit-causing a} s_i(a)``: the
        largest ``Delta_star`` for which the margin inequality holds (negative if it fails;
        ``inf`` if no state of ``B`` has an exit-causing site).
    site_gap_min : float
        ``min`` over exit-causing ``(x, i)`` of the paper's per-position gap
        ``Delta_i(x) = s_i(x_i) - max_{a != x_i} s_i(a)`` (Appendix A.1); it is ``>= 0`` iff
        ``argmax_holds``.
    argmax_holds : bool
        ``x_i`` attains ``max_a s_i(a; x_{-i})`` at every exit-causing ``(x, i)`` (ties allowed).
    holds : bool
        Assumption 1: ``argmax_holds`` and ``delta_star > 0``.
    k : int
        Largest number of exit-causing sites of one state of ``B``.
    max_exit_tokens : int
        Largest number of exit-causing tokens at one exit-causing ``(x, i)`` (at most ``q - 1``).
    n, q : int
        Sites and vocabulary size.
    basin_size : int
        ``|B|``.
    boundary_states : int
        States of ``B`` with at least one exit-causing site.
    worst_state, worst_site : int
        A state index and site attaining ``delta_star`` (``-1`` if there is none).
    """

    delta_star: float
    site_gap_min: float
    argmax_holds: bool
    holds: bool
    k: int
    max_exit_tokens: int
    n: int
    q: int
    basin_size: int
    boundary_states: int
    worst_state: int
    worst_site: int


def basin_margins(scores: np.ndarray, mask: np.ndarray) -> BasinMargins:
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

    Raises
    ------
    InvalidParameterError, BasinError
        If the mask is malformed, empty or the whole state space.

    Examples
    --------
    Two sites that both prefer token 0 by a score margin of 3; the basin is the single state (0, 0):

    >>> s = np.zeros((2, 4, 2)); s[..., 0] = 3.0
    >>> m = basin_margins(s, np.array([True, False, False, False]))
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
    exit_best = np.where(exits, s, -np.inf).max(axis=-1)
    others = s.copy()
    np.put_along_axis(others, own_token, -np.inf, axis=-1)
    causing = exits.any(axis=-1)  # [n, |B|]
    margin = np.where(causing, own - exit_best, np.inf)
    gap = np.where(causing, own - others.max(axis=-1), np.inf)
    delta_star = float(margin.min())
    site_gap_min = float(gap.min())
    worst_site, worst_member = np.unravel_index(int(np.argmin(margin)), margin.shape)
    has_worst = bool(causing.any())
    return BasinMargins(
        delta_star=delta_star,
        site_gap_min=site_gap_min,
        argmax_holds=site_gap_min >= 0.0,
        holds=site_gap_min >= 0.0 and delta_star > 0.0,
        k=int(causing.sum(axis=0).max()),
        max_exit_tokens=int(exits.sum(axis=-1).max()),
        n=n,
        q=q,
        basin_size=int(members.size),
        boundary_states=int(causing.any(axis=0).sum()),
        worst_state=int(members[worst_member]) if has_worst else -1,
        worst_site=int(worst_site) if has_worst else -1,
    )
