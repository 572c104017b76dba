"""certify's ``kernel`` stage: the exact values of another kernel beside the certificate.

``certify(..., kernel="sweep")`` (``glauber certify --kernel sweep``, also ``epsilon`` and
``anneal``): on an exact chain (a toy, or a window), the chosen kernel's
:class:`~glauber.exact.kernel_summary.KernelSummary` (``t_mix``, gap, stationary mode and mass,
TV to the paper's kernel's law and to the Metropolis-Hastings targets, acceptance, the
annealed distance), from the same score table. The certificate's claims stay about the paper's
random scan; this stage adds values, no claim, in ``cert.kernel`` (None for the paper's kernel
without a schedule, or without an exact chain).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from glauber.certify.certificate import Certificate
    from glauber.certify.stage_run import StageRun


def run(run: StageRun) -> dict[str, Any]:
    """``{"kernel": KernelSummary or None}`` (None: the paper's kernel, or no exact chain)."""
    from glauber.core.kernel_spec import check_kernel
    from glauber.exact.kernel_summary import kernel_summary, sibling

    s = run.settings
    spec = check_kernel(s.kernel, s.epsilon)
    if (spec.is_plain and s.anneal is None) or run.chain is None:
        return {"kernel": None}
    chain = sibling(run.chain, spec, spec.epsilon)
    return {"kernel": kernel_summary(chain, run.eps, anneal=s.anneal)}


def render(cert: Certificate) -> list[tuple[str, list[str]]]:
    """The kernel's section of the certificate table (none for the paper's kernel)."""
    s = cert.settings
    if s.kernel == "random" and not s.epsilon and s.anneal is None:
        return []
    label = s.kernel if not s.epsilon else f"{s.kernel} (epsilon = {s.epsilon:g})"
    title = f"kernel {label} (exact; the claims above are about the paper's random scan)"
    values = cert.kernel
    if values is None:
        return [(title, ["  exact values need an exact chain (a toy, or a window with --sites)"])]
    tmix = (f"{values.tmix}" if values.tmix is not None
            else f"in [{values.tmix_lower}, {_num(values.tmix_upper)}]")
    lines = [
        f"  t_mix({cert.eps:g}) = {tmix} steps; absolute gap {_num(values.absolute_gap)}",
        f"  stationary mode {list(values.mode_state)} with mass {values.mode_mass:.4g}",
        f"  TV to the paper's kernel's law {_num(values.tv_to_random_scan)}, to the PLL target "
        f"{_num(values.tv_to_pll_target)}, to the logits target {_num(values.tv_to_logits_target)}",
    ]
    if values.acceptance is not None:
        lines.append(f"  Metropolis-Hastings acceptance at stationarity {values.acceptance:.4g}")
    if values.anneal is not None:
        lines.append(f"  after the schedule {values.anneal['schedule']}: worst-start TV to the "
                     f"final temperature's law {values.anneal['tv_worst_start']:.4g}")
    lines.extend(f"  note: {note}" for note in values.notes)
    return [(title, lines)]


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)


__all__ = ["render", "run"]
