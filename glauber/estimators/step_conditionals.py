"""The log-conditionals of one step of a batch of chains: batched :meth:`scores` calls and a
finiteness check deferred to the loop's sync points (so a device loop never waits on the host).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glauber.core.arrays import is_torch, namespace
from glauber.core.conditionals import iter_log_conditionals, log_conditionals
from glauber.core.protocol import ConditionalModel
from glauber.errors import NonFiniteScoresError
from glauber.estimators.batch_arrays import concat


def step_log_conditionals(
    model: ConditionalModel,
    states: Any,
    sites: Any,
    tau: float,
    batch_size: int,
    check_finite: bool = True,
) -> Any:
    """Log-conditionals of one step of all chains: one :meth:`scores` call per ``batch_size``."""
    b = int(states.shape[0])
    if b <= batch_size:
        return log_conditionals(model, states, sites, tau, check_finite)
    chunks = [
        lp
        for _, _, lp in iter_log_conditionals(
            model,
            b,
            lambda lo, hi: (states[lo:hi], sites[lo:hi]),
            tau,
            batch_size,
            check_finite,
        )
    ]
    return concat(chunks)


class FiniteGuard:
    """Deferred finiteness check of log-conditionals, so a device loop never waits on the host.

    numpy arrays are checked at once; torch tensors are folded into one device-side flag that
    :meth:`check` reads (one synchronisation) at the loop's own sync points.
    """

    def __init__(self, model: ConditionalModel) -> None:
        self._name = getattr(model, "name", type(model).__name__)
        self._flag: Any = None

    def update(self, log_p: Any) -> None:
        """Record ``log_p`` (checked now for numpy, later for torch)."""
        if not is_torch(log_p):
            if not np.isfinite(log_p).all():
                self._raise()
            return
        ok = namespace(log_p).isfinite(log_p).all()
        self._flag = ok if self._flag is None else self._flag & ok

    def check(self) -> None:
        """Raise :class:`NonFiniteScoresError` if any recorded tensor was not finite."""
        if self._flag is not None and not bool(self._flag):
            self._raise()

    def _raise(self) -> None:
        raise NonFiniteScoresError(
            f"model {self._name} returned non-finite scores during the run; check the model "
            "(scores must be finite real numbers at every site)"
        )


__all__ = [
    "FiniteGuard",
    "step_log_conditionals",
]
