"""A random joint law: the conditionals of a random energy over all states (compatible), and its
toy family record.

:class:`RandomJointModel`: ``s_i(a; x_{-i}) = E(x^(i -> a))`` for a random energy ``E`` over all
``q**n`` states, so the conditionals are those of ``pi_tau ∝ exp(E / tau)`` (compatible:
Theorem 3). The energies are fixed once built (drawn from ``rng`` at construction), so a seed and
the scale rebuild the same model.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from glauber.core.enumeration import check_state_space, radix_weights
from glauber.core.validation import check_nonnegative_float
from glauber.toy_models.base import ToyModel
from glauber.toy_models.family import Preset, ToyFamily
from glauber.toy_models.random_table import MAX_RANDOM_STATES


class RandomJointModel(ToyModel):
    """Conditionals of a random joint law: ``s_i(a; x_{-i}) = E(x^(i -> a))``, ``E`` i.i.d. normal.

    Compatible by construction: the Glauber chain at ``tau`` is reversible with respect to
    ``pi_tau(x) ∝ exp(E(x) / tau)`` (Theorem 3); :meth:`log_weight` returns ``E``.

    Parameters
    ----------
    n, q : int
    rng : numpy.random.Generator, int or None
    scale : float, default 1.0
        Standard deviation of the energies (>= 0; 0 gives the uniform law).
    name : str, optional

    Raises
    ------
    InvalidParameterError
        If ``scale`` is negative or not finite.
    StateSpaceTooLargeError
        If ``q**n`` exceeds :data:`MAX_RANDOM_STATES`.

    Examples
    --------
    >>> m = RandomJointModel(2, 2, rng=0)
    >>> x = np.array([[1, 0]])
    >>> float(m.score_site(x, 1)[0, 0] - m.log_weight(x)[0])  # E(x^(1 -> 0)) = E(x)
    0.0
    """

    def __init__(self, n: int, q: int, rng: np.random.Generator | int | None = None,
                 scale: float = 1.0, name: str | None = None) -> None:
        super().__init__(n, q, name=name or f"random-joint:n={n},q={q}")
        check_state_space(self.n, self.q, MAX_RANDOM_STATES)
        self.scale = check_nonnegative_float(scale, "scale")
        self.energy = self.scale * np.random.default_rng(rng).standard_normal(self.q**self.n)
        self._weights = radix_weights(self.n, self.q)
        self._tokens = np.arange(self.q)

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        base = np.asarray(states) @ self._weights  # site already masked to token 0
        return self.energy[base[:, None] + self._weights[site] * self._tokens[None, :]]

    def log_weight(self, states: np.ndarray) -> np.ndarray:
        """The energy ``E(x)`` at ``tau = 1`` (``pi_tau ∝ exp(E / tau)``): ``[B, n] -> [B]``."""
        return self.energy[self.as_states(states) @ self._weights]


# ------------------------------------------------------------------------------- the family
def _build(n: int, q: int, seed: int, scale: float) -> RandomJointModel:
    return RandomJointModel(n, q, seed, scale=scale)


def _draw(draw: Any, n: int, q: int, options: Mapping[str, Any]) -> dict[str, Any]:
    from glauber.toy_models.draws import floats_in, seed

    return {"seed": seed(draw), "scale": draw(floats_in(options["scale"]))}


#: The random-joint family: compatible by construction.
RANDOM_JOINT = ToyFamily(
    "random-joint", _build, _draw,
    {"scale": (0.0, 3.0)}, min_sites=1, max_q=None,
    presets={"random-joint": Preset(
        _build, {"n": 3, "q": 2, "seed": 0, "scale": 1.0},
        "the conditionals of a random energy E ~ Normal(0, scale^2) per state (compatible)")},
)


__all__ = ["RANDOM_JOINT", "RandomJointModel"]
