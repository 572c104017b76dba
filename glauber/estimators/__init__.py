"""Estimators that run unchanged on any ConditionalModel: numpy toy models and torch MLMs.

Every conditional goes through :func:`log_conditionals` (the one place ``tau`` enters); every
estimator batches its (state, site) queries into as few :meth:`scores` calls as ``batch_size``
allows, takes a seed (same seed, same result) and returns a frozen dataclass with ``to_dict()``.
"""

from glauber.core.arrays import is_torch, to_numpy
from glauber.core.conditionals import (
    check_states,
    host_states,
    iter_log_conditionals,
    log_conditionals,
)
from glauber.estimators.coupling import (
    CouplingResult,
    coupled_step,
    coupling_time,
    maximal_coupling_step,
)
from glauber.estimators.drift import DriftResult, drift
from glauber.estimators.escape import EscapeResult, escape_probability, exit_mask
from glauber.estimators.influence import InfluenceResult, all_states, influence
from glauber.estimators.margins import BasinMargins, MarginsResult, margins
from glauber.core.protocol import ConditionalModel
from glauber.estimators.rectangle import (
    ArnoldPressResult,
    Rectangles,
    RectangleTestResult,
    arnold_press_statistic,
    rectangle_test,
)
from glauber.estimators.sampler import ChainsResult, glauber_chains, sample_categorical

__all__ = [
    "ArnoldPressResult",
    "BasinMargins",
    "ChainsResult",
    "ConditionalModel",
    "CouplingResult",
    "DriftResult",
    "EscapeResult",
    "InfluenceResult",
    "MarginsResult",
    "RectangleTestResult",
    "Rectangles",
    "all_states",
    "arnold_press_statistic",
    "check_states",
    "coupled_step",
    "coupling_time",
    "drift",
    "escape_probability",
    "exit_mask",
    "glauber_chains",
    "host_states",
    "influence",
    "is_torch",
    "iter_log_conditionals",
    "log_conditionals",
    "margins",
    "maximal_coupling_step",
    "rectangle_test",
    "sample_categorical",
    "to_numpy",
]
from glauber.estimators.certify import Certificate, certify  # noqa: E402  (after its parts)
__all__ += ["Certificate", "certify"]
