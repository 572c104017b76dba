"""The ``glauber`` command: a thin dispatcher over :mod:`glauber.commands`.

Each sub-command lives in ``glauber/commands/<name>.py`` and defines ``register(subparsers)``
(adds its parser and sets ``func``) — so importing the CLI stays cheap and commands stay separate.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from glauber.errors import GlauberError

COMMANDS = (
    "verify", "certify", "recheck", "phase_diagram", "alpha_curve", "trajectory", "compare",
)


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level argument parser with every sub-command registered."""
    parser = argparse.ArgumentParser(
        prog="glauber",
        description="Exact and numerical certificates for Glauber dynamics on masked LMs.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"glauber.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``glauber`` console script; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except GlauberError as exc:
        print(f"glauber {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


__all__ = [
    "build_parser",
    "COMMANDS",
    "main",
]
