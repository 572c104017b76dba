"""``--kernel``, ``--epsilon`` and ``--anneal``: the options that choose a chain's kernel, shared by
``trajectory``, ``phase-diagram``, ``compare`` and ``certify`` (:mod:`glauber.core.kernel_spec`).

They are checked before any model is loaded: an unknown kernel, an ``epsilon`` outside
``[0, 1]`` or a schedule with a temperature that is not finite and positive is a typed error,
which the CLI prints as one line with exit code 2.
"""

from __future__ import annotations

import argparse

from glauber.core.kernel_spec import (
    KERNEL_NAMES,
    KernelSpec,
    Schedule,
    check_kernel,
    parse_schedule,
)
from glauber.errors import InvalidKernelError


def add_kernel_arguments(parser: argparse.ArgumentParser, anneal: bool = True) -> None:
    """Add ``--kernel``, ``--epsilon`` and (with ``anneal``) ``--anneal``."""
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


def kernel_from(args: argparse.Namespace, command: str | None = None
                ) -> tuple[KernelSpec, Schedule | None]:
    """The checked kernel and schedule of the parsed options.

    ``command`` names a command that takes no ``--anneal`` (it has one when given there).

    Raises
    ------
    InvalidKernelError, InvalidProbabilityError, InvalidTemperatureError
        On an unknown kernel or schedule, ``epsilon`` outside ``[0, 1]``, or a schedule
        temperature that is not finite and > 0.
    """
    spec = check_kernel(args.kernel, args.epsilon)
    text = getattr(args, "anneal", None)
    if text is not None and command is not None:
        raise InvalidKernelError(
            f"--anneal does not apply to {command}: its cells run at fixed temperatures "
            "(anneal a trajectory instead: glauber trajectory --anneal ...)"
        )
    return spec, None if text is None else parse_schedule(text)


__all__ = [
    "add_kernel_arguments",
    "kernel_from",
]
