"""Which temperature? One model's certificates at a few temperatures, read as advice.

:func:`advise` runs :func:`~glauber.certify.certify` at each temperature of a grid and keeps,
per temperature, what a practitioner choosing ``tau`` needs, each with its status:

- the bracket ``tau_no_cert < tau_cert`` (rigorous on both sides: below ``tau_no_cert`` no
  corrected Theorem 5 certificate exists, from ``tau_cert`` on fast mixing is proved from a
  rigorous upper bound on the influences; docs/theory.md, "the bracket");
- the exact worst-start ``t_mix(eps)`` where the chain is enumerated (exact, a window or a toy);
- the coupled pairs' median meeting time (Section 6.1: an estimate from sampled starts, never a
  bound);
- the perfect traps of the exact chain and their Theorem 8 escape bounds (rigorous).

:func:`recommend` turns these into one sentence per kind of evidence: the lowest temperature of
the grid proved to mix within the user's step budget (an exact ``t_mix``, or the bound proved
from ``tau_cert`` on), and the lowest where only the estimates say the chain mixes; each
sentence says whether it is proved or estimated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from glauber.core.arrays import JsonResult
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import InvalidParameterError

#: Temperatures of :func:`advise` by default.
DEFAULT_TAUS = (0.5, 1.0, 2.0, 4.0)


@dataclass(frozen=True)
class TemperatureAdvice(JsonResult):
    """What one certificate says about one temperature.

    Attributes
    ----------
    tau : float
    certified : bool
        Whether fast mixing is proved at ``tau`` (rigorous upper bound on ``C``: ``tau >=
        tau_cert``, or the exact chain's corrected Theorem 5).
    tmix_bound : float or None
        The proved bound on ``t_mix(eps)`` where ``certified`` (rigorous).
    exact_tmix : int or None
        The exact worst-start ``t_mix(eps)`` of an enumerated chain (exact); ``exact_tmix_lower``
        where only a lower bound was reached.
    exact_tmix_lower : int or None
    coupling_median : float or None
        Median meeting time of the coupled pairs (estimate; None when no pair ran or the median
        exceeds the budget, ``coupling_censored`` pairs having not met).
    coupling_censored : int
    coupling_budget : int
    perfect_traps : int or None
        Perfect traps of the exact chain (every site at its strict argmax; Theorem 8).
    best_trap_escape_bound : float or None
        Theorem 8's bound on the one-step escape probability of the best trap (rigorous).
    """

    tau: float
    certified: bool
    tmix_bound: float | None
    exact_tmix: int | None
    exact_tmix_lower: int | None
    coupling_median: float | None
    coupling_censored: int
    coupling_budget: int
    perfect_traps: int | None
    best_trap_escape_bound: float | None


@dataclass(frozen=True)
class Advice(JsonResult):
    """:func:`advise`'s answer: the bracket, one row per temperature, the recommendation.

    Attributes
    ----------
    model : str
    n, q : int
    eps : float
    tau_cert, tau_no_cert : float or None
        The bracket (rigorous sides; None where a side was not found on the grid).
    bracket_ratio : float or None
    rows : tuple of TemperatureAdvice
        In increasing ``tau``.
    recommendation : tuple of str
        The sentences of :func:`recommend`, each saying whether it is proved or estimated.
    """

    model: str
    n: int
    q: int
    eps: float
    tau_cert: float | None
    tau_no_cert: float | None
    bracket_ratio: float | None
    rows: tuple[TemperatureAdvice, ...]
    recommendation: tuple[str, ...]


def _row(cert: Any) -> TemperatureAdvice:
    bracket = cert.results.get("bracket")
    certified = bool(bracket is not None and bracket.certified_at_tau)
    exact, coupling = cert.exact, cert.coupling
    return TemperatureAdvice(
        tau=float(cert.tau), certified=certified,
        tmix_bound=(float(bracket.tmix_bound) if certified and bracket.tmix_bound is not None
                    else None),
        exact_tmix=None if exact is None else exact.tmix,
        exact_tmix_lower=None if exact is None else exact.tmix_lower,
        coupling_median=(None if coupling is None or coupling.median_exceeds_budget
                         else coupling.median),
        coupling_censored=0 if coupling is None else int(coupling.n_censored),
        coupling_budget=0 if coupling is None else int(coupling.budget),
        perfect_traps=None if exact is None else int(exact.perfect_traps),
        best_trap_escape_bound=None if exact is None else exact.best_trap_escape_bound,
    )


def _within(r: TemperatureAdvice, steps: int) -> str | None:
    if r.exact_tmix is not None and r.exact_tmix <= steps:
        return f"exact t_mix = {r.exact_tmix} steps (exact chain)"
    if r.tmix_bound is not None and r.tmix_bound <= steps:
        return f"t_mix <= {r.tmix_bound:.4g} steps (corrected Theorem 5, rigorous upper bound on C)"
    return None


def recommend(rows: Sequence[TemperatureAdvice], tau_cert: float | None,
              tau_no_cert: float | None, steps: int = 10_000) -> tuple[str, ...]:
    """The advice in sentences, each labelled proved or estimated (module docstring); ``steps``
    is the chain length the user can afford."""
    out = []
    proved = [(r, how) for r in rows if (how := _within(r, steps)) is not None]
    if proved:
        r, how = proved[0]
        out.append(f"proved: tau = {r.tau:g} is the lowest temperature of the grid that mixes "
                   f"within {steps} steps: {how}")
    else:
        out.append(f"proved: no temperature of the grid is proved to mix within {steps} steps")
    if tau_cert is not None:
        out.append(f"proved: fast mixing from tau_cert = {tau_cert:.4g} on (rigorous upper side)")
    if tau_no_cert is not None:
        out.append(f"proved: below tau_no_cert = {tau_no_cert:.4g} no Theorem 5 certificate "
                   "exists (it does not prove slow mixing)")
    trapped = [r for r in rows if r.perfect_traps and r.best_trap_escape_bound is not None
               and r.best_trap_escape_bound < 1]
    if trapped:
        r = trapped[0]
        out.append(f"proved: at tau = {r.tau:g} the exact chain has {r.perfect_traps} perfect "
                   f"trap(s), the best one escaped with probability <= "
                   f"{r.best_trap_escape_bound:.3g} per step (Theorem 8)")
    elif any(r.perfect_traps for r in rows):
        out.append("proved: no trap holds the chain on this grid (Theorem 8's escape bound is "
                   ">= 1 at every temperature with a perfect trap)")
    met = [r for r in rows if r.coupling_median is not None and r.coupling_censored == 0]
    if met:
        r = met[0]
        out.append(f"estimated: at tau = {r.tau:g} every coupled pair met (median "
                   f"{r.coupling_median:g} steps, budget {r.coupling_budget}); sampled starts "
                   "bound nothing")
    else:
        out.append("estimated: at no temperature of the grid did every coupled pair meet")
    return tuple(out)


def advise(model: Any, taus: Sequence[float] = DEFAULT_TAUS, *, eps: float = 0.25,
           seed: int = 0, pairs: int = 8, budget: int = 500, steps: int = 10_000,
           progress: Any = None, **settings: Any) -> Advice:
    """Certificates of ``model`` at each of ``taus``, read as advice (module docstring).

    Parameters
    ----------
    model : ConditionalModel
    taus : sequence of float
        Temperatures, each finite and > 0 (sorted; duplicates dropped).
    eps, seed : float, int
        As :func:`~glauber.certify.certify`.
    pairs, budget : int
        Coupled pairs and their step budget at each temperature (the estimates).
    steps : int
        The chain length the user can afford: the recommendation is the lowest temperature
        proved to mix within it.
    **settings
        Further :class:`~glauber.certify.certificate.Settings` fields.

    Raises
    ------
    InvalidParameterError
        If ``taus`` is empty, or a temperature or size is invalid.
    """
    from glauber.certify.certificate import Settings
    from glauber.certify.pipeline import certify

    grid = sorted({check_tau(t) for t in taus})
    if not grid:
        raise InvalidParameterError("advise needs at least one temperature; e.g. --taus 0.5,1,2")
    config = Settings(n_pairs=check_positive_int(pairs, "pairs"),
                      budget=check_positive_int(budget, "budget"), **settings)
    certs = [certify(model, tau, settings=config, eps=eps, seed=seed, progress=progress)
             for tau in grid]
    rows = tuple(_row(c) for c in certs)
    bracket = next((c.results["bracket"] for c in certs if c.results.get("bracket")), None)
    tau_cert = None if bracket is None else bracket.tau_cert
    tau_no_cert = None if bracket is None else bracket.tau_no_cert
    first = certs[0]
    return Advice(model=first.model, n=first.n, q=first.q, eps=float(eps), tau_cert=tau_cert,
                  tau_no_cert=tau_no_cert, bracket_ratio=None if bracket is None else bracket.ratio,
                  rows=rows, recommendation=recommend(rows, tau_cert, tau_no_cert,
                                                        check_positive_int(steps, "steps")))


def format_advice(advice: Advice) -> str:
    """One screen: the bracket, a row per temperature, the recommendation."""
    def g(v: Any) -> str:
        return "-" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = [f"glauber advise: {advice.model} (n = {advice.n}, q = {advice.q}, "
             f"eps = {advice.eps:g})",
             f"bracket (rigorous): tau_no_cert = {g(advice.tau_no_cert)} < tau_cert = "
             f"{g(advice.tau_cert)} (ratio {g(advice.bracket_ratio)})", "",
             f"{'tau':>8} {'proved fast':>11} {'t_mix bound':>11} {'exact t_mix':>11} "
             f"{'coupling median (est.)':>22} {'perfect traps':>13}"]
    for r in advice.rows:
        exact = (g(r.exact_tmix) if r.exact_tmix is not None else
                 f"> {r.exact_tmix_lower - 1}" if r.exact_tmix_lower else "-")
        coupling = ("-" if r.coupling_budget == 0 else
                    f"> {r.coupling_budget}" if r.coupling_median is None else
                    f"{r.coupling_median:g}" + (f" ({r.coupling_censored} not met)"
                                               if r.coupling_censored else ""))
        lines.append(f"{r.tau:>8g} {'yes' if r.certified else 'no':>11} {g(r.tmix_bound):>11} "
                     f"{exact:>11} {coupling:>22} {g(r.perfect_traps):>13}")
    lines += ["", "recommendation:"] + [f"  - {s}" for s in advice.recommendation]
    return "\n".join(lines)


__all__ = ["DEFAULT_TAUS", "Advice", "TemperatureAdvice", "advise", "format_advice", "recommend"]
