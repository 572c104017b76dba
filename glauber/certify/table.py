"""The human-readable table of a :class:`~glauber.certify.certificate.Certificate`.

It opens with the verdict (:func:`glauber.certify.verdict.verdict_lines`): the answers a user
came for, then every statement as proved, known exactly, estimated or giving nothing, and a
legend of the claim labels. Then the model, each stage's sections
(:func:`~glauber.certify.stages.stage_sections`, written by :mod:`glauber.certify.render`), the
claims and the timings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from glauber.certify.certificate import Certificate
from glauber.certify.render import claims_section, model_section, timings_section
from glauber.certify.stages import stage_sections
from glauber.certify.verdict import verdict_lines


def format_certificate(
    cert: Certificate,
    outputs: Mapping[str, str] | None = None,
    bracket: Mapping[str, Any] | None = None,
) -> str:
    """The human-readable table of a certificate (sections as in the module docstring).

    ``outputs`` (what the command wrote, and where) and ``bracket`` go to the verdict
    (:func:`~glauber.certify.verdict.verdict_lines`)."""
    lines: list[str] = [
        f"glauber certify: {cert.model} at tau = {cert.tau:g} (n = {cert.n}, q = {cert.q}, "
        f"eps = {cert.eps:g}, seed = {cert.seed}, device = {cert.device})"
    ]
    for title, body in (
        ("verdict", verdict_lines(cert, outputs, bracket)),
        ("model", model_section(cert)),
        *stage_sections(cert),
        ("claims", claims_section(cert)),
        ("timings", timings_section(cert)),
    ):
        lines += ["", f"== {title} =="] + body
    return "\n".join(lines)


__all__ = ["format_certificate"]
