"""The statements of docs/theory.md, each with its checker: the registry ``glauber verify`` runs.

A checker takes an :data:`~glauber.verification.instances.Instance` and returns a list of
:class:`~glauber.core.claims.Claim` (one per instance, or one per basin of the instance; empty when
the statement does not apply), built as :mod:`~glauber.verification.statement_checks` says. Every
bound comes from :mod:`glauber.theory`; every exact value from the exact chain
(:class:`glauber.exact.chain.ExactChain` or the lumped
:class:`~glauber.exact.count_chain.CountChain`). The checkers live by result:
:mod:`~glauber.verification.statements_stationarity` (Proposition 1, Theorem 3, Proposition 4),
:mod:`~glauber.verification.statements_influence` (Definition 2, Lemma 6, Corollary 7, Theorem 5),
:mod:`~glauber.verification.statements_trapping` (Theorem 8, LPW 7.4, Section 5.4),
:mod:`~glauber.verification.statements_oracles` (path coupling, the Ising cycle, Dobrushin) and
:mod:`~glauber.verification.statements_kernels` (the other kernels).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from glauber.core.claims import Claim
from glauber.verification.instances import Instance
from glauber.verification.statement_checks import Kind, Status
from glauber.verification.statements_influence import (
    ALL_PAIRS_MAX_STATES,
    check_cor7,
    check_lemma6,
    check_tanh,
    check_thm5_corrected,
    check_thm5_printed,
    check_thm5_tmix,
)
from glauber.verification.statements_kernels import (
    check_eps_irreducible,
    check_kernel_thm8,
    check_mh_target,
    check_scan_dobrushin,
    check_scan_joint,
)
from glauber.verification.statements_oracles import (
    check_cycle_relaxation,
    check_dobrushin,
    check_path_coupling,
)
from glauber.verification.statements_stationarity import check_prop1, check_prop4, check_thm3
from glauber.verification.statements_trapping import (
    check_drift_band,
    check_drift_printed,
    check_lpw74,
    check_thm8_conductance,
    check_thm8_escape,
    check_thm8_tmix,
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
