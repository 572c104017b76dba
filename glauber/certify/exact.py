"""Exact values of a small chain beside a certificate's estimates (:class:`ExactValues`).

For a model small enough to enumerate (``q**n <= EXACT_MAX_STATES``), the full transition matrix
(:class:`glauber.toy_models.ExactChain`) gives the exact influence matrix and its corrected
Theorem 5 certificates, the exact worst-start ``t_mix(eps)``, the relaxation time, whether the
chain is reversible (Theorem 3) and the stationary mass of a trap (the hypothesis of Theorem 8's
``t_mix`` bound).
"""

from __future__ import annotations

import numpy as np

from glauber.certify.certificate import ExactValues
from glauber.core.protocol import ConditionalModel
from glauber.errors import (
    ConvergenceError,
    NonPositiveConditionalError,
    StateSpaceTooLargeError,
)
from glauber.theory.contraction import certify_contraction
from glauber.toy_models.exact_chain import ExactChain

#: Largest state space for which :func:`exact_values` computes (dense matrix powers, eigenvalues).
EXACT_MAX_STATES = 1024


def exact_values(
    model: ConditionalModel,
    tau: float,
    eps: float,
    trap_state: np.ndarray | None = None,
    device: str = "cpu",
) -> tuple[ExactValues | None, str]:
    """Exact counterparts of a certificate from the model's full transition matrix.

    Parameters
    ----------
    model : ConditionalModel
        Any model (the chain asks for every conditional: meant for in-memory toy models).
    tau, eps : float
        Temperature and the target distance of ``t_mix``.
    trap_state : array of int, shape (n,), optional
        A state whose stationary mass is reported (``trap_mass``).
    device : str
        ``"cpu"`` runs the dense algebra in numpy; another device runs it in torch there.

    Returns
    -------
    (ExactValues or None, str)
        The values and a note; the values are None (and the note says why) when the state space
        is over :data:`EXACT_MAX_STATES` or the chain is numerically degenerate at this ``tau``.
    """
    num_states = model.q**model.n
    if num_states > EXACT_MAX_STATES:
        return None, f"skipped: q**n = {num_states} > {EXACT_MAX_STATES} states"
    chain = ExactChain(model, tau)
    backend, dev = ("numpy", None) if device == "cpu" else ("torch", device)
    try:
        contraction = certify_contraction(chain.influence_matrix(), eps)
        tmix = chain.mixing_time(eps, backend=backend, device=dev)
        mass = None
        if trap_state is not None:
            mass = float(chain.stationary()[int(chain.index_of(np.asarray(trap_state)))])
        values = ExactValues(
            num_states=num_states, contraction=contraction, tmix=int(tmix),
            relaxation_time=float(chain.relaxation_time()), reversible=chain.is_reversible(),
            trap_mass=mass,
        )
    except (ConvergenceError, NonPositiveConditionalError, StateSpaceTooLargeError) as exc:
        return None, f"unavailable at tau = {tau:g}: {exc}"
    return values, f"exact chain over all {num_states} states"


__all__ = ["EXACT_MAX_STATES", "exact_values"]
