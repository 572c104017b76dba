"""certify's ``bracket`` stage: ``tau_no_cert < tau_cert``, both sides of Theorem 5.

After the influence stage, at no model row of its own
(:func:`~glauber.estimators.influence_bracket.influence_bracket`):

- the upper side, a rigorous upper bound on ``C`` over every context
  (:class:`~glauber.estimators.influence_upper.UpperBoundSource`: exact from the table of a
  small chain or of any exact chain, 5-site windows included, a closed form for pairwise toys,
  the weights of a masked LM's LayerNorm head), the lowest temperature where it certifies
  (``tau_cert``) and its ``t_mix`` bound at the requested ``tau``;
- the lower side, the highest temperature where the influence stage's realised values prove
  that no certificate exists (``tau_no_cert``): the exact table, the search's witnesses
  re-evaluated from the memo of its queries (``StageRun.memo``), or the sample at ``tau`` only.

The result, an :class:`~glauber.estimators.influence_bracket.InfluenceBracket` (None with
``Settings(bracket=False)``), has no field of its own in the certificate: it reads as
``cert.bracket`` and sits at the top level of the JSON (docs/architecture.md, "A certify
stage"). The verdict states it (:func:`glauber.certify.verdict.certificate_bracket`); this
module adds its claim (corrected Theorem 5 on the upper bound) and its section of the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from glauber.certify.claim_key import ClaimKey
from glauber.certify.render import _row
from glauber.certify.stage_run import StageRun
from glauber.certify.verdict import wrap
from glauber.core.claims import Claim
from glauber.errors import UnboundableModelError
from glauber.estimators.influence_bracket import (
    InfluenceBracket,
    WitnessCurve,
    exact_lower,
    fixed_lower,
    influence_bracket,
)
from glauber.estimators.influence_upper import TABULATE_MAX_STATES, UpperBoundSource
from glauber.estimators.witnesses import reduced_precision

if TYPE_CHECKING:
    from glauber.certify.certificate import Certificate


def wants_memo(run: StageRun) -> bool:
    """Whether the influence stage should ask through a query memo for this stage: a searched
    influence (its witnesses are then re-read at other temperatures for free)."""
    s = run.settings
    return bool(s.bracket and not s.exhaustive and s.search_budget)


def run(run: StageRun) -> dict[str, Any]:
    """The bracket from the model's rigorous upper bound (when it has one) and the influence
    stage's realised values."""
    if not run.settings.bracket:
        return {"bracket": None}
    model, tau, infl = run.model, run.tau, run.results["influence"]
    try:
        # an exact chain's model is its score table: tabulated at any size the chain takes
        # (a 5-site window's 800,000 rows too, above the exhaustive limit of the other stages),
        # at no model row, so the bracket of an exact window is exact on both sides
        source = UpperBoundSource(model, tabulate=True if run.exact else None,
                                  max_states=max(TABULATE_MAX_STATES, run.max_states))
        missing = ""
    except UnboundableModelError as exc:
        source, missing = None, str(exc)
    rows = 0
    if source is not None and source.tabulated:
        lower, how = exact_lower(source), "exact (table)"
    elif run.memo is not None and infl.witnesses:
        curve = WitnessCurve(run.memo.cache, infl.witnesses, reduced_precision(model))
        lower, how, rows = curve, "search witnesses", int(infl.queries) + curve.rows
    else:
        how = "exact (at tau only)" if infl.exhaustive else "sampled (at tau only)"
        lower = fixed_lower(tau, infl.rho_lower)
    return {"bracket": influence_bracket(source, tau, lower=lower, lower_method=how,
                                         eps=run.eps, lower_rows=rows, upper_missing=missing)}


def claims(cert: Certificate) -> list[Claim]:
    """Corrected Theorem 5 on the rigorous upper bound of the bracket (none when skipped)."""
    b = _of(cert)
    if b is None:
        return []
    held = b.certified_at_tau
    where = ("" if b.tau_cert is None else
             f"; the upper bound certifies from tau = {b.tau_cert:.4g}"
             + (" (and at every larger tau)" if b.upper_monotone else ""))
    if b.upper_C is None:
        certifies = f"nothing: {b.note}"
    elif held:
        certifies = (f"t_mix({b.eps:g}) <= {_fmt(b.tmix_bound)} steps, from an upper bound on C "
                     f"over every context ({b.upper_method})" + where)
    else:
        rho = b.rho_upper[b.grid.index(b.tau)]
        certifies = (f"nothing at this tau: the rigorous upper bound on C ({b.upper_method}) "
                     f"has spectral radius <= {rho:.4g}, not < 1" + where)
    exact = cert.exact
    against = ({} if not held or exact is None or exact.tmix is None else
               {"exact": float(exact.tmix), "holds": bool(exact.tmix <= b.tmix_bound)})
    return [Claim(
        key=ClaimKey.THEOREM5_UPPER.value,
        statement="Corrected Theorem 5 on a rigorous upper bound C_up >= c(tau) over every "
        "context (exact table, pairwise closed form, or the weights of a LayerNorm head): if "
        "rho(C_up) < 1, t_mix(eps) is bounded",
        hypothesis_held=bool(held),
        certifies=certifies,
        bound=b.tmix_bound,
        caveat="every entry of C_up and every step of the certificate is rounded upward; an "
        "upper bound from the weights alone holds for every context and is loose",
        rigorous=bool(held),
        **against,
    )]


def render(cert: Certificate) -> list[tuple[str, list[str]]]:
    """Both sides of the bracket: where no certificate can exist, where one is proved."""
    b = _of(cert)
    if b is None:
        return []
    at = b.grid.index(b.tau) if b.tau in b.grid else None
    rows = [
        _row("tau_no_cert (no certificate)", b.tau_no_cert, f"({b.lower_method})"),
        _row("tau_cert (certificate proved)", b.tau_cert, f"({b.upper_method}"
             + (", and every larger tau)" if b.upper_monotone else ")")),
        _row("ratio tau_cert / tau_no_cert", b.ratio),
    ]
    if at is not None:
        rows.append(_row(f"rho(c) at tau = {b.tau:g}: bounds", b.rho_lower[at], b.rho_upper[at]))
    rows += [
        _row(f"proved t_mix({b.eps:g}) at tau", b.tmix_bound if b.certified_at_tau else
             "none (the upper bound does not certify here)"),
        _row("criterion", b.criterion),
        _row("temperatures evaluated", f"{len(b.grid)} (grid, then bisection to a relative "
             f"{b.bisection_rtol:g})"),
        _row("cost: upper / lower side", f"{b.upper_rows} rows, {b.upper_seconds:.3g} s / "
             f"{b.lower_rows} rows, {b.lower_seconds:.3g} s"),
    ]
    if b.details:
        rows.append(_row("upper bound from", ", ".join(f"{k} {v}" for k, v in b.details.items())))
    if b.note:
        rows += wrap("note: " + b.note, "  ")
    return [("bracket (tau_no_cert < tau_cert)", rows)]


def _of(cert: Certificate) -> InfluenceBracket | None:
    """The certificate's bracket, or None (skipped, or a certificate older than it)."""
    return cert.results.get("bracket")


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return "inf" if value == float("inf") else f"{value:.4g}"


__all__ = ["claims", "render", "run", "wants_memo"]
