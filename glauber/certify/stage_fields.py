"""What each stage of :func:`~glauber.certify.certify` stores in a certificate, in run order.

:data:`STAGE_FIELDS` maps a stage's name to the certificate fields it fills and their types.
:mod:`glauber.certify.stages` gives each :class:`~glauber.certify.stage_run.Stage` its entry, and
:meth:`glauber.certify.certificate.Certificate.from_dict` decodes the results of stages without a
field of their own with it: the certificate reads what the stages store without importing the
stages (which import the certificate's printing and claims).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from glauber.certify.exact import ExactValues
from glauber.certify.lag_result import LagCouplingCheck
from glauber.estimators.coupling import CouplingResult
from glauber.estimators.drift import DriftResult
from glauber.estimators.influence import InfluenceResult
from glauber.estimators.influence_bracket import InfluenceBracket
from glauber.estimators.margins import MarginsResult
from glauber.estimators.rectangle import RectangleTestResult
from glauber.exact.kernel_summary import KernelSummary

#: Stage name -> {certificate field: type}, in the order the stages run.
STAGE_FIELDS: Mapping[str, Mapping[str, Any]] = {
    "table": {},
    "rectangles": {"incompatibility": RectangleTestResult},
    "influence": {"influence": InfluenceResult},
    "bracket": {"bracket": InfluenceBracket | None},
    "margins": {"margins": MarginsResult, "basin": MarginsResult | None},
    "exact": {"exact": ExactValues | None, "exact_note": str},
    "kernel": {"kernel": KernelSummary | None},
    "drift": {"drift": DriftResult, "drift_band": DriftResult},
    "coupling": {"coupling": CouplingResult | None},
    "lag": {"lag_coupling": LagCouplingCheck | None},
}

__all__ = ["STAGE_FIELDS"]
