"""The claims of a certificate: each statement of the paper (or its correction) confronted with
the numbers :func:`~glauber.estimators.certify.certify` computed.

Honesty rules them (see :mod:`glauber.estimators.certify`): sampled influences and oscillations
are LOWER bounds on the suprema of Definition 2 and Lemma 6, so only exhaustive enumeration makes
a Theorem 5 certificate rigorous, while a sampled spectral radius >= 1 rigorously rules one out;
a rectangle with ``|delta|`` above rounding proves incompatibility (Proposition 4); margins are
exact at their state, so Theorem 8 on a perfect trap ``{x}`` is rigorous.
"""

from __future__ import annotations

import math

from glauber.estimators.certificate import (
    BasinSummary,
    Claim,
    CouplingSummary,
    DriftSummary,
    IncompatibilitySummary,
    InfluenceSummary,
    MarginsSummary,
)


def build_claims(
    eps: float,
    incompat: IncompatibilitySummary,
    infl: InfluenceSummary,
    marg: MarginsSummary,
    drf: DriftSummary,
    coup: CouplingSummary,
) -> tuple[Claim, ...]:
    """The claims of one certificate, in order: Proposition 4; Theorem 5 corrected and as
    printed; Corollary 7; corrected Theorem 5 on ``tanh(Delta / (4 tau))``; Theorem 8 on the best
    perfect trap (and on the caller's basin when there is one); §5.4 as printed and corrected;
    §6.1 coupling.

    Parameters
    ----------
    eps : float
        Target distance of the mixing-time certificates.
    incompat, infl, marg, drf, coup
        The stage summaries of :func:`~glauber.estimators.certify.certify`.

    Returns
    -------
    tuple of Claim
    """
    claims = [
        _incompatibility_claim(incompat),
        _theorem5_claim(infl, eps),
        _printed_contraction_claim(infl),
        _corollary7_claim(infl),
        _oscillation_claim(infl, eps),
        _trap_claim(marg),
    ]
    if marg.basin is not None:
        claims.append(_basin_claim(marg.basin))
    claims += [_printed_drift_claim(drf), _band_drift_claim(drf), _coupling_claim(coup)]
    return tuple(claims)


_LOWER = (
    "sampled influences are LOWER bounds on the suprema c_ij of Definition 2 (the worst pair "
    "of states may not have been sampled)"
)


def _incompatibility_claim(r: IncompatibilitySummary) -> Claim:
    found = r.n_above_atol > 0
    certifies = (
        f"the conditionals are incompatible: {r.n_above_atol} of {r.n_rectangles} rectangles "
        "have delta != 0, so no joint law has them; Theorem 3 does not apply (the stationary "
        "law is not a joint the model defines, and the chain need not be reversible)"
        if found else
        f"nothing: no rectangle of {r.n_rectangles} has |delta| > atol; a sample cannot prove "
        "compatibility"
    )
    return Claim(
        statement="Proposition 4 (rectangle test): compatible conditionals have delta = 0 in "
        "every rectangle, so one rectangle with delta != 0 proves incompatibility",
        hypothesis_held=found,
        certifies=certifies,
        value=r.mean_abs_delta,
        caveat=f"|delta| <= atol = {r.atol:g} counts as rounding; one-sided p-value of "
        f"mean |delta| > atol: {_fmt(r.p_value_abs)}",
        rigorous=found,
    )


def _theorem5_claim(r: InfluenceSummary, eps: float) -> Claim:
    c = r.contraction
    held = c.best != "none"
    if r.exhaustive:
        certifies = (
            f"t_mix({eps:g}) <= {_fmt(c.best_bound)} steps ({c.best} certificate; exact "
            "influences)" if held else
            f"nothing: the exact spectral radius of C is {c.spectral_radius:.4g} >= 1"
        )
        caveat = "exact: every pair of states was enumerated"
    elif held:
        certifies = (
            f"NOT certified: consistent with fast mixing (t_mix({eps:g}) <= "
            f"{_fmt(c.best_bound)} would follow if the sampled influences were the suprema)"
        )
        caveat = _LOWER + "; a rigorous certificate needs exhaustive influences (toy models)"
    elif c.spectral_radius >= 1.0:
        certifies = (
            f"no Theorem 5 certificate exists at this temperature: the sampled spectral radius "
            f"{c.spectral_radius:.4g} >= 1, and the true C is entrywise larger (Perron-Frobenius: "
            "the spectral radius of a non-negative matrix grows with its entries)"
        )
        caveat = "says nothing about slow mixing: Theorem 5 is only a sufficient condition"
    else:
        certifies = (
            f"nothing: the sampled spectral radius {c.spectral_radius:.4g} is within rounding "
            "of 1 (no finite certificate)"
        )
        caveat = _LOWER
    return Claim(
        statement="Theorem 5 (corrected): if the spectral radius of C is < 1, t_mix(eps) <= the "
        "best of the row-sum, column-sum, spectral and matrix-power certificates",
        hypothesis_held=held,
        certifies=certifies,
        value=c.best_bound,
        caveat=caveat,
        rigorous=r.exhaustive or c.spectral_radius >= 1.0,
    )


def _printed_contraction_claim(r: InfluenceSummary) -> Claim:
    c = r.contraction
    corrected = (
        f"the corrected one-step contraction needs alpha_col < 1: alpha_col = "
        f"{c.alpha_col:.4g} ({'holds' if c.contraction_corrected_holds else 'fails'}"
        f"{'' if r.exhaustive else ' on the sampled C, a lower bound'})"
    )
    return Claim(
        statement="Theorem 5 as printed: alpha_row = max_i sum_j c_ij < 1 gives "
        "E[d_H(X_1, Y_1)] <= (1 - (1 - alpha)/n) d_H(x, y)",
        hypothesis_held=bool(c.contraction_as_printed_holds),
        certifies="nothing: the one-step contraction is false as printed (its proof bounds a "
        "column sum; a hub that influences many sites breaks it); " + corrected,
        value=c.alpha_row,
        caveat="alpha_row < 1 still bounds t_mix (corrected Theorem 5, row certificate)",
        rigorous=False,
    )


def _corollary7_claim(r: InfluenceSummary) -> Claim:
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
        statement="Corollary 7 (Lemma 6: c_ij <= Delta_ij / (4 tau)): max_i sum_j Delta_ij < "
        "4 tau implies alpha_row < 1",
        hypothesis_held=held,
        certifies=certifies,
        value=r.lemma6_alpha,
        caveat=f"the sharper tanh form gives max_i sum_j tanh(Delta_ij / (4 tau)) = "
        f"{r.tanh_alpha:.4g}; Lemma 6 check on the sampled pairs: "
        f"{'consistent' if r.lemma6_consistent and r.tanh_consistent else 'VIOLATED (bug?)'}",
        rigorous=held and r.exhaustive,
    )


def _oscillation_claim(r: InfluenceSummary, eps: float) -> Claim:
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
        statement="Corrected Theorem 5 on tanh(Delta_ij / (4 tau)) >= c_ij (the sharper form "
        "of Lemma 6): a certificate from score oscillations alone",
        hypothesis_held=held,
        certifies=certifies,
        value=c.best_bound,
        caveat="never tighter than the certificate from C itself; useful when only score "
        "bounds are known",
        rigorous=held and r.exhaustive,
    )


def _trap_claim(r: MarginsSummary) -> Claim:
    statement = (
        "Theorem 8 on the one-state basin {x} of a perfect trap x (every site at its strict "
        "argmax): P(x, {x}^c) <= |V| e^{-Delta*/tau}, and t_mix(1/4) >= e^{Delta*/tau}/(4|V|) "
        "if mu({x}) <= 1/2"
    )
    t = r.trap
    if t is None:
        return Claim(
            statement=statement, hypothesis_held=False,
            certifies="nothing: no given state is a perfect trap (each has a site whose token "
            "is not the strict argmax: approximate traps only)",
            value=r.delta_star, caveat="value: the smallest margin Delta* over the states",
            rigorous=False,
        )
    vacuous = " (vacuous: below 1 step)" if t.tmix_lower_bound < 1 else ""
    return Claim(
        statement=statement, hypothesis_held=True,
        certifies=f"state {t.state}: escape probability <= {t.escape_bound:.4g} (sharper "
        f"{t.sharper_escape_bound:.4g}; exact {t.exact_escape:.4g}); t_mix(1/4) >= "
        f"{_fmt(t.tmix_lower_bound)} steps{vacuous}",
        value=t.tmix_lower_bound,
        caveat="margins are exact for the state itself, so the escape bound is rigorous; the "
        "t_mix bound also needs mu_tau({x}) <= 1/2, not checked here",
        rigorous=True,
    )


def _basin_claim(r: BasinSummary) -> Claim:
    if r.assumption1:
        certifies = (
            f"P(x, B^c) <= {_fmt(r.escape_bound)} (sharper {_fmt(r.sharper_escape_bound)}; "
            f"largest exact escape {r.max_exact_escape:.4g}); t_mix(1/4) >= "
            f"{_fmt(r.tmix_lower_bound)} if mu(B) <= 1/2"
        )
    else:
        certifies = "nothing: Assumption 1 fails (an exit-causing site is not at its argmax)"
    return Claim(
        statement="Theorem 8 (Assumption 1 on the given basin B): P(x, B^c) <= |V| "
        "e^{-Delta*/tau} and t_mix(1/4) >= e^{Delta*/tau}/(4|V|) if mu(B) <= 1/2",
        hypothesis_held=r.assumption1,
        certifies=certifies,
        value=r.tmix_lower_bound,
        caveat="every basin state was checked" if r.complete else
        f"Assumption 1 was checked on {r.n_states} basin states only; it must hold at every "
        "state of B",
        rigorous=r.assumption1 and r.complete,
    )


def _printed_drift_claim(r: DriftSummary) -> Claim:
    return Claim(
        statement=f"Section 5.4 as printed: positive drift of the count of {r.token_label!r} at "
        "the sampled states implies exponentially slow escape",
        hypothesis_held=r.all_positive,
        certifies="nothing: positive drift at sampled (boundary) states does not bound the "
        "escape probability; see the corrected band certificate",
        value=r.min,
        caveat="value: the smallest drift at the given states",
        rigorous=False,
    )


def _band_drift_claim(r: DriftSummary) -> Claim:
    held = r.band_min_drift > 0
    if not held:
        certifies = "nothing: the drift is <= 0 somewhere in the band"
    elif r.vacuous:
        certifies = f"nothing: the bound {_fmt(r.escape_bound)} is vacuous (>= 1)"
    else:
        certifies = (
            f"P(count <= {r.band_a:g} within {r.horizon} steps | count >= {r.band_b:g}) <= "
            f"{r.escape_bound:.4g}"
            + ("" if r.band_states_complete else " IF the drift bound held at every band state")
        )
    return Claim(
        statement=f"Section 5.4 corrected: drift >= eps > 0 at EVERY state with {r.band_a:g} < "
        f"count < {r.band_b:g} gives P(escape) <= T exp(-2 eps (b - a - 1))",
        hypothesis_held=held,
        certifies=certifies,
        value=r.escape_bound,
        caveat="every band state was checked" if r.band_states_complete else
        f"the drift was evaluated at {r.n_in_band} sampled band states only (an estimate)",
        rigorous=r.rigorous,
    )


def _coupling_claim(r: CouplingSummary) -> Claim:
    return Claim(
        statement="Coupling (paper §6.1): pairs from independent starts, same site, maximal "
        "coupling of the two conditionals",
        hypothesis_held=r.n_censored == 0,
        certifies=f"a diagnostic only: {r.n_pairs - r.n_censored} of {r.n_pairs} pairs met "
        f"within {r.budget} steps (median {_fmt(r.median)})",
        value=r.median,
        caveat="d(t) <= max over ALL pairs of starts of P(T_couple > t) (LPW Corollary 5.5); "
        "sampled starts bound nothing",
        rigorous=False,
    )


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "inf"
    return f"{value:.4g}"


__all__ = ["build_claims"]
