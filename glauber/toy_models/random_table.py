"""A random score table: i.i.d. scores per site, context and token (incompatible), and its toy
family record.

:class:`RandomTableModel`: ``s_i(a; x_{-i})`` i.i.d. ``Normal(0, scale^2)`` for every site,
context and token (plus ``bias`` on token 0). The conditionals are generically incompatible (the
rectangle test of Proposition 4 gives ``delta != 0``) and the chain is not reversible. The table
is fixed once built (drawn from ``rng`` at construction), so a seed and the scalar parameters
rebuild the same model.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from glauber.core.enumeration import check_state_space, radix_weights
from glauber.core.validation import check_finite_float, check_nonnegative_float
from glauber.toy_models.base import ToyModel
from glauber.toy_models.family import ModelSpec, Preset, ToyFamily

#: Largest state space a random table (or a random joint) is built for (a table has
#: ``n q**(n+1)`` entries).
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


# ------------------------------------------------------------------------------- the family
def _build(n: int, q: int, seed: int, scale: float, bias: float) -> RandomTableModel:
    return RandomTableModel(n, q, seed, scale=scale, bias=bias)


def _draw(draw: Any, n: int, q: int, options: Mapping[str, Any]) -> dict[str, Any]:
    from glauber.toy_models.draws import floats_in, seed

    return {"seed": seed(draw), "scale": draw(floats_in(options["scale"])),
            "bias": draw(floats_in(options["bias"]))}


def _scale_zero(spec: ModelSpec) -> bool:
    """I.i.d. normal scores with scale > 0 are incompatible for ``n >= 2``."""
    return spec.params["scale"] == 0.0


#: The random-table family: incompatible unless its scale is 0.
RANDOM_TABLE = ToyFamily(
    "random-table", _build, _draw, {"scale": (0.05, 3.0), "bias": (-6.0, 6.0)}, min_sites=2,
    max_q=None, compatible=_scale_zero,
    compatible_draws=lambda options: False if options["scale"][0] > 0.0 else None,
    presets={"random-table": Preset(
        _build, {"n": 3, "q": 2, "seed": 0, "scale": 1.0, "bias": 0.0},
        "i.i.d. Normal(0, scale^2) scores per site, context and token, plus bias on token 0 "
        "(incompatible)")},
)


__all__ = ["MAX_RANDOM_STATES", "RANDOM_TABLE", "RandomTableModel"]
