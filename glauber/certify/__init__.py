"""The main job: certify one model at one temperature (``glauber certify``).

- :func:`certify` (:mod:`~glauber.certify.pipeline`): every stage on one model, one
  :class:`Certificate` holding each stage's own result;
- :mod:`~glauber.certify.stages`: the stages, in order (:class:`Stage`: name, run, claims,
  render, from :mod:`~glauber.certify.stage_run` with :class:`StageRun`; their fields in
  :mod:`~glauber.certify.stage_fields`; the :class:`ClaimKey` of every claim in
  :mod:`~glauber.certify.claim_key`);
  :mod:`~glauber.certify.runs` computes the built-in ones;
- :class:`Certificate` and its parts (:mod:`~glauber.certify.certificate`; :class:`ExactValues`
  in :mod:`~glauber.certify.exact`), with exact JSON
  round-trip; claims looked up by a stable :class:`ClaimKey`;
- :mod:`~glauber.certify.claims`: what each statement of the paper says about these numbers;
- :mod:`~glauber.certify.exact`: the exact values of a small chain beside the estimates;
- :func:`format_certificate` (:mod:`~glauber.certify.table`, its sections in
  :mod:`~glauber.certify.render`): the human-readable table, opening with :func:`verdict_lines`
  (:mod:`~glauber.certify.verdict`): the answers first;
- :mod:`~glauber.certify.report`: the certificate as one self-contained HTML page
  (``glauber report``).

This package sits above the estimators and exact chains; the command line sits above it.
The package is also callable, ``glauber.certify(model, tau)`` being :func:`certify`: the
top-level facade exports ``certify`` under the package's own name.
"""

import sys
import types

from glauber.certify.certificate import (
    Certificate,
    Settings,
    Source,
    Timings,
    Versions,
)
from glauber.certify.claim_key import ClaimKey
from glauber.certify.exact import (
    EXACT_MAX_STATES,
    EXACT_WINDOW_MAX_STATES,
    ExactValues,
    exact_values,
)
from glauber.certify.pipeline import certify
from glauber.certify.runs import drift_band
from glauber.certify.stage_run import Stage, StageRun
from glauber.certify.stages import all_stages, stage_names
from glauber.certify.table import format_certificate
from glauber.certify.verdict import verdict_lines
from glauber.core.claims import Claim

#: The names of the stages of :func:`certify`, in order (those ``progress`` reports).
STAGES = stage_names()


class _CallablePackage(types.ModuleType):
    """``glauber.certify`` names both this package and its main function; calling it runs it."""

    def __call__(self, *args, **kwargs) -> Certificate:
        return certify(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage

__all__ = [
    "EXACT_MAX_STATES",
    "EXACT_WINDOW_MAX_STATES",
    "STAGES",
    "Certificate",
    "Claim",
    "ClaimKey",
    "ExactValues",
    "Settings",
    "Source",
    "Stage",
    "StageRun",
    "Timings",
    "Versions",
    "all_stages",
    "certify",
    "drift_band",
    "exact_values",
    "format_certificate",
    "verdict_lines",
]
