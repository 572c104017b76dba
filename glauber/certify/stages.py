"""certify's stages as data: what each one runs, the claims it makes, how it prints.

:func:`~glauber.certify.certify` loops over :func:`all_stages`, in order. A :class:`Stage` is

- ``name``: its name in progress reports and :class:`~glauber.certify.certificate.Timings`;
- ``run(run: StageRun) -> dict``: its results, by certificate field (it reads the model, the
  temperature, the states, the settings and earlier stages' results from the :class:`StageRun`);
- ``claims(cert) -> list of Claim``: what the paper's statements say about these results, read
  from the finished certificate (keys from :class:`ClaimKey`), so a certificate read back from
  JSON rebuilds the same claims;
- ``render(cert) -> list of (title, lines)``: its sections of the text table;
- ``fields``: the certificate fields it fills and their types. A field that
  :class:`~glauber.certify.certificate.Certificate` declares is stored there; any other goes to
  ``Certificate.results``, is read as an attribute (``cert.bracket``) and is written to the JSON
  at the top level under its name, decoded back with this type;
- ``plan(run) -> int``: the model rows it will ask for (progress bars; 0 by default).

**Adding a stage** takes two files and a test: a module beside this one with its result
dataclass (a :class:`~glauber.core.arrays.JsonResult`) and its ``run``, ``claims`` and ``render``
functions, and, here, its entry in :func:`all_stages` and its :class:`ClaimKey` member(s); see
docs/architecture.md, "How to add a certify stage".

The entries import their modules when first asked for (the modules import :class:`ClaimKey`
from here), so this module stays the one place that lists them.
"""

from __future__ import annotations

import enum
import functools
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

if TYPE_CHECKING:
    from glauber.certify.certificate import Certificate, Settings
    from glauber.core.claims import Claim
    from glauber.core.protocol import ConditionalModel
    from glauber.estimators.escape import Basin
    from glauber.estimators.score_cache import MemoisedModel
    from glauber.exact.chain import ExactChain


class ClaimKey(str, enum.Enum):
    """Stable keys of a certificate's claims (``cert.claim(ClaimKey.THEOREM5_CORRECTED)``)."""

    PROPOSITION4 = "prop4"
    THEOREM5_CORRECTED = "thm5-corrected"
    THEOREM5_PRINTED = "thm5-printed"
    COROLLARY7 = "cor7"
    THEOREM5_OSCILLATION = "thm5-oscillation"
    THEOREM5_UPPER = "thm5-upper"
    THEOREM8_TRAP = "thm8-trap"
    THEOREM8_BASIN = "thm8-basin"
    DRIFT_PRINTED = "drift-printed"
    DRIFT_BAND = "drift-band"
    COUPLING = "coupling"


#: Rows per lookup of a score table (nothing is asked of the model then).
TABLE_BATCH = 65536
#: Random streams of the built-in stages: children of ``SeedSequence(seed)`` by index, as
#: certificates were always drawn. Any other name gets a stream keyed by its own crc32.
_STREAMS = {"states": 0, "rectangles": 1, "influence": 2, "coupling-starts": 3, "coupling": 4}


@dataclass
class StageRun:
    """What the stages of one :func:`~glauber.certify.certify` call read.

    Attributes
    ----------
    model : ConditionalModel
        The model the stages query: the caller's (each call counted for the progress report),
        or, after the ``table`` stage, the exact chain's score table (nothing is asked then).
    tau, eps : float
        The checked temperature and target distance.
    seed : int
    states : ndarray of int, shape (S, n)
        The distinct states examined, and ``states_source`` where they came from.
    settings : Settings
        The run's settings, resolved (``exhaustive`` decided, ``n_replacements <= q - 1``).
    exact : bool
        Whether the exact chain is built (resolved); ``exact_asked`` is the caller's value.
    exact_asked : bool or None
    max_states : int
        The largest ``q**n`` enumerated.
    basin : callable or None
    device : str
        Device of the exact chain's dense algebra.
    chain : ExactChain or None
        Set by the ``table`` stage.
    memo : MemoisedModel or None
        The query memo the influence stage asked through, when a later stage re-reads its
        rows (the ``bracket`` stage re-evaluates the search's witnesses at other temperatures).
    states_memo : MemoisedModel or None
        The query memo the ``margins`` and ``drift`` stages share (:func:`~glauber.certify.runs.
        at_states`): both read every site's conditional at the states, so drift asks nothing.
    results : dict
        Every field filled so far, by name (a stage reads the earlier ones here).
    """

    model: ConditionalModel
    tau: float
    eps: float
    seed: int
    states: np.ndarray
    settings: Settings
    exact: bool
    exact_asked: bool | None
    max_states: int
    basin: Basin | None
    device: str
    chain: ExactChain | None = None
    memo: MemoisedModel | None = None
    states_memo: MemoisedModel | None = None
    results: dict[str, Any] = field(default_factory=dict)
    states_source: str = "given"

    @property
    def batch_size(self) -> int:
        """Rows per call: the settings', or large batches once the model is a score table."""
        size = self.settings.batch_size
        return size if self.chain is None else max(size, TABLE_BATCH)

    @property
    def contexts(self) -> np.ndarray:
        """The first ``n_contexts`` states: where sampled or searched influence starts."""
        return self.states[: self.settings.n_contexts]

    def rng(self, name: str) -> np.random.Generator:
        """A generator of its own for the stream ``name`` (:func:`stream`)."""
        return stream(self.seed, name)


def stream(seed: int, name: str) -> np.random.Generator:
    """The random stream ``name`` of a run with ``seed``: same seed, same draws, and streams
    independent of each other (children of ``SeedSequence(seed)``)."""
    index = _STREAMS.get(name, zlib.crc32(name.encode()))
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))


def _no_claims(cert: Certificate) -> list[Claim]:
    return []


def _no_sections(cert: Certificate) -> list[tuple[str, list[str]]]:
    return []


def _no_rows(run: StageRun) -> int:
    return 0


@dataclass(frozen=True)
class Stage:
    """One stage of :func:`~glauber.certify.certify` (see the module docstring)."""

    name: str
    run: Callable[[StageRun], dict[str, Any]]
    fields: Mapping[str, Any]
    claims: Callable[[Certificate], list[Claim]] = _no_claims
    render: Callable[[Certificate], list[tuple[str, list[str]]]] = _no_sections
    plan: Callable[[StageRun], int] = _no_rows


@functools.cache
def all_stages() -> tuple[Stage, ...]:
    """The stages of :func:`~glauber.certify.certify`, in the order they run.

    ``table`` first (every later stage then reads the exact chain's score table), ``bracket``
    right after ``influence`` (it reads the influence stage's witnesses), ``exact`` right after
    ``margins`` (it examines the best trap the margins found), ``kernel`` (another kernel's exact
    values, :mod:`glauber.certify.kernel`) after it.
    """
    from glauber.certify import bracket, claims, kernel, render, runs
    from glauber.certify.certificate import ExactValues
    from glauber.estimators.coupling import CouplingResult
    from glauber.estimators.drift import DriftResult
    from glauber.estimators.influence import InfluenceResult
    from glauber.estimators.influence_bracket import InfluenceBracket
    from glauber.estimators.margins import MarginsResult
    from glauber.estimators.rectangle import RectangleTestResult
    from glauber.exact.kernel_summary import KernelSummary

    return (
        Stage("table", runs.table, {}, plan=runs.table_rows),
        Stage("rectangles", runs.rectangles, {"incompatibility": RectangleTestResult},
              claims.rectangle_claims, render.rectangle_sections, runs.rectangle_rows),
        Stage("influence", runs.influence_stage, {"influence": InfluenceResult},
              claims.influence_claims, render.influence_sections, runs.influence_rows),
        Stage("bracket", bracket.run, {"bracket": InfluenceBracket | None}, bracket.claims,
              bracket.render),
        Stage("margins", runs.margins_stage,
              {"margins": MarginsResult, "basin": MarginsResult | None},
              claims.margins_claims, render.margins_sections, runs.margins_rows),
        Stage("exact", runs.exact_stage, {"exact": ExactValues | None, "exact_note": str},
              render=render.exact_sections),
        Stage("kernel", kernel.run, {"kernel": KernelSummary | None}, render=kernel.render),
        Stage("drift", runs.drift_stage, {"drift": DriftResult, "drift_band": DriftResult},
              claims.drift_claims, render.drift_sections, runs.drift_rows),
        Stage("coupling", runs.coupling_stage, {"coupling": CouplingResult | None},
              claims.coupling_claims, render.coupling_sections, runs.coupling_rows),
    )


def stage_names() -> tuple[str, ...]:
    """The names of :func:`all_stages`, in order (those ``progress`` reports)."""
    return tuple(stage.name for stage in all_stages())


__all__ = [
    "TABLE_BATCH", "ClaimKey", "Stage", "StageRun", "all_stages", "stage_names", "stream",
]
