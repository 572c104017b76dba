"""The stable key of every claim a certificate makes (:class:`ClaimKey`).

A stage's claims carry these keys; :meth:`glauber.certify.certificate.Certificate.claim` looks a
claim up by one. The floor of the room: it imports nothing of ours.
"""

from __future__ import annotations

import enum


class ClaimKey(str, enum.Enum):
    """Stable keys of a certificate's claims (``cert.claim(ClaimKey.THEOREM5_CORRECTED)``)."""

    PROPOSITION4 = "prop4"
    THEOREM5_CORRECTED = "thm5-corrected"
    THEOREM5_PRINTED = "thm5-printed"
    COROLLARY7 = "cor7"
    THEOREM5_OSCILLATION = "thm5-oscillation"
    THEOREM5_UPPER = "thm5-upper"
    THEOREM8_TRAP = "thm8-trap"
    THEOREM8_BASIN = "thm8-basin"
    DRIFT_PRINTED = "drift-printed"
    DRIFT_BAND = "drift-band"
    COUPLING = "coupling"
    LAG_COUPLING = "lag-coupling"


__all__ = ["ClaimKey"]
