"""``glauber results``: regenerate docs/results.md, every section, from the data under docs/data/.

Argument parsing and printing only: :mod:`glauber.experiments.results` lists the sections (each
rendered from its folder under ``docs/data/``) and reruns their experiments. Without
``--rerun`` the page is re-rendered from the committed data in about a second; ``--rerun NAME``
(repeatable, or ``all``: what ``scripts/results.sh`` runs) reruns those sections' experiments
first, resuming finished work.
"""

from __future__ import annotations

import argparse

#: The line of ``glauber --help``.
HELP = "regenerate docs/results.md from docs/data/ (--rerun SECTION reruns its experiments)"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``results`` parser to the ``glauber`` command."""
    parser = subparsers.add_parser(
        "results",
        description=(
            "Render docs/results.md, every section, from the data committed under docs/data/ "
            "(one folder per section). --rerun SECTION reruns that section's experiments first "
            "(rerunning resumes); --list shows the sections and the command that refreshes each."
        ),
    )
    parser.add_argument("--docs", default="docs",
                        help="the documentation folder (default %(default)s): reads data/, "
                        "writes results.md and figures/")
    parser.add_argument("--rerun", metavar="SECTION", action="append", default=[],
                        help="rerun this section's experiments before rendering (repeatable; "
                        "'all' reruns every section; it resumes the cells already in data/ "
                        "and in --work, and from empty folders takes about 2.5 hours on 2 "
                        "cores)")
    parser.add_argument("--work", default="build/results",
                        help="folder of the runs' full outputs, which a rerun resumes "
                        "(default %(default)s)")
    parser.add_argument("--list", action="store_true",
                        help="list the sections, their data folders and refresh commands")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Rerun what ``--rerun`` names, then write docs/results.md. Returns the exit code."""
    import time
    from pathlib import Path

    from glauber.core.io import atomic_write_text
    from glauber.experiments.results import SECTIONS, refresh, render_page

    docs = Path(args.docs)
    if args.list:
        for s in SECTIONS:
            print(f"{s.name:12} {docs / 'data' / s.data}  ({s.command})\n  {s.title}")
        return 0
    if args.rerun:
        def log(message: str) -> None:
            print(time.strftime("%H:%M:%S"), message, flush=True)

        refresh(args.rerun, docs, Path(args.work), log)
    atomic_write_text(docs / "results.md", render_page(docs))
    print(f"wrote {docs / 'results.md'}")
    return 0


__all__ = [
    "HELP",
    "register",
    "run",
]
