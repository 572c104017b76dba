"""Exact transition matrices of every kernel of :mod:`glauber.core.kernel_spec` over ``V^n``.

A kernel is built from its *site kernels*: ``K_i(x, x^(i -> a)) = rows[i, x, a]``, every other
entry of row ``x`` zero (``a = x_i`` is the probability of staying). :func:`site_log_rows` forms
them in log space from the model's log-conditionals:

* Gibbs updates: ``rows[i, x, a] = r(a | x_{-i})``, the conditional or its ``epsilon`` mixture
  (:func:`glauber.theory.site_updates.mixture_log_probs`);
* Metropolis-Hastings updates for ``pi ∝ exp(-E / tau)``: ``r(a) min(1, R)`` off the current
  token (:func:`glauber.theory.site_updates.log_acceptance`) and the rejection mass
  ``r(x_i) + sum_{a != x_i} r(a) (1 - min(1, R))`` on it, formed as a sum of non-negative terms
  (no cancellation).

The scans combine them (docs/theory.md, "Other kernels"):

* ``random``: ``P = (1/n) sum_i K_i`` (:class:`~glauber.exact.chain.ExactChain` builds it from
  the rows, as for the paper's kernel);
* ``sweep``: ``P = K_0 K_1 ... K_{n-1}`` (:func:`sweep_matrix`);
* ``shuffled``: ``P = (1/n!) sum_sigma K_{sigma_1} ... K_{sigma_n}``, the one-pass kernel averaged
  over the ``n!`` orders (:func:`shuffled_matrix`). It is formed without enumerating orders: with
  ``F(T)`` the sum over the orders of a subset ``T`` of the sites of their products,
  ``F(T) = sum_{i in T} F(T - {i}) K_i`` (``i`` updated last), ``P = F(all) / n!``: ``n 2^(n-1)``
  sparse products, holding ``C(n, k)`` matrices at level ``k``. Refused beyond
  :data:`SHUFFLED_MAX_ENTRIES` stored entries at one level (10 binary sites fit; 12 do not).

When the site kernels are Gibbs updates (their rows depend on ``x`` only through ``x_{-i}``), a
scan factors through classes (:class:`ScanFactor`), as the random scan does in
:mod:`~glauber.exact.factored`: ``K_i = A_i W_i`` with ``A_i`` the indicator of the class
``x_{-i}`` and ``W_i`` (``q^(n-1) x S``) the law after the update. A sweep's row from ``x``
depends only on ``x_{-0}`` (site 0 is redrawn first), so ``P = A_0 G`` with
``G = W_0 K_1 ... K_{n-1}`` (``q^(n-1)`` classes); a shuffled pass starts at site ``i`` with
probability ``1/n``, so ``P = (1/n) sum_i A_i G_i`` with ``G_i = W_i F(others) / (n-1)!``
(``n q^(n-1)`` classes). Then ``P^t = A M^(t-1) G`` with ``M = G A`` small, the stationary law
is ``nu G`` for the stationary ``nu`` of ``M``, and the non-zero eigenvalues of ``P`` are those
of ``M``: a window of three amino-acid sites (8,000 states) has 400 classes for a sweep.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np
import scipy.sparse as sp

from glauber.core.arrays import log_softmax, logsumexp
from glauber.core.enumeration import all_states, neighbour_indices
from glauber.core.kernel_spec import KernelSpec, Schedule, parse_schedule
from glauber.errors import InvalidParameterError, StateSpaceTooLargeError
from glauber.exact.factored import FACTORED_MAX_ELEMENTS, FactoredGlauber
from glauber.theory.site_updates import (
    energy_from_own_terms,
    log_acceptance,
    mixture_log_probs,
)

#: Most stored entries of the sparse matrices at one level of the shuffled scan's recursion.
SHUFFLED_MAX_ENTRIES = 2**25


# ----------------------------------------------------------------------- energies and targets
def own_scores(scores: np.ndarray) -> np.ndarray:
    """``scores[k, x, x_k]``: each site's score of its own token, ``[n, S] -> [n, S]`` from the
    table ``[n, S, q]`` (states in mixed radix)."""
    n, S, q = scores.shape
    digits = all_states(n, q).T  # [n, S]
    return np.take_along_axis(scores, digits[:, :, None], axis=2)[..., 0]


def energies(scores: np.ndarray, energy: str) -> np.ndarray:
    """``E(x)`` of every state: ``-sum_k log p_1(x_k | x_{-k})`` (``"pll"``) or
    ``-sum_k s_k(x_k; x_{-k})`` (``"logits"``), from the score table ``[n, S, q]`` at ``tau = 1``.

    Raises
    ------
    InvalidParameterError
        If ``energy`` is neither.

    Examples
    --------
    >>> scores = np.zeros((1, 2, 2)); scores[0, :, 1] = np.log(3.0)  # p(1) = 3/4 at one site
    >>> energies(scores, "pll").round(6).tolist(), energies(scores, "logits").round(6).tolist()
    ([1.386294, 0.287682], [-0.0, -1.098612])
    """
    if energy == "pll":
        terms = own_scores(log_softmax(scores))
    elif energy == "logits":
        terms = own_scores(np.asarray(scores, dtype=np.float64))
    else:
        raise InvalidParameterError(f"energy must be 'pll' or 'logits', got {energy!r}")
    return energy_from_own_terms(terms.T)


def log_target(E: np.ndarray, tau: float) -> np.ndarray:
    """``log pi_tau(x) = -E(x)/tau - log Z``: the normalised Metropolis-Hastings target."""
    w = -np.asarray(E, dtype=np.float64) / tau
    return w - logsumexp(w)


# ------------------------------------------------------------------------------ site kernels
def site_log_rows(log_p: np.ndarray, spec: KernelSpec,
                  target: np.ndarray | None = None) -> np.ndarray:
    """``log K_i(x, x^(i -> a))`` for every site, state and token, ``[n, S, q]``.

    Parameters
    ----------
    log_p : numpy.ndarray, shape (n, S, q)
        ``log p_tau(a | x_{-i})`` (the chain's log-conditionals).
    spec : KernelSpec
        Its ``epsilon`` mixes the proposal; its ``energy`` (if any) asks for the
        Metropolis-Hastings correction.
    target : numpy.ndarray, shape (S,), optional
        ``log pi`` (up to a constant) of the Metropolis-Hastings target; required with an energy.

    Returns
    -------
    numpy.ndarray
        Rows of a stochastic matrix in log space (``logsumexp`` over ``a`` is 0).
    """
    log_r = mixture_log_probs(log_p, spec.epsilon)
    if spec.energy is None:
        return log_r
    if target is None:
        raise InvalidParameterError("a Metropolis-Hastings kernel needs its log target")
    n, S, q = log_p.shape
    nb = neighbour_indices(n, q)
    own = np.take_along_axis(log_r, all_states(n, q).T[:, :, None], axis=2)  # log r(x_i)
    log_acc = log_acceptance(target[None, :, None], target[nb], log_r, own)
    move = log_r + log_acc
    is_own = nb == np.arange(S)[None, :, None]
    # rejection mass: r(x_i) + sum_{a != x_i} r(a) (1 - acceptance), each term >= 0
    with np.errstate(divide="ignore"):
        reject = np.where(is_own, log_r, log_r + _log1mexp(log_acc))
    stay = logsumexp(reject, axis=2)
    return np.where(is_own, stay[:, :, None], move)


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 - e^x)`` for ``x <= 0`` (``-inf`` at 0), accurate on both sides of ``-log 2``."""
    x = np.minimum(x, 0.0)
    with np.errstate(divide="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def site_kernel(rows: np.ndarray, i: int) -> sp.csr_matrix:
    """``K_i`` as CSR ``[S, S]`` from the site rows ``[n, S, q]`` (linear)."""
    n, S, q = rows.shape
    nb = neighbour_indices(n, q)[i]
    return sp.csr_matrix(
        (rows[i].ravel(), (np.repeat(np.arange(S), q), nb.ravel())), shape=(S, S)
    )


def sweep_matrix(rows: np.ndarray, order: list[int] | None = None) -> sp.csr_matrix:
    """``K_{sigma_1} ... K_{sigma_n}``: one pass in the order ``sigma`` (default ``0..n-1``)."""
    n = rows.shape[0]
    sigma = range(n) if order is None else order
    P = None
    for i in sigma:
        K = site_kernel(rows, int(i))
        P = K if P is None else (P @ K).tocsr()
    return P


def shuffled_matrix(rows: np.ndarray) -> sp.csr_matrix:
    """``(1/n!) sum_sigma K_{sigma_1} ... K_{sigma_n}`` by the recursion over subsets of the
    module docstring.

    Raises
    ------
    StateSpaceTooLargeError
        If a level of the recursion would hold more than :data:`SHUFFLED_MAX_ENTRIES` entries.
    """
    n, S, q = rows.shape
    _check_shuffled_size(n, q, S, S)
    kernels = [site_kernel(rows, i) for i in range(n)]
    return _subset_sum(sp.identity(S, format="csr"), kernels, list(range(n))) / math.factorial(n)


def _check_shuffled_size(n: int, q: int, S: int, rows_out: int) -> None:
    worst = max(math.comb(n, k) * rows_out * min(q**k, S) for k in range(n + 1))
    if worst > SHUFFLED_MAX_ENTRIES:
        raise StateSpaceTooLargeError(
            f"the shuffled scan of {n} sites over {q} tokens sums over n! orders through "
            f"2^{n} partial products holding up to {worst:,} entries at once, over the limit "
            f"SHUFFLED_MAX_ENTRIES = {SHUFFLED_MAX_ENTRIES:,}; use fewer sites (or the sweep)"
        )


def _subset_sum(start: sp.csr_matrix, kernels: list[sp.csr_matrix],
                sites: list[int]) -> sp.csr_matrix:
    """``sum over the orders sigma of `sites` of start K_{sigma_1} ... K_{sigma_m}``."""
    level = {frozenset(): start}
    for size in range(1, len(sites) + 1):
        level = {
            frozenset(T): sum((level[frozenset(T) - {i}] @ kernels[i] for i in T),
                              sp.csr_matrix(start.shape)).tocsr()
            for T in combinations(sites, size)
        }
    return level[frozenset(sites)]


# --------------------------------------------------------------------------------- factors
def class_indices(n: int, q: int) -> np.ndarray:
    """``[n, S]``: the class ``(i, x_{-i})`` of every state at every site, site-major
    (``i q^(n-1) + index of x_{-i}``), as in :class:`~glauber.exact.factored.FactoredGlauber`."""
    x = np.arange(q**n)
    width = q ** (n - 1)
    return np.stack([
        s * width + (x // q ** (n - s)) * q ** (n - 1 - s) + x % q ** (n - 1 - s)
        for s in range(n)
    ])


def _update_from_class(rows: np.ndarray, i: int) -> sp.csr_matrix:
    """``W_i`` (``q^(n-1) x S``): the law after updating site ``i`` from each class ``x_{-i}``
    (Gibbs rows, which depend on ``x`` only through ``x_{-i}``)."""
    n, S, q = rows.shape
    own = all_states(n, q)[:, i]
    cls = class_indices(n, q)[i] - i * q ** (n - 1)
    return sp.csr_matrix((rows[i, np.arange(S), own], (cls, np.arange(S))),
                         shape=(q ** (n - 1), S))


def _check_factor_size(R: int, S: int) -> None:
    if R * max(R, S) > FACTORED_MAX_ELEMENTS:
        raise StateSpaceTooLargeError(
            f"the scan's factor ({R} classes x {S} states) is over FACTORED_MAX_ELEMENTS = "
            f"{FACTORED_MAX_ELEMENTS} entries; use a smaller model"
        )


def sweep_factor(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(classes [1, S], G [q^(n-1), S])`` with ``P_sweep = A_0 G`` (Gibbs rows only; see the
    module docstring)."""
    n, S, q = rows.shape
    _check_factor_size(q ** (n - 1), S)
    G = _update_from_class(rows, 0)
    for i in range(1, n):
        G = (G @ site_kernel(rows, i)).tocsr()
    return class_indices(n, q)[:1], G.toarray()


def shuffled_factor(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(classes [n, S], G [n q^(n-1), S])`` with ``P_shuffled = (1/n) sum_i A_i G_i`` (Gibbs
    rows only; see the module docstring).

    Raises
    ------
    StateSpaceTooLargeError
        If the factor or the recursion over orders is too large.
    """
    n, S, q = rows.shape
    _check_factor_size(n * q ** (n - 1), S)
    _check_shuffled_size(n - 1, q, S, q ** (n - 1) * q)
    kernels = [site_kernel(rows, i) for i in range(n)]
    blocks = [
        _subset_sum(_update_from_class(rows, i), kernels, [j for j in range(n) if j != i])
        / math.factorial(n - 1)
        for i in range(n)
    ]
    return class_indices(n, q), np.vstack([b.toarray() for b in blocks])


class ScanFactor(FactoredGlauber):
    """The squaring algebra of :func:`glauber.exact.mixing.mixing_time` for ``P = A G``: ``A``
    averages ``k`` class indicators (``classes[s, x]``), ``G`` is a dense ``R x S`` matrix of laws.

    The worst-start search, the suspects and the shifted time (``Q = M^m`` stands for
    ``t = m + 1``) are those of :class:`~glauber.exact.factored.FactoredGlauber`; only ``M = G A``
    and :meth:`B` (``Q G``, a dense product) differ.

    Parameters
    ----------
    classes : numpy.ndarray of int, shape (k, S)
    G : numpy.ndarray, shape (R, S)
    pi : numpy.ndarray, shape (S,)
    threshold : float, optional
        As in :class:`~glauber.exact.factored.FactoredGlauber`.
    """

    def __init__(self, classes: np.ndarray, G: np.ndarray, pi: np.ndarray,
                 threshold: float | None = None) -> None:
        k, S = classes.shape
        R = G.shape[0]
        pi = np.asarray(pi, dtype=np.float64)
        if G.shape != (R, S) or pi.shape != (S,):
            raise InvalidParameterError(
                f"G must be [R, {S}] and pi [{S}]; got G {G.shape} and pi {pi.shape}"
            )
        _check_factor_size(R, S)
        #: Number of class maps averaged by ``A`` (FactoredGlauber's ``n``).
        self.n = k
        self.S, self.R, self.pi, self.G, self.classes = S, R, pi, G, classes
        self.threshold = threshold
        self.P = class_matrix(classes, G)
        self.suspects = np.zeros(0, dtype=np.int64)

    def B(self, Q: np.ndarray) -> np.ndarray:
        """``Q G`` (rows: laws over the ``S`` states)."""
        return Q @ self.G


def class_matrix(classes: np.ndarray, G: np.ndarray) -> np.ndarray:
    """``M = G A`` (``R x R``, row-stochastic): ``M[c, c'] = (1/k) sum_s G[c, {y : classes[s, y]
    = c'}]``."""
    k, S = classes.shape
    R = G.shape[0]
    M = np.zeros((R, R))
    for s in range(k):
        A = sp.csr_matrix((np.full(S, 1.0 / k), (np.arange(S), classes[s])), shape=(S, R))
        M += np.asarray((A.T @ G.T).T)
    return M


def factor_step(classes: np.ndarray, G: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """``mu P = (mu A) G`` for laws ``mu`` ``[S]`` or ``[B, S]`` (rows)."""
    k, S = classes.shape
    mu = np.atleast_2d(np.asarray(mu, dtype=np.float64))
    v = np.zeros((mu.shape[0], G.shape[0]))
    for s in range(k):
        np.add.at(v.T, classes[s], mu.T / k)
    return v @ G


def factor_rows(classes: np.ndarray, G: np.ndarray, states: np.ndarray) -> np.ndarray:
    """``P(x, .)`` for the states ``x`` listed (``[B] -> [B, S]``)."""
    return G[classes[:, states]].mean(axis=0)


# -------------------------------------------------------------------------------- annealing
def annealed_law(chain: Any, schedule: Schedule | str, start: np.ndarray, steps: int,
                 first_step: int = 1) -> np.ndarray:
    """The law after ``steps`` steps of ``chain``'s kernel under an annealing schedule:
    ``start P_{tau_1} P_{tau_2} ... P_{tau_steps}`` (``tau_t`` of step ``first_step + t - 1``).

    Each temperature's chain shares ``chain``'s score table (:meth:`ExactChain.at`).

    Parameters
    ----------
    chain : ExactChain
    schedule : Schedule or str
    start : numpy.ndarray, shape (S,)
        The law at step 0.
    steps : int
        Number of steps, >= 0.
    first_step : int
        The schedule's step number of the first step (resumed runs), >= 1.
    """
    schedule = parse_schedule(schedule)
    mu = np.asarray(start, dtype=np.float64).copy()
    if mu.shape != (chain.num_states,):
        raise InvalidParameterError(
            f"start must be a law over the {chain.num_states} states, got shape {mu.shape}"
        )
    chains: dict[float, Any] = {}
    for tau in schedule.temperatures(first_step, steps):
        tau = float(tau)
        if tau not in chains:
            chains[tau] = chain if tau == chain.tau else chain.at(tau)
        mu = chains[tau].step_law(mu)
    return mu


__all__ = [
    "annealed_law",
    "class_indices",
    "class_matrix",
    "energies",
    "factor_rows",
    "factor_step",
    "log_target",
    "own_scores",
    "ScanFactor",
    "SHUFFLED_MAX_ENTRIES",
    "shuffled_factor",
    "shuffled_matrix",
    "site_kernel",
    "site_log_rows",
    "sweep_factor",
    "sweep_matrix",
]
