"""Typed errors raised by ``glauber``.

Every error says what was wrong *and what to change*. All derive from :class:`GlauberError`;
input errors also derive from :class:`ValueError` so generic handlers keep working.
This module imports nothing of ours: every subpackage may use it.
"""

from __future__ import annotations


class GlauberError(Exception):
    """Base class of every error raised by ``glauber``."""


class GlauberInputError(GlauberError, ValueError):
    """Base class of errors caused by bad input (a :class:`ValueError`)."""


class InvalidTemperatureError(GlauberInputError):
    """Temperature ``tau`` is not a finite positive number."""


class InvalidProbabilityError(GlauberInputError):
    """A probability-like parameter (e.g. ``eps``) lies outside its open interval."""


class InvalidParameterError(GlauberInputError):
    """A numeric parameter (budget, length, count, ...) is out of its allowed range."""


class InvalidGraphError(GlauberInputError):
    """A graph has no nodes, has self-loops, or is otherwise unusable."""


class VocabularyError(GlauberInputError):
    """A vocabulary is too small, or a state holds a token outside the resampling vocabulary."""


class SequenceLengthError(GlauberInputError):
    """A sequence is longer than the model allows, or has the wrong length."""


class NonFiniteScoresError(GlauberInputError):
    """A model returned NaN or infinite scores."""


class NonRealScoresError(NonFiniteScoresError):
    """A model returned scores that are not real numbers (complex, strings, objects)."""


class NonPositiveConditionalError(GlauberInputError):
    """A conditional probability is zero where positivity is assumed (Proposition 1)."""


class InvalidKernelError(GlauberInputError):
    """A Markov kernel or annealing schedule is not recognised, or does not apply to the model
    (an unknown kernel name, a malformed schedule, a Metropolis-Hastings energy the model cannot
    give)."""


class StateSpaceTooLargeError(GlauberInputError):
    """The state space ``q**n`` exceeds the configured enumeration limit."""


class ResourceLimitError(GlauberInputError):
    """A run would need more memory (or disk) than the machine has; checked before the work."""


class OutputLockedError(GlauberError):
    """Another run is writing into the same output folder (it holds the folder's lock)."""


class BasinError(GlauberInputError):
    """A basin is empty or is the whole state space."""


class InvalidModelError(GlauberInputError, TypeError):
    """An object passed as a model is not a ConditionalModel (e.g. a specification string)."""


class UnknownModelError(GlauberInputError):
    """A model name or specification is not recognised."""


class DeviceUnavailableError(GlauberInputError):
    """A device (e.g. CUDA) was requested but is not available."""


class ClusterUnavailableError(GlauberInputError):
    """``--ray ADDRESS`` names no Ray cluster that can be reached, or Ray cannot start here."""


class FrozenSitesError(GlauberInputError):
    """Frozen positions cover every site, leaving nothing to resample."""


class OutputPathError(GlauberInputError):
    """An output path cannot be written: not a regular file, read-only, or in a missing folder."""


class UnboundableModelError(GlauberInputError):
    """A model lacks the structure a rigorous upper bound needs (closed form, a small enough
    state space to tabulate, or a LayerNorm -> linear head evaluated by glauber in float64).

    The message names the missing structure and what to change.
    """


class BoundEvaluationError(GlauberInputError):
    """A bound (or exact value) under test raised, returned NaN, or returned a non-number.

    Attributes
    ----------
    spec : object
        The specification of the model it failed on (``glauber.testing.ModelSpec``), or None.
    tau : float or None
        The temperature it failed at.
    """

    def __init__(self, message: str, spec: object = None, tau: float | None = None) -> None:
        super().__init__(message)
        self.spec = spec
        self.tau = tau


class ResumeMismatchError(GlauberError):
    """A checkpoint was written by a different command line, model or seed."""


class ConvergenceError(GlauberError):
    """A numerical method did not reach the required accuracy."""


class StepLimitError(ConvergenceError):
    """Stepping a chain's point masses reached its step limit before every start mixed: the
    worst-start ``t_mix`` exceeds the limit (``steps``)."""

    def __init__(self, message: str, steps: int) -> None:
        super().__init__(message)
        self.steps = steps


class StationaryResidualError(ConvergenceError):
    """A solved stationary law missed its residual tolerance ``||pi P - pi||_1`` (a slow,
    metastable chain): refused rather than reported; ``residual`` is the best one reached."""

    def __init__(self, message: str, residual: float) -> None:
        super().__init__(message)
        self.residual = residual


class PrecisionError(GlauberError, ArithmeticError):
    """Double precision cannot resolve the requested quantity (underflow, a gap below rounding).

    The message names the form that can (e.g. ``log_stationary()``) or the extended-precision
    route to take.
    """


class GapBelowFloorError(PrecisionError):
    """A spectral gap proved to lie below the smallest gap the eigensolver resolves.

    ``gap_upper`` is a rigorous upper bound on the gap (for Lanczos on a reversible kernel the
    Courant-Fischer bound ``1 - theta`` of its top deflated Ritz value, up to rounding), so the
    spectral lower bound on ``t_mix`` still follows from it (LPW 2nd ed., Theorem 12.5). Other
    :class:`PrecisionError` s (an underflowing stationary law, an unconverged eigensolver) prove
    nothing about the gap.
    """

    def __init__(self, message: str, gap_upper: float) -> None:
        super().__init__(message)
        self.gap_upper = gap_upper


class UnderflowError(PrecisionError):
    """A probability that is positive in exact arithmetic underflows to 0 (or loses its relative
    accuracy) in float64; the log-space form of the same quantity is available."""


class EstimateOnlyError(PrecisionError):
    """Only a labelled estimate of the requested quantity exists at this size (e.g. the spectral
    gap of a large non-reversible chain: ``ExactChain.spectral_estimate(method="arnoldi")``)."""


class BracketOnlyError(GlauberError):
    """The exact value is out of reach at this size; only rigorous bounds exist. ``bracket``
    holds them when they were computed (``ExactChain.mixing_bracket``), else None."""

    def __init__(self, message: str, bracket: object = None) -> None:
        super().__init__(message)
        self.bracket = bracket


class PrecisionWarning(UserWarning):
    """A result is returned, but its accuracy is limited by floating point (see the message)."""


class NothingSampledWarning(UserWarning):
    """A sampling run would not change the state (0 steps): the states returned are the
    starting states, not samples of the chain."""


class MissingDependencyError(GlauberError, ImportError):
    """An optional package needed for this feature is not installed."""


#: Errors a user fixes by changing the command line (the ``glauber`` command's exit code 2).
USAGE_ERRORS = (GlauberInputError, ResumeMismatchError, MissingDependencyError)


__all__ = [
    "BracketOnlyError",
    "EstimateOnlyError",
    "GlauberError",
    "GlauberInputError",
    "InvalidTemperatureError",
    "UnboundableModelError",
    "InvalidProbabilityError",
    "InvalidParameterError",
    "InvalidGraphError",
    "VocabularyError",
    "SequenceLengthError",
    "NonFiniteScoresError",
    "NonRealScoresError",
    "NonPositiveConditionalError",
    "InvalidKernelError",
    "StateSpaceTooLargeError",
    "BasinError",
    "ResourceLimitError",
    "OutputLockedError",
    "BoundEvaluationError",
    "InvalidModelError",
    "UnknownModelError",
    "DeviceUnavailableError",
    "ClusterUnavailableError",
    "FrozenSitesError",
    "OutputPathError",
    "ResumeMismatchError",
    "ConvergenceError",
    "StationaryResidualError",
    "StepLimitError",
    "PrecisionError",
    "GapBelowFloorError",
    "UnderflowError",
    "PrecisionWarning",
    "NothingSampledWarning",
    "MissingDependencyError",
    "USAGE_ERRORS",
]
