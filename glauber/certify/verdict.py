"""The verdict that opens a certificate's table and its report page: the answer first.

Its first lines answer, in plain words and per model and temperature, the questions a user
came with (:func:`verdict_answers`), each with the category of the answer and the theorem in
parentheses:

- *fast mixing?* the exact worst-start ``t_mix`` where it is known (windows, toys), else the
  certified bound (corrected Theorem 5 on the exact influence matrix), else "not known";
- *certificate?* whether corrected Theorem 5 certifies the chain, or provably cannot
  (``rho(C) >= 1`` on realised influences, docs/theory.md);
- *bracket*: ``tau_cert`` and ``tau_no_cert`` when the certificate holds them;
- *compatible?* the rectangle test (Proposition 4);
- *files*: where the command wrote its outputs (passed in by the command).

Then every statement sorted into one of four categories (:func:`verdict_lines`): *proved*
(rigorous claims that conclude something, proved negatives included), *known exactly* (values
of the exact chain), *estimated only* (non-rigorous claims that conclude something) and *gives
nothing here*. Nothing is cut: long lines wrap.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from typing import Any, Mapping, Sequence

from glauber.certify.certificate import Certificate
from glauber.certify.claim_key import ClaimKey
from glauber.core.claims import Claim

#: Width of the printed verdict (characters).
WIDTH = 100
#: Short names of the claims in the verdict block (plain words, the theorem after).
SHORT = {
    "prop4": "Proposition 4 (rectangles)",
    "thm5-corrected": "Theorem 5, corrected (t_mix upper bound)",
    "thm5-printed": "Theorem 5 as printed (one-step contraction)",
    "cor7": "Corollary 7 (alpha from score oscillations)",
    "thm5-oscillation": "Theorem 5 on tanh(Delta/4tau)",
    "thm5-upper": "Theorem 5 on an upper bound of C",
    "thm8-trap": "Theorem 8 on a perfect trap",
    "thm8-basin": "Theorem 8 on the given basin",
    "drift-printed": "Section 5.4 as printed (drift)",
    "drift-band": "Section 5.4 corrected (drift band)",
    "coupling": "coupling times (Section 6.1)",
    "lag-coupling": "lag coupling (TV to stationarity, estimated)",
}
#: What the labels of the claims section mean (printed once, in the verdict block).
LEGEND = (
    "legend of the claims below: [held; RIGOROUS] the hypothesis held and what follows is "
    "proved for this model at this tau; [held; not rigorous] the hypothesis held on sampled "
    "numbers (lower bounds) or on a diagnostic, so what follows is an estimate, not a proof; "
    "[not held; ...] the hypothesis failed, so the statement gives nothing (RIGOROUS there "
    "means the failure itself is proved); '-> nothing' after [held; ...]: the statement gives "
    "nothing even so (it is false as printed, or its bound is vacuous); (vacuous) a bound that "
    "says nothing (a probability bound >= 1, an infinite t_mix bound, a t_mix lower bound "
    "below one step)"
)
#: The four categories of a statement, in the order they are printed.
CATEGORIES = ("proved", "known exactly", "estimated only (not proofs)", "gives nothing here")


def verdict_answers(
    cert: Certificate,
    outputs: Mapping[str, str] | None = None,
    bracket: Mapping[str, Any] | None = None,
) -> list[tuple[str, str]]:
    """The questions a user came with and their answers, ``(question, answer)``, in order.

    Parameters
    ----------
    cert : Certificate
    outputs : mapping of str to str, optional
        What the command wrote and where (``{"certificate (JSON)": "results/x.json"}``); the
        *files* answer says so, or that nothing was written.
    bracket : mapping, optional
        ``tau_cert`` / ``tau_no_cert`` (None where none was found); default: the
        certificate's own ``bracket`` attribute when it has one (:func:`certificate_bracket`).
    """
    bracket = certificate_bracket(cert) if bracket is None else bracket
    out = [(f"fast mixing at tau = {cert.tau:g}?", _mixing(cert)),
           ("Theorem 5 certificate?", _certificate(cert)),
           ("files:", _files(outputs))]  # within the first 10 lines, before the longer answers
    if bracket:
        out.append(("bracket:", _bracket(bracket)))
    out.append(("compatible?", _compatibility(cert)))
    return out


def verdict_lines(
    cert: Certificate,
    outputs: Mapping[str, str] | None = None,
    bracket: Mapping[str, Any] | None = None,
) -> list[str]:
    """The verdict block: the answers first (:func:`verdict_answers`), then every statement
    in its category (:data:`CATEGORIES`), then the legend of the claim labels; wrapped at
    :data:`WIDTH` columns, never cut."""
    answers = verdict_answers(cert, outputs, bracket)
    pad = max(len(q) for q, _ in answers) + 1
    out = []
    for question, answer in answers:
        out += wrap(f"{question:<{pad}}{answer}", "  ", "  " + " " * pad)
    out.append("")
    for title, items in zip(CATEGORIES, categorised(cert)):
        out.append(f"  {title}:" + ("" if items else " nothing"))
        for item in items:
            out += wrap(item, "    - ", "      ")
    out += wrap(LEGEND, "  ")
    return out


def categorised(cert: Certificate) -> tuple[list[str], list[str], list[str], list[str]]:
    """Every statement of ``cert`` in one of the four :data:`CATEGORIES`.

    *Proved*: rigorous claims that conclude something (a proved negative such as "no
    certificate exists" included; a bound whose every part is vacuous is listed as giving
    nothing). *Known exactly*: the exact chain's own values. *Estimated*: non-rigorous claims
    whose hypothesis held (sampled lower bounds, diagnostics). *Gives nothing*: the rest.
    """
    proved, estimated, nothing = [], [], []
    for c in cert.claims:
        name = SHORT.get(c.key, c.key)
        vacuous = bool(c.details.get("vacuous_escape")) and bool(c.details.get("vacuous_tmix"))
        if c.certifies.startswith("nothing") or vacuous:
            nothing.append(name + (" (its bounds are vacuous)" if vacuous else ""))
        else:
            (proved if c.rigorous else estimated).append(f"{name}: {' '.join(c.certifies.split())}")
    return proved, _known(cert), estimated, nothing


def certificate_bracket(cert: Any) -> dict[str, Any] | None:
    """``cert.bracket`` as a dict (``tau_cert``, ``tau_no_cert``, ...), or None when the
    certificate has none (certificates older than the bracket)."""
    b = getattr(cert, "bracket", None)
    if dataclasses.is_dataclass(b) and not isinstance(b, type):
        return dataclasses.asdict(b)
    return dict(b) if isinstance(b, Mapping) else None


def state_text(labels: Sequence[str], state: Any) -> str:
    """A state as its tokens (``"RWG"`` when every label is one character, else spaced)."""
    if state is None:
        return "n/a"
    sep = "" if all(len(label) == 1 for label in labels) else " "
    return sep.join(labels[int(v)] for v in state)


def wrap(text: str, indent: str, subsequent: str | None = None, width: int = WIDTH) -> list[str]:
    """``text`` wrapped at ``width`` columns (never cut), the first line after ``indent``."""
    return textwrap.wrap(text, width=width, initial_indent=indent,
                         subsequent_indent=indent if subsequent is None else subsequent,
                         break_on_hyphens=False, break_long_words=False)


# ----------------------------------------------------------------------------- the answers
def _claim(cert: Certificate, key: ClaimKey) -> Claim | None:
    return next((c for c in cert.claims if c.key == key.value), None)


def _g(value: float | None) -> str:
    if value is None:
        return "n/a"
    return "inf" if math.isinf(value) else f"{value:.4g}"


def _steps(t: float) -> str:
    return f"{int(t):,}" if math.isfinite(t) and float(t).is_integer() else _g(t)


def _mixing(cert: Certificate) -> str:
    e, eps, n = cert.exact, cert.eps, cert.n
    thm5 = _claim(cert, ClaimKey.THEOREM5_CORRECTED)
    proved = thm5 is not None and thm5.rigorous and thm5.hypothesis_held
    bound = cert.influence.contraction.best_bound
    parts = []
    if e is not None and e.tmix is not None:
        parts.append(
            f"known exactly: t_mix({eps:g}) = {e.tmix:,} steps from the worst start "
            f"({e.tmix / n:.3g} sweeps of the {n} sites; exact chain of {e.num_states:,} "
            "states)")
    elif e is not None and e.tmix_upper is not None:
        parts.append(f"known: {e.tmix_lower:,} <= t_mix({eps:g}) <= {e.tmix_upper:,} steps from "
                     f"the worst start (rigorous bracket of the exact chain over all "
                     f"{e.num_states:,} states, too many to step every start)")
    elif e is not None and e.tmix_lower:
        parts.append(f"known: t_mix({eps:g}) > {e.tmix_lower - 1:,} steps from the worst start "
                     f"(a rigorous lower bound from the exact chain over all {e.num_states:,} "
                     "states; no upper bound is proved)")
    if proved:
        parts.append(f"{'' if parts else 'yes, '}proved: t_mix({eps:g}) <= {_steps(bound)} "
                     f"steps (Theorem 5, corrected: {cert.influence.contraction.best} "
                     "certificate)")
    slow = _slow(cert)
    if slow:
        parts.append(slow)
    if parts:
        return "; ".join(parts)
    if cert.influence.no_certificate:
        return ("not known: no Theorem 5 certificate can exist here (next line), and nothing "
                "here proves slow mixing (Theorem 5 is only a sufficient condition)")
    how = "searched" if cert.influence.searched else "sampled"
    return (f"not known: the {how} influences are lower bounds, so no Theorem 5 certificate "
            "is proved (an exact or upper-bound influence matrix is needed)")


def _slow(cert: Certificate) -> str:
    """Theorem 8's lower bound on ``t_mix(1/4)``, when it applies and says something."""
    trap = _claim(cert, ClaimKey.THEOREM8_TRAP)
    if (trap is None or not trap.rigorous or not trap.details.get("tmix_applies")
            or trap.details.get("vacuous_tmix") or trap.bound is None):
        return ""
    return (f"proved: t_mix(1/4) >= {_steps(math.ceil(trap.bound))} steps (Theorem 8: a "
            "perfect trap of stationary mass <= 1/2)")


def _certificate(cert: Certificate) -> str:
    r, tau = cert.influence, f"{cert.tau:g}"
    c = r.contraction
    thm5 = _claim(cert, ClaimKey.THEOREM5_CORRECTED)
    if thm5 is not None and thm5.rigorous and thm5.hypothesis_held:
        return (f"yes, proved: t_mix({cert.eps:g}) <= {_steps(c.best_bound)} steps at tau = {tau} "
                f"(Theorem 5, corrected: {c.best} certificate on the exact influence matrix)")
    e = cert.exact
    if not r.exhaustive and e is not None and e.contraction.best != "none":
        # a chain too large for the other stages to enumerate (a 5-site window): they search,
        # while the exact chain's own C, read from its table, certifies
        x = e.contraction
        return (f"yes, proved: t_mix({cert.eps:g}) <= {_steps(x.best_bound)} steps at tau = {tau} "
                f"(Theorem 5, corrected: {x.best} certificate on the exact chain's influence "
                "matrix; the influence stage searched)")
    if r.no_certificate:
        which = (f"exact rho(C) = {c.spectral_radius:.4g}" if r.exhaustive
                 else f"{'searched' if r.searched else 'sampled'} rho(C) >= {r.rho_lower:.4g}")
        return f"none can exist at tau = {tau}, proved: {which} >= 1 (Theorem 5, corrected)"
    if r.exhaustive:
        return (f"not known at tau = {tau}: the exact rho(C) = {c.spectral_radius:.4g} is within "
                "rounding of 1 (Theorem 5, corrected)")
    return (f"not known at tau = {tau}: the influences are lower bounds with rho(C) >= "
            f"{r.rho_lower:.4g} < 1, which neither certifies nor rules out a certificate "
            "(Theorem 5, corrected)")


def _bracket(b: Mapping[str, Any]) -> str:
    lo, hi = b.get("tau_no_cert"), b.get("tau_cert")
    number = (int, float)
    if not isinstance(hi, number):
        up = "no certified temperature found"
    elif b.get("upper_monotone", True):
        up = f"certified for tau >= {hi:g} ({b.get('upper_method') or 'upper bound'} on C)"
    else:  # a bound not known to decrease in tau certifies where it was evaluated only
        method = b.get("upper_method") or "upper bound"
        up = f"certified at tau = {hi:g}, the lowest found ({method} on C)"
    down = (f"none can exist at tau = {lo:g}, the highest found ("
            f"{b.get('lower_method') or 'realised influences'})"
            if isinstance(lo, number) else "no temperature found where none can exist")
    gap = (f"; between them not known (ratio {hi / lo:.3g})"
           if isinstance(lo, number) and isinstance(hi, number) and lo > 0 else "")
    return f"proved: {up}; {down}{gap} (Theorem 5, corrected)"


def _compatibility(cert: Certificate) -> str:
    r = cert.incompatibility
    if r.n_above_bound > 0:
        return (f"no, proved: {r.n_above_bound} of {r.n_rectangles} rectangles have |delta| above "
                "rounding, so no joint law has them (Proposition 4)")
    e = cert.exact
    if e is not None and e.rectangles is not None and e.rectangles.max_abs_delta == 0.0:
        return (f"yes as far as rectangles tell, known exactly: all {e.rectangles.count:,} "
                "rectangles of the chain have delta = 0 (Proposition 4)")
    return (f"not known: none of {r.n_rectangles} sampled rectangles is above its rounding bound, "
            "and a sample cannot prove compatibility (Proposition 4)")


def _files(outputs: Mapping[str, str] | None) -> str:
    if not outputs:
        return "none written (--json FILE keeps the certificate; glauber report FILE draws it)"
    return "; ".join(f"{what} {where}" for what, where in outputs.items())


def _known(cert: Certificate) -> list[str]:
    """The exact chain's values, one statement each (empty without an exact chain)."""
    e = cert.exact
    if e is None:
        return []
    x = e.contraction
    out = []
    if e.tmix is not None:
        out.append(f"t_mix({cert.eps:g}) = {e.tmix:,} steps from the worst start")
    elif e.tmix_upper is not None:
        out.append(f"{e.tmix_lower:,} <= t_mix({cert.eps:g}) <= {e.tmix_upper:,} steps "
                   "(rigorous bracket)")
    elif e.tmix_lower:
        out.append(f"t_mix({cert.eps:g}) > {e.tmix_lower - 1:,} steps (a rigorous lower bound; "
                   "no upper bound is proved)")
    if e.absolute_gap is not None:
        out.append(f"absolute spectral gap {_g(e.absolute_gap)}, relaxation time "
                   f"{_g(e.relaxation_time)} steps")
    elif e.absolute_gap_lower:
        out.append(f"absolute spectral gap >= {_g(e.absolute_gap_lower)} (proved from the "
                   "influence matrix, corrected Theorem 5; no upper bound is proved)")
    out.append(f"influence matrix C: rho(C) = {x.spectral_radius:.4g}, alpha_row = "
               f"{x.alpha_row:.4g}, alpha_col = {x.alpha_col:.4g}")
    out.append(f"stationary law: most probable state {state_text(cert.labels, e.mode_state)} with mass "
               f"{_g(e.max_stationary_mass)}; {e.perfect_traps} perfect trap(s) among all "
               f"{e.num_states:,} states")
    if e.best_trap_state is not None:
        out.append(f"best perfect trap {state_text(cert.labels, e.best_trap_state)}: margin Delta* = "
                   f"{_g(e.best_trap_delta_star)}, exact one-step escape probability "
                   f"{_g(e.best_trap_exact_escape)}")
    if e.reversible is not None:
        out.append("detailed balance " + ("holds (a reversible chain)" if e.reversible else
                                          "fails (the chain is not reversible)"))
    if e.rectangles is not None:
        out.append(f"rectangles: max |delta| = {_g(e.rectangles.max_abs_delta)} over all "
                   f"{e.rectangles.count:,} rectangles of the chain (mean "
                   f"{_g(e.rectangles.mean_abs_delta)})")
    return out


__all__ = [
    "CATEGORIES",
    "LEGEND",
    "SHORT",
    "WIDTH",
    "categorised",
    "certificate_bracket",
    "state_text",
    "verdict_answers",
    "verdict_lines",
    "wrap",
]
