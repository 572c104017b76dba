"""certify's stages, in order: what each one runs, the claims it makes, how it prints.

:func:`~glauber.certify.certify` loops over :func:`all_stages`, in order; each is a
:class:`~glauber.certify.stage_run.Stage` (name, run, fields, claims, render, plan: see
:mod:`glauber.certify.stage_run`). :func:`build_claims` and :func:`stage_sections` collect the
claims and the printed sections of a certificate, stage by stage.

**Adding a stage** takes two files and a test: a module beside this one with its result
dataclass (a :class:`~glauber.core.arrays.JsonResult`) and its ``run``, ``claims`` and ``render``
functions, and its entry here in :func:`all_stages`, in
:data:`~glauber.certify.stage_fields.STAGE_FIELDS` and, for its claims, in
:class:`~glauber.certify.stage_run.ClaimKey`; see docs/architecture.md, "How to add a certify
stage".

This module is the top of the room's stage layer: it imports the stage modules, none of which
imports it.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING

from glauber.certify import bracket, claims, kernel, lag, render, runs
from glauber.certify.stage_fields import STAGE_FIELDS
from glauber.certify.stage_run import Stage

if TYPE_CHECKING:
    from glauber.certify.certificate import Certificate
    from glauber.core.claims import Claim


@functools.cache
def all_stages() -> tuple[Stage, ...]:
    """The stages of :func:`~glauber.certify.certify`, in the order they run.

    ``table`` first (every later stage then reads the exact chain's score table), ``bracket``
    right after ``influence`` (it reads the influence stage's witnesses), ``exact`` right after
    ``margins`` (it examines the best trap the margins found), ``kernel`` (another kernel's exact
    values, :mod:`glauber.certify.kernel`) after it.
    """
    f = STAGE_FIELDS
    return (
        Stage("table", runs.table, f["table"], plan=runs.table_rows),
        Stage("rectangles", runs.rectangles, f["rectangles"], claims.rectangle_claims,
              render.rectangle_sections, runs.rectangle_rows),
        Stage("influence", runs.influence_stage, f["influence"], claims.influence_claims,
              render.influence_sections, runs.influence_rows),
        Stage("bracket", bracket.run, f["bracket"], bracket.claims, bracket.render),
        Stage("margins", runs.margins_stage, f["margins"], claims.margins_claims,
              render.margins_sections, runs.margins_rows),
        Stage("exact", runs.exact_stage, f["exact"], render=render.exact_sections),
        Stage("kernel", kernel.run, f["kernel"], render=kernel.render),
        Stage("drift", runs.drift_stage, f["drift"], claims.drift_claims, render.drift_sections,
              runs.drift_rows),
        Stage("coupling", runs.coupling_stage, f["coupling"], claims.coupling_claims,
              render.coupling_sections, runs.coupling_rows),
        Stage("lag", lag.run, f["lag"], lag.claims, lag.render, lag.rows),
    )


def stage_names() -> tuple[str, ...]:
    """The names of :func:`all_stages`, in order (those ``progress`` reports)."""
    return tuple(stage.name for stage in all_stages())


def build_claims(cert: Certificate) -> tuple[Claim, ...]:
    """The claims of a certificate, stage by stage, each naming the certified model as its
    subject.

    The built-in stages claim, in order: Proposition 4; Theorem 5 corrected and as printed,
    Corollary 7, corrected Theorem 5 on ``tanh(Delta / (4 tau))``; Theorem 8 on the best perfect
    trap (and on the caller's basin when there is one); Section 5.4 as printed and corrected;
    Section 6.1 coupling. Every claim reads only the certificate, so one read back from JSON
    rebuilds the same claims.
    """
    made = [c for stage in all_stages() for c in stage.claims(cert)]
    return tuple(dataclasses.replace(c, subject=cert.model) for c in made)


def stage_sections(cert: Certificate) -> list[tuple[str, list[str]]]:
    """Every stage's sections of the printed table, in order (``(title, lines)``)."""
    return [section for stage in all_stages() for section in stage.render(cert)]


__all__ = ["all_stages", "build_claims", "stage_names", "stage_sections"]
