"""The paper's empirical protocols as resumable experiments (phase diagram, alpha curve, ...).

Each experiment runs over *cells* (one model, temperature, length, ...) through an
:class:`~glauber.experiments.executor.Executor` and appends one row per finished cell to a
checkpointed log (:mod:`glauber.experiments.checkpoint`), so an interrupted run resumes where it
stopped. Toy models get their exact quantities (``ExactChain``) beside the estimates.
"""

from glauber.experiments.checkpoint import ResultsLog, config_hash
from glauber.experiments.executor import (
    Executor,
    LocalExecutor,
    RayExecutor,
    make_executor,
)

__all__ = [
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "ResultsLog",
    "config_hash",
    "make_executor",
]
