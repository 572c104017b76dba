"""The ground floor of ``glauber``: what every other package stands on.

- :mod:`~glauber.core.protocol`: the :class:`ConditionalModel` protocol (the seam between toy
  models and masked LMs).
- :mod:`~glauber.core.conditionals`: :func:`log_conditionals`, the one place where ``tau``
  enters, and the checks of states.
- :mod:`~glauber.core.arrays`: helpers that let one estimator run on numpy and torch alike.
- :mod:`~glauber.core.validation`: checks of scalar arguments (temperature, eps, counts).
- :mod:`~glauber.core.enumeration`: mixed-radix enumeration of ``V^n``.
- :mod:`~glauber.core.restrict`: :func:`restrict`, the chain on chosen sites of a full-length
  state (a ConditionalModel itself).
- :mod:`~glauber.core.io`, :mod:`~glauber.core.claims`: atomic output files; the one type of a
  statement confronted with numbers.
- :mod:`glauber.errors` (beside this package): the typed errors.

This package imports nothing of ``glauber`` but :mod:`glauber.errors`; see
``docs/architecture.md`` for the layers above it.
"""

from glauber.core.conditionals import (
    host_states,
    iter_log_conditionals,
    log_conditionals,
)
from glauber.core.enumeration import all_states, state_index
from glauber.core.protocol import ConditionalModel
from glauber.core.restrict import RestrictedModel, restrict

__all__ = [
    "ConditionalModel",
    "RestrictedModel",
    "all_states",
    "host_states",
    "iter_log_conditionals",
    "log_conditionals",
    "restrict",
    "state_index",
]
