"""What a statement checker receives: one toy chain at one temperature, with its basins.

Two kinds of instances:

* :class:`ChainInstance`: a toy model and its exact chain over all ``q**n`` states
  (:class:`glauber.exact.chain.ExactChain`), plus what the battery knows by
  construction (a compatible joint, Ising couplings, counterexample pairs);
* :class:`LumpedInstance`: the exact lumped count chain of an exchangeable model
  (:class:`~glauber.exact.count_chain.CountChain`), for large ``n``.

Basins are boolean masks over the instance's states (levels for a lumped instance); a
:class:`CountBasin` is ``B = {x : X(x) >= b}`` for a token count ``X``, with the band and the
horizon of the Section 5.4 drift statements.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

import numpy as np

from glauber.exact.basins import NamedMask
from glauber.exact.chain import ExactChain
from glauber.exact.count_chain import CountChain
from glauber.toy_models.base import ToyModel

LogWeight = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class IsingData:
    """Couplings of an Ising-type model: spins ``2x - 1``, scores ``s f_i``, ``f_i = sum J_ik s_k``.

    Attributes
    ----------
    J : numpy.ndarray, shape (n, n)
        ``J[i, k]``: weight of spin ``k`` in site ``i``'s field (asymmetric allowed).
    zero_field : bool
        Whether every field ``h_i`` is 0.
    uniform_coupling : float or None
        The common coupling on every edge of a symmetric model (None otherwise): the
        Levin–Peres–Wilmer oracles apply.
    cycle : bool
        Whether the interaction graph is the n-cycle (Levin–Peres–Wilmer Theorem 15.5).
    """

    J: np.ndarray
    zero_field: bool
    uniform_coupling: float | None
    cycle: bool


@dataclass(frozen=True)
class CounterexampleData:
    """A designed counterexample of :mod:`glauber.toy_models.counterexamples`.

    Attributes
    ----------
    source : str
        The function that built it.
    description : str
        What it shows.
    x_index : int
        The starting state (Theorem 5: first state of the pair; Section 5.4: a boundary state).
    y_index : int or None
        The second state of a Theorem 5 pair (None for Section 5.4).
    summary : dict
        Its JSON-safe summary (``Counterexample.to_dict()``).
    """

    source: str
    description: str
    x_index: int
    y_index: int | None
    summary: dict[str, Any]


@dataclass
class ChainInstance:
    """A toy model at one temperature, its exact chain and its basins.

    Attributes
    ----------
    name : str
        Printable label (model specification and temperature).
    family : str
        Battery family, e.g. ``"ising"`` or ``"random-table"``.
    model : ToyModel
    tau : float
    log_weight : callable or None
        ``states[B, n] -> [B]``: a joint log-weight at ``tau = 1`` whose conditionals are the
        model's (known by construction), or None when the model is not known to be compatible.
    ising : IsingData or None
    basins : tuple of NamedMask
    counterexample : CounterexampleData or None
    cache : dict
        Quantities the statements share (mixing time, distances), dropped by :meth:`release`.
    """

    name: str
    family: str
    model: ToyModel
    tau: float
    log_weight: LogWeight | None = None
    ising: IsingData | None = None
    basins: tuple[NamedMask, ...] = ()
    counterexample: CounterexampleData | None = None
    cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    @cached_property
    def chain(self) -> ExactChain:
        """The exact chain (built on first use and cached with everything it computes)."""
        return ExactChain(self.model, self.tau)

    def release(self) -> None:
        """Drop the cached chain (its dense matrices) once every statement has run."""
        self.__dict__.pop("chain", None)
        self.cache.clear()


@dataclass
class LumpedInstance:
    """An exact lumped count chain (large ``n``) and its level-set basins.

    Attributes
    ----------
    name, family : str
    chain : CountChain
    basins : tuple of NamedMask
        Masks over the levels ``0..n``.
    log_weight_levels : numpy.ndarray or None
        Closed-form ``log pi(k)`` up to a constant (the Gibbs weight of a level), when the
        model is known to be compatible.
    cache : dict
        Quantities the statements share, dropped by :meth:`release`.
    """

    name: str
    family: str
    chain: CountChain
    basins: tuple[NamedMask, ...] = ()
    log_weight_levels: np.ndarray | None = None
    cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    @property
    def tau(self) -> float:
        """The chain's temperature."""
        return self.chain.tau

    def release(self) -> None:
        """Drop the quantities cached by the statements."""
        self.cache.clear()


Instance = ChainInstance | LumpedInstance

__all__ = [
    "ChainInstance",
    "CounterexampleData",
    "Instance",
    "IsingData",
    "LumpedInstance",
]
