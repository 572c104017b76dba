"""Temperature-scaled conditionals ``p_tau(. | x_{-i}) = softmax(s_i(.; x_{-i}) / tau)``.

This is the one place where scores are divided by ``tau`` (docs/architecture.md, "The protocol").
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from glauber.core.arrays import all_finite, is_torch, log_softmax, namespace, to_numpy
from glauber.core.protocol import ConditionalModel
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import (
    NonFiniteScoresError,
    NonRealScoresError,
    SequenceLengthError,
    VocabularyError,
)


def check_states(model: ConditionalModel, states: Any) -> None:
    """Check that ``states`` is ``[B, n]`` with entries in ``0..q-1``.

    Raises
    ------
    SequenceLengthError
        If the array is not two-dimensional with ``n`` columns.
    VocabularyError
        If an entry lies outside the resampling vocabulary ``0..q-1``.
    """
    shape = tuple(states.shape)
    if len(shape) != 2 or shape[1] != model.n:
        raise SequenceLengthError(
            f"states must have shape [B, n] with n = {model.n} sites, got shape {shape}; "
            "pad or truncate the sequences, or build the model with the matching length"
        )
    arr = to_numpy(states) if is_torch(states) else np.asarray(states)
    if arr.size and (arr.min() < 0 or arr.max() >= model.q):
        bad = arr[(arr < 0) | (arr >= model.q)][0]
        raise VocabularyError(
            f"state entry {int(bad)} lies outside the resampling vocabulary 0..{model.q - 1}; "
            "states hold indices into model.vocab, not raw token ids (use the backend's encode())"
        )


def host_states(model: ConditionalModel, states: Any) -> np.ndarray:
    """Return ``states`` as a checked ``[B, n]`` numpy int64 array on the host.

    Accepts lists, numpy arrays and torch tensors (on any device).

    Raises
    ------
    SequenceLengthError
        If the array is not ``[B, n]``.
    VocabularyError
        If the entries are not integers in ``0..q-1``.
    """
    arr = to_numpy(states) if is_torch(states) else np.asarray(states)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not (np.issubdtype(arr.dtype, np.number) and np.all(arr == np.round(arr))):
            raise VocabularyError(
                f"states must hold integer vocabulary indices, got dtype {arr.dtype}; "
                "encode tokens as indices 0..q-1 into model.vocab"
            )
    arr = arr.astype(np.int64, copy=False)
    check_states(model, arr)
    return arr


def log_conditionals(
    model: ConditionalModel, states: Any, sites: Any, tau: float, check_finite: bool = True,
    float64: bool = False,
) -> Any:
    """Log-conditionals ``log p_tau(a | x_{-i})`` for a batch of states, one site per state.

    Parameters
    ----------
    model : ConditionalModel
        Any model meeting the protocol (toy or MLM).
    states : array of int, shape (B, n)
        Vocabulary indices.
    sites : array of int, shape (B,)
        The site resampled in each state.
    tau : float
        Temperature, finite and > 0.
    check_finite : bool, optional
        Check the scores now (on torch this waits for the device: one host synchronisation).
        Device loops pass False and check the log-conditionals at their own sync points
        (non-finite scores give non-finite log-conditionals).
    float64 : bool, optional
        Cast torch scores to float64 before dividing by ``tau`` (the Metropolis-Hastings
        energies and acceptance ratios: a float32 log-softmax is off by ~1e-7 relative, so a
        ratio that is exactly 1 comes out below it).

    Returns
    -------
    array, shape (B, q)
        ``log_softmax(scores / tau)`` in the model's array library (numpy float64 for toys,
        torch float32 or better for MLMs; float64 with ``float64=True``).

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and positive.
    NonFiniteScoresError
        If ``check_finite`` and the model returned NaN or infinite scores, or ``scores / tau``
        overflows the scores' floating-point format.
    """
    return _scaled_log_conditionals(model, states, sites, check_tau(tau), check_finite, False,
                                    float64)[0]


def scaled_log_conditionals(
    model: ConditionalModel, states: Any, sites: Any, tau: float
) -> tuple[Any, np.ndarray, str]:
    """:func:`log_conditionals` with what a rounding-error bound needs (always checked finite).

    Returns
    -------
    (log_p, scale, dtype)
        ``log_p`` as :func:`log_conditionals`; ``scale[b] = max_a |s_b(a)|``, the largest score
        magnitude of each row at ``tau = 1`` (host float64); ``dtype``, the name of the scores'
        floating-point format (e.g. ``"float32"``), in which ``scores / tau`` is rounded.

    Raises
    ------
    InvalidTemperatureError, NonFiniteScoresError
        As :func:`log_conditionals`.
    """
    return _scaled_log_conditionals(model, states, sites, check_tau(tau), True, True)[:3]


def scores_and_log_conditionals(
    model: ConditionalModel, states: Any, sites: Any, tau: float, check_finite: bool = True,
    float64: bool = False,
) -> tuple[Any, Any]:
    """The scores at ``tau = 1`` and :func:`log_conditionals` at ``tau``, from one model call.

    A Metropolis-Hastings step needs both (its proposal at ``tau``, its energy from the scores
    at ``tau = 1``; :mod:`glauber.estimators.kernel_steps`).

    Returns
    -------
    (scores, log_p)
        Both ``[B, q]`` in the model's array library (``scores`` as the model returned them;
        ``log_p`` in float64 with ``float64=True``, see :func:`log_conditionals`).

    Raises
    ------
    InvalidTemperatureError, NonFiniteScoresError
        As :func:`log_conditionals`.
    """
    lp, _, _, s = _scaled_log_conditionals(model, states, sites, check_tau(tau), check_finite,
                                           False, float64)
    return s, lp


def _scaled_log_conditionals(
    model: ConditionalModel, states: Any, sites: Any, tau: float, check_finite: bool,
    want_scale: bool, float64: bool = False,
) -> tuple[Any, np.ndarray | None, str, Any]:
    """The work of :func:`scaled_log_conditionals` for a checked ``tau`` (the iterators check
    it once, not per chunk); also returns the scores."""
    s = model.scores(states, sites)
    name = getattr(model, "name", type(model).__name__)
    if check_finite and not all_finite(s):
        raise NonFiniteScoresError(
            f"model {name} returned non-finite scores; "
            "check the score function (scores must be finite real numbers at every site)"
        )
    if is_torch(s):
        lp = log_softmax((s.double() if float64 else s) / tau)
    else:
        s = _real_scores(s, name)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is checked just below
            lp = log_softmax(s / tau)
    if check_finite and not all_finite(lp):
        raise NonFiniteScoresError(
            f"scores / tau overflow {str(s.dtype).removeprefix('torch.')} for model {name} at "
            f"tau = {tau!r} (largest |score| {float(to_numpy(abs(s)).max()):.3g}); raise tau or "
            "scale the scores down"
        )
    scale = None
    if want_scale:
        xp = namespace(s)
        scale = to_numpy(xp.amax(xp.abs(s), axis=-1)).astype(np.float64)
    return lp, scale, str(s.dtype).removeprefix("torch."), s


def _real_scores(s: Any, name: str) -> np.ndarray:
    """``s`` as a real floating numpy array; complex, string or object scores are refused."""
    arr = np.asarray(s)
    if arr.dtype.kind not in "fiub":
        raise NonRealScoresError(
            f"model {name} returned scores of dtype {arr.dtype}; scores must be real numbers "
            "(float arrays), not complex numbers, strings or objects"
        )
    return arr


def iter_log_conditionals(
    model: ConditionalModel,
    n_queries: int,
    build: Callable[[int, int], tuple[Any, Any]],
    tau: float,
    batch_size: int,
    check_finite: bool = True,
) -> Iterator[tuple[int, int, Any]]:
    """Answer ``n_queries`` (state, site) queries in chunks of at most ``batch_size`` per call.

    Parameters
    ----------
    model : ConditionalModel
    n_queries : int
        Number of queries (rows) in total.
    build : callable
        ``build(start, stop) -> (states[stop - start, n], sites[stop - start])``: the queries of
        one chunk, built lazily so that a large query set never sits in memory at once.
    tau : float
        Temperature (checked once, before any model call).
    batch_size : int
        Most rows per :meth:`scores` call (an MLM forward is the cost: use the largest batch that
        fits in memory).
    check_finite : bool, optional
        Passed to :func:`log_conditionals`.

    Yields
    ------
    (start, stop, log_p)
        ``log_p`` is :func:`log_conditionals` of the chunk, in the model's array library.

    Raises
    ------
    InvalidParameterError
        If ``batch_size`` is not an integer >= 1.
    """
    tau = check_tau(tau)
    batch_size = check_positive_int(batch_size, "batch_size")
    for start in range(0, int(n_queries), batch_size):
        stop = min(start + batch_size, int(n_queries))
        states, sites = build(start, stop)
        yield start, stop, _scaled_log_conditionals(model, states, sites, tau, check_finite,
                                                    False)[0]


def answers_on_host(model: ConditionalModel) -> bool:
    """True when ``model`` answers in numpy on the host (an in-memory model, e.g. a toy).

    Decided by one probe query (the all-zero state at site 0), so it holds for any model that
    meets the protocol: toys, user ``FunctionModel``s and restricted windows of them answer on
    the host; the MLM backends answer in torch. This is the one test of "may we enumerate this
    model query by query" (with ``q**n`` within a limit).
    """
    probe = model.scores(np.zeros((1, model.n), dtype=np.int64), np.zeros(1, dtype=np.int64))
    return not is_torch(probe)


def enumerable(model: ConditionalModel, max_states: int) -> bool:
    """True when ``model`` answers on the host and has at most ``max_states`` states ``q**n``."""
    return int(model.q) ** int(model.n) <= max_states and answers_on_host(model)
def iter_scaled_log_conditionals(
    model: ConditionalModel,
    n_queries: int,
    build: Callable[[int, int], tuple[Any, Any]],
    tau: float,
    batch_size: int,
) -> Iterator[tuple[int, int, Any, np.ndarray, str]]:
    """:func:`iter_log_conditionals` through :func:`scaled_log_conditionals`.

    Yields
    ------
    (start, stop, log_p, scale, dtype)
        See :func:`scaled_log_conditionals`.
    """
    tau = check_tau(tau)
    batch_size = check_positive_int(batch_size, "batch_size")
    for start in range(0, int(n_queries), batch_size):
        stop = min(start + batch_size, int(n_queries))
        states, sites = build(start, stop)
        yield (start, stop, *_scaled_log_conditionals(model, states, sites, tau, True, True)[:3])


def iter_scored_log_conditionals(
    model: ConditionalModel,
    n_queries: int,
    build: Callable[[int, int], tuple[Any, Any]],
    tau: float,
    batch_size: int,
) -> Iterator[tuple[int, int, Any, Any, str]]:
    """:func:`iter_log_conditionals` with the scores each chunk's log-conditionals came from.

    For quantities read off the scores themselves (Lemma 6's oscillation is tau-free: read from
    log-probabilities it would carry their ``u log q`` rounding) and for rounding-error bounds.

    Yields
    ------
    (start, stop, scores, log_p, dtype)
        ``scores`` as the model returned them (tau = 1), ``log_p`` as :func:`log_conditionals`
        (checked finite), ``dtype`` the name of the scores' format.
    """
    tau = check_tau(tau)
    batch_size = check_positive_int(batch_size, "batch_size")
    for start in range(0, int(n_queries), batch_size):
        stop = min(start + batch_size, int(n_queries))
        states, sites = build(start, stop)
        lp, _, dtype, s = _scaled_log_conditionals(model, states, sites, tau, True, False)
        yield start, stop, s, lp, dtype


@contextmanager
def trusted_inputs(model: ConditionalModel) -> Iterator[None]:
    """Switch off a model's per-call input validation for the duration of a step loop.

    Models that validate every :meth:`scores` call (the MLM backend's optional ``check_inputs``
    flag) pay a device-to-host synchronisation per call for it. A step loop validates its
    starting states once (:func:`host_states`) and then only writes sampled indices in
    ``0..q-1``, so inside the loop the check proves nothing and only stalls the device.
    Models without the flag are left untouched; the flag is restored on exit, even on error.
    """
    flag = getattr(model, "check_inputs", None)
    if flag is None:
        yield
        return
    model.check_inputs = False
    try:
        yield
    finally:
        model.check_inputs = flag


__all__ = [
    "answers_on_host",
    "check_states",
    "enumerable",
    "host_states",
    "iter_log_conditionals",
    "iter_scaled_log_conditionals",
    "iter_scored_log_conditionals",
    "log_conditionals",
    "scaled_log_conditionals",
    "scores_and_log_conditionals",
    "trusted_inputs",
]
