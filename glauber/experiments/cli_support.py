"""Arguments shared by the experiment sub-commands (model, output, seed, device, executor)."""

from __future__ import annotations

import argparse
import shlex
import sys

from glauber.experiments.executor import Executor, make_executor


def add_common_arguments(parser: argparse.ArgumentParser, model: bool = True) -> None:
    """``--model``, ``--out``, ``--seed``, ``--device``, ``--ray [ADDRESS]``, ``--no-progress``."""
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


def executor_from(args: argparse.Namespace) -> Executor:
    """The executor ``--ray`` asks for (in process by default)."""
    return make_executor(args.ray)


def command_line() -> str:
    """The command line of this process, for the provenance header of a results log."""
    return shlex.join(["glauber", *sys.argv[1:]])


__all__ = [
    "add_common_arguments",
    "command_line",
    "executor_from",
]
