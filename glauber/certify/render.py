"""The sections of a certificate's printed table and their text helpers.

The stages' sections (each stage's ``render``: incompatibility (Proposition 4), influence &
Theorem 5 (with the exact chain's column when the certificate holds exact values), margins &
Theorem 8, the exact chain, drift (Section 5.4), coupling (Section 6.1)), the model, claims and
timings sections, and the row and number formats the other stage modules share. The table itself
is assembled by :func:`glauber.certify.table.format_certificate`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from glauber.certify.certificate import Certificate
from glauber.certify.exact import ACCURACY_NOTE
from glauber.certify.verdict import state_text

_WIDTH = 34


def rectangle_sections(cert: Certificate) -> list[tuple[str, list[str]]]:
    return [("incompatibility (Proposition 4, rectangle test)", _incompatibility_section(cert))]


def influence_sections(cert: Certificate) -> list[tuple[str, list[str]]]:
    return [("influence & Theorem 5", _influence_section(cert))]


def margins_sections(cert: Certificate) -> list[tuple[str, list[str]]]:
    return [("margins & Theorem 8", _margins_section(cert))]


def exact_sections(cert: Certificate) -> list[tuple[str, list[str]]]:
    return [("exact chain (every state)", _exact_section(cert))] if cert.exact else []


def drift_sections(cert: Certificate) -> list[tuple[str, list[str]]]:
    return [("drift (Section 5.4)", _drift_section(cert))]


def coupling_sections(cert: Certificate) -> list[tuple[str, list[str]]]:
    return [("coupling (Section 6.1)", _coupling_section(cert))]


def _row(label: str, *values: Any) -> str:
    return f"  {label:<{_WIDTH}} " + "  ".join(_num(v) for v in values)


def _num(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.4g}"
    return str(value)


def _int(value: int) -> str:
    """An integer in full up to 15 digits, else as ``d.ddde+k`` (a spectral ``t_mix`` lower
    bound may have hundreds of digits; ``float`` would overflow)."""
    digits = str(value)
    if len(digits) <= 15:
        return digits
    return f"{digits[0]}.{digits[1:4]}e+{len(digits) - 1}"


def _first(values: Any, limit: int = 8) -> tuple[Any, ...]:
    """At most ``limit`` values (of a tuple or an array), then how many more."""
    values = tuple(np.asarray(values).tolist())
    if len(values) <= limit:
        return values
    return (*values[:limit], f"... ({len(values) - limit} more)")


def model_section(cert: Certificate) -> list[str]:
    s = cert.settings
    return [
        _row("model", cert.model),
        _row("sites n, vocabulary q", cert.n, cert.q),
        _row("states examined", f"{len(cert.states)} ({_source(cert.states_source)})"
             + ("; the exhaustive stages visit every state" if s.exhaustive else "")),
        _row("influence", "exhaustive (every state: exact)" if s.exhaustive else
             f"searched: {cert.influence.queries:,} distinct queries "
             f"({_fraction(cert.influence.query_fraction)} of the n q^(n-1) that tabulate the "
             f"model) from {s.n_contexts} start state(s) (LOWER bounds, each realised by a "
             "witness)" if cert.influence.searched
             else f"sampled: {s.n_contexts} context(s) x {s.n_replacements} replacement(s)"),
        _row("exact values", cert.exact_note),
    ]


def _fraction(value: float) -> str:
    """A fraction of a tabulation: a percentage, or the number itself when tiny."""
    return f"{100 * value:.3g}%" if value >= 1e-4 else f"{value:.2g}"


def _source(source: str) -> str:
    """Where the examined states came from, in words."""
    return {
        "default states": "the model's default states: the shipped antibody chains for protein "
                          "models; --states FILE picks others",
        "random states": "uniform random states drawn with the seed; --states FILE picks others",
        "given": "given",
        "context": "the context's own tokens at the chosen sites; --states FILE picks others",
    }.get(source, f"from {source}")


def _is_inf(value: Any) -> bool:
    return isinstance(value, float) and math.isinf(value)


def _vacuous_if(value: Any, vacuous: bool) -> str:
    return _num(value) + (" (vacuous)" if vacuous else "")


def _incompatibility_section(cert: Certificate) -> list[str]:
    r = cert.incompatibility
    return [
        _row("rectangles", f"{r.n_rectangles} (replacements: top-{r.k} of the model)"),
        _row("mean |delta|  (sd, median, max)", r.mean_abs_delta,
             f"({_num(r.sd_abs_delta)}, {_num(r.median_abs_delta)}, {_num(r.max_abs_delta)})"),
        _row("mean signed delta  (sd)", r.mean_delta, f"({_num(r.sd_delta)})"),
        _row("p-value: |delta| above rounding", r.p_value_abs),
        _row("p-value: signed t / Wilcoxon", r.p_value_t, r.p_value_wilcoxon),
        _row("above their rounding bound", f"{r.n_above_bound} / {r.n_rectangles}",
             f"(largest bound {r.max_error_bound:.3g}, {r.precision})"),
        *([] if cert.exact is None or cert.exact.rectangles is None else [
            _row("every rectangle of the chain", cert.exact.rectangles.count,
                 f"max |delta| {_num(cert.exact.rectangles.max_abs_delta)}, mean "
                 f"{_num(cert.exact.rectangles.mean_abs_delta)}")]),
    ]


def _influence_section(cert: Certificate) -> list[str]:
    r, e = cert.influence, cert.exact
    c, x = r.contraction, (e.contraction if e is not None else None)
    kind = ("exact" if r.exhaustive else "searched (LOWER bound)" if r.searched
            else "sampled (LOWER bound)")
    out = [(f"  {'':<{_WIDTH}} {kind:<22}" + ("exact chain" if e is not None else "")).rstrip()]

    def pair(label: str, name: str) -> str:
        def show(value: Any) -> str:  # an infinite t_mix bound bounds nothing
            text = _vacuous_if(value, isinstance(value, float) and name.startswith(
                ("tmix", "best_bound")) and math.isinf(value))
            if not r.exhaustive and name.startswith(("tmix", "best_bound")) and text != "inf" \
                    and "vacuous" not in text:
                text += " (no bound)"  # computed from lower bounds of the c_ij
            return text

        line = f"  {label:<{_WIDTH}} {show(getattr(c, name)):<22}"
        return (line + (show(getattr(x, name)) if x is not None else "")).rstrip()

    out += [
        pair("alpha_row (paper's alpha)", "alpha_row"),
        pair("alpha_col", "alpha_col"),
        pair("alpha_spectral (top sing. value)", "alpha_spectral"),
        pair("spectral radius of C", "spectral_radius"),
        pair("t_mix bound: row sums", "tmix_row"),
        pair("t_mix bound: column sums", "tmix_col"),
        pair("t_mix bound: spectral norm", "tmix_spectral"),
        pair("t_mix bound: matrix power", "tmix_matrix_power"),
        pair("best certificate", "best"),
        pair("best bound on t_mix(eps)", "best_bound"),
    ]
    if e is not None:
        tmix = (_num(e.tmix) if e.tmix is not None else
                f"in [{_int(e.tmix_lower)}, {_int(e.tmix_upper)}] (rigorous bracket: see the "
                "notes)" if e.tmix_upper is not None else
                f"> {_int(e.tmix_lower - 1)} (not computed: see the notes)" if e.tmix_lower else
                "n/a")
        out.append(f"  {'exact t_mix(eps), worst start':<{_WIDTH}} {'':<22}{tmix}")
        gap = (_num(e.absolute_gap) if e.absolute_gap is not None or not e.absolute_gap_lower
               else f">= {_num(e.absolute_gap_lower)} (proved from C; no upper bound)")
        out.append(f"  {'exact spectral gap (absolute)':<{_WIDTH}} {'':<22}{gap}")
        out.append(f"  {'exact relaxation time':<{_WIDTH}} {'':<22}{_num(e.relaxation_time)}")
    out += [
        _row("Lemma 6: max_i sum_j Delta/(4 tau)", r.lemma6_alpha,
             "(Corollary 7 holds)" if r.corollary7 else "(Corollary 7 fails)"),
        _row("tanh form: max_i sum_j tanh(.)", r.tanh_alpha),
        _row("certificate from tanh(Delta/4tau)",
             f"{r.oscillation_contraction.best}: {_num(r.oscillation_contraction.best_bound)}"),
        _row("rho(C) lower bound (rounding-safe)", r.rho_lower,
             "(>= 1: no certificate can exist)" if r.no_certificate else ""),
        _row("comparisons" if not r.searched else "search: distinct queries, witnesses",
             r.n_comparisons, *(() if not r.searched else (len(r.witnesses),))),
    ]
    return out


def _exact_section(cert: Certificate) -> list[str]:
    e = cert.exact
    out = [
        _row("states", e.num_states),
        _row("reversible (detailed balance)",
             "unknown (see the notes)" if e.reversible is None else e.reversible),
        _row("most probable state, its mass", state_text(cert.labels, e.mode_state),
             e.max_stationary_mass),
        _row("perfect traps among all states", e.perfect_traps),
    ]
    if e.best_trap_state is not None:
        bound = e.best_trap_escape_bound
        out += [
            _row("best trap, Delta*", state_text(cert.labels, e.best_trap_state), e.best_trap_delta_star),
            _row("its escape: Theorem 8 bound, exact", bound, e.best_trap_exact_escape,
                 "(vacuous)" if bound is not None and bound >= 1 else ""),
        ]
    out += [_row("accuracy" if note.startswith(ACCURACY_NOTE) else "not computed", note)
            for note in e.notes]
    return out


def _margins_section(cert: Certificate) -> list[str]:
    r = cert.margins
    out = [
        _row("perfect traps among the states", f"{r.n_perfect} / {len(r.perfect)}"),
        _row("Delta* (smallest margin)", r.delta_star),
        _row("per state: min margin", *_first(r.state_min)),
        _row("per state: mean margin", *_first(r.state_mean)),
    ]
    t = r.best_trap
    if t is None:
        out.append(_row("Theorem 8 on a trap {x}", "no perfect trap: nothing to bound"))
    else:
        out += [
            _row("trap state (best margin)", f"examined state {t + 1}",
                 f"Delta* = {_num(float(r.state_min[t]))}"),
            _row("escape: |V| e^(-D/tau), sharper",
                 _vacuous_if(float(r.trap_escape_bound[t]), r.trap_escape_bound[t] >= 1),
                 _vacuous_if(float(r.trap_sharper_escape_bound[t]),
                             r.trap_sharper_escape_bound[t] >= 1)),
            _row("escape: exact P(x, {x}^c)", float(r.escape[t])),
            _row("t_mix(1/4) >= e^(D/tau)/(4|V|)",
                 _vacuous_if(float(r.trap_tmix_lower_bound[t]), r.trap_tmix_lower_bound[t] < 1),
                 "(needs mu({x}) <= 1/2)"),
        ]
        if cert.exact is not None and cert.exact.trap_mass is not None:
            out.append(_row("exact mu({x})", cert.exact.trap_mass))
    if cert.basin is not None:
        b, escape = cert.basin.basin, cert.basin.basin_escape
        out += [
            _row("basin states (complete?)", b.basin_size, b.complete),
            _row("Assumption 1 / Delta* / k", b.holds, b.delta_star, b.k),
            _row("escape bound, sharper", _vacuous_if(b.escape_bound, b.escape_bound >= 1),
                 _vacuous_if(b.sharper_escape_bound, b.sharper_escape_bound >= 1)),
            _row("exact escape: max, mean", float(np.max(escape)), float(np.mean(escape))),
            _row("t_mix(1/4) lower bound", b.tmix_lower_bound),
        ]
    return out


def _drift_section(cert: Certificate) -> list[str]:
    r, band = cert.drift, cert.drift_band
    a, b = band.band
    bound = None if band.certificate is None else band.certificate.bound
    return [
        _row("counted token", f"{cert.labels[r.token]!r} (index {r.token})"),
        _row("counts at the states", *_first(r.counts)),
        _row("drift at the states", *_first(r.per_state)),
        _row("as printed: all drifts > 0", r.all_positive, "(proves nothing by itself)"),
        _row("band a < count < b", f"({a:g}, {b:g})",
             f"{band.n_in_band} states" + (" (every band state)" if band.band_states_complete
                                           else " (sampled)")),
        _row("smallest drift in the band", band.band_min_drift),
        _row(f"P(escape within {cert.settings.horizon} steps) <=", bound,
             "(vacuous)" if band.vacuous else "",
             "(rigorous)" if band.rigorous else "(not rigorous)"),
    ]


def _coupling_section(cert: Certificate) -> list[str]:
    r = cert.coupling
    if r is None:
        return [_row("coupled pairs", "not run (n_pairs = 0)")]
    return [
        _row("pairs, step budget", len(r.times), r.budget),
        _row("coupling times (censored at budget)", *_first(r.times)),
        _row("censored pairs", r.n_censored),
        _row("median coupling time", "> budget" if r.median_exceeds_budget else r.median),
    ]


def claims_section(cert: Certificate) -> list[str]:
    out = []
    for c in cert.claims:
        held = "held" if c.hypothesis_held else "not held"
        proof = "RIGOROUS" if c.rigorous else "not rigorous"
        out += [
            f"  [{held}; {proof}] {c.statement}",
            f"      -> {c.certifies}",
            f"      value: {_vacuous_if(c.bound, _is_inf(c.bound))}; caveat: {c.caveat}",
        ]
    return out


#: Timing rows of the stages whose name alone does not say what was timed.
_TIMED = {"table": "score table of the exact chain", "exact": "exact values"}


def timings_section(cert: Certificate) -> list[str]:
    t = cert.timings
    rate = t.rows / t.total if t.total > 0 else math.inf
    chain_only = () if cert.exact else ("table", "exact")  # 0 s: no chain was built
    return [
        _row("load model and states (s)", t.load),
        *(_row(f"{_TIMED.get(name, name)} (s)", seconds) for name, seconds in t.seconds.items()
          if name not in chain_only),
        _row("certify total (s)", t.total),
        _row("conditionals asked (rows/s)", t.rows, f"({rate:.1f}/s)"),
    ]


__all__ = [
    "claims_section",
    "coupling_sections",
    "drift_sections",
    "exact_sections",
    "influence_sections",
    "margins_sections",
    "model_section",
    "rectangle_sections",
    "timings_section",
]
