"""The ``glauber`` command: a thin dispatcher over :mod:`glauber.commands`.

Each sub-command lives in ``glauber/commands/<name>.py`` and defines ``register(subparsers)``
(adds its parser and sets ``func``) — so importing the CLI stays cheap and commands stay separate.

Errors take one path (:func:`main`): every :class:`~glauber.errors.GlauberError`, every
operating-system error on a user's file, and running out of memory are printed as one line,
``glauber <command>: error: <message>``, on stderr. Exit codes: 0 success, 1 a runtime failure
(or a command's own negative verdict, e.g. ``verify``), 2 bad input (argparse's usage errors,
:class:`~glauber.errors.GlauberInputError`, a resume mismatch, a missing optional package),
130 interrupted (Ctrl-C), 141 when the reader of stdout went away (``glauber ... | head``,
silently). ``glauber --debug <command>`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from typing import Sequence

from glauber import __version__
from glauber.errors import (
    GlauberError,
    GlauberInputError,
    MissingDependencyError,
    ResumeMismatchError,
)

COMMANDS = (
    "verify", "certify", "recheck", "phase_diagram", "alpha_curve", "trajectory", "compare",
    "pll",
)

#: Exit codes of the ``glauber`` command.
EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 130, 141
#: Errors a user fixes by changing the command line (exit code 2).
USAGE_ERRORS = (GlauberInputError, ResumeMismatchError, MissingDependencyError)


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level argument parser with every sub-command registered."""
    parser = argparse.ArgumentParser(
        prog="glauber",
        description="Exact and numerical certificates for Glauber dynamics on masked LMs.",
    )
    parser.add_argument("--version", action="version", version=f"glauber {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the Python traceback of an error (default: one line)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"glauber.commands.{name}").register(sub)
    for child in sub.choices.values():  # `glauber certify --debug ...` works too
        child.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                           help="show the Python traceback of an error (default: one line)")
    return parser


def error_line(exc: BaseException) -> str:
    """The one-line message of ``exc`` (newlines folded; OS errors name their file)."""
    if isinstance(exc, MemoryError):
        text = ("out of memory" + (f" ({exc})" if str(exc) else "")
                + "; use a smaller model, fewer states or chains, or a machine with more memory")
    elif isinstance(exc, OSError) and not isinstance(exc, GlauberError):
        where = f"{exc.filename}: " if exc.filename else ""
        text = f"{where}{exc.strerror or exc}"
    elif isinstance(exc, GlauberError):
        text = str(exc) or type(exc).__name__
    else:
        text = (f"unexpected {type(exc).__name__}: {exc} (a bug in glauber? rerun with --debug "
                "for the traceback and report it)")
    return " ".join(text.split())


def exit_code(exc: BaseException) -> int:
    """The exit code of an error (see the module docstring)."""
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return EXIT_USAGE if isinstance(exc, USAGE_ERRORS) else EXIT_FAILURE


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``glauber`` console script; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `glauber certify | head`: the reader left; nothing to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the final flush at exit cannot fail again
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt as exc:
        if args.debug:
            traceback.print_exc()
        print(f"glauber {args.command}: interrupted", file=sys.stderr)
        return exit_code(exc)
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        print(f"glauber {args.command}: error: {error_line(exc)}", file=sys.stderr)
        return exit_code(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


__all__ = [
    "build_parser",
    "COMMANDS",
    "error_line",
    "exit_code",
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "main",
    "USAGE_ERRORS",
]
