"""Worst-start ``t_mix`` where dense squaring cannot go: rigorous brackets, each bound labelled.

Exact ``t_mix`` needs ``max_x d_x(t)`` over every start; above ``2**16`` states no method here
steps every start. Two families of bounds need only a few sparse products per step.

**Monotone coupling (grand-coupling sandwich).** Order states coordinatewise by token index.
The heat-bath update of site ``i`` with a uniform ``U`` sets ``x_i = F_i^{-1}(U | x_{-i})``
(``F_i`` the conditional CDF over tokens ``0 < 1 < ... < q-1``). If every conditional is
stochastically increasing in the context, i.e. ``F_i(c | x) >= F_i(c | y)`` for all ``c`` and
all ``x <= y`` (checked exactly on every pair differing by one step at one site,
:func:`monotonicity_defect`), then using the same site and ``U`` in every copy keeps
``x <= y`` ordered forever: a *grand coupling* of the chains from all starts (Propp and Wilson,
"Exact sampling with coupled Markov chains", 1996; LPW 2nd ed., Chapter 22, Section 22.3). With
``top = (q-1, ..., q-1)`` and ``bottom = (0, ..., 0)`` every copy is sandwiched,
``X^bot_t <= X^x_t <= X^top_t``, so all copies agree once the two extremes do, and

* ``d(t) <= max_{x,y} P(X^x_t != X^y_t) <= P(X^top_t != X^bot_t)
  <= sum_i P(X^top_t(i) != X^bot_t(i)) <= sum_i (E[X^top_t(i)] - E[X^bot_t(i)])``:
  the last step because ``X^top_t(i) - X^bot_t(i)`` is a non-negative integer, at least 1 where
  they differ. It needs only the two *marginal* laws ``P^t(top, .)`` and ``P^t(bottom, .)``,
  which we evolve exactly with the sparse kernel: an **upper** bound on ``d(t)`` and so on
  ``t_mix`` (``d`` is non-increasing, LPW Exercise 4.2);
* ``d(t) >= max(||P^t(top, .) - pi||_TV, ||P^t(bottom, .) - pi||_TV)`` (two of the starts):
  a **lower** bound on ``d(t)``, so ``t_mix`` is at least the first ``t`` where it is ``<= eps``.

Both are rigorous when the model's conditionals are monotone (declared by the model from its
parameters, e.g. ``J >= 0``, or :func:`monotonicity_defect` is exactly 0 on the float64 table);
after ``t`` steps the computed laws differ from the exact ones by at most
``t (gamma_k + 8 u (1 + max |log p|))`` in L1 (the products' rounding with ``k`` non-zeros per
row, and the kernel entries' own rounding), added to both bounds, and ``pi``'s
error (:func:`glauber.exact.sparse.stationary_tv_error_bound` for a solved law, rounding for a
joint one) is subtracted from the lower one. Ferromagnetic Ising models (``J >= 0``, any field)
are monotone; Potts models with ``q >= 3`` are not (no order of the colours is preserved).

**Spectral bounds (any reversible chain).** With ``t_rel = 1 / gamma_*``:
``(t_rel - 1) log(1 / (2 eps)) <= t_mix(eps) <= t_rel log(1 / (eps pi_min))`` (LPW 2nd ed.,
Theorems 12.5 and 12.4). The lower bound uses a *rigorous upper* bound on the gap (the Rayleigh
quotient of :func:`glauber.exact.krylov.lanczos_gap`, or the dense eigenvalues), so it is
rigorous. The upper bound needs a lower bound on the gap, which Lanczos gives only given its
identification of ``lambda_2``: it is labelled an estimate (rigorous with the dense gap).

**Exact.** When the rigorous lower and upper bounds meet, ``t_mix`` is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from glauber.core.arrays import JsonResult
from glauber.core.claims import Claim
from glauber.core.enumeration import radix_weights
from glauber.core.validation import check_eps, check_positive_int
from glauber.errors import InvalidParameterError
from glauber.exact.krylov import SpectralEstimate
from glauber.exact.sparse import stationary_tv_error_bound
from glauber.theory.contraction import ContractionCertificate

_U = 2.0**-53

#: Default step budget of the two monotone trajectories.
DEFAULT_BRACKET_STEPS = 100_000


def _gamma(m: float) -> float:
    return m * _U / (1.0 - m * _U)


def monotonicity_defect(conditionals: np.ndarray) -> float:
    """Largest violation of stochastic monotonicity of the conditionals (0 when monotone).

    For each site ``i``, each other site ``j``, token ``b < q - 1`` at ``j`` and every context,
    ``F_i(c | x^(j -> b+1)) - F_i(c | x^(j -> b))`` for ``c = 0..q-2`` must be ``<= 0``
    (raising a neighbour's token never lowers the conditional stochastically). One-step pairs
    suffice: any ``x <= y`` are joined by such steps.

    Parameters
    ----------
    conditionals : numpy.ndarray, shape (n, q**n, q)

    Returns
    -------
    float
        ``max(0, largest difference)``.

    Examples
    --------
    >>> p = np.zeros((2, 4, 2)); p[:, :, 1] = [[0.3, 0.7, 0.3, 0.7], [0.3, 0.3, 0.7, 0.7]]
    >>> p[:, :, 0] = 1 - p[:, :, 1]            # each site copies the other: monotone
    >>> monotonicity_defect(p)
    0.0
    """
    n, S, q = conditionals.shape
    worst = 0.0
    for i in range(n):
        cdf = np.cumsum(conditionals[i], axis=1)[:, : q - 1]  # [S, q-1]
        for j in range(n):
            if j == i:
                continue
            view = cdf.reshape(q**j, q, S // q ** (j + 1), q - 1)
            worst = max(worst, float((view[:, 1:] - view[:, :-1]).max()))
    return worst


def token_sums(n: int, q: int) -> np.ndarray:
    """``f(x) = sum_i x_i`` for every state (float64 ``[q**n]``)."""
    index = np.arange(q**n, dtype=np.int64)
    out = np.zeros(q**n, dtype=np.float64)
    for w in radix_weights(n, q):
        out += (index // w) % q
    return out


@dataclass(frozen=True)
class CouplingTrajectory(JsonResult):
    """The two extreme trajectories of a monotone chain, step by step.

    Attributes
    ----------
    lower : numpy.ndarray
        ``max(||P^t(top,.) - pi~||_TV, ||P^t(bottom,.) - pi~||_TV)`` less rounding, ``t = 0..T``
        (before ``pi``'s own error is subtracted).
    upper : numpy.ndarray
        ``sum_i (E[X^top_t(i)] - E[X^bot_t(i)])`` plus rounding, ``t = 0..T``.
    steps : int
        ``T``.
    """

    lower: np.ndarray
    upper: np.ndarray
    steps: int


@threadpool_limits.wrap(limits=1, user_api="blas")  # memory-bound products: see krylov
def coupling_trajectory(P: sp.csr_matrix, pi: np.ndarray, top: int, bottom: int,
                        f: np.ndarray, span: float, eps: float,
                        max_steps: int = DEFAULT_BRACKET_STEPS,
                        stop_below: float | None = None,
                        per_step: float = 0.0) -> CouplingTrajectory:
    """Evolve ``P^t(top, .)`` and ``P^t(bottom, .)`` until the coupling bound is ``<= eps``.

    Parameters
    ----------
    P : scipy.sparse.csr_matrix
        The kernel (or a lumped kernel whose ``top`` and ``bottom`` are single states).
    pi : numpy.ndarray
        The stationary law used for the lower bound.
    top, bottom : int
        The extreme states (full chain in mixed radix: ``q**n - 1`` and 0).
    f : numpy.ndarray
        ``sum_i x_i`` of every state.
    span : float
        ``n (q - 1)``, the largest value of ``f``.
    eps : float
        Stop once the upper bound is ``<= eps`` (and ``<= stop_below`` if given).
    max_steps : int
        Step budget.
    stop_below : float, optional
        A smaller threshold the upper bound must also reach (1/4 when ``pi``'s error needs
        ``t_mix(1/4)``).
    per_step : float
        L1 rounding allowance of one step beyond the products' own (``gamma_k``): the kernel
        entries' rounding, ``8 u (1 + max |log p|)`` per row.

    Returns
    -------
    CouplingTrajectory
    """
    S = P.shape[0]
    Pt = sp.csr_matrix(P.T)
    per_step += _gamma(int(np.diff(P.indptr).max()))
    mu = np.zeros((S, 2), dtype=np.float64)
    mu[top, 0] = 1.0
    mu[bottom, 1] = 1.0
    target = eps if stop_below is None else min(eps, stop_below)
    lowers, uppers = [], []
    for t in range(max_steps + 1):
        drift = t * per_step + _gamma(S)  # L1 error of the two laws and of the sums
        tv = 0.5 * np.abs(mu - pi[:, None]).sum(axis=0)
        lowers.append(max(float(tv.max()) - drift, 0.0))
        means = f @ mu
        uppers.append(float(means[0] - means[1]) + 2.0 * span * drift)
        if uppers[-1] <= target or t == max_steps:
            break
        mu = Pt @ mu
    return CouplingTrajectory(lower=np.array(lowers), upper=np.array(uppers), steps=len(uppers) - 1)


def first_at_most(values: np.ndarray, eps: float) -> int | None:
    """First index ``t`` with ``values[t] <= eps`` (None if there is none)."""
    hits = np.flatnonzero(values <= eps)
    return int(hits[0]) if hits.size else None


@dataclass(frozen=True)
class MixingBracket(JsonResult):
    """Bounds on the worst-start ``t_mix(eps)``, each a labelled
    :class:`~glauber.core.claims.Claim`.

    Attributes
    ----------
    eps : float
    lower : int
        The best rigorous lower bound (``t_mix >= lower``).
    upper : int or None
        The best rigorous upper bound (None when none is proved).
    upper_estimate : int or None
        The best upper bound including estimates (the Lanczos spectral bound).
    exact : int or None
        ``t_mix`` when the rigorous bounds meet.
    monotone : bool
        Whether the grand-coupling sandwich applied.
    claims : list of Claim
        Every bound: ``details["kind"]`` is ``"lower"``, ``"upper"`` or ``"exact"``,
        ``rigorous`` says whether it is proved, ``bound`` is the value.
    subject : str
    """

    eps: float
    lower: int
    upper: int | None
    upper_estimate: int | None
    exact: int | None
    monotone: bool
    claims: list
    subject: str

    def summary(self) -> str:
        """``"t_mix(0.25) = 41 (exact)"`` or ``"37 <= t_mix(0.25) <= 45"``, with the labels."""
        if self.exact is not None:
            return f"t_mix({self.eps:g}) = {self.exact} (exact: the rigorous bounds meet)"
        up = (f"<= {self.upper}" if self.upper is not None else
              f"<= {self.upper_estimate} (estimate)" if self.upper_estimate is not None
              else "(no upper bound)")
        return f"{self.lower} <= t_mix({self.eps:g}) {up}"


def _claim(kind: str, source: str, value: float | None, rigorous: bool, subject: str,
           statement: str, caveat: str = "", **details: Any) -> Claim:
    what = {"lower": ">=", "upper": "<=", "exact": "="}[kind]
    return Claim(
        key=f"tmix-{kind}:{source}", statement=statement, subject=subject,
        hypothesis_held=value is not None, bound=value, rigorous=rigorous,
        certifies="" if value is None else f"t_mix {what} {value:g}",
        caveat=caveat, details={"kind": kind, "source": source, **details})


def unavailable_claim(subject: str, why: str) -> Claim:
    """A claim recording that a bound could not be had (so the bracket says why)."""
    return _claim("upper", "none", None, False, subject, "no t_mix bound available", why)


def spectral_claims(estimate: SpectralEstimate, log_pi_min: float, eps: float,
                    subject: str) -> list[Claim]:
    """LPW Theorems 12.5 (lower) and 12.4 (upper) from a spectral estimate, labelled.

    Lower: ``ceil((1/gap_upper - 1) log(1/(2 eps)))`` with the rigorous ``gap_upper``. Upper:
    ``ceil(log(1/(eps pi_min)) / gap_lower)``, rigorous only if ``estimate.rigorous``.
    """
    claims = []
    if estimate.gap_upper is not None and estimate.reversible:
        claims.append(spectral_lower_claim(estimate.gap_upper, estimate.method, eps, subject))
    if estimate.gap_lower is not None and estimate.gap_lower > 0 and estimate.reversible:
        up = math.ceil((-math.log(eps) - log_pi_min) / estimate.gap_lower * (1 + 4 * _U))
        claims.append(_claim(
            "upper", "spectral", up, estimate.rigorous, subject,
            "t_mix(eps) <= t_rel log(1/(eps pi_min)) (LPW Theorem 12.4, reversible)",
            "" if estimate.rigorous else
            "an estimate: t_rel <= 1/gap_lower needs Lanczos to have found lambda_2 "
            "(see glauber.exact.krylov)", gap_lower=estimate.gap_lower,
            log_pi_min=log_pi_min))
    return claims


def spectral_lower_claim(gap_upper: float, method: str, eps: float, subject: str) -> Claim:
    """LPW Theorem 12.5 from a rigorous upper bound on the gap of a reversible chain:
    ``t_mix(eps) >= ceil((1/gap_upper - 1) log(1/(2 eps)))`` (rounded down by ``4u``), rigorous.

    ``gap_upper`` may come from a :class:`~glauber.exact.krylov.SpectralEstimate` or from a
    :class:`~glauber.errors.GapBelowFloorError` (a gap proved below the eigensolver's floor).
    """
    t_rel = 1.0 / max(gap_upper, 1e-300)
    low = max(math.ceil((t_rel - 1.0) * math.log(1.0 / (2.0 * eps)) * (1 - 4 * _U)), 0)
    return _claim(
        "lower", "spectral", low, True, subject,
        "t_mix(eps) >= (t_rel - 1) log(1/(2 eps)) (LPW Theorem 12.5, reversible)",
        f"t_rel >= 1/{gap_upper:.6g} from the {method} gap's rigorous upper bound",
        gap_upper=gap_upper)


def coupling_claims(traj: CouplingTrajectory, eps: float, subject: str,
                    pi_error: float = 0.0) -> list[Claim]:
    """The grand-coupling bounds of a :func:`coupling_trajectory` (both rigorous)."""
    claims = []
    t_up = first_at_most(traj.upper, eps)
    t_low = first_at_most(traj.lower - pi_error, eps)
    if t_low is None:  # never below eps within the budget: t_mix > steps
        t_low = traj.steps + 1
    claims.append(_claim(
        "lower", "coupling", t_low, True, subject,
        "d(t) >= max TV of P^t(top, .) and P^t(bottom, .) from pi (two of the starts)",
        "" if pi_error == 0 else f"pi's error {pi_error:.2g} subtracted", steps=traj.steps))
    claims.append(_claim(
        "upper", "coupling", t_up, True, subject,
        "d(t) <= sum_i (E X^top_t(i) - E X^bot_t(i)) under the monotone grand coupling "
        "(Propp-Wilson 1996; LPW Chapter 22)",
        "" if t_up is not None else f"not reached within {traj.steps} steps", steps=traj.steps))
    return claims


def combine(claims: list[Claim], eps: float, monotone: bool, subject: str) -> MixingBracket:
    """The best bounds of ``claims``, and the exact value when the rigorous ones meet."""
    lowers = [int(c.bound) for c in claims if c.details["kind"] == "lower" and c.rigorous
              and c.bound is not None]
    uppers = [int(c.bound) for c in claims if c.details["kind"] == "upper" and c.rigorous
              and c.bound is not None]
    estimates = [int(c.bound) for c in claims if c.details["kind"] == "upper"
                 and c.bound is not None]
    lower = max(lowers, default=0)
    upper = min(uppers, default=None)
    if upper is not None and upper < lower:
        raise InvalidParameterError(  # a bug: rigorous bounds cannot cross
            f"rigorous t_mix bounds cross ({lower} > {upper}) for {subject}")
    exact = lower if upper is not None and upper == lower else None
    if exact is not None:
        claims = claims + [_claim("exact", "bracket", exact, True, subject,
                                  "the rigorous lower and upper bounds meet")]
    return MixingBracket(eps=eps, lower=lower, upper=upper,
                         upper_estimate=min(estimates, default=None), exact=exact,
                         monotone=monotone, claims=claims, subject=subject)


def monotone_bracket(P: sp.csr_matrix, pi: np.ndarray, n: int, q: int, eps: float,
                     subject: str, residual_l1: float | None = None,
                     max_steps: int = DEFAULT_BRACKET_STEPS,
                     max_abs_log_p: float = 0.0) -> list[Claim]:
    """The coupling claims of a monotone chain, with ``pi``'s error taken into account.

    ``residual_l1``: the residual of a *solved* ``pi`` (None for a law exact to rounding, e.g.
    from the model's joint); its TV error ``2 ||r||_1 t_mix(1/4)`` uses the coupling's own
    upper bound on ``t_mix(1/4)``.
    """
    eps = check_eps(eps)
    max_steps = check_positive_int(max_steps, "max_steps")
    solved = residual_l1 is not None
    traj = coupling_trajectory(P, pi, P.shape[0] - 1, 0, token_sums(n, q), n * (q - 1), eps,
                               max_steps, 0.25 if solved else None,
                               8.0 * _U * (1.0 + max_abs_log_p))
    pi_error = _gamma(P.shape[0]) * 4
    if solved:
        t_quarter = first_at_most(traj.upper, 0.25)
        pi_error += stationary_tv_error_bound(residual_l1, math.inf if t_quarter is None
                                              else t_quarter)
    return coupling_claims(traj, eps, subject, pi_error)


def influence_upper_claim(certificate: ContractionCertificate, subject: str) -> Claim:
    """Corrected Theorem 5 from the chain's exact influence matrix: ``t_mix(eps) <=`` its best
    rigorous certificate (``certificate`` built with the entries' rounding error, so the value
    is of an upper enclosure of ``C``; docs/theory.md, rows ``thm5-corrected`` and
    ``thm5-tmix``). For any chain of the paper's kernel, monotone, reversible or neither."""
    bound = certificate.best_bound
    value = None if certificate.best == "none" else int(math.ceil(bound))
    return _claim(
        "upper", "influence", value, True, subject,
        "t_mix(eps) <= the corrected Theorem 5 certificate of the exact influence matrix C "
        "(row, column, spectral or matrix-power)",
        "" if value is not None else
        f"no certificate: C's spectral radius is {certificate.spectral_radius:.4g} >= 1",
        certificate=certificate.best, spectral_radius=certificate.spectral_radius,
        entry_error=certificate.entry_error)


def _stepper(P: Any) -> tuple[Any, int, int]:
    """``(mu -> mu P on columns, S, k)`` of a CSR kernel, or of a matrix-free one with
    ``left``, ``S`` and ``terms`` (:class:`glauber.exact.window.WindowOperator`); ``k`` bounds
    the products summed into one entry (the ``gamma_k`` of a step's rounding)."""
    if sp.issparse(P):
        Pt = sp.csr_matrix(P.T)
        return (lambda mu: Pt @ mu), P.shape[0], int(np.diff(sp.csr_matrix(P).indptr).max())
    return P.left, int(P.S), int(P.terms)


def start_distances(P: Any, pi: np.ndarray, starts: np.ndarray, eps: float,
                    max_steps: int, max_abs_log_p: float = 0.0) -> np.ndarray:
    """``max_x ||P^t(x, .) - pi||_TV`` over the given starts, for ``t = 0, 1, ...`` until it
    is at most ``eps`` (or ``max_steps``), each lowered by the stepping's rounding (``t`` times
    a step's, ``8 u (1 + max |log p|)`` per row and the products' ``gamma_k``, plus the sums'
    ``gamma_S``): a rigorous lower bound on ``d(t)`` given ``pi``. ``P`` is a CSR kernel or a
    matrix-free one (:class:`glauber.exact.window.WindowOperator`)."""
    return start_and_pair_distances(P, pi, starts, eps, max_steps, max_abs_log_p)[0]


def start_and_pair_distances(P: Any, pi: np.ndarray, starts: np.ndarray, eps: float,
                             max_steps: int, max_abs_log_p: float = 0.0
                             ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`start_distances` and, from the same stepped laws, ``max_{x, y}
    ||P^t(x, .) - P^t(y, .)||_TV`` over the pairs of starts, lowered by the same rounding
    (each law's ``t`` steps, and the sums' ``gamma_S``): a rigorous lower bound on
    ``dbar(t)`` that needs no ``pi`` (``pi`` only decides when to stop). One start gives
    zeros."""
    step, S, k = _stepper(P)
    per_step = 8.0 * _U * (1.0 + max_abs_log_p) + _gamma(k)
    m = len(starts)
    mu = np.zeros((S, m), dtype=np.float64)
    mu[np.asarray(starts, dtype=np.int64), np.arange(m)] = 1.0
    out, spread = [], []
    for t in range(max_steps + 1):
        tv = 0.5 * np.abs(mu - pi[:, None]).sum(axis=0)
        out.append(max(float(tv.max()) - t * per_step - _gamma(S), 0.0))
        pairs = [0.5 * float(np.abs(mu[:, a] - mu[:, b]).sum())
                 for a in range(m) for b in range(a + 1, m)]
        spread.append(max(max(pairs, default=0.0) - t * per_step - _gamma(S), 0.0))
        if out[-1] <= eps:
            break
        mu = step(mu)
    return np.array(out), np.array(spread)


def starts_bracket(P: Any, pi: np.ndarray, starts: np.ndarray, eps: float,
                   subject: str, residual_l1: float | None = None, t_quarter: float = math.inf,
                   max_steps: int = DEFAULT_BRACKET_STEPS,
                   max_abs_log_p: float = 0.0) -> Claim:
    """``t_mix(eps) >= t + 1`` for the last ``t`` whose lower bound on ``d(t)`` (from
    :func:`start_distances`, less ``pi``'s TV error) exceeds ``eps`` (``d`` is non-increasing,
    LPW 2nd ed., Section 4.5): rigorous.

    ``residual_l1``: the residual of a *solved* ``pi`` (None for a law exact to rounding); its
    TV error is ``2 ||r||_1 t_mix(1/4)`` with ``t_quarter``, a rigorous upper bound on
    ``t_mix(1/4)`` (:func:`glauber.exact.sparse.stationary_tv_error_bound`; ``inf`` makes the
    bound 0).
    """
    return starts_claims(P, pi, starts, eps, subject, residual_l1, t_quarter, max_steps,
                         max_abs_log_p)[0]


def starts_claims(P: Any, pi: np.ndarray, starts: np.ndarray, eps: float,
                  subject: str, residual_l1: float | None = None, t_quarter: float = math.inf,
                  max_steps: int = DEFAULT_BRACKET_STEPS,
                  max_abs_log_p: float = 0.0) -> list[Claim]:
    """Two rigorous lower bounds on ``t_mix(eps)`` from one stepping of the starts
    (:func:`start_and_pair_distances`): :func:`starts_bracket`'s, and one that needs no
    ``pi``: ``d(t) >= dbar(t) / 2`` (LPW 2nd ed., Lemma 4.10: ``dbar(t) <= 2 d(t)``), so
    ``t_mix(eps) >= t + 1`` for the last ``t`` at which two of the starts are still more than
    ``2 eps`` apart in TV. The second stands where ``pi``'s error is unbounded (a solved law
    without a certificate of ``t_mix(1/4)``: ``t_quarter = inf``), which leaves the first 0.

    Raises
    ------
    InvalidProbabilityError
        If ``eps`` is not in (0, 1).
    """
    eps = check_eps(eps)
    max_steps = check_positive_int(max_steps, "max_steps")
    distances, spread = start_and_pair_distances(P, pi, starts, eps, max_steps, max_abs_log_p)
    pi_error = _gamma(pi.shape[0]) * 4
    if residual_l1 is not None:
        pi_error += stationary_tv_error_bound(residual_l1, t_quarter)
    above = np.flatnonzero(distances - pi_error > eps)
    low = 0 if above.size == 0 else int(above[-1]) + 1
    apart = np.flatnonzero(spread > 2.0 * eps)
    low_pairs = 0 if apart.size == 0 else int(apart[-1]) + 1
    starts_list = [int(s) for s in starts]
    return [
        _claim("lower", "starts", low, True, subject,
               f"d(t) >= max TV of P^t(x, .) from pi over {len(starts)} starts x",
               "" if pi_error == 0 else f"pi's error {pi_error:.2g} subtracted",
               steps=len(distances) - 1, starts=starts_list),
        _claim("lower", "start-pairs", low_pairs, True, subject,
               f"d(t) >= max TV of P^t(x, .) from P^t(y, .) / 2 over the pairs of "
               f"{len(starts)} starts (LPW Lemma 4.10; no pi needed)",
               "" if len(starts) > 1 else "one start: no pair",
               steps=len(spread) - 1, starts=starts_list),
    ]


__all__ = [
    "CouplingTrajectory",
    "DEFAULT_BRACKET_STEPS",
    "MixingBracket",
    "combine",
    "coupling_claims",
    "coupling_trajectory",
    "first_at_most",
    "influence_upper_claim",
    "monotone_bracket",
    "monotonicity_defect",
    "spectral_claims",
    "spectral_lower_claim",
    "start_and_pair_distances",
    "start_distances",
    "starts_bracket",
    "starts_claims",
    "token_sums",
    "unavailable_claim",
]
