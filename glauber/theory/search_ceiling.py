"""What any search can realise of Definition 2 at a budget when a site's conditionals are i.i.d.

docs/theory.md, "Searching Definition 2 at a budget", statement 4 (*i.i.d. rows*). Let the
conditionals of site ``i`` at its ``N`` contexts, ``p(. | x_{-i})``, be i.i.d. random vectors,
independent across sites (the random-table family: ``s_i(a; x_{-i})`` i.i.d. normal per site,
context and token, plus a fixed bias). Conditional on the multiset of rows of site ``i``, their
assignment to contexts is a uniformly random permutation, independent of the other sites. A
search (adaptive, randomised, reading any other site) that asks an unasked context of site ``i``
therefore sees a row drawn uniformly from the rows not yet seen there: the rows it sees at ``i``,
in the order asked, are the first terms of a uniformly random ordering of the multiset, whatever
the method.

Let ``H`` be the graph on the ``N`` rows whose edges are the pairs at TV ``>= t``, and ``s*``
the length of the shortest prefix of a uniform ordering that holds an edge. Then
``P(s* <= s) = 1 - I_s(H) / binom(N, s)``, with ``I_s`` the number of independent ``s``-sets of
``H`` (:func:`first_edge_law`). With ``n = 2`` every two contexts of site ``i`` differ at the
other site only, so every pair is a candidate witness of ``c_ij`` and the searched entry is the
largest TV among the rows seen: for a search of ``B`` distinct queries,

* ``P(C_ij >= r c_ij) <= P(s_i* <= B)`` with ``t = r c_ij`` (equality for the search that asks
  its whole budget at site ``i``);
* ``rho(C) = sqrt(C_12 C_21)`` and ``C <= c`` entrywise, so ``rho(C) >= r rho(c)`` needs
  ``C_12 >= r^2 c_12`` and ``C_21 >= r^2 c_21``: with ``t = r^2 c_ij`` at each site and the
  prefixes at the two sites independent, ``P(rho(C) >= r rho(c)) <= P(s_1* + s_2* <= B)``.

:func:`iid_rows_ceiling` evaluates both exactly (integer counts of independent sets), which is
what ``benchmarks/influence_search.py`` prints as the ceiling of every method on the random
tables with two sites.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from glauber.core.validation import check_positive_int
from glauber.errors import InvalidParameterError

#: Absolute slack taken off every TV threshold, so that the rounding of the TVs (computed here
#: and by the search being judged) can only add edges, which only raises a ceiling.
THRESHOLD_SLACK = 1e-9


@dataclass(frozen=True)
class SearchCeiling:
    """Largest probabilities any search of ``budget`` distinct queries reaches, i.i.d. rows.

    Attributes
    ----------
    budget : int
        Distinct conditional queries, over both sites.
    ratio : float
        The fraction ``r`` of the exact value to reach.
    entries : tuple of float
        ``P(C_12 >= r c_12)`` and ``P(C_21 >= r c_21)`` bounded above (statement 4).
    rho : float
        ``P(rho(C) >= r rho(c))`` bounded above.
    """

    budget: int
    ratio: float
    entries: tuple[float, float]
    rho: float


def independent_set_counts(adjacent: ArrayLike, size: int) -> list[int]:
    """``I_0, ..., I_size``: the number of independent sets of each size of a simple graph.

    The independence polynomial by the vertex recursion ``I(G) = I(G - v) + x I(G - N[v])`` on a
    vertex of largest degree, isolated vertices contributing ``(1 + x)^k`` at once, truncated at
    degree ``size`` and memoised on the vertex set; exact integers.

    Parameters
    ----------
    adjacent : array_like of bool, shape (N, N)
        Symmetric adjacency matrix (the diagonal is ignored).
    size : int
        Largest set size counted (>= 0).

    Returns
    -------
    list of int
        ``size + 1`` counts.
    """
    A = np.asarray(adjacent, dtype=bool)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or not np.array_equal(A, A.T):
        raise InvalidParameterError("adjacent must be a symmetric square boolean matrix")
    if size < 0:
        raise InvalidParameterError(f"size must be >= 0, got {size}")
    N = A.shape[0]
    neighbours = [sum(1 << int(k) for k in np.flatnonzero(A[v]) if k != v) for v in range(N)]
    memo: dict[int, list[int]] = {}

    def poly(mask: int) -> list[int]:
        if mask in memo:
            return memo[mask]
        isolated, best, best_degree = 0, -1, 0  # isolated: the mask of degree-0 vertices
        rest = mask
        while rest:
            v = (rest & -rest).bit_length() - 1
            rest &= rest - 1
            degree = (neighbours[v] & mask).bit_count()
            if degree == 0:
                isolated |= 1 << v
            elif degree > best_degree:
                best, best_degree = v, degree
        k_free = isolated.bit_count()
        free = [math.comb(k_free, k) for k in range(min(k_free, size) + 1)]
        if best < 0:
            out = free
        else:
            rest = mask & ~isolated & ~(1 << best)
            without = poly(rest)
            with_v = poly(rest & ~neighbours[best])
            inner = [0] * (size + 1)
            for k, c in enumerate(without[: size + 1]):
                inner[k] += c
            for k, c in enumerate(with_v[:size]):
                inner[k + 1] += c
            out = [sum(free[a] * inner[k - a] for a in range(min(k, len(free) - 1) + 1))
                   for k in range(size + 1)]
        memo[mask] = out
        return out

    counts = poly((1 << N) - 1)
    return counts + [0] * (size + 1 - len(counts))


def first_edge_law(adjacent: ArrayLike, size: int) -> np.ndarray:
    """``P(s* <= s)`` for ``s = 0..size``: the shortest prefix of a uniformly random ordering of
    the vertices that holds an edge of the graph (statement 4 of docs/theory.md, "Searching
    Definition 2 at a budget").

    ``P(s* > s) = I_s / binom(N, s)``: the first ``s`` vertices of a uniform ordering are a
    uniform ``s``-set. Sizes above ``N`` repeat the value at ``N``.
    """
    A = np.asarray(adjacent, dtype=bool)
    N = A.shape[0]
    top = min(size, N)
    counts = independent_set_counts(A, top)
    law = [1.0 - counts[s] / math.comb(N, s) for s in range(top + 1)]
    return np.array(law + [law[-1]] * (size - top))


def _tv_graph(rows: np.ndarray, threshold_ratio: float) -> np.ndarray:
    """Pairs of rows whose TV is at least ``threshold_ratio`` of the largest, less the slack."""
    tv = 0.5 * np.abs(rows[:, None, :] - rows[None, :, :]).sum(axis=-1)
    A = tv >= threshold_ratio * float(tv.max()) - THRESHOLD_SLACK
    np.fill_diagonal(A, False)
    return A


def iid_rows_ceiling(rows: Sequence[ArrayLike], budget: int, ratio: float = 0.95) -> SearchCeiling:
    """The most any search of ``budget`` distinct queries reaches on a two-site model whose
    conditionals are i.i.d. across contexts and independent across sites (statement 4).

    Parameters
    ----------
    rows : sequence of two arrays of shape (N_i, q)
        The conditionals of each site, one row per context (the row at every value of the other
        site).
    budget : int
        Distinct conditional queries over both sites (>= 1).
    ratio : float, default 0.95
        The fraction ``r`` of the exact value to reach, in ``(0, 1]``.

    Returns
    -------
    SearchCeiling
        Upper bounds on the probability (over the model's draw, for any method) that an entry,
        and that the spectral radius, is reached to ``ratio``.

    Raises
    ------
    InvalidParameterError
        If ``rows`` does not hold two 2-D arrays with at least two rows each, ``budget`` is not
        a positive integer, or ``ratio`` is outside ``(0, 1]``.
    """
    budget = check_positive_int(budget, "budget")
    if not 0.0 < ratio <= 1.0:
        raise InvalidParameterError(f"ratio must be in (0, 1], got {ratio!r}")
    tables = [np.asarray(r, dtype=float) for r in rows]
    if len(tables) != 2 or any(t.ndim != 2 or t.shape[0] < 2 for t in tables):
        raise InvalidParameterError(
            "rows must hold the conditionals of exactly two sites, an array (contexts, tokens) "
            "with at least two contexts each: statement 4 is for n = 2")
    entries = tuple(float(first_edge_law(_tv_graph(t, ratio), budget)[budget]) for t in tables)
    first, second = (first_edge_law(_tv_graph(t, ratio * ratio), budget) for t in tables)
    # P(s_1* + s_2* <= B) = sum_s P(s_1* = s) P(s_2* <= B - s), prefixes independent.
    mass = np.diff(first, prepend=0.0)
    rho = float(sum(mass[s] * second[budget - s] for s in range(budget + 1)))
    return SearchCeiling(budget, float(ratio), (entries[0], entries[1]), min(rho, 1.0))
