"""Re-evaluate a certificate's influence on its model: the work of ``glauber recheck``.

A searched influence matrix is a lower bound only because every entry is *realised*: a witness
(context ``x``, sites ``i``, ``j``, replacement ``b``) whose two conditionals give the stored TV
(Definition 2) or oscillation (Lemma 6). :func:`recheck_certificate` asks the model for the two
conditionals of every witness (:func:`glauber.estimators.recheck_witnesses`), compares them with
the stored values against the float tolerance of the scores' dtype, and names every entry of
``C`` or ``Delta`` that no witness realises (:class:`UnbackedEntry`: above its best witness, or
without one), with its stored value and its witness's stored and recomputed values. An
exhaustive (exact) influence matrix has no witnesses: it is recomputed from a fresh score table
of the whole chain (never the disk cache the certificate may have used) and compared entry by
entry. The certificate is only read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from glauber.certify.certificate import Certificate
from glauber.core.validation import check_positive_int
from glauber.errors import InvalidParameterError, SequenceLengthError

#: Relative margin by which an entry may exceed its witness (rounding of the stored JSON).
ENTRY_RTOL = 1e-12


@dataclass(frozen=True)
class UnbackedEntry:
    """An entry of ``C`` or ``Delta`` that no witness realises.

    Attributes
    ----------
    quantity : {"C", "Delta"}
    i, j : int
        The entry (0-based; influence of ``j`` on ``i``).
    stored : float
        The entry as the certificate stores it.
    witness : float or None
        The stored value of its best witness (None: the entry has no witness).
    recomputed : float or None
        That witness recomputed on the model (None: no witness).
    """

    quantity: str
    i: int
    j: int
    stored: float
    witness: float | None
    recomputed: float | None


@dataclass(frozen=True)
class CertificateRecheck:
    """What :func:`recheck_certificate` found.

    Attributes
    ----------
    exact : bool
        The influence was exhaustive and was recomputed from a fresh score table (no witnesses).
    n_witnesses, queries : int
        Witnesses rechecked and model rows asked (0 for an exact recheck).
    num_states : int
        States of the recomputed chain (0 for a witness recheck).
    max_error_C, max_error_Delta : float
        Largest ``|recomputed - stored|`` (over witnesses, or over entries when exact).
    tolerance_C, tolerance_Delta : float
        Allowed error of a TV, and of an oscillation of size 1 (scaled by ``max(1, |Delta|)``).
    failures : int
        Witnesses outside their tolerance.
    worst : dict or None
        The witness furthest outside (or closest to) its tolerance.
    unbacked : tuple of UnbackedEntry
        Entries above their witness or without one (witness rechecks only).
    ok : bool
        Every stored value is realised (or, exact, reproduced) within tolerance.
    """

    exact: bool
    n_witnesses: int
    queries: int
    num_states: int
    max_error_C: float
    max_error_Delta: float
    tolerance_C: float
    tolerance_Delta: float
    failures: int
    worst: dict | None
    unbacked: tuple[UnbackedEntry, ...]
    ok: bool


def read_certificate(path: str | Path) -> Certificate:
    """The certificate a ``glauber certify --json`` file holds.

    Raises
    ------
    InvalidParameterError
        If the file cannot be read, is not JSON, or is not a JSON object.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidParameterError(f"cannot read the certificate {path}: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidParameterError(f"{path} is not JSON ({exc}); pass a file written by "
                                    "'glauber certify --json'") from None
    if not isinstance(data, dict):
        raise InvalidParameterError(f"{path} is not a certificate (a JSON object)")
    return Certificate.from_dict(data)


def recheck_certificate(cert: Certificate, model: Any, batch_size: int = 4096,
                        tolerance: float | None = None) -> CertificateRecheck:
    """Re-evaluate the influence of ``cert`` on ``model`` (see the module docstring).

    Parameters
    ----------
    cert : Certificate
    model : ConditionalModel
        The model the certificate was computed on (``glauber recheck`` rebuilds it from the
        certificate's ``source``).
    batch_size : int
        Most rows per model call.
    tolerance : float, optional
        Allowed error of a TV in place of the dtype's default (float32: ``1e-4 max(1, 1/tau)``;
        float64: ``1e-9``).

    Returns
    -------
    CertificateRecheck

    Raises
    ------
    InvalidParameterError
        If ``batch_size`` or ``tolerance`` is invalid, or the influence was sampled without
        witnesses (nothing to recheck).
    SequenceLengthError
        If the model's ``n`` and ``q`` are not the certificate's.
    """
    batch_size = check_positive_int(batch_size, "--batch-size")
    if tolerance is not None and not (np.isfinite(tolerance) and tolerance > 0):
        raise InvalidParameterError(f"--tolerance must be a positive number, got {tolerance}")
    if (int(model.n), int(model.q)) != (cert.n, cert.q):
        raise SequenceLengthError(
            f"{getattr(model, 'name', 'the model')} has n = {model.n}, q = {model.q}, the "
            f"certificate n = {cert.n}, q = {cert.q}; recheck with the model the certificate "
            "was computed on"
        )
    if cert.influence.witnesses:
        return _recheck_witnesses(model, cert, batch_size, tolerance)
    if cert.influence.exhaustive:
        return _recheck_exact(model, cert, batch_size, tolerance)
    raise InvalidParameterError(
        "the influence was sampled without witnesses (search budget 0); certify again with "
        "--search-budget > 0 to get values anyone can recheck"
    )


def _recheck_witnesses(model: Any, cert: Certificate, batch: int,
                       tolerance: float | None) -> CertificateRecheck:
    from glauber.estimators import recheck_witnesses

    report = recheck_witnesses(model, cert.influence.to_dict(), batch_size=batch,
                               tolerance=tolerance)
    unbacked = unbacked_entries(cert.influence, report.recomputed)
    return CertificateRecheck(
        exact=False, n_witnesses=report.n_witnesses, queries=report.queries, num_states=0,
        max_error_C=report.max_error_C, max_error_Delta=report.max_error_Delta,
        tolerance_C=report.tolerance_C, tolerance_Delta=report.tolerance_Delta,
        failures=report.failures, worst=report.worst, unbacked=unbacked,
        ok=report.ok and not unbacked,
    )


def unbacked_entries(influence: Any, recomputed: np.ndarray) -> tuple[UnbackedEntry, ...]:
    """Entries of ``C`` and ``Delta`` that no witness realises: larger than the best witness of
    their pair (by :data:`ENTRY_RTOL`), or non-zero without one. The matrices a certificate's
    claims use must be the rechecked values.

    Parameters
    ----------
    influence : InfluenceResult
        With ``C``, ``Delta`` and ``witnesses``.
    recomputed : numpy.ndarray
        Each witness recomputed on the model, in witness order
        (:attr:`glauber.estimators.witnesses.RecheckReport.recomputed`).
    """
    best: dict[tuple[str, int, int], int] = {}
    for k, w in enumerate(influence.witnesses):
        key = (w.quantity, w.i, w.j)
        if key not in best or abs(w.value) > abs(influence.witnesses[best[key]].value):
            best[key] = k
    out = []
    for quantity, matrix in (("C", influence.C), ("Delta", influence.Delta)):
        m = np.abs(np.asarray(matrix, dtype=float))
        for i, j in zip(*np.nonzero(m)):
            k = best.get((quantity, int(i), int(j)))
            realised = 0.0 if k is None else abs(influence.witnesses[k].value)
            if m[i, j] > realised * (1 + ENTRY_RTOL) + 1e-300:
                out.append(UnbackedEntry(
                    quantity, int(i), int(j), float(np.asarray(matrix)[i, j]),
                    None if k is None else float(influence.witnesses[k].value),
                    None if k is None else float(recomputed[k])))
    return tuple(out)


def _recheck_exact(model: Any, cert: Certificate, batch: int,
                   tolerance: float | None) -> CertificateRecheck:
    from glauber.estimators import influence
    from glauber.estimators.witnesses import reduced_precision, witness_tolerance
    from glauber.exact.chain import ExactChain

    states = cert.q**cert.n
    chain = ExactChain(model, cert.tau, max_states=states, batch_size=batch, cache=False)
    fresh = influence(chain.tabulated(), cert.tau, exhaustive=True, batch_size=batch,
                      max_states=states)
    probe = model.scores(np.zeros((1, cert.n), dtype=np.int64), np.zeros(1, dtype=np.int64))
    dtype = str(probe.dtype).removeprefix("torch.")
    tol = tolerance if tolerance is not None else witness_tolerance(
        dtype, cert.tau, reduced_precision(model))
    err_c = float(np.max(np.abs(np.asarray(fresh.C) - np.asarray(cert.influence.C))))
    scale = max(1.0, float(np.max(np.abs(np.asarray(cert.influence.Delta)))))
    err_d = float(np.max(np.abs(np.asarray(fresh.Delta) - np.asarray(cert.influence.Delta))))
    return CertificateRecheck(
        exact=True, n_witnesses=0, queries=0, num_states=states, max_error_C=err_c,
        max_error_Delta=err_d, tolerance_C=tol, tolerance_Delta=tol, failures=0, worst=None,
        unbacked=(), ok=err_c <= tol and err_d <= tol * scale,
    )


def _g(value: float | None) -> str:
    return "none" if value is None else f"{value:.6g}"


def format_recheck(cert: Certificate, result: CertificateRecheck, where: str) -> str:
    """The report ``glauber recheck`` prints (sites 1-based)."""
    lines = [f"glauber recheck: {cert.model} at tau = {cert.tau:g} ({where})"]
    if result.exact:
        scale = max(1.0, float(np.max(np.abs(np.asarray(cert.influence.Delta)))))
        lines += [
            f"  exact influence recomputed     {cert.q}**{cert.n} = {result.num_states:,} "
            "states (fresh score table)",
            f"  largest |recomputed - stored|  C {result.max_error_C:.3g}, Delta "
            f"{result.max_error_Delta:.3g} (tolerance {result.tolerance_C:.3g}; Delta x "
            f"{scale:.3g})",
            "  OK: the certificate's exact C and Delta are reproduced" if result.ok
            else "  FAILED: the recomputed exact influence differs from the certificate's",
        ]
        return "\n".join(lines)
    lines += [
        f"  witnesses rechecked            {result.n_witnesses} ({result.queries} model rows)",
        f"  largest |recomputed - stored|  C {result.max_error_C:.3g} (tolerance "
        f"{result.tolerance_C:.3g}), Delta {result.max_error_Delta:.3g} (tolerance "
        f"{result.tolerance_Delta:.3g} x max(1, |Delta|))",
        f"  entries above their witness    {len(result.unbacked)}",
    ]
    for e in result.unbacked:
        witness = ("no witness" if e.witness is None else
                   f"its witness stores {_g(e.witness)}, recomputed {_g(e.recomputed)}")
        lines.append(f"    {e.quantity}[{e.i + 1}, {e.j + 1}] stored {_g(e.stored)}: {witness}")
    if result.ok:
        lines.append("  OK: every stored entry is realised by its witness; C and Delta are lower "
                     "bounds of the suprema of Definition 2 and Lemma 6")
    else:
        lines.append(f"  FAILED: {result.failures} witness(es) outside tolerance, "
                     f"{len(result.unbacked)} matrix entr(y/ies) larger than their witness; "
                     f"worst witness: {result.worst or {}}")
    return "\n".join(lines)


__all__ = [
    "CertificateRecheck",
    "ENTRY_RTOL",
    "UnbackedEntry",
    "format_recheck",
    "read_certificate",
    "recheck_certificate",
    "unbacked_entries",
]
