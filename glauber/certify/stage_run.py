"""What a stage of :func:`~glauber.certify.certify` is and what it reads: :class:`Stage`,
:class:`StageRun` and the random :func:`stream` of each stage.

A :class:`Stage` is

- ``name``: its name in progress reports and :class:`~glauber.certify.certificate.Timings`;
- ``run(run: StageRun) -> dict``: its results, by certificate field (it reads the model, the
  temperature, the states, the settings and earlier stages' results from the :class:`StageRun`);
- ``claims(cert) -> list of Claim``: what the paper's statements say about these results, read
  from the finished certificate (keys from :class:`~glauber.certify.claim_key.ClaimKey`), so a
  certificate read back from JSON rebuilds the same claims;
- ``render(cert) -> list of (title, lines)``: its sections of the text table;
- ``fields``: the certificate fields it fills and their types
  (:data:`~glauber.certify.stage_fields.STAGE_FIELDS`). A field that
  :class:`~glauber.certify.certificate.Certificate` declares is stored there; any other goes to
  ``Certificate.results``, is read as an attribute (``cert.bracket``) and is written to the JSON
  at the top level under its name, decoded back with this type;
- ``plan(run) -> int``: the model rows it will ask for (progress bars; 0 by default).

This module is the floor of the room: the stage modules, the certificate and the claims import
it, and it imports none of them (the certificate's types are named for type checkers only). The
stages themselves, in order, are listed in :mod:`glauber.certify.stages`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from glauber.certify.certificate import Certificate, Settings
    from glauber.core.claims import Claim
    from glauber.core.protocol import ConditionalModel
    from glauber.estimators.escape import Basin
    from glauber.estimators.score_cache import MemoisedModel
    from glauber.exact.chain import ExactChain


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
    executor : object or None
        Where the exact chain's score-table shards are computed (None: in this process; a
        :class:`~glauber.experiments.executor.RayExecutor` for ``--ray``).
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
    executor: Any = None
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


__all__ = ["TABLE_BATCH", "Stage", "StageRun", "stream"]
