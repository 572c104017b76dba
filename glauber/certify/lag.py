"""certify's ``lag`` stage: an estimated upper bound on the distance to stationarity.

``certify(..., lag=L)`` (``glauber certify --lag-coupling L [--lag-pairs N]``) runs ``N``
L-lag coupled pairs from the certificate's start states
(:func:`glauber.estimators.lag_coupling_bound`; Biswas, Jacob and Vanetti 2019, Theorem 2.5) and
reports the first step ``t`` at which the upper 95% confidence limit of the bound on
``TV(law of X_t, pi)`` is at most ``eps``: "TV <= eps at step t (95% CI; an estimate, not
rigorous)". On an exact chain (a toy, or a window) the exact ``TV(mu_0 P^t, pi)`` from the same
start law sits beside it (:meth:`glauber.exact.ExactChain.distance_from`), and whether the
estimate held. The claim is labelled an estimate, never rigorous: the confidence limit holds in
the sampling sense only (docs/theory.md, "Lag couplings").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from glauber.certify.claim_key import ClaimKey
from glauber.certify.lag_result import LagCouplingCheck
from glauber.core.claims import Claim
from glauber.estimators.lag_coupling import LagCouplingBound

if TYPE_CHECKING:
    from glauber.certify.certificate import Certificate
    from glauber.certify.stage_run import StageRun


def run(run: StageRun) -> dict[str, Any]:
    """``{"lag_coupling": LagCouplingCheck or None}`` (None: ``settings.lag == 0``)."""
    from glauber.errors import ConvergenceError
    from glauber.estimators.lag_coupling import lag_coupling_bound

    s = run.settings
    if not s.lag:
        return {"lag_coupling": None}
    try:
        bound = lag_coupling_bound(run.model, run.tau, run.states, lag=s.lag,
                                   n_pairs=s.lag_pairs, max_steps=s.lag_max_steps,
                                   seed=run.rng("lag-coupling"), batch_size=run.batch_size)
    except ConvergenceError as exc:
        return {"lag_coupling": LagCouplingCheck(bound=None, refused=str(exc))}
    step = bound.first_below(run.eps)
    if step is None:  # past the last meeting only the allowance is left: beyond the steps
        step = len(bound.steps)
    if run.chain is None:
        return {"lag_coupling": LagCouplingCheck(bound=bound, step=step)}
    curve = run.chain.distance_from(run.states, range(max(step, len(bound.steps) - 1) + 1))
    return {"lag_coupling": LagCouplingCheck(bound=bound, step=step, exact_tv=float(curve[step]),
                                             exact_curve=curve)}


def rows(run: StageRun) -> int:
    """Model rows of the stage at most: ``N`` pairs, ``L`` steps ahead, then two chains."""
    s = run.settings
    return s.lag_pairs * (s.lag + 2 * s.lag_max_steps) if s.lag else 0


def claims(cert: Certificate) -> list[Claim]:
    """The lag-coupling estimate, when the stage ran."""
    check = _check(cert)
    if check is None:
        return []
    if check.bound is None:
        return [Claim(
            key=ClaimKey.LAG_COUPLING.value, statement=_STATEMENT, hypothesis_held=False,
            certifies=f"nothing: {check.refused}", rigorous=False, caveat=_CAVEAT)]
    return [Claim(
        key=ClaimKey.LAG_COUPLING.value, statement=_STATEMENT, hypothesis_held=True,
        certifies="an estimate: " + check.bound.summary(check.step),
        bound=check.bound.at(check.step)[1], exact=check.exact_tv, holds=check.held,
        caveat=_CAVEAT, rigorous=False, details={"step": check.step, "lag": check.bound.lag,
                                                 "pairs": check.bound.n_pairs})]


def render(cert: Certificate) -> list[tuple[str, list[str]]]:
    """The stage's section of the certificate table (none when it did not run)."""
    check = _check(cert)
    if check is None:
        return []
    title = "lag coupling (Biswas, Jacob and Vanetti 2019; an estimate, not rigorous)"
    if check.bound is None:
        return [(title, [f"  refused: {check.refused}"])]
    b = check.bound
    lines = [f"  {b.summary(check.step)}",
             f"  meeting times of the {b.n_pairs} pairs: median {_median(b)}, largest "
             f"{int(b.meeting_times.max()):,} (lag {b.lag})"]
    if check.exact_tv is not None:
        verdict = "held" if check.held else "FAILED"
        lines.append(f"  exact TV from the same start law at step {check.step:,}: "
                     f"{check.exact_tv:.4g} (the estimate {verdict})")
    return [(title, lines)]


def _check(cert: Certificate) -> LagCouplingCheck | None:
    return cert.results.get("lag_coupling")


def _median(b: LagCouplingBound) -> str:
    import numpy as np

    return f"{float(np.median(b.meeting_times)):g}"


_STATEMENT = ("Lag coupling (Biswas, Jacob and Vanetti 2019, Theorem 2.5): TV(law of X_t, pi) "
              "<= E[max(0, ceil((tau^(L) - L - t) / L))], estimated over coupled pairs from the "
              "start states")
_CAVEAT = ("an upper confidence limit in the sampling sense only: a rare escape no pair showed "
           "is missed; the worst start may be far slower than these starts")

__all__ = ["claims", "render", "rows", "run"]
