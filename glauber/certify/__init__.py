"""The main job: certify one model at one temperature (``glauber certify``).

- :func:`certify` (:mod:`~glauber.certify.pipeline`): every estimator on one model, one
  :class:`Certificate` holding each stage's own result;
- :class:`Certificate` and its parts (:mod:`~glauber.certify.certificate`), with exact JSON
  round-trip; claims looked up by a stable :class:`ClaimKey`;
- :mod:`~glauber.certify.claims`: what each statement of the paper says about these numbers;
- :mod:`~glauber.certify.exact`: the exact values of a small chain beside the estimates;
- :func:`format_certificate` (:mod:`~glauber.certify.render`): the human-readable table.

This package sits above the estimators and toy models; the command line sits above it.
"""

from glauber.certify.certificate import (
    STAGES,
    Certificate,
    ClaimKey,
    ExactValues,
    Settings,
    Source,
    Timings,
    Versions,
)
from glauber.certify.exact import EXACT_MAX_STATES, exact_values
from glauber.certify.pipeline import certify, drift_band
from glauber.certify.render import format_certificate
from glauber.core.claims import Claim

__all__ = [
    "EXACT_MAX_STATES",
    "STAGES",
    "Certificate",
    "Claim",
    "ClaimKey",
    "ExactValues",
    "Settings",
    "Source",
    "Timings",
    "Versions",
    "certify",
    "drift_band",
    "exact_values",
    "format_certificate",
]
