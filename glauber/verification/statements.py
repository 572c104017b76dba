"""One checker per statement of docs/theory.md, evaluated exactly on one toy instance.

A checker takes an :data:`~glauber.verification.instances.Instance` and returns a list of
:class:`~glauber.core.claims.Claim` (one per instance, or one per basin of the instance; empty when
the statement does not apply). Every bound comes from :mod:`glauber.theory`; every exact value from
the exact chain (:class:`glauber.exact.chain.ExactChain` or the lumped
:class:`~glauber.exact.count_chain.CountChain`).

Conventions of a check:

* ``kind = "upper"``: ``slack = bound - exact``, ``tightness = exact / bound``;
* ``kind = "lower"``: ``slack = exact - bound``, ``tightness = bound / exact``;
* ``kind = "identity"``: ``bound`` is the tolerance, ``exact`` the largest error,
  ``slack = tolerance - error``;

so a negative slack always means the claim is violated. Slacks within the numerical tolerance
of a check are reported as 0. ``holds`` is None when the statement's hypothesis failed and its
claim was therefore not evaluated.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Literal

import numpy as np
from scipy.special import logsumexp

from glauber.core.claims import Claim
from glauber.core.enumeration import neighbour_indices
from glauber.errors import NonPositiveConditionalError
from glauber.exact import influence as exact_influence
from glauber.exact.basins import (
    NamedMask,
    conductance,
    escape_probabilities,
    hitting_probability_within,
)
from glauber.exact.chain import ExactChain
from glauber.exact.coupling import worst_pair
from glauber.theory import (
    contraction,
    drift,
    escape,
    influence_bounds,
    ising_closed_forms,
    kernels,
    path_coupling,
    rectangle,
    site_updates,
    systematic_scan,
)
from glauber.theory.kernels import reversibility_defect
from glauber.toy_models.counterexamples import DRIFT_HORIZON_PER_SITE
from glauber.verification.instances import ChainInstance, Instance, LumpedInstance

Kind = Literal["upper", "lower", "identity"]
Status = Literal["verified", "corrected", "refuted"]

#: Relative and absolute tolerance of an inequality between an exact value and a bound.
RTOL = 1e-9
ATOL = 1e-13
#: Tolerance of identities between exact quantities computed two ways.
IDENTITY_TOL = 1e-8
#: All pairs of states enter the Theorem 5 contraction check up to this many states.
ALL_PAIRS_MAX_STATES = 256
#: Target distance of every mixing time checked here.
EPS = 0.25


def _check(
    label: str,
    hypothesis: bool,
    holds: bool | None,
    bound: float | None = None,
    exact: float | None = None,
    slack: float | None = None,
    tightness: float | None = None,
    details: dict[str, Any] | None = None,
) -> Claim:
    """The outcome of one statement on one instance (or one basin of an instance): a
    :class:`~glauber.core.claims.Claim` about ``label``; :func:`~glauber.verification.runner.
    run_statements` fills in the statement's key and text. Exact enumeration: rigorous."""
    return Claim(
        key="", statement="", subject=label, hypothesis_held=bool(hypothesis), holds=holds,
        bound=bound, exact=exact, slack=slack, tightness=tightness, rigorous=True,
        details=details or {},
    )


@dataclass(frozen=True)
class Statement:
    """A statement of docs/theory.md with its checker.

    Attributes
    ----------
    name : str
        Command-line name (``glauber verify --statement NAME``).
    result : str
        The paper's result number (or the textbook theorem).
    hypothesis : str
        Short text of the hypothesis.
    claim : str
        The claim in our notation.
    status : {"verified", "corrected", "refuted"}
        ``refuted`` rows are the as-printed forms; they are expected to fail somewhere.
    kind : {"upper", "lower", "identity"}
        How slack and tightness are defined.
    theory : tuple of str
        The functions of :mod:`glauber.theory` that implement it.
    check : callable
        ``Instance -> list[Claim]``.
    corrected_by : str or None
        For a refuted row, the name of the row holding its corrected form.
    """

    name: str
    result: str
    hypothesis: str
    claim: str
    status: Status
    kind: Kind
    theory: tuple[str, ...]
    check: Callable[[Instance], list[Claim]]
    corrected_by: str | None = None

    @property
    def tightness_kind(self) -> str:
        """``"bound/exact"`` for lower bounds, else ``"exact/bound"`` (identities: an exact value
        over its closed form, when the row reports one)."""
        return {"upper": "exact/bound", "lower": "bound/exact", "identity": "exact/bound"}[
            self.kind
        ]


# --------------------------------------------------------------------------- check builders


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def _tol(bound: float, exact: float) -> float:
    return RTOL * max(abs(bound), abs(exact)) + ATOL


def _snap(slack: float, bound: float, exact: float) -> float:
    if not math.isfinite(slack):
        return slack
    return 0.0 if abs(slack) <= _tol(bound, exact) else float(slack)


def upper(label: str, hypothesis: bool, bound: float, exact: float, ok: bool = True,
          **details: Any) -> Claim:
    """Check ``exact <= bound`` (tolerance :data:`RTOL`, :data:`ATOL`); ``ok``: side conditions."""
    holds = bool(exact <= bound + _tol(bound, exact)) and ok
    slack = _snap(bound - exact, bound, exact)
    tight = exact / bound if math.isfinite(bound) and bound > 0 else None
    return _check(label, hypothesis, holds, float(bound), float(exact), slack, tight, details)


def lower(label: str, hypothesis: bool, bound: float, exact: float, ok: bool = True,
          **details: Any) -> Claim:
    """Check ``exact >= bound`` (tolerance :data:`RTOL`, :data:`ATOL`); ``ok``: side conditions."""
    holds = bool(exact >= bound - _tol(bound, exact)) and ok
    slack = _snap(exact - bound, bound, exact)
    tight = bound / exact if exact > 0 and bound > 0 and math.isfinite(exact) else None
    return _check(label, hypothesis, holds, float(bound), float(exact), slack, tight, details)


def identity(label: str, hypothesis: bool, error: float, tol: float = IDENTITY_TOL,
             tightness: float | None = None, **details: Any) -> Claim:
    """Check ``error <= tol``; the slack is ``tol - error``."""
    holds = bool(error <= tol)
    return _check(label, hypothesis, holds, tol, float(error), tol - float(error), tightness,
                  details)


def not_evaluated(label: str, **details: Any) -> Claim:
    """The hypothesis failed: the claim is not evaluated."""
    return _check(label, False, None, details=details)


def _cached(inst: Instance, key: str, compute: Callable[[], Any]) -> Any:
    if key not in inst.cache:
        inst.cache[key] = compute()
    return inst.cache[key]


def _tmix(inst: Instance) -> int:
    return _cached(inst, "tmix", lambda: int(inst.chain.mixing_time(EPS)))


def _curve(inst: Instance) -> dict[int, float]:
    """Worst-start ``d(t)`` at ``t = 0, 1, t_mix - 1, t_mix, 8 t_mix`` (shared powers, cached)."""

    def compute() -> dict[int, float]:
        t = _tmix(inst)
        times = sorted({0, 1, max(0, t - 1), t, 8 * t})
        return dict(zip(times, (float(d) for d in inst.chain.distance_curve(times))))

    return _cached(inst, "curve", compute)


def _label(inst: Instance, basin: NamedMask | None = None) -> str:
    return inst.name if basin is None else f"{inst.name} [{basin.name}]"


def _offdiag(matrix: np.ndarray) -> np.ndarray:
    return ~np.eye(matrix.shape[0], dtype=bool)


# ------------------------------------------------------------------ Proposition 1, Theorem 3


def check_prop1(inst: Instance) -> list[Claim]:
    """Proposition 1 / Corollary 2: Markov kernel, irreducible, aperiodic, ``P^t -> mu``."""
    label = _label(inst)
    if isinstance(inst, ChainInstance):
        try:
            inst.chain.conditionals()  # raises if a conditional is 0 in float64
        except NonPositiveConditionalError as exc:
            return [not_evaluated(label, reason=str(exc))]
    P = inst.chain.transition_matrix()
    pi = inst.chain.stationary()
    row_error = float(np.abs(np.asarray(P.sum(axis=1)).ravel() - 1.0).max())
    residual = float(np.abs(P.T @ pi - pi).sum())
    markov = kernels.is_markov_kernel(P, atol=1e-12)
    irreducible = kernels.is_irreducible(P)
    aperiodic = kernels.is_aperiodic(P)
    stationary = kernels.is_stationary(P, pi, atol=1e-10)
    # Convergence, quantitatively: d(k t_mix) <= (2 d(t_mix))^k <= 2^-k (LPW 2nd ed. (4.33)).
    t_mix = _tmix(inst)
    converges = _curve(inst)[8 * t_mix] <= 2.0**-8
    ok = markov and irreducible and aperiodic and stationary and converges
    error = max(row_error, residual) if ok else math.inf
    return [
        identity(
            label, True, error, tol=1e-10, markov=markov, irreducible=irreducible,
            aperiodic=aperiodic, stationary=stationary, row_sum_error=row_error,
            stationary_residual_l1=residual, tmix=t_mix, d_8_tmix=_curve(inst)[8 * t_mix],
        )
    ]


def _gibbs(inst: Instance) -> np.ndarray | None:
    if isinstance(inst, LumpedInstance):
        if inst.log_weight_levels is None:
            return None
        log_w = inst.log_weight_levels
    else:
        if inst.log_weight is None:
            return None
        log_w = np.asarray(inst.log_weight(inst.chain.states()), dtype=np.float64) / inst.tau
    return np.exp(log_w - logsumexp(log_w))


def check_thm3(inst: Instance) -> list[Claim]:
    """Theorem 3: a compatible ``pi`` is stationary and ``P`` is reversible w.r.t. it."""
    label = _label(inst)
    P = inst.chain.transition_matrix()
    gibbs = _gibbs(inst)
    if gibbs is None:
        return [
            not_evaluated(
                label,
                reversibility_defect_wrt_mu=reversibility_defect(P, inst.chain.stationary()),
            )
        ]
    residual = float(np.abs(P.T @ gibbs - gibbs).sum())
    defect = reversibility_defect(P, gibbs)
    tv = 0.5 * float(np.abs(inst.chain.stationary() - gibbs).sum())
    stationary = kernels.is_stationary(P, gibbs, atol=1e-10)
    reversible = kernels.is_reversible(P, gibbs, rtol=1e-9)
    error = max(residual, defect, tv) if stationary and reversible else math.inf
    return [
        identity(
            label, True, error, tol=1e-9, stationary_residual_l1=residual,
            reversibility_defect=defect, tv_exact_mu_vs_gibbs=tv,
        )
    ]


# ----------------------------------------------------------------------------- Proposition 4


def _rectangles(chain: ExactChain) -> Iterator[tuple[int, int, np.ndarray, np.ndarray,
                                                    np.ndarray, np.ndarray]]:
    """Every rectangle, batched by ``(i < j, A', B')``: ``(i, j, A, B, delta_tau, delta_1)``.

    ``delta_tau`` uses the log-conditionals at ``tau``, ``delta_1`` the raw scores (``tau = 1``);
    ``A = x_i != A'`` and ``B = x_j != B'`` over the states ``x`` of the batch.
    """
    n, q = chain.n, chain.q
    log_p = np.log(chain.conditionals())
    scores = chain.scores()
    states = chain.states()
    nbr = neighbour_indices(n, q)
    for i, j in itertools.combinations(range(n), 2):
        for a_new, b_new in itertools.product(range(q), repeat=2):
            x = np.flatnonzero((states[:, i] != a_new) & (states[:, j] != b_new))
            a, b = states[x, i], states[x, j]
            y, w = nbr[i, x, a_new], nbr[j, x, b_new]
            d_tau = rectangle.rectangle_delta(
                log_p[i, x], log_p[j, y], log_p[j, x], log_p[i, w], a, a_new, b, b_new
            )
            d_one = rectangle.rectangle_delta(
                scores[i, x], scores[j, y], scores[j, x], scores[i, w], a, a_new, b, b_new
            )
            yield i, j, a, b, np.asarray(d_tau), np.asarray(d_one)


def check_prop4(inst: Instance) -> list[Claim]:
    """Proposition 4: ``delta = 0`` on every rectangle of a compatible model, plus its facts.

    Every rectangle (state ``x``, sites ``i < j``, replacements ``A' != x_i``, ``B' != x_j``) is
    enumerated. Facts checked on every instance: ``delta_tau = delta_1 / tau``, and for
    Ising-type models ``delta_1 = 4 x_i x_j (J_ji - J_ij)`` (spins ``x = 2 token - 1``).
    """
    if not isinstance(inst, ChainInstance) or inst.model.n < 2:
        return []
    scale = max(1.0, float(np.abs(inst.chain.scores()).max()) / inst.tau)
    max_delta = scaling_error = closed_form_error = 0.0
    for i, j, a, b, d_tau, d_one in _rectangles(inst.chain):
        max_delta = max(max_delta, float(np.abs(d_tau).max()))
        expected = rectangle.delta_at_tau(d_one, inst.tau)
        scaling_error = max(scaling_error, float(np.abs(d_tau - expected).max()) / scale)
        if inst.ising is not None:  # tokens 0/1 are spins -1/+1
            table = np.array([
                [rectangle.asymmetric_ising_rectangle_delta(inst.ising.J, i, j, 1.0, si, sj)
                 for sj in (-1, 1)]
                for si in (-1, 1)
            ])
            closed_form_error = max(
                closed_form_error, float(np.abs(d_one - table[a, b]).max()) / scale
            )
    compatible = inst.log_weight is not None
    error = max(scaling_error, closed_form_error)
    if compatible:
        error = max(error, max_delta / scale)
    return [
        identity(
            _label(inst), compatible, error, max_abs_delta=max_delta, scaling_error=scaling_error,
            ising_closed_form_error=closed_form_error if inst.ising is not None else None,
        )
    ]


# --------------------------------------------------------------- Definition 2, Lemma 6, Cor 7


def _influence_check(inst: Instance, bound_fn: Callable[[np.ndarray, float], Any]) -> list[Claim]:
    if not isinstance(inst, ChainInstance):
        return []
    C = inst.chain.influence_matrix()
    Delta = inst.chain.oscillation_matrix()
    bound = np.asarray(bound_fn(Delta, inst.tau), dtype=np.float64)
    off = _offdiag(C)
    slack = float((bound - C)[off].min()) if C.shape[0] > 1 else 0.0
    holds = bool(np.all(C[off] <= bound[off] * (1.0 + RTOL) + ATOL))
    positive = off & (bound > 0)
    tight = float((C[positive] / bound[positive]).max()) if positive.any() else None
    return [
        _check(
            _label(inst), True, holds, float(bound[off].max()) if off.any() else 0.0,
            float(C[off].max()) if off.any() else 0.0, _snap(slack, 1.0, 1.0), tight,
            {"max_influence": float(C.max()), "max_oscillation": float(Delta.max())},
        )
    ]


def check_lemma6(inst: Instance) -> list[Claim]:
    """Definition 2 + Lemma 6: ``c_ij <= Delta_ij / (4 tau)`` for every ``i != j``."""
    return _influence_check(inst, influence_bounds.lemma6_bound)


def check_tanh(inst: Instance) -> list[Claim]:
    """Sharper Lemma 6: ``c_ij <= tanh(Delta_ij / (4 tau))``."""
    return _influence_check(inst, influence_bounds.tanh_bound)


def check_cor7(inst: Instance) -> list[Claim]:
    """Corollary 7: ``max_i sum_j Delta_ij < 4 tau`` implies ``alpha <= bound < 1``."""
    if not isinstance(inst, ChainInstance):
        return []
    Delta = inst.chain.oscillation_matrix()
    label = _label(inst)
    if not influence_bounds.corollary7_holds(Delta, inst.tau):
        return [not_evaluated(label)]
    alpha = contraction.alpha_row(inst.chain.influence_matrix())
    bound = influence_bounds.corollary7_alpha_bound(Delta, inst.tau)
    return [upper(label, True, bound, alpha, ok=alpha < 1.0)]


# -------------------------------------------------------------------------------- Theorem 5


def _worst_pair(inst: ChainInstance) -> dict[str, Any]:
    """Largest ``E[d_H(X_1, Y_1)] / d_H(x, y)`` under the same-site maximal coupling.

    Over all pairs of distinct states up to :data:`ALL_PAIRS_MAX_STATES` states (exactly:
    ``E = (1/n) sum_i [d_H - 1{x_i != y_i} + TV_i(x, y)]``), else over adjacent pairs.
    """

    def compute() -> dict[str, Any]:
        chain = inst.chain
        if chain.num_states > ALL_PAIRS_MAX_STATES:
            worst = chain.one_step_hamming_all_pairs_adjacent()
            return {"ratio": worst.expected_distance, "x": worst.x_index, "y": worst.y_index,
                    "pairs": "adjacent"}
        worst = worst_pair(chain.conditionals())
        return {"ratio": worst.ratio, "x": worst.x_index, "y": worst.y_index, "pairs": "all"}

    return _cached(inst, "worst_pair", compute)


def _pair_details(inst: ChainInstance, worst: dict[str, Any]) -> dict[str, Any]:
    states = inst.chain.states()
    out = {
        "worst_pair": [states[worst["x"]].tolist(), states[worst["y"]].tolist()],
        "pairs_checked": worst["pairs"],
    }
    cx = inst.counterexample
    if cx is not None and cx.y_index is not None:
        out["counterexample"] = {
            **cx.summary,
            "pair": [states[cx.x_index].tolist(), states[cx.y_index].tolist()],
            "expected_d_H_after_one_step": inst.chain.one_step_hamming(cx.x_index, cx.y_index),
        }
    return out


def check_thm5_printed(inst: Instance) -> list[Claim]:
    """Theorem 5 as printed: ``alpha_row < 1`` gives the one-step Hamming contraction."""
    if not isinstance(inst, ChainInstance):
        return []
    C = inst.chain.influence_matrix()
    a = contraction.alpha_row(C)
    label = _label(inst)
    if not a < 1.0:
        return [not_evaluated(label, alpha_row=a)]
    worst = _worst_pair(inst)
    kappa = contraction.theorem5_contraction_factor(inst.chain.n, a)
    return [upper(label, True, kappa, worst["ratio"], alpha_row=a,
                  **_pair_details(inst, worst))]


def check_thm5_corrected(inst: Instance) -> list[Claim]:
    """Theorem 5 corrected: ``E[d_H(X_1, Y_1)] <= (1 - (1 - alpha_col)/n) d_H(x, y)`` always.

    Also each adjacent pair differing at ``j`` obeys :func:`adjacent_pair_hamming_bound`.
    The hypothesis ``alpha_col < 1`` is when this is a contraction.
    """
    if not isinstance(inst, ChainInstance):
        return []
    chain = inst.chain
    C = chain.influence_matrix()
    a = contraction.alpha_col(C)
    worst = _worst_pair(inst)
    kappa = contraction.theorem5_contraction_factor(chain.n, a)
    adjacent = chain.one_step_hamming_all_pairs_adjacent()
    per_site = contraction.adjacent_pair_hamming_bound(C, adjacent.site)
    ok = adjacent.expected_distance <= per_site + _tol(per_site, adjacent.expected_distance)
    return [upper(_label(inst), a < 1.0, kappa, worst["ratio"], ok=ok, alpha_col=a,
                  worst_adjacent=adjacent.expected_distance, adjacent_site_bound=per_site,
                  **_pair_details(inst, worst))]


def check_thm5_tmix(inst: Instance) -> list[Claim]:
    """Corrected Theorem 5: ``t_mix(1/4)`` <= every finite certificate; ``d(t) <= 1^T M^t 1``."""
    if not isinstance(inst, ChainInstance):
        return []
    C = inst.chain.influence_matrix()
    cert = contraction.certify_contraction(C, EPS)
    label = _label(inst)
    bounds = {"row": cert.tmix_row, "col": cert.tmix_col, "spectral": cert.tmix_spectral,
              "matrix_power": cert.tmix_matrix_power}
    details = {"certificates": {k: _finite(v) for k, v in bounds.items()},
               "best": cert.best, "spectral_radius": cert.spectral_radius}
    if cert.best == "none":
        return [not_evaluated(label, **details)]
    t_mix = _tmix(inst)
    finite_ok = all(t_mix <= v for v in bounds.values() if math.isfinite(v))
    curve_ok = all(
        d <= contraction.coupling_distance_bound(C, t) + ATOL
        for t, d in _curve(inst).items()
    )
    return [upper(label, True, cert.best_bound, t_mix, ok=finite_ok and curve_ok, **details)]


# -------------------------------------------------------------------------------- Theorem 8


def _margins(inst: Instance, basin: NamedMask) -> tuple[float, int, bool]:
    """``(Delta_star, k, Assumption 1 holds)`` for a basin (closed form on lumped chains)."""
    if isinstance(inst, LumpedInstance):
        b = basin.count.threshold  # exits only from level b: its b token sites, q - 1 tokens each
        delta_star = float(inst.chain.score_gap[b - 1])
        return delta_star, b, delta_star > 0.0
    m = inst.chain.margins(basin.mask)
    return m.delta_star, m.k, bool(m.holds and math.isfinite(m.delta_star))


def _escape_rows(inst: Instance, basin: NamedMask) -> np.ndarray:
    return escape_probabilities(inst.chain.transition_matrix(), basin.mask)


def _conductance(inst: Instance, mask: np.ndarray) -> float:
    return conductance(inst.chain.transition_matrix(), inst.chain.stationary(), mask)


def _basin_checks(
    inst: Instance, one: Callable[[NamedMask, float, int, str], Claim]
) -> list[Claim]:
    out = []
    for basin in inst.basins:
        label = _label(inst, basin)
        delta_star, k, holds = _margins(inst, basin)
        if not holds:
            out.append(not_evaluated(label, delta_star=_finite(delta_star)))
            continue
        out.append(one(basin, delta_star, k, label))
    return out


def check_thm8_escape(inst: Instance) -> list[Claim]:
    """Theorem 8: ``P(x, B^c) <= |V| e^{-Delta_star/tau}`` on ``B``, and the sharper form."""
    q, n = inst.chain.q, inst.chain.n

    def one(basin: NamedMask, delta_star: float, k: int, label: str) -> Claim:
        exact = float(_escape_rows(inst, basin).max())
        bound = escape.theorem8_escape_bound(q, delta_star, inst.tau)
        sharper = escape.sharper_escape_bound(n, k, q, delta_star, inst.tau)
        return upper(label, True, bound, exact, ok=exact <= sharper + _tol(sharper, exact),
                     delta_star=delta_star, k=k, sharper_bound=sharper)

    return _basin_checks(inst, one)


def check_thm8_conductance(inst: Instance) -> list[Claim]:
    """Theorem 8: ``Phi(B) <= |V| e^{-Delta_star/tau}``."""
    q = inst.chain.q

    def one(basin: NamedMask, delta_star: float, k: int, label: str) -> Claim:
        exact = _conductance(inst, basin.mask)
        bound = escape.theorem8_escape_bound(q, delta_star, inst.tau)
        return upper(label, True, bound, exact, delta_star=delta_star)

    return _basin_checks(inst, one)


def check_thm8_tmix(inst: Instance) -> list[Claim]:
    """Theorem 8: ``mu(B) <= 1/2`` gives ``t_mix(1/4) >= e^{Delta_star/tau} / (4 |V|)``."""
    q = inst.chain.q
    pi = inst.chain.stationary()

    def one(basin: NamedMask, delta_star: float, k: int, label: str) -> Claim:
        mass = float(pi[basin.mask].sum())
        if mass > 0.5 * (1.0 + 1e-12):
            return not_evaluated(label, delta_star=delta_star, mu_B=mass)
        bound = escape.theorem8_tmix_lower_bound(q, delta_star, inst.tau)
        lumped = isinstance(inst, LumpedInstance)
        return lower(label, True, bound, _tmix(inst), delta_star=delta_star, mu_B=mass,
                     tmix_is_lumped_lower_bound=lumped)

    return _basin_checks(inst, one)


def check_lpw74(inst: Instance) -> list[Claim]:
    """LPW Theorem 7.4 (no reversibility): ``d(t) >= 1 - pi(A) - t Phi(A)`` and its ``t_mix`` form.

    Sets: the instance's basins and, on chains of at most 16 states, the bottleneck set.
    """
    pi = inst.chain.stationary()
    sets = [(b.name, b.mask) for b in inst.basins]
    if isinstance(inst, ChainInstance) and inst.chain.num_states <= 16:
        sets.append(("bottleneck", inst.chain.bottleneck().mask))
    out = []
    for name, mask in sets:
        label = f"{inst.name} [{name}]"
        mass = float(pi[mask].sum())
        if not 0.0 < mass < 1.0:
            out.append(not_evaluated(label, pi_A=mass))
            continue
        phi = _conductance(inst, mask)
        t_mix = _tmix(inst)
        bound = escape.bottleneck_tmix_lower_bound(mass, phi, EPS)
        curve_ok = all(
            d >= escape.bottleneck_distance_lower_bound(t, mass, phi) - ATOL
            for t, d in _curve(inst).items()
        )
        out.append(lower(label, mass <= 0.5 * (1.0 + 1e-12), bound, t_mix, ok=curve_ok,
                         pi_A=mass, phi_A=phi))
    return out


# ---------------------------------------------------------------------------- Section 5.4


def _count_data(inst: Instance, basin: NamedMask) -> tuple[np.ndarray, np.ndarray]:
    """``(X, drift)`` per state (per level on a lumped chain) for the basin's token."""
    if isinstance(inst, LumpedInstance):
        return inst.chain.levels(), inst.chain.drift()
    token = basin.count.token
    held = inst.chain.states() == token
    p = inst.chain.conditionals()[:, :, token].T  # [S, n]
    return held.sum(axis=1), (p - held).sum(axis=1) / inst.chain.n


def _count_basins(inst: Instance) -> list[NamedMask]:
    return [b for b in inst.basins if b.count is not None]


def _leave_probability(inst: Instance, basin: NamedMask, horizon: int) -> np.ndarray:
    """``P_x(X_t < b for some t <= horizon)`` for every state (level) ``x``."""
    counts, _ = _count_data(inst, basin)
    return hitting_probability_within(
        inst.chain.transition_matrix(), counts < basin.count.threshold, horizon
    )


def check_drift_printed(inst: Instance) -> list[Claim]:
    """Section 5.4 as printed: positive drift at the boundary level ``X = b`` => slow escape.

    The printed conclusion ("escape times exponential in N") is read quantitatively as in
    :mod:`glauber.toy_models.counterexamples`: started on the boundary, the chain stays in
    ``B = {X >= b}`` for ``T = 10 n`` steps with probability at least 1/2. Leniently, the
    boundary state that stays longest is used; the claim fails when even it leaves ``B`` within
    ``T`` with probability above 1/2.
    """
    out = []
    for basin in _count_basins(inst):
        label = _label(inst, basin)
        counts, drifts = _count_data(inst, basin)
        on_boundary = counts == basin.count.threshold
        boundary = drifts[on_boundary]
        if not drift.boundary_drift_as_printed(boundary):
            out.append(not_evaluated(label, min_boundary_drift=float(boundary.min())))
            continue
        horizon = DRIFT_HORIZON_PER_SITE * inst.chain.n
        leave = float(_leave_probability(inst, basin, horizon)[on_boundary].min())
        details: dict[str, Any] = {"min_boundary_drift": float(boundary.min()),
                                   "b": basin.count.threshold, "T": horizon}
        if isinstance(inst, ChainInstance) and inst.counterexample is not None:
            details["counterexample"] = inst.counterexample.summary
        out.append(upper(label, True, 0.5, leave, **details))
    return out


def check_drift_band(inst: Instance) -> list[Claim]:
    """Corrected Section 5.4: drift ``>= eps > 0`` on ``a < X < b`` bounds escape below ``a``."""
    out = []
    for basin in _count_basins(inst):
        label = _label(inst, basin)
        a, b, horizon = basin.count.band_low, basin.count.threshold, basin.count.horizon
        counts, drifts = _count_data(inst, basin)
        band = (counts > a) & (counts < b)
        eps = float(drifts[band].min()) if band.any() else -math.inf
        if not eps > 0.0:
            out.append(not_evaluated(label, band_min_drift=_finite(eps), a=a, b=b))
            continue
        cert = drift.band_drift_escape_bound(min(eps, 1.0), a, b, horizon)
        hit = hitting_probability_within(inst.chain.transition_matrix(), counts <= a, horizon)
        exact = float(hit[counts >= b].max())
        out.append(upper(label, True, cert.bound, exact, eps=eps, a=a, b=b, T=horizon,
                         vacuous=cert.vacuous, exponent=cert.exponent))
    return out


# ------------------------------------------------------------------- path coupling, oracles


def check_path_coupling(inst: Instance) -> list[Claim]:
    """LPW Theorem 14.6 / Corollary 14.8 with the exact adjacent-pair factor ``kappa``."""
    if not isinstance(inst, ChainInstance):
        return []
    n = inst.chain.n
    kappa = inst.chain.one_step_hamming_all_pairs_adjacent().expected_distance
    label = _label(inst)
    if not kappa < 1.0:
        return [not_evaluated(label, kappa=kappa)]
    rate = path_coupling.rate_from_contraction_factor(kappa)
    bound = path_coupling.path_coupling_tmix_bound(rate, n, EPS)
    t_mix = _tmix(inst)
    curve_ok = all(
        d <= path_coupling.path_coupling_distance_bound(t, rate, n) + ATOL
        for t, d in _curve(inst).items()
    )
    return [upper(label, True, bound, t_mix, ok=curve_ok, kappa=kappa)]


def check_cycle_relaxation(inst: Instance) -> list[Claim]:
    """LPW Theorem 15.5: heat-bath Ising on the n-cycle has ``t_rel = n / (1 - tanh 2 beta)``."""
    if not (isinstance(inst, ChainInstance) and inst.ising is not None and inst.ising.cycle
            and inst.ising.zero_field and inst.ising.uniform_coupling is not None):
        return []
    beta = inst.ising.uniform_coupling / inst.tau
    closed = ising_closed_forms.ising_cycle_relaxation_time(inst.chain.n, beta)
    exact = inst.chain.relaxation_time()
    return [identity(_label(inst), True, abs(exact / closed - 1.0), tol=1e-6,
                     tightness=exact / closed, beta=beta, exact_relaxation_time=exact,
                     closed_form=closed)]


def check_dobrushin(inst: Instance) -> list[Claim]:
    """LPW Theorem 15.1: exact neighbour influences of zero-field Ising, and Dobrushin's bound."""
    if not (isinstance(inst, ChainInstance) and inst.ising is not None
            and inst.ising.zero_field and inst.ising.uniform_coupling is not None):
        return []
    J = inst.ising.J
    beta = inst.ising.uniform_coupling / inst.tau
    adjacent = J != 0.0
    degree = adjacent.sum(axis=1)
    expected = np.where(
        adjacent,
        np.array([ising_closed_forms.ising_neighbour_influence(beta, max(1, int(d)))
                  for d in degree])[:, None],
        0.0,
    )
    C = inst.chain.influence_matrix()
    error = float(np.abs(C - expected).max())
    max_degree = int(degree.max())
    label = _label(inst)
    details = {"beta": beta, "max_degree": max_degree, "influence_error": error}
    if not max_degree * math.tanh(beta) < 1.0:  # the influence identity is still checked
        return [_check(label, False, error <= IDENTITY_TOL, details=details)]
    bound = ising_closed_forms.dobrushin_ising_tmix_bound(inst.chain.n, max_degree, beta, EPS)
    t_mix = _tmix(inst)
    curve_ok = all(
        d <= ising_closed_forms.dobrushin_ising_bound(inst.chain.n, max_degree, beta, t) + ATOL
        for t, d in _curve(inst).items()
    )
    return [upper(label, True, bound, t_mix, ok=curve_ok and error <= IDENTITY_TOL, **details)]


# ----------------------------------------------------------------------------- the registry

# ------------------------------------------------------------------------- other kernels
#: The kernel rows run on chains of at most this many states.
KERNEL_MAX_STATES = 256
#: The shuffled scan's matrix sums over ``n!`` orders: formed for at most this many sites here.
SHUFFLED_MAX_SITES = 6
#: The ``epsilon`` of the mixture rows.
KERNEL_EPSILON = 0.1
#: Tolerance of ``|mu_MH - exp(-E/tau)/Z|`` (largest entry; GTH is accurate far below it).
TARGET_TOL = 1e-12


def _kernel_chain(inst: ChainInstance, kernel: str, epsilon: float = 0.0) -> ExactChain:
    """The instance's chain under another kernel, sharing its score table (cached)."""

    def build() -> ExactChain:
        chain = ExactChain(inst.model, inst.tau, kernel=kernel, epsilon=epsilon)
        chain._cache["scores"] = inst.chain.scores()
        return chain

    return _cached(inst, f"kernel:{kernel}:{epsilon}", build)


def _kernel_instance(inst: Instance) -> bool:
    return isinstance(inst, ChainInstance) and inst.chain.num_states <= KERNEL_MAX_STATES


def _scans(inst: ChainInstance) -> tuple[str, ...]:
    return ("sweep", "shuffled") if inst.chain.n <= SHUFFLED_MAX_SITES else ("sweep",)


def check_mh_target(inst: Instance) -> list[Claim]:
    """The Metropolis-Hastings chains' law is ``exp(-E/tau)/Z`` (PLL and logits energies; random
    scan, reversible; sweep), incompatible models included."""
    if not _kernel_instance(inst):
        return []
    errors, defects = {}, {}
    for energy in ("pll", "logits"):
        for scan in ("", ":sweep"):
            chain = _kernel_chain(inst, f"mh:{energy}{scan}")
            errors[f"mh:{energy}{scan}"] = float(np.abs(chain.stationary() - chain.target()).max())
        random_scan = _kernel_chain(inst, f"mh:{energy}")
        defects[energy] = float(reversibility_defect(random_scan.transition_matrix(),
                                                     random_scan.target()))
    error = max(errors.values())
    reversible = max(defects.values()) <= 1e-9
    glauber_tv = {e: 0.5 * float(np.abs(inst.chain.stationary()
                                        - _kernel_chain(inst, f"mh:{e}").target()).sum())
                  for e in ("pll", "logits")}
    return [identity(_label(inst), True, error if reversible else math.inf, tol=TARGET_TOL,
                     largest_error=errors, reversibility_defect=defects,
                     tv_glauber_law_vs_target=glauber_tv)]


def check_scan_joint(inst: Instance) -> list[Claim]:
    """Every Gibbs site update preserves a compatible joint, so do the sweep and the shuffled
    scan: their law is the joint."""
    if not _kernel_instance(inst):
        return []
    gibbs = _gibbs(inst)
    if gibbs is None:
        return [not_evaluated(_label(inst))]
    tv = {scan: 0.5 * float(np.abs(_kernel_chain(inst, scan).stationary() - gibbs).sum())
          for scan in _scans(inst)}
    residual = {scan: float(np.abs(_kernel_chain(inst, scan).step_law(gibbs) - gibbs).sum())
                for scan in _scans(inst)}
    return [identity(_label(inst), True, max(*tv.values(), *residual.values()), tol=1e-9,
                     tv_exact_mu_vs_gibbs=tv, stationary_residual_l1=residual)]


def check_eps_irreducible(inst: Instance) -> list[Claim]:
    """An epsilon mixture (random scan and sweep) is irreducible and aperiodic, and its influences
    are ``(1 - epsilon) C`` exactly."""
    if not _kernel_instance(inst):
        return []
    eps = KERNEL_EPSILON
    flags = {}
    for scan in ("random", "sweep"):
        P = _kernel_chain(inst, scan, eps).transition_matrix()
        flags[scan] = bool(kernels.is_irreducible(P) and kernels.is_aperiodic(P))
    C = inst.chain.influence_matrix()
    mixed = exact_influence.influence_matrix(_kernel_chain(inst, "random", eps).site_rows())
    error = float(np.abs(mixed - site_updates.mixture_influence(C, eps)).max())
    return [identity(_label(inst), True, error if all(flags.values()) else math.inf,
                     irreducible_and_aperiodic=flags, epsilon=eps)]


def _scan_tmix(inst: ChainInstance, scan: str) -> int:
    return _cached(inst, f"tmix:{scan}", lambda: int(_kernel_chain(inst, scan).mixing_time(EPS)))


def check_scan_dobrushin(inst: Instance) -> list[Claim]:
    """Scan contraction: ``d(t) <= 1^T E^t 1`` (``E`` the pass's influence matrix), ``t_mix``
    within its certificate, and ``d(t) <= n alpha_row^t`` when ``alpha_row < 1``."""
    if not _kernel_instance(inst):
        return []
    n = inst.chain.n
    C = inst.chain.influence_matrix()
    a = contraction.alpha_row(C)
    out = []
    for scan in _scans(inst):
        E = (systematic_scan.scan_influence_matrix(C) if scan == "sweep"
             else systematic_scan.shuffled_influence_matrix(C))
        certificate = systematic_scan.scan_certificate(E, EPS)
        t_mix = _scan_tmix(inst, scan)
        times = sorted({1, max(1, t_mix - 1), t_mix, 2 * t_mix})
        curve = dict(zip(times, _kernel_chain(inst, scan).distance_curve(times)))
        ok = all(d <= systematic_scan.scan_distance_bound(E, t) + ATOL for t, d in curve.items())
        dobrushin = None
        if a < 1.0:
            dobrushin = systematic_scan.dobrushin_scan_tmix_bound(a, n, EPS)
            ok = ok and t_mix <= dobrushin and all(
                d <= systematic_scan.dobrushin_scan_distance_bound(a, n, t) + ATOL
                for t, d in curve.items())
        label = f"{_label(inst)} [{scan}]"
        if certificate is None:
            out.append(not_evaluated(label, alpha_row=a, tmix=t_mix))
            continue
        out.append(upper(label, True, certificate, t_mix, ok=ok, alpha_row=a,
                         dobrushin_bound=dobrushin))
    return out


def check_kernel_thm8(inst: Instance) -> list[Claim]:
    """Theorem 8 for other kernels: per pass ``P(x, B^c) <= k (|V|-1) e^{-Delta*/tau}`` (sweep);
    Metropolis-Hastings (random scan, PLL energy): the sharper escape bound, the conductance bound
    and, when ``mu_MH(B) <= 1/2``, the ``t_mix`` lower bound."""
    if not _kernel_instance(inst):
        return []
    q, n, tau = inst.chain.q, inst.chain.n, inst.tau
    sweep, mh = _kernel_chain(inst, "sweep"), _kernel_chain(inst, "mh:pll")

    def one(basin: NamedMask, delta_star: float, k: int, label: str) -> Claim:
        exact = float(sweep.escape_probabilities(basin.mask).max())
        bound = systematic_scan.scan_escape_bound(k, q, delta_star, tau)
        mh_escape = float(mh.escape_probabilities(basin.mask).max())
        mh_sharper = escape.sharper_escape_bound(n, k, q, delta_star, tau)
        mh_phi = float(mh.conductance(basin.mask))
        phi_bound = escape.theorem8_escape_bound(q, delta_star, tau)
        ok = mh_escape <= mh_sharper + _tol(mh_sharper, mh_escape) \
            and mh_phi <= phi_bound + _tol(phi_bound, mh_phi)
        mass = float(mh.stationary()[basin.mask].sum())
        details = {"delta_star": delta_star, "k": k, "mh_escape": mh_escape,
                   "mh_sharper_bound": mh_sharper, "mh_conductance": mh_phi, "mu_mh_B": mass}
        if mass <= 0.5 * (1.0 + 1e-12):
            t_bound = escape.theorem8_tmix_lower_bound(q, delta_star, tau)
            t_mh = _cached(inst, "tmix:mh:pll", lambda: int(mh.mixing_time(EPS)))
            ok = ok and t_mh >= t_bound - _tol(t_bound, t_mh)
            details.update(mh_tmix=t_mh, mh_tmix_lower_bound=t_bound)
        return upper(label, True, bound, exact, ok=ok, **details)

    return _basin_checks(inst, one)


STATEMENTS: tuple[Statement, ...] = (
    Statement(
        "prop1", "Prop 1 / Cor 2", "positive conditionals",
        "P is a Markov kernel, irreducible and aperiodic; mu is unique and P^t(x, .) -> mu",
        "verified", "identity",
        ("kernels.is_markov_kernel", "kernels.is_irreducible", "kernels.is_aperiodic",
         "kernels.is_stationary"),
        check_prop1,
    ),
    Statement(
        "thm3", "Thm 3", "compatible joint pi",
        "pi is stationary and P is reversible w.r.t. pi (so pi = mu)",
        "verified", "identity", ("kernels.is_stationary", "kernels.is_reversible"), check_thm3,
    ),
    Statement(
        "prop4", "Prop 4 (rectangle test)", "compatible joint",
        "delta = 0 on every rectangle; always delta_tau = delta_1 / tau, and for Ising-type "
        "models delta_1 = 4 x_i x_j (J_ji - J_ij)",
        "verified", "identity",
        ("rectangle.rectangle_delta", "rectangle.delta_at_tau",
         "rectangle.asymmetric_ising_rectangle_delta"),
        check_prop4,
    ),
    Statement(
        "lemma6", "Def 2 + Lemma 6", "none",
        "c_ij(tau) <= Delta_ij / (4 tau) for all i != j",
        "verified", "upper", ("influence_bounds.lemma6_bound",), check_lemma6,
    ),
    Statement(
        "tanh", "tanh bound (sharper Lemma 6)", "none",
        "c_ij(tau) <= tanh(Delta_ij / (4 tau)) for all i != j",
        "verified", "upper", ("influence_bounds.tanh_bound",), check_tanh,
    ),
    Statement(
        "cor7", "Cor 7", "max_i sum_j Delta_ij < 4 tau",
        "alpha_row <= max_i sum_j Delta_ij / (4 tau) < 1",
        "verified", "upper",
        ("influence_bounds.corollary7_holds", "influence_bounds.corollary7_alpha_bound",
         "contraction.alpha_row"),
        check_cor7,
    ),
    Statement(
        "thm5-printed", "Thm 5 as printed (contraction)", "alpha_row < 1",
        "E[d_H(X_1, Y_1)] <= (1 - (1 - alpha_row)/n) d_H(x, y) for all x, y",
        "refuted", "upper", ("contraction.alpha_row", "contraction.theorem5_contraction_factor"),
        check_thm5_printed, corrected_by="thm5-corrected",
    ),
    Statement(
        "thm5-corrected", "Thm 5 corrected (col-sum contraction)", "none (contracts if a_col<1)",
        "E[d_H(X_1, Y_1)] <= (1 - (1 - alpha_col)/n) d_H(x, y) for all x, y",
        "corrected", "upper",
        ("contraction.alpha_col", "contraction.theorem5_contraction_factor",
         "contraction.adjacent_pair_hamming_bound"),
        check_thm5_corrected,
    ),
    Statement(
        "thm5-tmix", "Thm 5 t_mix (row/col/spectral/matrix-power)", "rho(C) < 1",
        "t_mix(1/4) <= n/(1-a)(log n + log 4) for a = alpha_row, alpha_col, sigma_max(C), and "
        "<= min{t : 1^T M^t 1 <= 1/4}; d(t) <= 1^T M^t 1",
        "verified", "upper",
        ("contraction.certify_contraction", "contraction.theorem5_tmix_bound",
         "contraction.matrix_power_certificate", "contraction.coupling_distance_bound"),
        check_thm5_tmix,
    ),
    Statement(
        "thm8-escape", "Thm 8 escape", "Assumption 1 (Delta* > 0)",
        "max_{x in B} P(x, B^c) <= |V| e^{-Delta*/tau}, and <= (k/n)(|V|-1) e^{-Delta*/tau}",
        "verified", "upper",
        ("escape.theorem8_escape_bound", "escape.sharper_escape_bound"), check_thm8_escape,
    ),
    Statement(
        "thm8-conductance", "Thm 8 conductance", "Assumption 1 (Delta* > 0)",
        "Phi(B) <= |V| e^{-Delta*/tau}",
        "verified", "upper", ("escape.theorem8_escape_bound",), check_thm8_conductance,
    ),
    Statement(
        "thm8-tmix", "Thm 8 t_mix lower bound", "Assumption 1, mu(B) <= 1/2",
        "t_mix(1/4) >= e^{Delta*/tau} / (4 |V|)",
        "verified", "lower", ("escape.theorem8_tmix_lower_bound",), check_thm8_tmix,
    ),
    Statement(
        "lpw-7.4", "LPW 7.4 bottleneck", "none (printed: pi(A) <= 1/2)",
        "d(t) >= 1 - pi(A) - t Phi(A), so t_mix(1/4) >= (3/4 - pi(A)) / Phi(A); no "
        "reversibility needed",
        "verified", "lower",
        ("escape.bottleneck_distance_lower_bound", "escape.bottleneck_tmix_lower_bound"),
        check_lpw74,
    ),
    Statement(
        "drift-printed", "§5.4 boundary drift as printed", "drift > 0 at level X = b",
        "escape from B = {X >= b} is exponentially slow, read as: from the boundary, "
        "P(leave B within T = 10 n steps) <= 1/2",
        "refuted", "upper", ("drift.boundary_drift_as_printed",), check_drift_printed,
        corrected_by="drift-band",
    ),
    Statement(
        "drift-band", "§5.4 band certificate (corrected)", "drift >= eps > 0 on a < X < b",
        "P(X_t <= a for some t <= T | X_0 >= b) <= T exp(-2 eps (b - a - 1))",
        "corrected", "upper", ("drift.band_drift_escape_bound",), check_drift_band,
    ),
    Statement(
        "path-coupling", "Path coupling (LPW 14.6)", "kappa = max adjacent E[d_H] < 1",
        "d(t) <= n kappa^t and t_mix(1/4) <= ceil(log(4n) / (-log kappa))",
        "verified", "upper",
        ("path_coupling.rate_from_contraction_factor", "path_coupling.path_coupling_distance_bound",
         "path_coupling.path_coupling_tmix_bound"),
        check_path_coupling,
    ),
    Statement(
        "cycle-relaxation", "Ising cycle t_rel (LPW 15.5)", "Ising n-cycle, zero field",
        "t_rel = n / (1 - tanh(2 beta))",
        "verified", "identity", ("ising_closed_forms.ising_cycle_relaxation_time",),
        check_cycle_relaxation,
    ),
    Statement(
        "dobrushin", "Dobrushin influences (LPW 15.1)", "Ising, zero field; D tanh b < 1",
        "c_ij = max_S |tanh(beta(S+1)) - tanh(beta(S-1))|/2 on edges, 0 elsewhere; "
        "t_mix(1/4) <= ceil(n (log n + log 4) / (1 - D tanh beta))",
        "verified", "upper",
        ("ising_closed_forms.ising_neighbour_influence", "ising_closed_forms.dobrushin_ising_bound",
         "ising_closed_forms.dobrushin_ising_tmix_bound"),
        check_dobrushin,
    ),
    Statement(
        "mh-target", "MH correction (ours)", "none (incompatible models too)",
        "mh:pll and mh:logits (random scan and sweep) have stationary law exp(-E/tau)/Z "
        "(largest error <= 1e-12); the random scan is reversible",
        "verified", "identity", ("site_updates.log_acceptance",), check_mh_target,
    ),
    Statement(
        "scan-joint", "Thm 3 for sweeps (ours)", "compatible joint pi",
        "the sweep's and the shuffled scan's stationary law is pi",
        "verified", "identity", ("site_updates.mixture_log_probs",), check_scan_joint,
    ),
    Statement(
        "eps-irreducible", "epsilon mixture (ours)", "none (epsilon = 0.1)",
        "random scan and sweep are irreducible and aperiodic; C_eps = (1 - eps) C",
        "verified", "identity", ("site_updates.mixture_influence",), check_eps_irreducible,
    ),
    Statement(
        "scan-dobrushin", "Scan contraction (Dobrushin; DGJ 2008/09)", "rho(E) < 1",
        "d(t) <= 1^T E^t 1 for a pass's influence matrix E (sweep, shuffled), so t_mix <= "
        "min{t : 1^T E^t 1 <= 1/4}; alpha_row < 1 gives d(t) <= n alpha_row^t",
        "verified", "upper",
        ("systematic_scan.scan_influence_matrix", "systematic_scan.shuffled_influence_matrix",
         "systematic_scan.scan_certificate", "systematic_scan.dobrushin_scan_tmix_bound"),
        check_scan_dobrushin,
    ),
    Statement(
        "kernel-thm8", "Thm 8 for sweeps and MH (ours)", "Assumption 1 (Delta* > 0)",
        "sweep: P(x, B^c) <= k(|V|-1) e^{-Delta*/tau} per pass; mh:pll: the escape, conductance "
        "and t_mix bounds of Thm 8 with its own mu",
        "verified", "upper",
        ("systematic_scan.scan_escape_bound", "escape.sharper_escape_bound",
         "escape.theorem8_escape_bound", "escape.theorem8_tmix_lower_bound"),
        check_kernel_thm8,
    ),
)

#: Statements by command-line name.
STATEMENTS_BY_NAME: dict[str, Statement] = {s.name: s for s in STATEMENTS}

__all__ = [
    "ALL_PAIRS_MAX_STATES",
    "STATEMENTS",
    "STATEMENTS_BY_NAME",
    "Statement",
]
