"""Matrix-free algebra of a Glauber chain from its compact score table (windows of 5 sites).

A chain of the paper's kernel (Proposition 1) whose site laws come from a table (a window of a
masked LM, :func:`glauber.core.restrict`, or any model tabulated by
:func:`glauber.exact.score_table.compact_score_table`) is determined by ``R = n q^(n-1)`` rows
of ``q`` conditionals, one per class ``c = (s, x_{-s})``: ``P = A B`` with ``A[x, c] = 1/n``
for the ``n`` classes of ``x`` and ``B[c, y] = p_s(y_s | x_{-s})`` (the factorisation of
:mod:`glauber.exact.factored`). A window of 5 amino acids has ``S = 20^5 = 3,200,000`` states
and ``R = 800,000`` classes; its CSR ``P`` would hold ``S (n (q - 1) + 1) = 307`` million
non-zeros (3.7 GB), its expanded table ``[n, S, q]`` three arrays of 2.6 GB. Here nothing of
that size is formed: with ``w_s[x] = p_s(x_s | x_{-s})`` (``S`` entries per site, the table in
state order) a vector over the states viewed as ``(q^s, q, q^(n-1-s))``

* ``(P v)(x) = (1/n) sum_s sum_a w_s[x^(s->a)] v(x^(s->a))``: per site a product and a sum
  over axis 1, broadcast back;
* ``(mu P)(y) = (1/n) sum_s w_s[y] sum_a mu(y^(s->a))``: per site a sum over axis 1 times
  ``w_s``;
* ``mu A`` (the class masses) and ``nu B`` (a law over the states from class masses) are the
  two halves, and ``nu M = (nu B) A`` the factor ``M = B A`` (``R x R``, row-stochastic).

Each costs ``O(n S)`` operations and ``O(S)`` memory beyond ``w`` (``n S`` floats: 128 MB at
5 sites). The stationary law is solved on the factor (:func:`window_stationary`): ``nu = pi A``
is stationary for ``M`` and ``pi = nu B``; the returned ``pi`` is checked by its own residual
``||pi P - pi||_1`` over the states, and refused (:class:`StationaryResidualError`) above the
tolerance. The exact influence matrix (Definition 2) is read off the compact table
(:func:`compact_influence_matrix`): ``C`` needs no ``P``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse.linalg as spla

from glauber.core.arrays import log_softmax
from glauber.core.enumeration import context_digit_view
from glauber.core.memory import available_memory, check_fits, human_bytes
from glauber.errors import InvalidParameterError, StationaryResidualError
from glauber.exact import sparse
from glauber.exact.stationary import StationarySolution

#: Largest chain the matrix-free path takes: 5 sites of 20 amino acids (3,200,000 states,
#: an 800,000-row table). Above :data:`~glauber.exact.sparse.SPARSE_MAX_STATES` it is the
#: only path of :class:`~glauber.exact.chain.ExactChain` (the paper's kernel only).
WINDOW_MAX_STATES = 20**5
#: Default largest residual ``||pi P - pi||_1`` of a solved law (the sparse path's tolerance).
WINDOW_RESIDUAL_TOL = 1e-9
#: Iterations of each Krylov solver of :func:`window_stationary` (BiCGSTAB, then LGMRES).
WINDOW_SOLVER_ITERATIONS = (3000, 400)


def matrix_free(n: int, q: int) -> bool:
    """Whether :class:`~glauber.exact.chain.ExactChain` takes a chain of the paper's kernel
    matrix-free: above :data:`~glauber.exact.sparse.SPARSE_MAX_STATES` states, and only where
    the factor is smaller than the chain (``R = n q^(n-1) < S = q^n``, i.e. ``n < q``: a window
    of amino acids; 21 binary spins would have ten times more classes than states).

    Examples
    --------
    >>> matrix_free(5, 20), matrix_free(4, 20), matrix_free(21, 2)
    (True, False, False)
    """
    return q**n > sparse.SPARSE_MAX_STATES and n < q


def window_bytes(n: int, q: int) -> int:
    """Planned peak bytes of the matrix-free path (an upper estimate, measured in
    ``benchmarks/window5.py``): the compact scores, log-conditionals and conditionals
    (``3 x 8 S`` per site), the state-ordered conditionals ``w`` (``8 S`` per site), and about
    24 vectors of ``S`` float64 (the Krylov solvers' work vectors on the ``R = n S / q``
    classes, the law, its residual and the stepped starts)."""
    S = q**n
    return 8 * S * (4 * n + 24)


def check_window_fits(n: int, q: int) -> None:
    """Raise :class:`~glauber.errors.ResourceLimitError` unless the matrix-free path's planned
    peak (:func:`window_bytes`) fits in the memory available now; the message gives both."""
    check_fits(window_bytes(n, q),
               f"the matrix-free chain of {n} sites x {q} tokens ({q**n:,} states, "
               f"{n * q ** (n - 1):,} table rows; {human_bytes(window_bytes(n, q))} planned)",
               "free memory or use a window of fewer sites")


def window_fits(n: int, q: int) -> bool:
    """Whether :func:`check_window_fits` passes (what ``certify`` asks before making a
    5-site window exact by default)."""
    free = available_memory()
    return free is None or window_bytes(n, q) <= free


def compact_log_conditionals(compact_scores: np.ndarray, tau: float) -> np.ndarray:
    """``log p_tau(a | x_{-s})`` of every class: ``log_softmax(scores / tau)`` over the last axis
    of the compact table ``[n, q^(n-1), q]`` (the one temperature scaling of
    :func:`glauber.core.conditionals.log_conditionals`)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return log_softmax(compact_scores / tau)


class WindowOperator:
    """``P = A B`` of a Glauber kernel applied matrix-free from its compact conditionals.

    Parameters
    ----------
    compact : numpy.ndarray, shape (n, q**(n-1), q)
        ``p_s(a | x_{-s})``: row ``r`` of site ``s`` is the context ``x_{-s}`` in mixed radix
        over the other sites (site 0 most significant), as
        :func:`glauber.exact.score_table.compact_score_table` lays it out.

    Attributes
    ----------
    n, q, S, R : int
        Sites, tokens, states ``q^n`` and classes ``n q^(n-1)``.
    w : numpy.ndarray, shape (n, S)
        ``w[s, x] = p_s(x_s | x_{-s})``.

    Examples
    --------
    >>> op = WindowOperator(np.full((2, 3, 3), 1 / 3))  # two independent uniform sites
    >>> mu = np.zeros(9); mu[0] = 1.0
    >>> op.left(mu).round(4).tolist()  # stay 1/3, each of the 4 neighbours 1/6
    [0.3333, 0.1667, 0.1667, 0.1667, 0.0, 0.0, 0.1667, 0.0, 0.0]
    """

    def __init__(self, compact: np.ndarray) -> None:
        compact = np.asarray(compact, dtype=np.float64)
        if compact.ndim != 3 or compact.shape[2] ** (compact.shape[0] - 1) != compact.shape[1]:
            raise InvalidParameterError(
                f"compact conditionals must be [n, q**(n-1), q], got {compact.shape}")
        self.n, self.q = int(compact.shape[0]), int(compact.shape[2])
        self.S = self.q**self.n
        self.R = self.n * self.q ** (self.n - 1)
        self.w = np.empty((self.n, self.S), dtype=np.float64)
        for s in range(self.n):
            shape = self.site_shape(s)
            self.w[s].reshape(shape)[:] = compact[s].reshape(
                shape[0], shape[2], self.q).transpose(0, 2, 1)

    def site_shape(self, s: int) -> tuple[int, int, int]:
        """A vector over the states viewed as ``(q^s, q, q^(n-1-s))``: axis 1 is ``x_s``."""
        return (self.q**s, self.q, self.q ** (self.n - 1 - s))

    @property
    def terms(self) -> int:
        """Most products summed into one entry of ``mu P`` or ``P v`` (``n q``): the ``k`` of
        the rounding bound ``gamma_k`` of a step (Higham, *Accuracy and Stability*, Lemma 3.1)."""
        return self.n * self.q

    def right(self, v: np.ndarray) -> np.ndarray:
        """``P v`` (``v`` of shape ``(S,)``, or ``(S, k)``: column by column)."""
        if v.ndim == 2:
            return np.stack([self.right(col) for col in v.T], axis=1)
        out = np.zeros(self.S, dtype=np.float64)
        for s in range(self.n):
            w = self.w[s].reshape(self.site_shape(s))
            inner = (w * v.reshape(self.site_shape(s))).sum(axis=1, keepdims=True)
            out.reshape(self.site_shape(s))[:] += inner
        return out / self.n

    def left(self, mu: np.ndarray) -> np.ndarray:
        """``mu P`` (``mu`` of shape ``(S,)``, or ``(S, k)``: laws as columns, one by one)."""
        if mu.ndim == 2:
            return np.stack([self.left(col) for col in mu.T], axis=1)
        return self.spread(self.classes(mu))

    def classes(self, mu: np.ndarray) -> np.ndarray:
        """``mu A``: the mass of each class ``(s, x_{-s})`` divided by ``n`` (``(R,)``,
        site-major)."""
        parts = [mu.reshape(self.site_shape(s)).sum(axis=1).ravel() for s in range(self.n)]
        return np.concatenate(parts) / self.n

    def spread(self, nu: np.ndarray) -> np.ndarray:
        """``nu B``: each class's mass spread over its ``q`` states by its conditional."""
        width = self.R // self.n
        out = np.zeros(self.S, dtype=np.float64)
        for s in range(self.n):
            a, _, c = self.site_shape(s)
            part = nu[s * width:(s + 1) * width].reshape(a, 1, c)
            out.reshape(self.site_shape(s))[:] += part * self.w[s].reshape(self.site_shape(s))
        return out

    def factor_left(self, nu: np.ndarray) -> np.ndarray:
        """``nu M = (nu B) A`` on the ``R`` classes."""
        return self.classes(self.spread(nu))

    def dense(self) -> np.ndarray:
        """``P`` as a dense array (small chains only: what the tests compare against)."""
        return self.left(np.eye(self.S)).T


@dataclass(frozen=True)
class WindowStationary:
    """The stationary law of a matrix-free chain, with its accuracy statement.

    Attributes
    ----------
    solution : StationarySolution
        ``pi`` (method ``"factored"``), its residual ``||pi P - pi||_1`` over the states and the
        negative mass clipped.
    factor_residual : float
        ``||nu M - nu||_1`` of the solved class law ``nu`` (``pi``'s own residual is at most
        it: ``pi P - pi = (nu M - nu) B`` and ``B`` is stochastic).
    iterations : str
        Which solver met the tolerance.
    accuracy : str
        What is guaranteed about ``pi``.
    """

    solution: StationarySolution
    factor_residual: float
    iterations: str
    accuracy: str


def window_stationary(op: WindowOperator, tol: float = WINDOW_RESIDUAL_TOL) -> WindowStationary:
    """The stationary law of ``P = A B`` by a Krylov solve on the factor ``M = B A``.

    ``nu (I - M) = 0`` with ``sum nu = 1`` (the bordered system of
    :func:`glauber.exact.stationary.iterative_stationary`, ``R`` unknowns instead of ``S``),
    BiCGSTAB then LGMRES, matrix-free; then ``pi = nu B``, negatives clipped, renormalised, and
    ``||pi P - pi||_1`` computed over all ``S`` states. Normwise accurate only:
    ``||pi~ - pi||_TV <= 2 ||r||_1 t_mix(1/4)``
    (:func:`glauber.exact.sparse.stationary_tv_error_bound`), which the caller states with its
    own bound on ``t_mix(1/4)``; small entries carry no relative accuracy.

    Raises
    ------
    StationaryResidualError
        If neither solver reaches ``||pi P - pi||_1 <= tol`` (with the clipped mass): a slow,
        metastable chain's law is refused rather than reported (``error.residual`` holds the
        best residual reached).
    """
    R = op.R

    def bordered(v: np.ndarray) -> np.ndarray:
        out = v - op.factor_left(v)
        out[-1] = v.sum()
        return out

    system = spla.LinearOperator((R, R), matvec=bordered, dtype=np.float64)
    b = np.zeros(R)
    b[-1] = 1.0
    x = np.full(R, 1.0 / R)
    best = math.inf
    for solver, maxiter in zip((spla.bicgstab, spla.lgmres), WINDOW_SOLVER_ITERATIONS):
        x, _ = solver(system, b, x0=x, rtol=1e-14, atol=0.0, maxiter=maxiter)
        found = _checked(op, x, solver.__name__)
        if found is not None:
            best = min(best, found.solution.residual_l1 + found.solution.clipped_mass)
            if best <= tol:
                return found
        x = np.full(R, 1.0 / R) if found is None else x
    raise StationaryResidualError(
        f"the stationary law of this {op.S:,}-state chain was not solved to "
        f"||pi P - pi||_1 <= {tol:.1e} (best {best:.3g}, clipped mass included): the chain is "
        "probably metastable at this temperature; raise tau, use a window of fewer sites, or "
        "accept a larger tolerance (the TV error is at most 2 ||r||_1 t_mix(1/4))", best)


def _checked(op: WindowOperator, nu: np.ndarray, name: str) -> WindowStationary | None:
    """``pi = nu B`` clipped and renormalised, with both residuals (None when unusable)."""
    if not np.isfinite(nu).all() or nu.sum() <= 0:
        return None
    total = float(nu.sum())
    clipped = float(np.clip(-nu, 0.0, None).sum()) / total
    nu = np.clip(nu, 0.0, None)
    nu /= nu.sum()
    pi = op.spread(nu)
    pi /= pi.sum()
    residual = float(np.abs(op.left(pi) - pi).sum())
    factor_residual = float(np.abs(op.factor_left(nu) - nu).sum())
    solution = StationarySolution(pi=pi, method="factored", residual_l1=residual,
                                  clipped_mass=clipped)
    return WindowStationary(
        solution=solution, factor_residual=factor_residual, iterations=name,
        accuracy=(f"a matrix-free {name} solve on the {op.R:,}-class factor M = B A with "
                  f"||pi P - pi||_1 = {residual:.1e} over the {op.S:,} states: normwise, "
                  "||pi~ - pi||_TV <= 2 ||r||_1 t_mix(1/4) (stationary_tv_error_bound); "
                  "entries below the residual carry no relative accuracy"))


def compact_influence_matrix(compact: np.ndarray) -> np.ndarray:
    """Exact ``C[i, j] = c_ij(tau)`` (Definition 2) from the compact conditionals.

    ``c_ij = sup ||p_i(. | x_{-i}) - p_i(. | y_{-i})||_TV`` over contexts differing only at
    ``j``: the rows of site ``i``'s compact table are its contexts, so the pairs are the rows
    that differ in the digit of ``j``; the same TVs as
    :func:`glauber.exact.influence.influence_matrix` on the expanded table, each formed once
    instead of ``q`` times.

    Parameters
    ----------
    compact : numpy.ndarray, shape (n, q**(n-1), q)

    Returns
    -------
    numpy.ndarray, shape (n, n), zero diagonal.

    Examples
    --------
    >>> compact_influence_matrix(np.full((2, 2, 2), 0.5)).tolist()
    [[0.0, 0.0], [0.0, 0.0]]
    """
    n, _, q = compact.shape
    C = np.zeros((n, n), dtype=np.float64)
    for i in range(n):
        for j in range(n):
            if j == i:
                continue
            view = context_digit_view(compact[i], n, q, i, j)
            for a in range(q - 1):
                tv = 0.5 * np.abs(view[:, a:a + 1] - view[:, a + 1:]).sum(axis=-1)
                C[i, j] = max(C[i, j], float(tv.max()))
    return C


def state_tokens(index: np.ndarray, n: int, q: int) -> np.ndarray:
    """The states ``[B, n]`` of mixed-radix indices ``[B]`` (site 0 most significant)."""
    index = np.asarray(index, dtype=np.int64)
    return np.stack([(index // q ** (n - 1 - s)) % q for s in range(n)], axis=-1)


__all__ = [
    "WINDOW_MAX_STATES",
    "WINDOW_RESIDUAL_TOL",
    "WindowOperator",
    "WindowStationary",
    "check_window_fits",
    "compact_influence_matrix",
    "compact_log_conditionals",
    "matrix_free",
    "state_tokens",
    "window_bytes",
    "window_fits",
    "window_stationary",
]
