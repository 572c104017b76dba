"""What certify's ``lag`` stage stores (:class:`LagCouplingCheck`): the lag-coupling estimate
and, on an exact chain, the exact distance it estimates (:mod:`glauber.certify.lag`).

Its own module, below the certificate: :mod:`glauber.certify.stage_fields` reads it without
importing the stage, which imports the certificate's claims.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from glauber.core.arrays import JsonResult
from glauber.estimators.lag_coupling import LagCouplingBound


@dataclass(frozen=True)
class LagCouplingCheck(JsonResult):
    """What the ``lag`` stage found.

    Attributes
    ----------
    bound : LagCouplingBound or None
        The estimate (None when it was refused: see ``refused``).
    step : int or None
        The first step at which ``bound.upper <= eps`` (None: refused).
    exact_tv : float or None
        ``TV(mu_0 P^step, pi)`` from the same start law, exactly (None without an exact chain).
    exact_curve : ndarray of float or None
        ``TV(mu_0 P^t, pi)`` at ``t = 0 .. max(step, last step of the bound)``, exactly (None
        without an exact chain): what the report page draws beside the estimate.
    refused : str or None
        Why no estimate exists (pairs that did not meet within ``max_steps``).
    """

    bound: LagCouplingBound | None
    step: int | None = None
    exact_tv: float | None = None
    exact_curve: np.ndarray | None = None
    refused: str | None = None

    @property
    def held(self) -> bool | None:
        """Whether the exact TV is at most the estimated bound at ``step`` (None: not known)."""
        if self.exact_tv is None or self.bound is None or self.step is None:
            return None
        return self.exact_tv <= self.bound.at(self.step)[1] + 1e-12


__all__ = ["LagCouplingCheck"]
