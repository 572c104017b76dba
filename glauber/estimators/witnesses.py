"""Witnesses of influence lower bounds, and their recheck against the model.

A witness of ``C[i, j] = v`` (Definition 2) is a context ``x`` (vocabulary indices), the site
``j`` and a replacement ``b``: ``v = ||p_tau(. | x_{-i}) - p_tau(. | x^{j->b}_{-i})||_TV``. One pair
realises ``v``, so ``c_ij(tau) >= v`` whoever computes it. A witness of ``Delta[i, j] = v``
(Lemma 6) is the same triple with ``v = max_a d(a) - min_a d(a)``,
``d(a) = s_i(a; x) - s_i(a; x^{j->b})`` (tau-free). :func:`recheck_witnesses` recomputes each
value from two fresh queries and reports the largest disagreement.

Rounding (:func:`witness_tolerance`): a masked LM's float32 scores of one query change with the
batch it is computed in (kernels differ by batch size). Measured on AntiBERTy (CPU, ``n = 20``):
scores moved by at most 4.8e-6 (magnitude 12), TVs by 5.8e-6 at ``tau = 0.25`` and 2.0e-6 at
``tau = 1``, oscillations by 5.5e-6. The float32 tolerance, ``1e-4 max(1, 1/tau)`` on a TV and
``1e-4 max(1, |Delta|)`` on an oscillation, leaves a margin of 17x or more over those; float64
toy models agree to ``1e-9``; half-precision weights or autocast get ``2e-2`` in place of
``1e-4``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from glauber.core.arrays import JsonResult, log_softmax, namespace, to_numpy
from glauber.core.protocol import ConditionalModel, check_model
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import InvalidParameterError, SequenceLengthError, VocabularyError
from glauber.estimators.score_cache import ScoreCache

#: Quantities a witness can certify: an influence entry (TV at tau) or an oscillation.
QUANTITIES = ("C", "Delta")


@dataclass(frozen=True)
class Witness(JsonResult):
    """An explicit pair realising an entry: ``(context, context^{j -> replacement})`` at site ``i``.

    Attributes
    ----------
    quantity : {"C", "Delta"}
    i, j : int
        The entry: influence of ``j`` on ``i``.
    context : tuple of int
        ``x``, vocabulary indices (``x_i`` is masked by the model and does not matter).
    replacement : int
        ``b``, the token put at ``j``.
    value : float
        The TV (``"C"``, at the result's ``tau``) or the oscillation (``"Delta"``) of the pair.
    """

    quantity: str
    i: int
    j: int
    context: tuple[int, ...]
    replacement: int
    value: float


@dataclass(frozen=True)
class RecheckReport(JsonResult):
    """Result of :func:`recheck_witnesses`.

    Attributes
    ----------
    tau : float
    n_witnesses : int
        Witnesses rechecked (``C`` and ``Delta`` together).
    max_error_C, max_error_Delta : float
        Largest ``|recomputed - stored|`` (0.0 when there is none of that kind).
    tolerance_C : float
        Allowed error of a TV.
    tolerance_Delta : float
        Allowed error of an oscillation of size 1 (scaled by ``max(1, |Delta|)``).
    ok : bool
        Every witness agrees within its tolerance: each stored value is realised.
    failures : int
        Witnesses outside their tolerance.
    worst : dict or None
        The witness furthest outside (or closest to) its tolerance, with its recomputed value.
    queries : int
        Rows sent to the model (two per witness, each distinct query once).
    recomputed : numpy.ndarray
        The recomputed value of every witness, in the result's witness order.
    """

    tau: float
    n_witnesses: int
    max_error_C: float
    max_error_Delta: float
    tolerance_C: float
    tolerance_Delta: float
    ok: bool
    failures: int
    worst: dict | None
    queries: int
    recomputed: np.ndarray


def witness_tolerance(dtype: str | None, tau: float, reduced_precision: bool = False) -> float:
    """Allowed rounding error of a rechecked TV at ``tau`` (see the module docstring).

    Parameters
    ----------
    dtype : str or None
        The scores' dtype name (``"float64"``, ``"float32"``, ...); None counts as float32.
    tau : float
    reduced_precision : bool
        The model computes in half precision (weights or autocast) and returns float32.

    Returns
    -------
    float
        ``1e-9`` for float64; ``1e-4 max(1, 1/tau)`` for float32; ``2e-2 max(1, 1/tau)`` in
        half precision. An oscillation ``Delta`` gets the tau-free base value times
        ``max(1, |Delta|)`` (:func:`recheck_witnesses`).

    Examples
    --------
    >>> witness_tolerance("float32", 0.5)
    0.0002
    """
    return _base_tolerance(dtype, reduced_precision) * max(1.0, 1.0 / check_tau(tau))


def _base_tolerance(dtype: str | None, reduced_precision: bool) -> float:
    if reduced_precision or (dtype is not None and dtype in ("float16", "bfloat16")):
        return 2e-2
    return 1e-9 if dtype == "float64" else 1e-4


def reduced_precision(model: Any) -> bool:
    """Half-precision weights or autocast (the MLM backend's ``dtype``/``autocast``)."""
    names = (str(getattr(model, "dtype", "")), str(getattr(model, "autocast", "")))
    return any(tag in name for name in names for tag in ("float16", "bfloat16"))


def parse_witnesses(model: ConditionalModel, result: Any) -> tuple[float, list[Witness]]:
    """``(tau, witnesses)`` of a search result, its ``to_dict()``, or a dict with both keys.

    Raises
    ------
    InvalidParameterError
        If ``tau`` or ``witnesses`` is missing, a quantity is unknown, or a site is out of range.
    SequenceLengthError
        If a context does not have ``n`` entries.
    VocabularyError
        If a context entry or replacement is not an index ``0..q-1``.
    """
    data = result if isinstance(result, Mapping) else getattr(result, "__dict__", {})
    if "tau" not in data or "witnesses" not in data:
        raise InvalidParameterError(
            "expected a search result (or its to_dict()) with 'tau' and 'witnesses'; got keys "
            f"{sorted(data)[:8]}"
        )
    tau = check_tau(data["tau"])
    n, q = int(model.n), int(model.q)
    out = []
    for k, raw in enumerate(data["witnesses"]):
        w = raw.to_dict() if hasattr(raw, "to_dict") else raw
        try:
            quantity, i, j = w["quantity"], w["i"], w["j"]
            context, replacement, value = w["context"], w["replacement"], w["value"]
        except (KeyError, TypeError) as exc:
            raise InvalidParameterError(
                f"witness {k} lacks {exc}; each needs quantity, i, j, context, replacement, value"
            ) from None
        if quantity not in QUANTITIES:
            raise InvalidParameterError(f"witness {k}: quantity must be one of {QUANTITIES}")
        if not (_is_index(i, n) and _is_index(j, n)) or i == j:
            raise InvalidParameterError(
                f"witness {k}: sites i = {i!r}, j = {j!r} must be distinct integers in 0..{n - 1}"
            )
        ctx = np.asarray(context)
        if ctx.ndim != 1 or ctx.shape[0] != n:
            raise SequenceLengthError(
                f"witness {k}: context has shape {ctx.shape}, the model has n = {n} sites; "
                "recheck with the model (and length) the witnesses were found on"
            )
        if not all(_is_index(t, q) for t in ctx.tolist()) or not _is_index(replacement, q):
            raise VocabularyError(
                f"witness {k}: context entries and replacement must be vocabulary indices "
                f"0..{q - 1}; recheck with the model the witnesses were found on"
            )
        out.append(Witness(quantity, int(i), int(j), tuple(int(t) for t in ctx.tolist()),
                           int(replacement), float(value)))
    return tau, out


def _is_index(value: Any, size: int) -> bool:
    return (not isinstance(value, bool) and isinstance(value, (int, np.integer))
            and 0 <= int(value) < size)


def recheck_witnesses(
    model: ConditionalModel,
    result: Any,
    *,
    batch_size: int = 4096,
    tolerance: float | None = None,
) -> RecheckReport:
    """Recompute every witness of a search result and report the largest disagreement.

    For each witness, two queries at site ``i`` (the context and the context with ``j``
    replaced) give the TV at the result's ``tau`` (``"C"``) or the oscillation (``"Delta"``);
    it must match the stored value within the tolerance (:func:`witness_tolerance` of the
    scores' dtype, unless given). The result is never modified.

    Parameters
    ----------
    model : ConditionalModel
        The model the witnesses were found on.
    result : InfluenceSearchResult or dict
        A search result, its ``to_dict()`` (e.g. read back from JSON), or any mapping with
        ``"tau"`` and a ``"witnesses"`` list of ``{quantity, i, j, context, replacement,
        value}``.
    batch_size : int
        Most rows per :meth:`scores` call.
    tolerance : float, optional
        Allowed error of a TV (and of an oscillation of size 1) in place of the default.

    Returns
    -------
    RecheckReport

    Raises
    ------
    InvalidParameterError
        If the model has no ``scores``, the result has no ``tau``/``witnesses``, a witness is
        malformed, or ``batch_size``/``tolerance`` is invalid.
    SequenceLengthError, VocabularyError
        If a witness context has the wrong length or leaves the vocabulary.

    Examples
    --------
    >>> import networkx as nx
    >>> from glauber.estimators.influence_search import search_influence
    >>> from glauber.toy_models import IsingModel
    >>> m = IsingModel(nx.path_graph(3))
    >>> recheck_witnesses(m, search_influence(m, 1.0, budget=8).to_dict()).ok  # 2/3 of a table
    True
    """
    model = check_model(model)
    batch_size = check_positive_int(batch_size, "batch_size")
    if tolerance is not None and not (np.isfinite(tolerance) and tolerance >= 0):
        raise InvalidParameterError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    tau, wits = parse_witnesses(model, result)
    cache = ScoreCache(model)
    if not wits:
        tol = tolerance if tolerance is not None else witness_tolerance(None, tau)
        return RecheckReport(tau, 0, 0.0, 0.0, tol, tol, True, 0, None, 0, np.zeros(0))
    ctx = np.array([w.context for w in wits], dtype=np.int64)
    alt = ctx.copy()
    rows = np.arange(len(wits))
    alt[rows, [w.j for w in wits]] = [w.replacement for w in wits]
    sites = np.array([w.i for w in wits], dtype=np.int64)
    ids = cache.fetch(np.concatenate([ctx, alt]), np.concatenate([sites, sites]), batch_size)
    sa, sb = cache.rows(ids[: len(wits)]), cache.rows(ids[len(wits):])
    xp = namespace(sa)
    pa, pb = xp.exp(log_softmax(sa / tau)), xp.exp(log_softmax(sb / tau))
    tv = to_numpy(0.5 * xp.sum(xp.abs(pa - pb), axis=-1)).astype(np.float64)
    diff = sa - sb
    osc = to_numpy(xp.amax(diff, axis=-1) - xp.amin(diff, axis=-1)).astype(np.float64)
    is_c = np.array([w.quantity == "C" for w in wits])
    stored = np.array([w.value for w in wits])
    fresh = np.where(is_c, tv, osc)
    error = np.abs(fresh - stored)
    base = (_base_tolerance(cache.dtype, reduced_precision(model))
            if tolerance is None else float(tolerance))
    tol_c = base * max(1.0, 1.0 / tau) if tolerance is None else base
    allowed = np.where(is_c, tol_c, base * np.maximum(1.0, np.abs(stored)))
    excess = error / np.maximum(allowed, np.finfo(float).tiny)
    worst = int(np.argmax(excess))
    w = wits[worst]
    return RecheckReport(
        tau=tau,
        n_witnesses=len(wits),
        max_error_C=float(error[is_c].max(initial=0.0)),
        max_error_Delta=float(error[~is_c].max(initial=0.0)),
        tolerance_C=float(tol_c),
        tolerance_Delta=float(base),
        ok=bool(np.all(error <= allowed)),
        failures=int(np.sum(error > allowed)),
        worst={"quantity": w.quantity, "i": w.i, "j": w.j, "stored": w.value,
               "recomputed": float(fresh[worst]), "allowed": float(allowed[worst])},
        queries=cache.queries,
        recomputed=fresh,
    )


def witness_table(witnesses: Sequence[Witness], quantity: str, n: int) -> np.ndarray:
    """The ``[n, n]`` matrix of stored values of one quantity (zero where there is no witness)."""
    out = np.zeros((n, n))
    for w in witnesses:
        if w.quantity == quantity:
            out[w.i, w.j] = w.value
    return out


__all__ = [
    "QUANTITIES",
    "RecheckReport",
    "Witness",
    "parse_witnesses",
    "recheck_witnesses",
    "reduced_precision",
    "witness_table",
    "witness_tolerance",
]
