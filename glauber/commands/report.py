"""``glauber report CERT.json [CERT.json ...] [--out FILE]``: one self-contained HTML page.

Argument parsing only: :mod:`glauber.certify.report` reads the certificates and draws the page
(figures embedded, no network at view time). The page is written atomically; its path is printed
last. A file that is not a certificate is one line and exit 2; a certificate missing sections
(an older version) renders what it holds and names what it lacks.
"""

from __future__ import annotations

import argparse
from pathlib import Path

#: The line of ``glauber --help``.
HELP = "draw certificates as one self-contained HTML page (verdict, figures, provenance)"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``report`` parser to the ``glauber`` command."""
    parser = subparsers.add_parser(
        "report",
        description=(
            "Read certificates written by `glauber certify --json FILE` and write one HTML page "
            "with the verdict, the influence matrix, the alpha curve and its bracket, the traps "
            "and margins, the exact chain's stationary law and t_mix, the rectangle statistic "
            "and the provenance. Figures are embedded; the page needs no network."
        ),
    )
    parser.add_argument("certificates", nargs="+", metavar="CERT.json",
                        help="certificate JSON files (one section each)")
    parser.add_argument("--out", metavar="FILE", default=None,
                        help="the HTML page (default: the first certificate's name with .html)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the page; print its path. Returns the exit code."""
    from glauber.certify.report import write_report
    from glauber.core.io import check_output_path

    out = Path(args.out) if args.out else Path(args.certificates[0]).with_suffix(".html")
    check_output_path(out)
    path = write_report(args.certificates, out)
    size = path.stat().st_size
    print(f"report: {path} ({size / 1e6:.2f} MB, {len(args.certificates)} certificate(s))")
    return 0


__all__ = ["HELP", "register", "run"]
