"""The exact chain above the sparse limit: a window of 5 sites, matrix-free from its table.

``ExactChain(model, tau)`` returns a :class:`WindowChain` for the paper's kernel (random scan of
Gibbs updates) when ``q**n`` exceeds :data:`~glauber.exact.sparse.SPARSE_MAX_STATES` (``2**20``),
up to :data:`~glauber.exact.window.WINDOW_MAX_STATES` (``20^5 = 3,200,000``: 5 amino acids).
It reads only the compact score table (``n q^(n-1)`` rows,
:func:`~glauber.exact.score_table.compact_score_table`) and never forms ``P`` nor the expanded
``[n, S, q]`` arrays: everything goes through ``P = A B`` applied matrix-free
(:class:`~glauber.exact.window.WindowOperator`):

* the stationary law: a Krylov solve on the ``R = n q^(n-1)``-class factor ``M = B A``, its
  residual ``||pi P - pi||_1`` checked over all states and refused above the tolerance
  (:class:`~glauber.errors.StationaryResidualError`): normwise accurate;
* the exact influence matrix ``C`` and its rounding, from the table (no ``P``): corrected
  Theorem 5 on it is rigorous;
* the worst-start ``t_mix`` bracket of the 4-site path (:meth:`mixing_bracket`): corrected
  Theorem 5 above; the distances from three starts, stepped matrix-free with every step's
  rounding and ``pi``'s error subtracted, below;
* a proved lower bound on the absolute gap, ``(1 - rho(C))/n`` from the exact ``C``
  (:meth:`~glauber.exact.ExactChain.absolute_gap_lower_bound`), and an Arnoldi estimate of the
  gap on ``M`` (``P``'s non-zero eigenvalues are ``M``'s): labelled an estimate, never used by a
  rigorous bound. No upper bound on the gap is proved.

What needs ``P`` or the expanded table (dense algebra, rectangles, basins, oscillations) raises
:class:`~glauber.errors.StateSpaceTooLargeError` saying so.
"""

from __future__ import annotations

from typing import Any, Iterable, Literal

import numpy as np
import scipy.sparse.linalg as spla

from glauber.core.site_model import SiteScoreModel
from glauber.core.validation import check_eps, check_positive_int
from glauber.errors import (
    InvalidParameterError,
    NonPositiveConditionalError,
    StateSpaceTooLargeError,
    StationaryResidualError,
    UnderflowError,
)
from glauber.exact import brackets, krylov
from glauber.exact.brackets import MixingBracket
from glauber.exact.chain import HOST_BATCH_SIZE, ExactChain
from glauber.exact.krylov import SpectralEstimate
from glauber.exact.score_table import TabulatedModel, compact_score_table
from glauber.exact.sparse import SPARSE_MAX_STATES
from glauber.exact.stationary import TRUSTED_MIN_PROBABILITY, StationarySolution
from glauber.exact.window import (
    WINDOW_MAX_STATES,
    WindowOperator,
    WindowStationary,
    check_window_fits,
    compact_influence_matrix,
    compact_log_conditionals,
    window_stationary,
)
from glauber.theory.contraction import certify_contraction
from glauber.theory.distances import tv_rounding_bound
from glauber.theory.floating import RoundingFormats
from glauber.theory.kernels import REVERSIBILITY_RTOL

#: Default step budget of the three stepped starts of :meth:`WindowChain.mixing_bracket`
#: (each step is one matrix-free ``mu P`` on three laws: about 0.3 s at 3.2M states).
WINDOW_BRACKET_STEPS = 2_000


class WindowChain(ExactChain, matrix_free=True):
    """The paper's kernel on more than ``2**20`` states, matrix-free from the compact table.

    Built by ``ExactChain(model, tau)`` (same parameters); ``max_states`` defaults to
    :data:`~glauber.exact.window.WINDOW_MAX_STATES`.

    Raises
    ------
    StateSpaceTooLargeError
        If ``q**n`` exceeds ``max_states``.
    ResourceLimitError
        If the planned peak (:func:`glauber.exact.window.window_bytes`) does not fit in the
        memory available (the message gives both sizes).
    """

    def __init__(self, model: Any, tau: float, max_states: int | None = None,
                 *args: Any, **kwargs: Any) -> None:
        n, q = int(model.n), int(model.q)
        limit = WINDOW_MAX_STATES if max_states is None else int(max_states)
        if q**n > limit:
            raise StateSpaceTooLargeError(
                f"the chain has q**n = {q}**{n} = {q**n:,} states, over the matrix-free limit "
                f"{'WINDOW_MAX_STATES = ' if max_states is None else 'max_states = '}"
                f"{limit:,} (5 sites of 20 tokens); use a window of fewer sites")
        check_window_fits(n, q)
        super().__init__(model, tau, q**n, *args, **kwargs)

    @property
    def algebra(self) -> str:
        """``"matrix-free"``: everything through ``P = A B`` (:mod:`glauber.exact.window`)."""
        return "matrix-free"

    def at(self, tau: float) -> "WindowChain":
        """The chain at another temperature, sharing the compact score table."""
        chain = WindowChain(self.model, tau, self.num_states, self.batch_size, self.cache)
        chain._cache["compact_scores"] = self.compact_scores()
        return chain

    # ------------------------------------------------------------------------- the table
    def compact_scores(self) -> np.ndarray:
        """The compact score table ``[n, q^(n-1), q]``
        (:func:`~glauber.exact.score_table.compact_score_table`: the same shards on disk)."""
        return self._cached("compact_scores", lambda: compact_score_table(
            self.model, max(self.batch_size, HOST_BATCH_SIZE)
            if isinstance(self.model, SiteScoreModel) else self.batch_size,
            self.cache, self.progress, executor=self.executor))

    def compact_log_conditionals(self) -> np.ndarray:
        """``log p_tau(a | x_{-s})`` per class ``[n, q^(n-1), q]``."""
        return self._cached("compact_log_p", lambda: compact_log_conditionals(
            self.compact_scores(), self.tau))

    def compact_conditionals(self) -> np.ndarray:
        """``p_tau(a | x_{-s})`` per class ``[n, q^(n-1), q]``.

        Raises
        ------
        NonPositiveConditionalError
            If one underflows to 0 (positivity, Proposition 1, fails in float64).
        """

        def compute() -> np.ndarray:
            lp = self.compact_log_conditionals()
            if not np.isfinite(lp).all():
                raise NonPositiveConditionalError(
                    f"scores / tau overflow float64 for {self!r}; raise tau")
            p = np.exp(lp)
            if not (p > 0.0).all():
                raise NonPositiveConditionalError(
                    f"a conditional of {self!r} underflows to 0 at tau = {self.tau}; "
                    "positivity (Proposition 1) fails in float64: raise tau")
            return p

        return self._cached("compact_p", compute)

    def operator(self) -> WindowOperator:
        """``P = A B``, applied matrix-free (:class:`~glauber.exact.window.WindowOperator`)."""
        return self._cached("operator", lambda: WindowOperator(self.compact_conditionals()))

    def tabulated(self) -> TabulatedModel:
        """The model as its compact score table (:class:`TabulatedModel` reads it by context)."""
        return self._cached("tabulated",
                            lambda: TabulatedModel(self.model, self.compact_scores()))

    def _refuse(self, what: str) -> StateSpaceTooLargeError:
        return StateSpaceTooLargeError(
            f"{what} of this {self.num_states:,}-state chain is not formed: above "
            f"SPARSE_MAX_STATES = {SPARSE_MAX_STATES:,} the exact chain is matrix-free "
            "(compact_scores(), operator(), stationary(), influence_matrix(), "
            "mixing_bracket()); use a window of at most 4 sites of 20 tokens for it")

    def scores(self) -> np.ndarray:
        """Refused: the expanded ``[n, S, q]`` table (use :meth:`compact_scores`)."""
        raise self._refuse("the expanded score table [n, q^n, q]")

    def log_conditionals(self) -> np.ndarray:
        """Refused: the expanded ``[n, S, q]`` table (use :meth:`compact_log_conditionals`)."""
        raise self._refuse("the expanded log-conditionals [n, q^n, q]")

    def conditionals(self) -> np.ndarray:
        """Refused: the expanded ``[n, S, q]`` table (use :meth:`compact_conditionals`)."""
        raise self._refuse("the expanded conditionals [n, q^n, q]")

    def transition_matrix(self) -> Any:
        """Refused: the CSR ``P`` (use :meth:`operator`)."""
        raise self._refuse("the sparse transition matrix")

    def step_law(self, mu: Any) -> np.ndarray:
        """``mu P``, matrix-free."""
        mu = np.asarray(mu, dtype=np.float64)
        if mu.shape != (self.num_states,):
            raise InvalidParameterError(
                f"mu must be a law over the {self.num_states} states, got shape {mu.shape}")
        return self.operator().left(mu)

    # ------------------------------------------------------------------- stationary law
    def window_stationary(self) -> WindowStationary:
        """The stationary law with its accuracy statement
        (:func:`~glauber.exact.window.window_stationary`).

        Raises
        ------
        StationaryResidualError
            If the solve misses ``||pi P - pi||_1 <= 1e-9`` (a metastable chain).
        """
        return self._cached("window_pi", lambda: window_stationary(self.operator()))

    def stationary_solution(self, method: str = "auto") -> StationarySolution:
        """The solved law (method ``"factored"``): only ``"auto"`` on this path."""
        self._only_auto(method)
        return self.window_stationary().solution

    def solved_stationary(self) -> StationarySolution:
        """The solved law (there is no closed form on this path)."""
        return self.stationary_solution()

    def stationary(self, method: str = "auto") -> np.ndarray:
        """``mu_tau``, normwise accurate (:meth:`window_stationary`)."""
        return self.stationary_solution(method).pi

    def log_stationary(self, method: str = "auto") -> np.ndarray:
        """``log mu_tau`` of the solved law.

        Raises
        ------
        UnderflowError
            If an entry is below :data:`~glauber.exact.stationary.TRUSTED_MIN_PROBABILITY`
            (a normwise solve keeps no relative accuracy there).
        """
        pi = self.stationary(method)
        if not (pi >= TRUSTED_MIN_PROBABILITY).all():
            raise UnderflowError(
                f"the stationary law of this {self.num_states:,}-state chain has entries below "
                f"{TRUSTED_MIN_PROBABILITY:g} (smallest {pi.min():.3g}), which a normwise solve "
                "loses; raise tau or use a window of fewer sites")
        return np.log(pi)

    def _stationary_for_distances(self) -> np.ndarray:
        return self.stationary()

    @staticmethod
    def _only_auto(method: str) -> None:
        if method != "auto":
            raise InvalidParameterError(
                f"method {method!r}: the matrix-free chain solves its law one way ('auto')")

    def _reversibility_defect(self) -> float:
        """Detailed balance fibre by fibre (:func:`glauber.exact.sparse.fiber_defect`) from
        the state-ordered conditionals: ``log pi(x) - log p_s(x_s | x_{-s})`` constant on each
        fibre."""

        def compute() -> float:
            log_pi, op, worst = self.log_stationary(), self.operator(), 0.0
            for s in range(self.n):
                v = (log_pi - np.log(op.w[s])).reshape(op.site_shape(s))
                worst = max(worst, float((v.max(axis=1) - v.min(axis=1)).max()))
            return float(-np.expm1(-worst))

        return self._cached("rev_defect", compute)

    def is_reversible(self, rtol: float = REVERSIBILITY_RTOL) -> bool:
        """Detailed balance of the solved law to relative ``rtol`` (as
        :meth:`ExactChain.is_reversible`, on a normwise-accurate law)."""
        if not np.isfinite(rtol) or rtol < 0:
            raise InvalidParameterError(f"rtol must be a finite number >= 0, got {rtol!r}")
        return self._reversibility_defect() <= rtol

    # -------------------------------------------------------------------------- influence
    def influence_matrix(self) -> np.ndarray:
        """``C[i, j] = c_ij(tau)`` (Definition 2) from the compact table
        (:func:`~glauber.exact.window.compact_influence_matrix`)."""
        return self._cached("C", lambda: compact_influence_matrix(self.compact_conditionals()))

    def influence_rounding(self) -> float:
        """The rounding bound of every entry of :meth:`influence_matrix`
        (:func:`glauber.theory.distances.tv_rounding_bound`, as the other paths)."""
        scores = self.compact_scores()
        return float(tv_rounding_bound(self.q, float(np.abs(scores).max()),
                                       float(np.abs(self.compact_log_conditionals()).max()),
                                       self.tau, RoundingFormats(scores.dtype, "float64")))

    def is_monotone(self) -> bool:
        """The model's own ``is_monotone()`` where it has one, else False: the monotone
        sandwich is not run on this path (its bracket is the influence one)."""
        declared = getattr(self.model, "is_monotone", None)
        return bool(declared()) if callable(declared) else False

    # --------------------------------------------------------------------------- mixing
    def mixing_bracket(self, eps: float = 0.25, max_steps: int = WINDOW_BRACKET_STEPS,
                       method: Literal["auto", "sparse"] = "auto") -> MixingBracket:
        """Rigorous bounds on the worst-start ``t_mix(eps)``, as the 4-site path's
        (:meth:`ExactChain.mixing_bracket` for a chain neither monotone nor reversible).

        Above: corrected Theorem 5 on the exact ``C`` (with its rounding): rigorous, no ``pi``
        needed. Below: the distances from the mode of ``pi``, the likeliest state differing
        from it at every site and the least likely state, stepped matrix-free for at most
        ``max_steps`` steps with every step's rounding subtracted, less ``pi``'s TV error
        ``2 ||r||_1 t_mix(1/4)`` (``t_mix(1/4)`` from the certificate; LPW 2nd ed.,
        Section 4.4); and, needing no ``pi``, half the largest TV between two of those starts
        (``d(t) >= dbar(t) / 2``, LPW Lemma 4.10), which stands where no certificate bounds
        ``t_mix(1/4)`` and so ``pi``'s error. A law that misses its residual tolerance gives
        no lower bound (the claim says why); the upper bound stands.

        Raises
        ------
        InvalidProbabilityError
            If ``eps`` is not in (0, 1).
        """
        eps = check_eps(eps)
        max_steps = check_positive_int(max_steps, "max_steps")
        if method not in ("auto", "sparse"):
            raise InvalidParameterError(f"method must be 'auto' or 'sparse', got {method!r}")

        def compute() -> MixingBracket:
            subject = repr(self)
            C, error = self.influence_matrix(), self.influence_rounding()
            claims = [brackets.influence_upper_claim(
                certify_contraction(C, eps, entry_error=error), subject)]
            try:
                solution = self.stationary_solution()
            except StationaryResidualError as exc:
                claims.append(brackets.unavailable_claim(
                    subject, f"no lower bound from starts: {exc}"))
            else:
                quarter = certify_contraction(C, 0.25, entry_error=error).best_bound
                claims += brackets.starts_claims(
                    self.operator(), solution.pi, self.bracket_starts(solution.pi), eps,
                    subject, solution.residual_l1, quarter, max_steps,
                    float(np.abs(self.compact_log_conditionals()).max()))
            return brackets.combine(claims, eps, False, subject)

        return self._cached(f"bracket:{eps!r}:{max_steps}", compute)

    def bracket_starts(self, pi: np.ndarray) -> np.ndarray:
        """The mode of ``pi``, the likeliest state differing from it at every site, the least
        likely state (the starts of :meth:`mixing_bracket`), as state indices."""
        op, mode = self.operator(), int(np.argmax(pi))
        far = np.ones(self.num_states, dtype=bool)
        for s in range(self.n):
            digit = (mode // self.q ** (self.n - 1 - s)) % self.q
            far.reshape(op.site_shape(s))[:, digit, :] = False
        starts = [mode, int(np.argmin(pi))]
        if far.any():
            starts.insert(1, int(np.flatnonzero(far)[np.argmax(pi[far])]))
        return np.array(list(dict.fromkeys(starts)), dtype=np.int64)

    def mixing_time(self, eps: float = 0.25, *args: Any, **kwargs: Any) -> int:
        """``t_mix(eps)`` when the bracket's rigorous bounds meet; else
        :class:`~glauber.errors.BracketOnlyError` holding :meth:`mixing_bracket`."""
        return self._bracketed_tmix(check_eps(eps))

    def _beyond_exact(self, method: str) -> bool:
        return True

    def distance_from(self, starts: Any, ts: Iterable[int]) -> np.ndarray:
        """``||mu_0 P^t - pi||_TV`` from the start law of ``starts`` (as
        :meth:`ExactChain.distance_from`), stepped matrix-free."""
        return self._distances_stepped(starts, ts, self.operator().left)

    # ------------------------------------------------------------------------- spectrum
    def spectral_estimate(self, method: str = "auto", seed: int = 0) -> SpectralEstimate:
        """An Arnoldi estimate of the absolute gap on the factor ``M = B A`` (``R`` classes;
        the non-zero eigenvalues of ``P`` are ``M``'s), the unit eigenvalue deflated with
        ``nu = pi A``: an ESTIMATE (``rigorous`` False, no bound: a non-reversible chain's
        eigenvalues may be ill-conditioned); :func:`glauber.exact.krylov.arnoldi_gap_estimate`.
        """
        if method not in ("auto", "arnoldi"):
            raise InvalidParameterError(
                f"method {method!r}: the matrix-free chain has only the Arnoldi estimate")

        def compute() -> SpectralEstimate:
            op = self.operator()
            nu = op.classes(self.stationary())
            M = spla.LinearOperator((op.R, op.R), matvec=op.factor_left, dtype=np.float64)
            return krylov.arnoldi_gap_estimate(M, nu, seed)

        return self._cached(f"estimate:{seed}", compute)

    def absolute_spectral_gap(self, method: str = "auto") -> float:
        """Refused: the gap of this chain is not computed (:meth:`absolute_gap_lower_bound`
        proves a lower bound, :meth:`spectral_estimate` estimates it)."""
        raise self._refuse("a proved spectral gap")

    def spectral_gap(self, method: str = "auto") -> float:
        """Refused: as :meth:`absolute_spectral_gap`."""
        return self.absolute_spectral_gap(method)


__all__ = ["WINDOW_BRACKET_STEPS", "WindowChain"]
