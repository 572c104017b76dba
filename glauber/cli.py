"""The ``glauber`` command: a thin dispatcher over :mod:`glauber.commands`.

Each sub-command lives in ``glauber/commands/<name>.py`` (named in :data:`COMMANDS`) and defines
``HELP`` (its line in ``glauber --help``) and ``register(subparsers)`` (adds its parser, sets
``func``). A command module is light at import (argparse and the standard library), and its
parser is built only when the command is named (:class:`LazyCommands`), so ``glauber --version``
and ``glauber --help`` import neither numpy, scipy, torch nor any command's work, and a command
imports only what it runs.

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
import shlex
import sys
import traceback
from typing import Any, Sequence

from glauber import __version__
from glauber.errors import USAGE_ERRORS, GlauberError

COMMANDS = (
    "verify", "certify", "recheck", "report", "phase_diagram", "alpha_curve", "trajectory",
    "compare", "results", "pll", "joints", "advise",
)

#: Exit codes of the ``glauber`` command.
EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 130, 141


class LazyCommands(argparse._SubParsersAction):
    """The sub-commands of :data:`COMMANDS`, each parser built when its command is named.

    ``glauber --help`` lists every command with its module's ``HELP``; the command's
    ``register`` (which may import what its options need, e.g. certify's defaults) runs only
    when the command line names it.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._modules: dict[str, str] = {}
        for name in COMMANDS:
            module = f"glauber.commands.{name}"
            command = name.replace("_", "-")
            self._modules[command] = module
            self._name_parser_map[command] = None  # a known choice, its parser not built yet
            self._choices_actions.append(
                self._ChoicesPseudoAction(command, (), importlib.import_module(module).HELP))

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        """The parser of command ``name`` (called by the command's ``register``)."""
        kwargs.pop("help", None)  # listed already, from the module's HELP
        kwargs.setdefault("prog", f"{self._prog_prefix} {name}")
        parser = self._parser_class(**kwargs)
        self._name_parser_map[name] = parser
        return parser

    def command_parser(self, name: str) -> argparse.ArgumentParser:
        """The parser of command ``name``, built (its module's ``register`` run) on first use."""
        if self._name_parser_map.get(name) is None and name in self._modules:
            importlib.import_module(self._modules[name]).register(self)
            self._name_parser_map[name].add_argument(  # `glauber certify --debug ...` works too
                "--debug", action="store_true", default=argparse.SUPPRESS,
                help="show the Python traceback of an error (default: one line)")
        return self._name_parser_map[name]

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        self.command_parser(values[0])
        super().__call__(parser, namespace, values, option_string)


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level argument parser (sub-commands built when named)."""
    parser = argparse.ArgumentParser(
        prog="glauber",
        description="Exact and numerical certificates for Glauber dynamics on masked LMs.",
    )
    parser.add_argument("--version", action="version", version=f"glauber {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the Python traceback of an error (default: one line)")
    parser.add_subparsers(dest="command", required=True, metavar="COMMAND", action=LazyCommands)
    return parser


def place_ray(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``argv`` with a ``--ray [ADDRESS]`` given before the sub-command moved after it
    (``glauber --ray auto compare ...`` means ``glauber compare --ray auto ...``); a sub-command
    that runs in this process only gets a usage error that names the ones taking ``--ray``."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    first = next((k for k, a in enumerate(argv) if a in sub.choices), None)
    if first is None:
        return argv
    head, moved, k = [], [], 0
    while k < first:
        if argv[k] == "--ray":
            moved.append(argv[k])
            if k + 1 < first and not argv[k + 1].startswith("-"):
                moved.append(argv[k + 1])
                k += 1
        elif argv[k].startswith("--ray="):
            moved.append(argv[k])
        else:
            head.append(argv[k])
        k += 1
    rest = argv[first + 1:]
    asked = moved or [a for a in rest if a == "--ray" or a.startswith("--ray=")]
    command = sub.command_parser(argv[first])
    if asked and "--ray" not in command._option_string_actions:
        takes = sorted(name for name in sub.choices
                       if "--ray" in sub.command_parser(name)._option_string_actions)
        command.error(f"--ray applies to {', '.join(takes)}; `glauber {argv[first]}` runs in "
                      "this process")
    return head + [argv[first]] + moved + rest


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
    argv = place_ray(parser, list(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    args.command_line = shlex.join(["glauber", *argv])  # provenance, for the outputs
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
    "place_ray",
    "COMMANDS",
    "error_line",
    "exit_code",
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "LazyCommands",
    "main",
    "USAGE_ERRORS",
]
