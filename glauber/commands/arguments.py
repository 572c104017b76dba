"""Arguments several sub-commands share: the model window, the experiments' common options.

Light at import (argparse and the standard library only), as every module of this package: a
command imports what it runs inside ``run`` (docs/architecture.md, "How to add a command").
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any


def add_window_arguments(parser: argparse.ArgumentParser) -> None:
    """``--context`` and ``--sites``: resample chosen positions of a full sequence
    (:func:`glauber.models.window_spec`)."""
    parser.add_argument(
        "--context", metavar="CONTEXT", default=None,
        help="a full sequence whose other positions stay frozen: a shipped chain ("
        "trastuzumab-vh, trastuzumab-vl, pertuzumab-vh, pertuzumab-vl; the TCR sceptr-example "
        "for sceptr, written CDR1A/CDR2A/CDR3A/CDR1B/CDR2B/CDR3B), a file holding the "
        "sequence on one line, the sequence itself (text for natural-language models), or "
        "comma-separated token indices for a toy model; the model then runs at the context's "
        "length",
    )
    parser.add_argument(
        "--sites", metavar="SITES", default=None,
        help="positions of the context to resample, 1-based and inclusive (e.g. 98-100 or "
        "5,9,12-14; default: every position); needs --context",
    )


def add_common_arguments(parser: argparse.ArgumentParser, model: bool = True) -> None:
    """``--model``, ``--out``, ``--seed``, ``--device``, ``--ray [ADDRESS]``, ``--no-progress``
    (the experiments), and the window arguments."""
    if model:
        parser.add_argument("--model", required=True,
                            help="MLM name (antiberty, sapiens-vh, tiny-gpt2-control, ...) or toy "
                                 "specification (e.g. ising-cycle:n=8,J=1.0)")
    parser.add_argument("--out", required=True,
                        help="output folder; rerunning the same command there resumes the run")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--device", default="cpu", help="torch device of MLMs (default cpu)")
    parser.add_argument("--ray", nargs="?", const=True, default=None, metavar="ADDRESS",
                        help="run cells as Ray tasks (needs `pip install ray`); optional cluster "
                             "address")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_window_arguments(parser)


def add_kernel_arguments(parser: argparse.ArgumentParser, anneal: bool = True) -> None:
    """Add ``--kernel``, ``--epsilon`` and (with ``anneal``) ``--anneal``: the options that
    choose a chain's kernel (:mod:`glauber.core.kernel_spec`), checked by :func:`kernel_from`
    before any model is loaded."""
    from glauber.core.kernel_spec import KERNEL_NAMES

    parser.add_argument("--kernel", default="random", metavar="KERNEL",
                        help=f"Markov kernel: {', '.join(KERNEL_NAMES)} (default random: the "
                             "paper's random scan; sweep and shuffled count one pass as a step)")
    parser.add_argument("--epsilon", type=float, default=0.0, metavar="E",
                        help="probability of a uniform redraw at each site update, in [0, 1] "
                             "(default 0)")
    if anneal:
        parser.add_argument("--anneal", default=None, metavar="SCHEDULE",
                            help="annealing schedule of the temperature per step: "
                                 "geometric:START:END:STEPS, linear:START:END:STEPS or a list "
                                 "such as 2,1,0.5 (the last temperature stays after it)")


def add_experiment_parser(subparsers: Any, name: str, description: str, model: bool = True,
                          kernel: bool = True) -> argparse.ArgumentParser:
    """The parser of experiment command ``name``: its description, :func:`add_common_arguments`
    (``--model`` unless ``model`` is false) and, with ``kernel``, :func:`add_kernel_arguments`.

    Parameters
    ----------
    subparsers : glauber.cli.LazyCommands or argparse sub-parsers action
        What ``register`` is given.
    name : str
        The command's name.
    description : str
        Its ``--help`` description.
    model : bool
        Whether it takes ``--model``.
    kernel : bool
        Whether it takes ``--kernel``, ``--epsilon`` and ``--anneal``.

    Returns
    -------
    argparse.ArgumentParser
        The parser, for the command's own arguments.
    """
    parser = subparsers.add_parser(name, description=description)
    add_common_arguments(parser, model=model)
    if kernel:
        add_kernel_arguments(parser)
    return parser


def kernel_from(args: argparse.Namespace, command: str | None = None) -> tuple[Any, Any]:
    """The checked kernel (``KernelSpec``) and schedule (``Schedule`` or None) of the options.

    ``command`` names a command that takes no ``--anneal`` (it has one when given there).

    Raises
    ------
    InvalidKernelError, InvalidProbabilityError, InvalidTemperatureError
        On an unknown kernel or schedule, ``epsilon`` outside ``[0, 1]``, or a schedule
        temperature that is not finite and > 0.
    """
    from glauber.core.kernel_spec import check_kernel, parse_schedule
    from glauber.errors import InvalidKernelError

    spec = check_kernel(args.kernel, args.epsilon)
    text = getattr(args, "anneal", None)
    if text is not None and command is not None:
        raise InvalidKernelError(
            f"--anneal does not apply to {command}: its cells run at fixed temperatures "
            "(anneal a trajectory instead: glauber trajectory --anneal ...)"
        )
    return spec, None if text is None else parse_schedule(text)


def executor_from(args: argparse.Namespace) -> Any:
    """The :class:`~glauber.experiments.executor.Executor` ``--ray`` asks for (in process by
    default)."""
    from glauber.experiments.executor import make_executor

    return make_executor(args.ray)


def command_line() -> str:
    """The command line of this process, for the provenance header of a results log."""
    return shlex.join(["glauber", *sys.argv[1:]])


__all__ = [
    "add_common_arguments",
    "add_experiment_parser",
    "add_kernel_arguments",
    "add_window_arguments",
    "command_line",
    "executor_from",
    "kernel_from",
]
