"""Which Markov kernel a chain runs, and at which temperatures: one specification for the
sampler, :class:`~glauber.exact.chain.ExactChain`, the estimators and the CLI.

A kernel (docs/theory.md, "Other kernels") is a *scan* and a *site update*.

Scan, what one step of the chain does:

``random``
    update one site drawn uniformly from the ``n`` sites (the paper's kernel, Proposition 1);
``sweep``
    update every site once, in the order ``0, 1, ..., n - 1`` (systematic scan);
``shuffled``
    update every site once, in a uniformly random order drawn afresh at every step.

Site update at site ``i`` of ``x``, at temperature ``tau``:

Gibbs (the default)
    draw ``x'_i`` from ``p_tau(. | x_{-i})``;
``epsilon``
    with probability ``epsilon`` draw ``x'_i`` uniformly from the ``q`` tokens instead, so the
    site's law is ``r(a) = (1 - epsilon) p_tau(a | x_{-i}) + epsilon / q``;
Metropolis-Hastings (``mh:pll``, ``mh:logits``)
    propose ``a ~ r(.)`` and accept ``x' = x^(i -> a)`` with probability
    ``min(1, [pi(x') r(x_i)] / [pi(x) r(a)])`` for the target ``pi_tau(x) ∝ exp(-E(x) / tau)``,
    where ``E(x) = -sum_k log p_1(x_k | x_{-k})`` (``pll``: the negative pseudo-log-likelihood)
    or ``E(x) = -sum_k s_k(x_k; x_{-k})`` (``logits``: the raw scores). ``r`` is the same for
    the move and its reverse because ``x`` and ``x'`` share the context ``x_{-i}``; see
    :func:`glauber.theory.metropolis.log_acceptance`.

Names: ``random``, ``sweep``, ``shuffled``, ``mh:pll`` and ``mh:logits`` (Metropolis-Hastings
with the random scan), and ``mh:ENERGY:SCAN`` for Metropolis-Hastings site updates under another
scan (``mh:pll:sweep``). ``epsilon`` is a separate argument.

Any kernel can also run under an annealing :class:`Schedule`: the temperature of step
``t = 1, 2, ...`` is ``tau_t`` (geometric, linear or a list), and the last temperature after the
schedule ends.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal

import numpy as np

from glauber.errors import (
    InvalidKernelError,
    InvalidProbabilityError,
    InvalidTemperatureError,
)

Scan = Literal["random", "sweep", "shuffled"]
Energy = Literal["pll", "logits"]

SCANS: tuple[str, ...] = ("random", "sweep", "shuffled")
ENERGIES: tuple[str, ...] = ("pll", "logits")
#: The kernel names the CLI offers (``--kernel``).
KERNEL_NAMES: tuple[str, ...] = ("random", "sweep", "shuffled", "mh:pll", "mh:logits")
#: Schedule kinds of :func:`parse_schedule`.
SCHEDULE_KINDS: tuple[str, ...] = ("geometric", "linear", "list")


@dataclass(frozen=True)
class KernelSpec:
    """A kernel: a scan, a site update and the uniform-move probability ``epsilon``.

    Build it with :func:`check_kernel` (from a name) or directly; the fields are checked.

    Attributes
    ----------
    scan : {"random", "sweep", "shuffled"}
    energy : {"pll", "logits"} or None
        The Metropolis-Hastings energy, or None for Gibbs site updates.
    epsilon : float
        Probability of a uniform redraw at a visited site, in ``[0, 1]``.

    Raises
    ------
    InvalidKernelError
        If ``scan`` or ``energy`` is unknown.
    InvalidProbabilityError
        If ``epsilon`` is not a number in ``[0, 1]``.

    Examples
    --------
    >>> check_kernel("mh:pll").name, check_kernel("sweep", epsilon=0.1).label
    ('mh:pll', 'sweep, epsilon = 0.1')
    """

    scan: Scan = "random"
    energy: Energy | None = None
    epsilon: float = 0.0

    def __post_init__(self) -> None:
        if self.scan not in SCANS:
            raise InvalidKernelError(
                f"unknown scan {self.scan!r}; use one of {', '.join(SCANS)}"
            )
        if self.energy is not None and self.energy not in ENERGIES:
            raise InvalidKernelError(
                f"unknown Metropolis-Hastings energy {self.energy!r}; use one of "
                f"{', '.join(ENERGIES)} (kernel names mh:pll, mh:logits)"
            )
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    @property
    def name(self) -> str:
        """The kernel's name without ``epsilon`` (``"sweep"``, ``"mh:pll"``, ``"mh:pll:sweep"``)."""
        if self.energy is None:
            return self.scan
        return f"mh:{self.energy}" + ("" if self.scan == "random" else f":{self.scan}")

    @property
    def label(self) -> str:
        """The name, with ``epsilon`` when it is not 0 (for tables and titles)."""
        return self.name if self.epsilon == 0.0 else f"{self.name}, epsilon = {self.epsilon:g}"

    @property
    def is_plain(self) -> bool:
        """Whether this is the paper's kernel: random scan, Gibbs updates, ``epsilon = 0``."""
        return self.scan == "random" and self.energy is None and self.epsilon == 0.0

    @property
    def metropolis(self) -> bool:
        """Whether site updates are Metropolis-Hastings corrected."""
        return self.energy is not None

    def to_dict(self) -> dict:
        """JSON-safe form: ``{"kernel": name, "epsilon": epsilon}``."""
        return {"kernel": self.name, "epsilon": self.epsilon}


def check_epsilon(epsilon: float) -> float:
    """Return ``epsilon`` as a float if it is a real number in ``[0, 1]``.

    Raises
    ------
    InvalidProbabilityError
        Otherwise (NaN, infinite, negative, above 1, not a number).
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) \
            or not 0.0 <= float(epsilon) <= 1.0:
        raise InvalidProbabilityError(
            f"epsilon (the probability of a uniform redraw) must lie in [0, 1], got {epsilon!r}; "
            "e.g. --epsilon 0.05"
        )
    return float(epsilon)


def check_kernel(kernel: str | KernelSpec = "random", epsilon: float | None = None) -> KernelSpec:
    """The :class:`KernelSpec` of a name (or a spec, returned with ``epsilon`` applied).

    Parameters
    ----------
    kernel : str or KernelSpec
        ``random``, ``sweep``, ``shuffled``, ``mh:pll``, ``mh:logits`` or ``mh:ENERGY:SCAN``.
    epsilon : float, optional
        Probability of a uniform redraw, in ``[0, 1]``; None keeps a spec's own (0 for names).

    Raises
    ------
    InvalidKernelError
        If the name is not one of those.
    InvalidProbabilityError
        If ``epsilon`` lies outside ``[0, 1]``.

    Examples
    --------
    >>> check_kernel("mh:logits:shuffled")
    KernelSpec(scan='shuffled', energy='logits', epsilon=0.0)
    """
    if isinstance(kernel, KernelSpec):
        return kernel if epsilon is None else KernelSpec(kernel.scan, kernel.energy, epsilon)
    eps = 0.0 if epsilon is None else epsilon
    if not isinstance(kernel, str):
        raise InvalidKernelError(
            f"kernel must be a name ({', '.join(KERNEL_NAMES)}) or a KernelSpec, got "
            f"{type(kernel).__name__}"
        )
    name = kernel.strip().lower()
    if name in SCANS:
        return KernelSpec(name, None, eps)  # type: ignore[arg-type]
    parts = name.split(":")
    if parts[0] == "mh" and len(parts) in (2, 3) and parts[1] in ENERGIES \
            and (len(parts) == 2 or parts[2] in SCANS):
        scan = parts[2] if len(parts) == 3 else "random"
        return KernelSpec(scan, parts[1], eps)  # type: ignore[arg-type]
    raise InvalidKernelError(
        f"unknown kernel {kernel!r}; use one of {', '.join(KERNEL_NAMES)} "
        "(or mh:pll:sweep, mh:logits:shuffled, ... for Metropolis-Hastings under another scan)"
    )


@dataclass(frozen=True)
class Schedule:
    """An annealing schedule: the temperature ``tau_t`` of each step ``t = 1, 2, ...``.

    ``geometric``: ``tau_t = start (end / start)^((t - 1) / (steps - 1))`` for ``t <= steps``;
    ``linear``: ``tau_t = start + (end - start) (t - 1) / (steps - 1)``; ``list``: the given
    temperatures in turn. After the schedule, the last temperature (``end``) stays. Build it
    with :func:`parse_schedule` or the class methods.

    Attributes
    ----------
    kind : {"geometric", "linear", "list"}
    values : tuple of float
        ``(start, end)`` for geometric and linear schedules; the temperatures for a list.
    steps : int
        Number of steps the schedule covers (the length of a list).

    Raises
    ------
    InvalidTemperatureError
        If a temperature is not finite and > 0.
    InvalidKernelError
        If the kind is unknown, ``steps < 1``, or the values do not fit the kind.

    Examples
    --------
    >>> s = parse_schedule("geometric:4:1:3")
    >>> [s.tau_at(t) for t in (1, 2, 3, 4)]
    [4.0, 2.0, 1.0, 1.0]
    """

    kind: str
    values: tuple[float, ...]
    steps: int

    def __post_init__(self) -> None:
        if self.kind not in SCHEDULE_KINDS:
            raise InvalidKernelError(
                f"unknown schedule kind {self.kind!r}; use one of {', '.join(SCHEDULE_KINDS)}"
            )
        if isinstance(self.steps, bool) or not isinstance(self.steps, numbers.Integral) \
                or self.steps < 1:
            raise InvalidKernelError(f"a schedule must cover >= 1 steps, got {self.steps!r}")
        values = tuple(_check_schedule_tau(v) for v in self.values)
        if self.kind == "list" and len(values) != self.steps:
            raise InvalidKernelError(
                f"a list schedule has one temperature per step: {len(values)} values for "
                f"{self.steps} steps"
            )
        if self.kind != "list" and len(values) != 2:
            raise InvalidKernelError(
                f"a {self.kind} schedule has a start and an end temperature, got {len(values)}"
            )
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "steps", int(self.steps))

    @classmethod
    def geometric(cls, start: float, end: float, steps: int) -> "Schedule":
        """``start`` to ``end`` in ``steps`` steps, a constant ratio apart."""
        return cls("geometric", (start, end), steps)

    @classmethod
    def linear(cls, start: float, end: float, steps: int) -> "Schedule":
        """``start`` to ``end`` in ``steps`` steps, a constant difference apart."""
        return cls("linear", (start, end), steps)

    @classmethod
    def from_list(cls, temperatures: list[float] | tuple[float, ...]) -> "Schedule":
        """The given temperatures, one per step."""
        return cls("list", tuple(temperatures), len(temperatures))

    @property
    def end(self) -> float:
        """The last temperature (kept after the schedule)."""
        return self.values[-1]

    @property
    def spec(self) -> str:
        """The schedule as :func:`parse_schedule` reads it."""
        if self.kind == "list":
            return ",".join(f"{v:g}" for v in self.values)
        return f"{self.kind}:{self.values[0]:g}:{self.values[1]:g}:{self.steps}"

    def tau_at(self, step: int) -> float:
        """``tau_t`` of step ``t >= 1`` (steps after the schedule get :attr:`end`)."""
        return float(self.temperatures(int(step), 1)[0])

    def temperatures(self, first: int, count: int) -> np.ndarray:
        """``tau_t`` for ``t = first, ..., first + count - 1`` (``first >= 1``), float64."""
        t = np.arange(first, first + count, dtype=np.float64)
        if self.kind == "list":
            idx = np.minimum(t.astype(np.int64), self.steps) - 1
            return np.asarray(self.values, dtype=np.float64)[idx]
        start, end = self.values
        frac = np.clip((t - 1.0) / (self.steps - 1), 0.0, 1.0) if self.steps > 1 \
            else np.ones_like(t)
        if self.kind == "geometric":
            return start * (end / start) ** frac
        return start + (end - start) * frac

    def to_dict(self) -> dict:
        """JSON-safe form."""
        return {"kind": self.kind, "values": list(self.values), "steps": self.steps,
                "spec": self.spec}


def _check_schedule_tau(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(float(value)) or float(value) <= 0.0:
        raise InvalidTemperatureError(
            f"every temperature of an annealing schedule must be finite and > 0, got {value!r}; "
            "e.g. --anneal geometric:2:0.5:1000"
        )
    return float(value)


def parse_schedule(text: str | Schedule) -> Schedule:
    """An annealing :class:`Schedule` from its text.

    ``geometric:START:END:STEPS``, ``linear:START:END:STEPS``, or a comma-separated list of
    temperatures (``2,1,0.5``, also ``list:2,1,0.5``), one per step.

    Raises
    ------
    InvalidKernelError
        If the text has none of these forms.
    InvalidTemperatureError
        If a temperature is not finite and > 0.

    Examples
    --------
    >>> parse_schedule("linear:2:1:3").temperatures(1, 4).tolist()
    [2.0, 1.5, 1.0, 1.0]
    >>> parse_schedule("2,1,0.5").spec
    '2,1,0.5'
    """
    if isinstance(text, Schedule):
        return text
    if not isinstance(text, str) or not text.strip():
        raise InvalidKernelError(
            f"an annealing schedule is text such as geometric:2:0.5:1000, linear:2:0.5:1000 or "
            f"2,1,0.5; got {text!r}"
        )
    body = text.strip()
    kind, colon, rest = body.partition(":")
    kind = kind.lower()
    if kind in ("geometric", "linear"):
        parts = rest.split(":")
        if len(parts) != 3:
            raise InvalidKernelError(
                f"a {kind} schedule is {kind}:START:END:STEPS (e.g. {kind}:2:0.5:1000), got "
                f"{text!r}"
            )
        start, end = (_parse_float(p, text) for p in parts[:2])
        try:
            steps = int(parts[2])
        except ValueError:
            raise InvalidKernelError(
                f"the number of steps of {text!r} must be an integer >= 1, got {parts[2]!r}"
            ) from None
        return Schedule(kind, (start, end), steps)
    if kind == "list":
        body = rest
    elif colon:
        raise InvalidKernelError(
            f"unknown schedule kind {kind!r} in {text!r}; use geometric:START:END:STEPS, "
            "linear:START:END:STEPS or a list of temperatures such as 2,1,0.5"
        )
    values = [_parse_float(p, text) for p in body.split(",")]
    return Schedule.from_list(values)


def _parse_float(part: str, text: str) -> float:
    try:
        value = float(part)
    except ValueError:
        raise InvalidKernelError(
            f"{part!r} in the schedule {text!r} is not a number; temperatures are numbers > 0"
        ) from None
    return _check_schedule_tau(value)


__all__ = [
    "check_epsilon",
    "check_kernel",
    "ENERGIES",
    "KERNEL_NAMES",
    "KernelSpec",
    "parse_schedule",
    "SCANS",
    "Schedule",
    "SCHEDULE_KINDS",
]
