"""Random small models: i.i.d. score tables (incompatible) and random joints (compatible).

* :class:`RandomTableModel`: ``s_i(a; x_{-i})`` i.i.d. ``Normal(0, scale^2)`` for every site,
  context and token (plus ``bias`` on token 0). The conditionals are generically incompatible
  (the rectangle test of Proposition 4 gives ``delta != 0``) and the chain is not reversible.
* :class:`RandomJointModel`: ``s_i(a; x_{-i}) = E(x^(i -> a))`` for a random energy ``E`` over
  all ``q**n`` states, so the conditionals are those of ``pi_tau ∝ exp(E / tau)`` (compatible:
  Theorem 3).

Both are fixed once built (the tables are drawn from ``rng`` at construction), so a seed and the
scalar parameters rebuild the same model.
"""

from __future__ import annotations

import numpy as np

from glauber.core.enumeration import check_state_space, radix_weights
from glauber.core.validation import check_finite_float, check_nonnegative_float
from glauber.toy_models.base import ToyModel

#: Largest state space a random table is built for (its table has ``n q**(n+1)`` entries).
MAX_RANDOM_STATES = 2**16


class RandomTableModel(ToyModel):
    """I.i.d. normal scores per site, context and token: a generic incompatible model.

    ``s_i(a; x_{-i}) = scale * g[i, x^(i -> 0), a] + bias * 1{a = 0}`` with ``g`` i.i.d.
    standard normal; the context is the state with site ``i`` masked to token 0, so the
    conditional ignores the token it resamples.

    Parameters
    ----------
    n, q : int
        Sites and vocabulary size.
    rng : numpy.random.Generator, int or None
        Source of the table (an int seeds ``numpy.random.default_rng``).
    scale : float, default 1.0
        Standard deviation of the scores (>= 0).
    bias : float, default 0.0
        Added to the score of token 0 everywhere.
    name : str, optional

    Raises
    ------
    InvalidParameterError
        If ``scale`` is negative or not finite, or ``bias`` is not finite.
    StateSpaceTooLargeError
        If ``q**n`` exceeds :data:`MAX_RANDOM_STATES`.

    Examples
    --------
    >>> m = RandomTableModel(2, 2, rng=0, scale=0.0, bias=1.0)
    >>> m.score_site(np.array([[0, 1]]), 0).tolist()
    [[1.0, 0.0]]
    """

    def __init__(self, n: int, q: int, rng: np.random.Generator | int | None = None,
                 scale: float = 1.0, bias: float = 0.0, name: str | None = None) -> None:
        super().__init__(n, q, name=name or f"random-table:n={n},q={q}")
        check_state_space(self.n, self.q, MAX_RANDOM_STATES)
        self.scale = check_nonnegative_float(scale, "scale")
        self.bias = check_finite_float(bias, "bias")
        self.table = self.scale * np.random.default_rng(rng).standard_normal(
            (self.n, self.q**self.n, self.q)
        )
        self.table[:, :, 0] += self.bias
        self._weights = radix_weights(self.n, self.q)

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        return self.table[site, np.asarray(states) @ self._weights]  # site masked to 0


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


__all__ = ["MAX_RANDOM_STATES", "RandomJointModel", "RandomTableModel"]
