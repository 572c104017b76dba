"""The claims of a certificate: each statement of the paper (or its correction) confronted with
the stage results of :func:`~glauber.certify.certify`.

Honesty rules them. Sampled influences and oscillations are LOWER bounds on the suprema of
Definition 2 and Lemma 6, so only exhaustive enumeration makes a Theorem 5 certificate rigorous,
while a sampled spectral radius >= 1 rigorously rules one out (the spectral radius of a
non-negative matrix grows with its entries); a rectangle with ``|delta|`` above rounding proves
incompatibility (Proposition 4); margins are exact at their state, so Theorem 8 on a perfect trap
``{x}`` is rigorous. Where exact values of the chain are known (a small model), each bound is
also confronted with them (``Claim.exact``, ``Claim.holds``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from glauber.certify.claim_key import ClaimKey
from glauber.core.claims import Claim
from glauber.estimators.coupling import CouplingResult
from glauber.estimators.drift import DriftResult
from glauber.estimators.influence import InfluenceResult
from glauber.estimators.margins import MarginsResult
from glauber.estimators.rectangle import RectangleTestResult

if TYPE_CHECKING:
    from glauber.certify.certificate import Certificate
    from glauber.certify.exact import ExactValues


def rectangle_claims(cert: Certificate) -> list[Claim]:
    """Proposition 4 on the rectangle test."""
    return [_incompatibility_claim(cert.incompatibility, cert.exact)]


def influence_claims(cert: Certificate) -> list[Claim]:
    """Theorem 5 corrected and as printed, Corollary 7, Theorem 5 on the oscillations."""
    r, eps, exact = cert.influence, cert.eps, cert.exact
    return [_theorem5_claim(r, eps, exact), _printed_contraction_claim(r),
            _corollary7_claim(r), _oscillation_claim(r, eps, exact)]


def margins_claims(cert: Certificate) -> list[Claim]:
    """Theorem 8 on the best perfect trap, and on the caller's basin when there is one."""
    claims = [_trap_claim(cert.margins, cert.exact, cert.eps)]
    if cert.basin is not None:
        claims.append(_basin_claim(cert.basin))
    return claims


def drift_claims(cert: Certificate) -> list[Claim]:
    """Section 5.4 as printed (at the states) and corrected (over the band)."""
    token = cert.labels[cert.drift.token]
    return [_printed_drift_claim(cert.drift, token),
            _band_drift_claim(cert.drift_band, cert.settings.horizon)]


def coupling_claims(cert: Certificate) -> list[Claim]:
    """Section 6.1's coupled pairs (a diagnostic), when any ran."""
    return [] if cert.coupling is None else [_coupling_claim(cert.coupling)]


_LOWER = (
    "sampled or searched influences are LOWER bounds on the suprema c_ij of Definition 2 (the "
    "worst pair of states may not have been found)"
)


def _incompatibility_claim(r: RectangleTestResult, exact: ExactValues | None) -> Claim:
    found = r.n_above_bound > 0
    ulps = (f", given scores accurate to {r.score_error_ulps:g} units in the last place of "
            f"{r.precision}" if r.score_error_ulps else "")
    if found:
        certifies = (
            f"the conditionals are incompatible: {r.n_above_bound} of {r.n_rectangles} rectangles "
            f"have |delta| above their own rounding bound{ulps}, so no joint law has them; "
            "Theorem 3 does not apply (the stationary law is not a joint the model defines, and "
            "the chain need not be reversible)"
        )
    elif (exact is not None and exact.rectangles is not None
          and exact.rectangles.max_abs_delta == 0.0):
        certifies = (
            f"compatible as far as rectangles can tell: every one of the "
            f"{exact.rectangles.count} rectangles of the chain has delta = 0"
        )
    else:
        certifies = (
            f"nothing: no rectangle of {r.n_rectangles} has |delta| above its rounding bound; a "
            "sample cannot prove compatibility"
        )
    extra = {}
    if exact is not None and exact.rectangles is not None:
        extra = {"exact": exact.rectangles.max_abs_delta}
    return Claim(
        key=ClaimKey.PROPOSITION4.value,
        statement="Proposition 4 (rectangle test): compatible conditionals have delta = 0 in "
        "every rectangle, so one rectangle with delta != 0 proves incompatibility",
        hypothesis_held=found,
        certifies=certifies,
        bound=_opt(r.mean_abs_delta),
        caveat=f"each |delta| is compared with a bound on its own rounding error (largest "
        f"{r.max_error_bound:.3g}, {r.precision}); one-sided p-value of mean |delta| above it: "
        f"{_fmt(r.p_value_abs)}"
        + ("" if exact is None or exact.rectangles is None else
           f"; over all {exact.rectangles.count} rectangles of the exact chain, max |delta| = "
           f"{exact.rectangles.max_abs_delta:.4g}"),
        rigorous=found,
        **extra,
    )


def _against_tmix(bound: float, exact: ExactValues | None) -> dict:
    """``exact``/``holds`` of an upper bound on ``t_mix(eps)`` against the exact chain's."""
    if exact is None or exact.tmix is None or not math.isfinite(bound):
        return {}
    return {"exact": float(exact.tmix), "holds": bool(exact.tmix <= bound)}


def _theorem5_claim(r: InfluenceResult, eps: float, exact: ExactValues | None) -> Claim:
    c = r.contraction
    held = c.best != "none"
    how = ("searched (every entry realised by a witness)" if r.searched else "sampled")
    if r.exhaustive:
        if held:
            certifies = (f"t_mix({eps:g}) <= {_fmt(c.best_bound)} steps ({c.best} certificate; "
                         "exact influences)")
        elif r.no_certificate:  # a proved negative: listed as proved, like the searched one
            certifies = (
                f"no Theorem 5 certificate exists at this temperature: the exact influence "
                f"matrix has rho(C) = {c.spectral_radius:.4g} (>= {r.rho_lower:.4g} >= 1 after "
                "rounding)"
            )
        else:
            certifies = (
                f"nothing: the spectral radius of the exact C is within rounding of 1 (that of "
                f"its enclosure is {c.spectral_radius:.4g}, its rounding-safe lower bound "
                f"{r.rho_lower:.4g} < 1)"
            )
        caveat = "exact: every pair of states was enumerated"
        if c.precision_note and "matrix_power" not in c.rigorous:
            caveat += f"; matrix-power certificate not used: {c.precision_note}"
    elif r.no_certificate:
        certifies = (
            f"no Theorem 5 certificate exists at this temperature: the {how} influences give "
            f"rho(C) >= {r.rho_lower:.4g} >= 1 after rounding, and the true C is entrywise larger "
            "(Perron-Frobenius: the spectral radius of a non-negative matrix grows with its "
            "entries)"
        )
        caveat = "says nothing about slow mixing: Theorem 5 is only a sufficient condition"
    elif held:
        certifies = (
            f"NOT certified: an estimate from a lower-bound C ({how}) would give t_mix({eps:g}) "
            f"<= {_fmt(c.best_bound)} if its entries were the suprema; this is no bound"
        )
        caveat = _LOWER + "; a rigorous certificate needs the exact C (an enumerable chain)"
    else:
        certifies = (
            f"nothing: the {how} spectral radius {c.spectral_radius:.4g} is within rounding "
            f"of 1 (its rounding-safe lower bound is {r.rho_lower:.4g} < 1)"
        )
        caveat = _LOWER
    return Claim(
        key=ClaimKey.THEOREM5_CORRECTED.value,
        statement="Theorem 5 (corrected): if the spectral radius of C is < 1, t_mix(eps) <= the "
        "best of the row-sum, column-sum, spectral and matrix-power certificates",
        hypothesis_held=held,
        certifies=certifies,
        bound=c.best_bound,
        caveat=caveat,
        rigorous=(r.exhaustive and held) or r.no_certificate,
        **(_against_tmix(c.best_bound, exact) if held and r.exhaustive else {}),
    )


def _printed_contraction_claim(r: InfluenceResult) -> Claim:
    c = r.contraction
    corrected = (
        f"the corrected one-step contraction needs alpha_col < 1: alpha_col = "
        f"{c.alpha_col:.4g} ({'holds' if c.contraction_corrected_holds else 'fails'}"
        f"{'' if r.exhaustive else ' on the sampled C, a lower bound'})"
    )
    return Claim(
        key=ClaimKey.THEOREM5_PRINTED.value,
        statement="Theorem 5 as printed: alpha_row = max_i sum_j c_ij < 1 gives "
        "E[d_H(X_1, Y_1)] <= (1 - (1 - alpha)/n) d_H(x, y)",
        hypothesis_held=bool(c.contraction_as_printed_holds),
        certifies="nothing: the one-step contraction is false as printed (its proof bounds a "
        "column sum; a hub that influences many sites breaks it); " + corrected,
        bound=c.alpha_row,
        caveat="alpha_row < 1 still bounds t_mix (corrected Theorem 5, row certificate)",
        rigorous=False,
    )


def _corollary7_claim(r: InfluenceResult) -> Claim:
    held = r.corollary7
    if held and r.exhaustive:
        certifies = f"alpha_row <= {r.lemma6_alpha:.4g} < 1 (exact oscillations)"
    elif held:
        certifies = (
            f"NOT certified: consistent with alpha_row <= {r.lemma6_alpha:.4g} < 1 (the sampled "
            "oscillations are lower bounds on the suprema)"
        )
    else:
        certifies = (
            f"nothing: max_i sum_j Delta_ij / (4 tau) = {r.lemma6_alpha:.4g} >= 1"
            + ("" if r.exhaustive else " (already on the sampled, lower-bound oscillations)")
        )
    return Claim(
        key=ClaimKey.COROLLARY7.value,
        statement="Corollary 7 (Lemma 6: c_ij <= Delta_ij / (4 tau)): max_i sum_j Delta_ij < "
        "4 tau implies alpha_row < 1",
        hypothesis_held=held,
        certifies=certifies,
        bound=r.lemma6_alpha,
        caveat=f"the sharper tanh form gives max_i sum_j tanh(Delta_ij / (4 tau)) = "
        f"{r.tanh_alpha:.4g}; Lemma 6 check on the sampled pairs: "
        f"{'consistent' if r.lemma6_consistent and r.tanh_consistent else 'VIOLATED (bug?)'}",
        rigorous=held and r.exhaustive,
    )


def _oscillation_claim(r: InfluenceResult, eps: float, exact: ExactValues | None) -> Claim:
    c = r.oscillation_contraction
    held = c.best != "none"
    if held and r.exhaustive:
        certifies = f"t_mix({eps:g}) <= {_fmt(c.best_bound)} steps ({c.best} certificate)"
    elif held:
        certifies = (
            f"NOT certified: consistent with t_mix({eps:g}) <= {_fmt(c.best_bound)} (sampled "
            "oscillations are lower bounds)"
        )
    else:
        certifies = f"nothing: spectral radius of tanh(Delta/(4 tau)) = {c.spectral_radius:.4g}"
    return Claim(
        key=ClaimKey.THEOREM5_OSCILLATION.value,
        statement="Corrected Theorem 5 on tanh(Delta_ij / (4 tau)) >= c_ij (the sharper form "
        "of Lemma 6): a certificate from score oscillations alone",
        hypothesis_held=held,
        certifies=certifies,
        bound=c.best_bound,
        caveat="never tighter than the certificate from C itself; useful when only score "
        "bounds are known",
        rigorous=held and r.exhaustive,
        **(_against_tmix(c.best_bound, exact) if held and r.exhaustive else {}),
    )


def _trap_claim(r: MarginsResult, exact: ExactValues | None, eps: float) -> Claim:
    statement = (
        "Theorem 8 on the one-state basin {x} of a perfect trap x (every site at its strict "
        "argmax): P(x, {x}^c) <= |V| e^{-Delta*/tau}, and t_mix(1/4) >= e^{Delta*/tau}/(4|V|) "
        "if mu({x}) <= 1/2"
    )
    s = r.best_trap
    if s is None:
        return Claim(
            key=ClaimKey.THEOREM8_TRAP.value,
            statement=statement, hypothesis_held=False,
            certifies="nothing: no given state is a perfect trap (each has a site whose token "
            "is not the strict argmax: approximate traps only)",
            bound=_opt(r.delta_star), caveat="value: the smallest margin Delta* over the states",
            rigorous=False,
        )
    tmix = float(r.trap_tmix_lower_bound[s])
    escape = float(r.trap_escape_bound[s])
    marks = (" (vacuous: a probability bound >= 1)" if escape >= 1 else "",
             " (vacuous: below 1 step)" if tmix < 1 else "")
    mass_ok = exact is not None and exact.trap_mass is not None and exact.trap_mass <= 0.5
    extra: dict = {}
    if exact is None or exact.trap_mass is None:
        caveat = ("margins are exact for the state itself (less their rounding bound), so the "
                  "escape bound is rigorous; the t_mix bound also needs mu_tau({x}) <= 1/2, not "
                  "checked here")
    elif mass_ok:
        caveat = (f"the escape bound is rigorous; exact mu({{x}}) = {exact.trap_mass:.4g} <= 1/2, "
                  "so the t_mix bound is rigorous too")
        if eps == 0.25 and exact.tmix is not None:
            extra = {"exact": float(exact.tmix), "holds": bool(exact.tmix >= tmix)}
    else:
        caveat = (f"the escape bound is rigorous; exact mu({{x}}) = {exact.trap_mass:.4g} > 1/2, "
                  "so the t_mix bound does not apply")
    return Claim(
        key=ClaimKey.THEOREM8_TRAP.value,
        statement=statement, hypothesis_held=True,
        certifies=f"examined state {s + 1}: escape probability <= {escape:.4g}{marks[0]} (sharper "
        f"{r.trap_sharper_escape_bound[s]:.4g}; exact {r.escape[s]:.4g}); t_mix(1/4) >= "
        f"{_fmt(tmix)} steps{marks[1]}" + _mass_condition(exact, mass_ok),
        bound=tmix,
        caveat=caveat,
        rigorous=True,
        details={"state": s, "vacuous_escape": escape >= 1, "vacuous_tmix": tmix < 1,
                 "tmix_applies": mass_ok},
        **extra,
    )


def _mass_condition(exact: ExactValues | None, mass_ok: bool) -> str:
    """What Theorem 8's t_mix bound still needs (``mu({x}) <= 1/2``), said in the claim."""
    if mass_ok:
        return ""
    if exact is None or exact.trap_mass is None:
        return " (if mu({x}) <= 1/2, not checked here)"
    return f" (does not apply: exact mu({{x}}) = {exact.trap_mass:.4g} > 1/2)"


def _basin_claim(r: MarginsResult) -> Claim:
    b = r.basin
    largest = float(np.max(r.basin_escape))
    vacuous_escape = b.escape_bound is not None and b.escape_bound >= 1
    vacuous_tmix = b.tmix_lower_bound is not None and b.tmix_lower_bound < 1
    if b.holds:
        certifies = (
            f"P(x, B^c) <= {_fmt(b.escape_bound)}"
            f"{' (vacuous: a probability bound >= 1)' if vacuous_escape else ''} (sharper "
            f"{_fmt(b.sharper_escape_bound)}; largest exact escape {largest:.4g}); t_mix(1/4) >= "
            f"{_fmt(b.tmix_lower_bound)} if mu(B) <= 1/2"
            f"{' (vacuous: below 1 step)' if vacuous_tmix else ''}"
        )
    else:
        certifies = "nothing: Assumption 1 fails (an exit-causing site is not at its argmax)"
    return Claim(
        key=ClaimKey.THEOREM8_BASIN.value,
        statement="Theorem 8 (Assumption 1 on the given basin B): P(x, B^c) <= |V| "
        "e^{-Delta*/tau} and t_mix(1/4) >= e^{Delta*/tau}/(4|V|) if mu(B) <= 1/2",
        hypothesis_held=b.holds,
        certifies=certifies,
        bound=b.tmix_lower_bound,
        caveat="every basin state was checked" if b.complete else
        f"Assumption 1 was checked on {b.basin_size} basin states only; it must hold at every "
        "state of B",
        rigorous=b.holds and b.complete,
        details={"vacuous_escape": bool(vacuous_escape), "vacuous_tmix": bool(vacuous_tmix)},
    )


def _printed_drift_claim(r: DriftResult, token: str) -> Claim:
    return Claim(
        key=ClaimKey.DRIFT_PRINTED.value,
        statement=f"Section 5.4 as printed: positive drift of the count of {token!r} at "
        "the sampled states implies exponentially slow escape",
        hypothesis_held=r.all_positive,
        certifies="nothing: positive drift at sampled (boundary) states does not bound the "
        "escape probability; see the corrected band certificate",
        bound=r.min,
        caveat="value: the smallest drift at the given states",
        rigorous=False,
    )


def _band_drift_claim(r: DriftResult, horizon: int) -> Claim:
    a, b = r.band
    held = r.band_min_drift > 0
    bound = None if r.certificate is None else r.certificate.bound
    if not held:
        certifies = "nothing: the drift is <= 0 somewhere in the band"
    elif r.vacuous:
        certifies = f"nothing: the bound {_fmt(bound)} is vacuous (>= 1)"
    else:
        certifies = (
            f"P(count <= {a:g} within {horizon} steps | count >= {b:g}) <= {bound:.4g}"
            + ("" if r.band_states_complete else " IF the drift bound held at every band state")
        )
    return Claim(
        key=ClaimKey.DRIFT_BAND.value,
        statement=f"Section 5.4 corrected: drift >= eps > 0 at EVERY state with {a:g} < "
        f"count < {b:g} gives P(escape) <= T exp(-2 eps (b - a - 1))",
        hypothesis_held=held,
        certifies=certifies,
        bound=bound,
        caveat="every band state was checked" if r.band_states_complete else
        f"the drift was evaluated at {r.n_in_band} sampled band states only (an estimate)",
        rigorous=r.rigorous,
    )


def _coupling_claim(r: CouplingResult) -> Claim:
    pairs = len(r.times)
    return Claim(
        key=ClaimKey.COUPLING.value,
        statement="Coupling (paper §6.1): pairs from independent starts, same site, maximal "
        "coupling of the two conditionals",
        hypothesis_held=r.n_censored == 0,
        certifies=f"a diagnostic only: {pairs - r.n_censored} of {pairs} pairs met "
        f"within {r.budget} steps (median {_fmt(r.median)})",
        bound=r.median,
        caveat="d(t) <= max over ALL pairs of starts of P(T_couple > t) (LPW Corollary 5.5); "
        "sampled starts bound nothing",
        rigorous=False,
    )


def _opt(value: float | None) -> float | None:
    """A float, or None for None/NaN (strict JSON has no NaN)."""
    return None if value is None or math.isnan(float(value)) else float(value)


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "inf"
    return f"{value:.4g}"


__all__ = [
    "coupling_claims",
    "drift_claims",
    "influence_claims",
    "margins_claims",
    "rectangle_claims",
]
