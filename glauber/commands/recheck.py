"""``glauber recheck CERT.json``: re-evaluate a certificate's influence on the model it names.

Argument parsing and printing only: the model is rebuilt from the certificate's ``source``
(:class:`glauber.certify.Source`, or ``--model``) by :func:`glauber.models.resolve_model`, and
:func:`glauber.certify.recheck.recheck_certificate` does the recheck (witnesses re-evaluated, or
an exact influence recomputed from a fresh score table; every entry above its witness or without
one named). The certificate file is only read.

Exit code 0 when every value is realised within tolerance, 1 when one is not, 2 on bad input.
"""

from __future__ import annotations

import argparse

#: The line of ``glauber --help``.
HELP = "re-evaluate every influence witness of a certificate on its model"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``recheck`` parser to the ``glauber`` command."""
    parser = subparsers.add_parser(
        "recheck",
        description=(
            "Load the model named in a certificate written by 'glauber certify --json' and "
            "re-evaluate every witness of its influence matrix (a context, two sites and a "
            "replacement that realise an entry of C or Delta): prints the largest disagreement, "
            "whether it lies within the float tolerance of the model's dtype, and every entry "
            "larger than its witness or without one. Exact (exhaustive) influence is recomputed "
            "from a fresh score table. The file is only read."
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
    from glauber.certify.recheck import format_recheck, read_certificate, recheck_certificate
    from glauber.core.validation import check_positive_int
    from glauber.errors import InvalidParameterError
    from glauber.models import resolve_model

    check_positive_int(args.batch_size, "--batch-size")
    cert = read_certificate(args.certificate)
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
    result = recheck_certificate(cert, model, args.batch_size, args.tolerance)
    print(format_recheck(cert, result, args.certificate))
    return 0 if result.ok else 1


__all__ = [
    "HELP",
    "register",
    "run",
]
