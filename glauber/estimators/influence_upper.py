"""Rigorous UPPER bounds on Definition 2's influence matrix, over every context.

``influence_upper_bound(model, tau)`` returns ``C`` with ``C[i, j] >= c_ij(tau)``, the supremum
over every pair of contexts of the allowed vocabulary that differ only at ``j`` (the searched and
sampled matrices of :mod:`glauber.estimators.influence` are LOWER bounds). Which argument gives
the bound, in order of preference (docs/theory.md, "Upper bounds on influence"):

* ``"tabulated"``: the model is small enough to enumerate (``q**n <= max_states``, on the host,
  or ``tabulate=True``): its ``n q^(n-1)`` distinct conditionals are tabulated once and ``C(tau)``
  is the exact supremum at every ``tau``, plus the rounding of the softmax
  (:func:`glauber.theory.floating.softmax_tv_rounding`). Where the model also has a closed form
  the smaller of the two is kept, entry by entry. For a masked LM (``tabulate=True``) the value
  is exact for the chain of the table built here: its float32 scores move with the batch, so
  tabulate the score table the exact chain uses (``ExactChain(model).tabulated()``, as
  :func:`glauber.certify.certify` does) to speak of that chain.
* the model's own ``oscillation_upper_bound()``, a tau-free ``Delta`` turned into
  ``C = tanh(Delta / (4 tau))`` rounded up (the sharper Lemma 6): ``"closed-form"`` for pairwise
  toys (Ising, Potts, asymmetric Ising, Curie–Weiss), ``"layernorm-head"`` for masked LMs whose
  head ends in LayerNorm -> linear decoder (from the weights alone; windows of them included).
* otherwise :class:`~glauber.errors.UnboundableModelError`, naming what is missing.

Every summary (row and column sums, largest singular value, spectral radius) is computed so
that it stays an upper bound after rounding (:mod:`glauber.theory.verified_power`), and the
corrected Theorem 5 certificates of ``C`` are rigorous: ``t_mix(eps) <= tmix_bound``.

:class:`UpperBoundSource` holds the tau-free part (the table or ``Delta``), so a sweep or a
bisection over temperatures costs no model rows after the first.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from glauber.core.arrays import JsonResult, to_numpy
from glauber.core.conditionals import answers_on_host
from glauber.core.enumeration import all_states, context_digit_view
from glauber.core.protocol import ConditionalModel, check_model
from glauber.core.validation import check_eps, check_positive_int, check_tau
from glauber.errors import UnboundableModelError
from glauber.theory.contraction import ContractionCertificate, certify_contraction
from glauber.theory.floating import softmax_tv_rounding
from glauber.theory.influence_bounds import influence_matrix_bound
from glauber.theory.verified_power import (
    alpha_upper,
    spectral_norm_upper,
    weighted_tmix_upper,
)

#: Largest ``q**n`` tabulated by default (every 3-site window of a 20-letter vocabulary).
TABULATE_MAX_STATES = 8192
#: Rows per model call when tabulating.
TABLE_BATCH = 4096


@dataclass(frozen=True)
class InfluenceUpperBound(JsonResult):
    """Result of :func:`influence_upper_bound`: ``C >= c(tau)`` entrywise, over every context.

    Attributes
    ----------
    tau : float
    C : ndarray, shape (n, n)
        ``C[i, j] >= c_ij(tau)`` (zero diagonal), rounding included.
    Delta : ndarray, shape (n, n)
        Tau-free ``Delta[i, j] >=`` Lemma 6's oscillation (zero diagonal).
    method : str
        The argument behind the bound: ``"tabulated"``, ``"closed-form"``,
        ``"layernorm-head"``, or several joined by ``"+"`` when entries differ.
    methods : tuple of str
        The arguments used, indexed by ``method_index``.
    method_index : ndarray of int, shape (n, n)
        Which of ``methods`` gave each entry of ``C`` (-1 on the diagonal).
    is_upper_bound : bool
        Always True: the certificates below are proofs.
    alpha_row, alpha_col, alpha_spectral, spectral_radius : float
        Upper bounds on the largest row sum, column sum, singular value and the spectral radius
        of ``c(tau)``, each rounded up (Collatz–Wielandt for the last two).
    contraction : ContractionCertificate
        The corrected Theorem 5 certificates of ``C`` (rigorous).
    tmix_bound : float
        The best proved bound on ``t_mix(eps)``: the best rigorous certificate of
        ``contraction`` or the Collatz–Wielandt one
        (:func:`glauber.theory.verified_power.weighted_tmix_upper`); ``inf`` when none.
    certified : bool
        ``tmix_bound`` is finite (``spectral_radius < 1``).
    eps : float
    tolerance : float
        Rounding added to each tabulated entry (0 without a table).
    details : dict
        What the argument used (the head's size and eps, the pair of tokens attaining the
        bound, ...).
    rows : int
        Model rows asked to build the bound (a masked LM's table; 0 for a closed form, the
        weights, a toy or a score table).
    seconds : float
        Time to build the tau-free part and evaluate it at ``tau``.
    """

    tau: float
    C: np.ndarray
    Delta: np.ndarray
    method: str
    methods: tuple[str, ...]
    method_index: np.ndarray
    is_upper_bound: bool
    alpha_row: float
    alpha_col: float
    alpha_spectral: float
    spectral_radius: float
    contraction: ContractionCertificate
    tmix_bound: float
    certified: bool
    eps: float
    tolerance: float = 0.0
    details: dict = field(default_factory=dict)
    rows: int = 0
    seconds: float = 0.0


class UpperBoundSource:
    """The tau-free part of :func:`influence_upper_bound`, evaluated at any temperature.

    Parameters
    ----------
    model : ConditionalModel
    tabulate : bool, optional
        Tabulate every conditional (exact values). Default: when ``q**n <= max_states`` and the
        model answers on the host (a toy, or the score table of an exact window chain).
    max_states : int
        Largest ``q**n`` tabulated by default.
    batch_size : int
        Rows per model call when tabulating.

    Attributes
    ----------
    Delta : ndarray, shape (n, n)
        The tau-free oscillation bound.
    monotone : bool
        ``C(tau)`` is non-increasing in ``tau`` (``tanh(Delta / 4 tau)``; a tabulated exact
        supremum need not be).
    rows : int
        Rows the table asked of a model that answers off the host (a masked LM; 0 for a toy or
        a score table, whose rows are evaluations or lookups).

    Raises
    ------
    UnboundableModelError
        If the model has neither a closed form nor a LayerNorm head and is too large to
        tabulate.
    """

    def __init__(self, model: ConditionalModel, tabulate: bool | None = None,
                 max_states: int = TABULATE_MAX_STATES, batch_size: int = TABLE_BATCH) -> None:
        started = time.perf_counter()
        model = check_model(model)
        self.n, self.q = int(model.n), int(model.q)
        max_states = check_positive_int(max_states, "max_states")
        batch_size = check_positive_int(batch_size, "batch_size")
        self.rows = 0
        self.details: dict[str, Any] = {}
        self._table: list[np.ndarray] | None = None
        self._C_at: dict[float, tuple[np.ndarray, float]] = {}
        self._closed: np.ndarray | None = None
        self.closed_method = ""
        hook = getattr(model, "oscillation_upper_bound", None)
        why = ("it has no closed form (oscillation_upper_bound()) and no LayerNorm -> linear "
               "head evaluated in float64 (masked LMs built with head='auto')")
        if hook is not None:
            try:
                bound = hook()
            except UnboundableModelError as exc:
                if tabulate is False:
                    raise
                why = str(exc)
            else:
                self._closed = np.asarray(bound.Delta, dtype=np.float64)
                self.closed_method = str(bound.method)
                self.details = dict(bound.details)
        on_host = tabulate is not False and answers_on_host(model)
        if tabulate is None:
            tabulate = self.q ** self.n <= max_states and on_host
        if tabulate:
            self._tabulate(model, batch_size)
            if on_host:  # table lookups or toy evaluations: no model rows to speak of
                self.rows = 0
        elif self._closed is None:
            raise UnboundableModelError(
                f"no rigorous upper bound on the influence of "
                f"{getattr(model, 'name', type(model).__name__)}: {why}; and it is not "
                f"tabulated (q**n = {self.q}**{self.n} states, max_states = {max_states}, or "
                "it answers off the host): use a window of fewer sites, or tabulate=True to "
                "spend n q^(n-1) model rows"
            )
        self.monotone = self._table is None
        self.Delta = self._oscillation()
        self.seconds = time.perf_counter() - started

    # ----------------------------------------------------------------------- tau-free part
    def _tabulate(self, model: ConditionalModel, batch_size: int) -> None:
        """Scores of the ``n q^(n-1)`` distinct conditionals: ``table[i][context, a]``, the
        contexts of the other sites in mixed radix (site 0 most significant)."""
        n, q = self.n, self.q
        others = all_states(n - 1, q, max(1, q ** (n - 1))) if n > 1 else np.zeros((1, 0),
                                                                                  np.int64)
        table = []
        for i in range(n):
            states = np.insert(others, i, 0, axis=1)
            rows = []
            for lo in range(0, states.shape[0], batch_size):
                chunk = states[lo:lo + batch_size]
                s = model.scores(chunk, np.full(chunk.shape[0], i, dtype=np.int64))
                rows.append(np.asarray(to_numpy(s), dtype=np.float64))
            site = np.concatenate(rows)
            if not np.isfinite(site).all():
                raise UnboundableModelError(
                    f"the model returned non-finite scores at site {i}; no bound on them"
                )
            table.append(site)
            self.rows += states.shape[0]
        self._table = table
        self._max_abs = max(float(np.abs(t).max()) for t in table)

    def _pairs(self, i: int, j: int, values: np.ndarray) -> np.ndarray:
        """``values`` of site ``i`` viewed as ``[before, q, after, ...]`` with axis 1 the token at
        ``j`` (the other sites of ``i``'s table in mixed radix)."""
        return context_digit_view(values, self.n, self.q, i, j)

    def _oscillation(self) -> np.ndarray:
        if self._table is None:
            return self._closed.copy()
        n = self.n
        D = np.zeros((n, n))
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                v = self._pairs(i, j, self._table[i])  # [before, b, after, a]
                for b in range(self.q - 1):  # (b, b') and (b', b) have the same oscillation
                    diff = v[:, b:b + 1] - v[:, b + 1:]  # [before, b' > b, after, a]
                    D[i, j] = max(D[i, j], float((diff.max(axis=-1) - diff.min(axis=-1)).max()))
        # each score difference within u of its value (at most 2 max|s|), max - min within u
        # relative: so within 2 u (2 max|s|) + u D of the exact oscillation of the table
        u = 2.0**-53
        D = np.nextafter(D * (1.0 + 4.0 * u) + 8.0 * u * self._max_abs, np.inf)
        np.fill_diagonal(D, 0.0)
        if self._closed is not None:
            D = np.minimum(D, self._closed)
        return D

    @property
    def tabulated(self) -> bool:
        """The exact values of a table are part of the bound."""
        return self._table is not None

    # -------------------------------------------------------------------------- at tau
    def tabulated_C(self, tau: float) -> tuple[np.ndarray, float]:
        """The exact supremum of Definition 2 from the table, plus rounding, and the rounding.

        Kept per temperature: a bracket asks each temperature of its grid and bisection
        several times (the exact lower side and the upper side read the same values), and a
        5-site window's table holds 800,000 rows. Each call returns a copy.
        """
        key = float(tau)
        if key not in self._C_at:
            self._C_at[key] = self._tabulated_C(key)
        C, tol = self._C_at[key]
        return C.copy(), tol

    def _tabulated_C(self, tau: float) -> tuple[np.ndarray, float]:
        n, q = self.n, self.q
        tol = softmax_tv_rounding(self._max_abs, tau, q)
        C = np.zeros((n, n))
        for i in range(n):
            z = self._table[i] / tau
            z = z - z.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            for j in range(n):
                if i == j:
                    continue
                v = self._pairs(i, j, p)  # [before, b, after, a]
                # each unordered pair of tokens b < b' at j once: the TVs of the full
                # [b, b'] square, half the work and a q-th of its memory, in one buffer
                buf = np.empty((v.shape[0], q - 1) + v.shape[2:])
                l1 = 0.0
                for b in range(q - 1):
                    out = buf[:, :q - 1 - b]
                    np.subtract(v[:, b:b + 1], v[:, b + 1:], out=out)
                    np.abs(out, out=out)
                    l1 = max(l1, float(out.sum(axis=-1).max()))
                C[i, j] = 0.5 * l1  # exact: halving is
        C = np.minimum(np.nextafter(C + tol, np.inf), 1.0)
        np.fill_diagonal(C, 0.0)
        return C, tol

    def C(self, tau: float) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], float]:
        """``(C, method_index, methods, tolerance)`` at ``tau``: the smallest bound of each
        entry among the arguments available."""
        tau = check_tau(tau)
        names, mats, tol = [], [], 0.0
        if self._table is not None:
            Ct, tol = self.tabulated_C(tau)
            names.append("tabulated")
            mats.append(Ct)
        if self._closed is not None:
            names.append(self.closed_method)
            mats.append(influence_matrix_bound(self._closed, tau))
        stack = np.stack(mats)
        pick = np.argmin(stack, axis=0)
        C = np.take_along_axis(stack, pick[None], axis=0)[0]
        off = ~np.eye(self.n, dtype=bool)
        used = sorted(set(pick[off].tolist())) or [0]
        index = np.searchsorted(np.array(used), pick)
        index[~off] = -1
        np.fill_diagonal(C, 0.0)
        return C, index, tuple(names[k] for k in used), tol

    def rho(self, tau: float) -> float:
        """A float ``>= rho(c(tau))`` (Collatz–Wielandt on :meth:`C`)."""
        return weighted_tmix_upper(self.C(tau)[0], 0.25)[0]

    def at(self, tau: float, eps: float = 0.25) -> InfluenceUpperBound:
        """The full :class:`InfluenceUpperBound` at ``tau``."""
        started = time.perf_counter()
        tau = check_tau(tau)
        eps = check_eps(eps)
        C, index, methods, tol = self.C(tau)
        cert = certify_contraction(C, eps)
        rho, weighted = weighted_tmix_upper(C, eps)
        best = min(cert.best_bound, weighted)
        return InfluenceUpperBound(
            tau=tau, C=C, Delta=self.Delta.copy(), method="+".join(methods),
            methods=methods, method_index=index, is_upper_bound=True,
            alpha_row=alpha_upper(C, 1), alpha_col=alpha_upper(C, 0),
            alpha_spectral=spectral_norm_upper(C), spectral_radius=rho,
            contraction=cert, tmix_bound=float(best), certified=bool(math.isfinite(best)),
            eps=eps, tolerance=float(tol), details=dict(self.details), rows=int(self.rows),
            seconds=self.seconds + time.perf_counter() - started,
        )


def influence_upper_bound(
    model: ConditionalModel,
    tau: float,
    *,
    eps: float = 0.25,
    tabulate: bool | None = None,
    max_states: int = TABULATE_MAX_STATES,
    batch_size: int = TABLE_BATCH,
) -> InfluenceUpperBound:
    """A rigorous upper bound ``C >= c(tau)`` on Definition 2's influence, over every context.

    See the module docstring for the arguments tried; the corrected Theorem 5 certificates of
    the result prove ``t_mix(eps) <= tmix_bound`` when ``certified``.

    Parameters
    ----------
    model : ConditionalModel
        A toy, a masked LM (``head="auto"``), a window of either, or a score table.
    tau : float
        Temperature, finite and > 0.
    eps : float
        Target distance of the certificates, in (0, 1).
    tabulate : bool, optional
        Tabulate every conditional (exact; ``n q^(n-1)`` model rows). Default: for host models
        with ``q**n <= max_states``.
    max_states : int
        Largest ``q**n`` tabulated by default.
    batch_size : int
        Rows per model call when tabulating.

    Returns
    -------
    InfluenceUpperBound

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.
    InvalidProbabilityError
        If ``eps`` is not in (0, 1).
    UnboundableModelError
        If no argument applies (the message says what is missing and what to change).

    Examples
    --------
    >>> import networkx as nx
    >>> from glauber.toy_models import IsingModel
    >>> ub = influence_upper_bound(IsingModel(nx.cycle_graph(5)), 2.0, tabulate=False)
    >>> ub.method, round(float(ub.C[0, 1]), 6), ub.certified  # tanh(1/2) >= tanh(1)/2, exact
    ('closed-form', 0.462117, True)
    """
    tau = check_tau(tau)
    eps = check_eps(eps)
    source = UpperBoundSource(model, tabulate=tabulate, max_states=max_states,
                              batch_size=batch_size)
    return source.at(tau, eps)


__all__ = [
    "InfluenceUpperBound",
    "TABULATE_MAX_STATES",
    "UpperBoundSource",
    "influence_upper_bound",
]
