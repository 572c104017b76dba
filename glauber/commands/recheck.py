"""``glauber recheck CERT.json``: re-evaluate a certificate's influence on the model it names.

A searched influence matrix is a lower bound only because every entry is *realised*: a witness
(context ``x``, sites ``i``, ``j``, replacement ``b``) whose two conditionals give the stored TV
(Definition 2) or oscillation (Lemma 6). This command rebuilds the model from the certificate's
``source`` (:class:`glauber.certify.Source`), asks it for the two conditionals of every witness
(:func:`glauber.estimators.recheck_witnesses`) and reports the largest disagreement against the
float tolerance of the scores' dtype. An exhaustive (exact) influence matrix has no witnesses: it
is recomputed from a fresh score table of the whole chain (never the disk cache the certificate
may have used) and compared entry by entry. The certificate file is only read.

Exit code 0 when every value is realised within tolerance, 1 when one is not, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from glauber.core.validation import check_positive_int
from glauber.errors import InvalidParameterError, SequenceLengthError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``recheck`` parser to the ``glauber`` command."""
    parser = subparsers.add_parser(
        "recheck",
        help="re-evaluate every influence witness of a certificate on its model",
        description=(
            "Load the model named in a certificate written by 'glauber certify --json' and "
            "re-evaluate every witness of its influence matrix (a context, two sites and a "
            "replacement that realise an entry of C or Delta): prints the largest disagreement "
            "and whether it lies within the float tolerance of the model's dtype. Exact "
            "(exhaustive) influence is recomputed from a fresh score table. The file is only read."
        ),
    )
    parser.add_argument("certificate", metavar="CERT.json", help="a certificate (JSON)")
    parser.add_argument("--model", default=None,
                        help="rebuild this model instead of the certificate's own source "
                        "(e.g. the same checkpoint moved to another directory)")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:1, ...")
    parser.add_argument("--batch-size", type=int, default=4096,
                        help="most rows per model call (default %(default)s)")
    parser.add_argument("--tolerance", type=float, default=None,
                        help="allowed error of a TV in place of the dtype's default (float32: "
                        "1e-4 max(1, 1/tau); float64: 1e-9)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Recheck the certificate; print the report. Returns the exit code."""
    from glauber.certify import Certificate
    from glauber.models import resolve_model

    batch = check_positive_int(args.batch_size, "--batch-size")
    if args.tolerance is not None and not (np.isfinite(args.tolerance) and args.tolerance > 0):
        raise InvalidParameterError(f"--tolerance must be a positive number, got {args.tolerance}")
    cert = Certificate.from_dict(_read(Path(args.certificate)))
    source = cert.source
    if args.model is None and source is None:
        raise InvalidParameterError(
            f"{args.certificate} records no model source (it was not written by 'glauber "
            "certify'); pass --model with the model it was computed on"
        )
    spec = args.model if args.model is not None else source.spec
    kw = {} if source is None else dict(length=source.length, dtype=source.dtype,
                                        autocast=source.autocast)
    model = resolve_model(spec, device=args.device, **kw)
    if (int(model.n), int(model.q)) != (cert.n, cert.q):
        raise SequenceLengthError(
            f"{spec} has n = {model.n}, q = {model.q}, the certificate n = {cert.n}, q = "
            f"{cert.q}; recheck with the model the certificate was computed on"
        )
    print(f"glauber recheck: {cert.model} at tau = {cert.tau:g} ({args.certificate})")
    if cert.influence.witnesses:
        return _recheck_witnesses(model, cert, batch, args.tolerance)
    if cert.influence.exhaustive:
        return _recheck_exact(model, cert, batch, args.tolerance)
    raise InvalidParameterError(
        f"{args.certificate}: the influence was sampled without witnesses (search budget 0); "
        "certify again with --search-budget > 0 to get values anyone can recheck"
    )


def _read(path: Path) -> dict:
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
    return data


def _recheck_witnesses(model, cert, batch: int, tolerance: float | None) -> int:
    from glauber.estimators import recheck_witnesses

    report = recheck_witnesses(model, cert.influence.to_dict(), batch_size=batch,
                               tolerance=tolerance)
    unbacked = _entries_without_witness(cert.influence)
    print(f"  witnesses rechecked            {report.n_witnesses} ({report.queries} model rows)")
    print(f"  largest |recomputed - stored|  C {report.max_error_C:.3g} (tolerance "
          f"{report.tolerance_C:.3g}), Delta {report.max_error_Delta:.3g} (tolerance "
          f"{report.tolerance_Delta:.3g} x max(1, |Delta|))")
    print(f"  entries above their witness    {unbacked}")
    if report.ok and unbacked == 0:
        print("  OK: every stored entry is realised by its witness; C and Delta are lower "
              "bounds of the suprema of Definition 2 and Lemma 6")
        return 0
    worst = report.worst or {}
    print(f"  FAILED: {report.failures} witness(es) outside tolerance, {unbacked} matrix "
          f"entr(y/ies) larger than their witness; worst witness: {worst}")
    return 1


def _entries_without_witness(result) -> int:
    """Entries of ``C`` and ``Delta`` that no witness realises (larger than the best witness
    of their pair): the matrices a certificate's claims use must be the rechecked values."""
    best = {"C": np.zeros_like(np.asarray(result.C, dtype=float)),
            "Delta": np.zeros_like(np.asarray(result.Delta, dtype=float))}
    for w in result.witnesses:
        i, j = w.i, w.j
        best[w.quantity][i, j] = max(best[w.quantity][i, j], abs(w.value))
    count = 0
    for name, matrix in (("C", result.C), ("Delta", result.Delta)):
        m = np.abs(np.asarray(matrix, dtype=float))
        count += int(np.sum(m > best[name] * (1 + 1e-12) + 1e-300))
    return count


def _recheck_exact(model, cert, batch: int, tolerance: float | None) -> int:
    from glauber.estimators import influence
    from glauber.estimators.witnesses import reduced_precision, witness_tolerance
    from glauber.exact.chain import ExactChain

    chain = ExactChain(model, cert.tau, max_states=cert.q**cert.n, batch_size=batch,
                       cache=False)
    fresh = influence(chain.tabulated(), cert.tau, exhaustive=True, batch_size=batch,
                      max_states=cert.q**cert.n)
    probe = model.scores(np.zeros((1, cert.n), dtype=np.int64), np.zeros(1, dtype=np.int64))
    dtype = str(probe.dtype).removeprefix("torch.")
    tol = tolerance if tolerance is not None else witness_tolerance(
        dtype, cert.tau, reduced_precision(model))
    err_c = float(np.max(np.abs(np.asarray(fresh.C) - np.asarray(cert.influence.C))))
    scale = max(1.0, float(np.max(np.abs(np.asarray(cert.influence.Delta)))))
    err_d = float(np.max(np.abs(np.asarray(fresh.Delta) - np.asarray(cert.influence.Delta))))
    print(f"  exact influence recomputed     {cert.q}**{cert.n} = {cert.q**cert.n:,} states "
          "(fresh score table)")
    print(f"  largest |recomputed - stored|  C {err_c:.3g}, Delta {err_d:.3g} (tolerance "
          f"{tol:.3g}; Delta x {scale:.3g})")
    if err_c <= tol and err_d <= tol * scale:
        print("  OK: the certificate's exact C and Delta are reproduced")
        return 0
    print("  FAILED: the recomputed exact influence differs from the certificate's")
    return 1


__all__ = [
    "register",
    "run",
]
