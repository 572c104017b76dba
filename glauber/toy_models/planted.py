"""A planted self-reinforcing token: the toy analogue of the paper's '!' basin (Section 5.4).

The score of the planted token at a site grows with the number of *other* sites holding it,
so a sequence that is mostly that token stays so at low temperature (a metastable basin:
Assumption 1 / Theorem 8, and the drift certificate of Section 5.4). The module ends with the
family record.
"""

from __future__ import annotations

import numbers
from typing import Any, Mapping

import numpy as np

from glauber.core.validation import (
    as_real_array,
    check_finite_float,
    check_positive_int,
)
from glauber.errors import InvalidParameterError, VocabularyError
from glauber.toy_models.base import ToyModel
from glauber.toy_models.family import Preset, ToyFamily


class PlantedBasinModel(ToyModel):
    """A planted token that reinforces itself.

    ``s_i(a; x_{-i}) = base[a] + strength * 1{a = token} * c_{-i}(x) / (n - 1)``.

    ``c_{-i}(x)`` is the number of sites ``k != i`` with ``x_k = token``. The model is compatible:
    its conditionals are those of
    ``pi_tau(x) ∝ exp((strength/(n-1)) C(c(x), 2) + sum_i base[x_i]) / tau)`` with ``c(x)`` the
    token count (see :meth:`log_weight`; Theorem 3). Inside the basin ``{c >= threshold}``, a
    site holding the token keeps it with margin
    ``strength (c - 1)/(n - 1) + base[token] - max_{a != token} base[a]`` (Assumption 1).

    Parameters
    ----------
    n : int
        Number of sites, >= 2.
    q : int
        Vocabulary size, >= 2.
    token : int, default 0
        The planted token, in ``0..q-1``.
    strength : float, default 4.0
        Score of the planted token when every other site holds it (finite; > 0 for a basin).
    base : array_like of shape (q,), optional
        Context-free scores of the tokens (default zero). See :meth:`with_random_base`.
    name : str, optional

    Raises
    ------
    InvalidParameterError
        If ``n < 2``, or ``strength`` / ``base`` are not finite / of shape ``(q,)``.
    VocabularyError
        If ``q < 2`` or ``token`` is not in ``0..q-1``.

    Examples
    --------
    >>> import numpy as np
    >>> m = PlantedBasinModel(5, 3, token=2, strength=4.0)
    >>> m.score_site(np.array([[2, 2, 0, 2, 1]]), 2).tolist()  # 3 other sites hold 2: 4*3/4
    [[0.0, 0.0, 3.0]]
    """

    def __init__(
        self,
        n: int,
        q: int,
        token: int = 0,
        strength: float = 4.0,
        base: Any = None,
        name: str | None = None,
    ) -> None:
        n = check_positive_int(n, "n")
        if n < 2:
            raise InvalidParameterError(
                "PlantedBasinModel needs n >= 2 sites (the score counts the *other* sites)"
            )
        super().__init__(n, q, name=name or "planted")
        if isinstance(token, bool) or not isinstance(token, numbers.Integral) or not (
            0 <= token < self.q
        ):
            raise VocabularyError(f"token must be an integer in 0..{self.q - 1}, got {token!r}")
        self.token = int(token)
        self.strength = check_finite_float(strength, "strength")
        scores = np.zeros(self.q) if base is None else as_real_array(base, "base")
        if scores.shape != (self.q,):
            raise InvalidParameterError(
                f"base must hold q = {self.q} scores, got shape {scores.shape}"
            )
        if not np.isfinite(scores).all():
            raise InvalidParameterError("base scores must be finite; replace NaN/inf entries")
        self.base = scores

    @classmethod
    def with_random_base(
        cls,
        n: int,
        q: int,
        rng: np.random.Generator | int | None = None,
        scale: float = 1.0,
        token: int = 0,
        strength: float = 4.0,
    ) -> "PlantedBasinModel":
        """Planted model with ``base`` drawn i.i.d. ``Normal(0, scale^2)`` (fixed once drawn)."""
        scale = check_finite_float(scale, "scale")
        base = scale * np.random.default_rng(rng).standard_normal(q)
        return cls(n, q, token=token, strength=strength, base=base)

    def count(self, states: np.ndarray) -> np.ndarray:
        """Number of sites holding the planted token, per state: ``[B, n] -> [B]`` ints."""
        return (self.as_states(states) == self.token).sum(axis=1)

    def basin_mask(self, states: np.ndarray, threshold: int) -> np.ndarray:
        """``count(states) >= threshold``, the basin ``B = {x : c(x) >= threshold}``: ``[B]`` bools.

        Raises
        ------
        InvalidParameterError
            If ``threshold`` is not an integer in ``0..n``.
        """
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Integral) or not (
            0 <= threshold <= self.n
        ):
            raise InvalidParameterError(
                f"threshold must be an integer in 0..n = 0..{self.n}, got {threshold!r}"
            )
        return self.count(states) >= threshold

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        held = np.asarray(states) == self.token
        others = held.sum(axis=1) - held[:, site]
        out = np.broadcast_to(self.base, (held.shape[0], self.q)).copy()
        out[:, self.token] += self.strength * others / (self.n - 1)
        return out

    def log_weight(self, states: np.ndarray) -> np.ndarray:
        """Gibbs log-weight at ``tau = 1``: ``(strength/(n-1)) c (c-1)/2 + sum_i base[x_i]``."""
        x = self.as_states(states)
        c = (x == self.token).sum(axis=1).astype(np.float64)
        return self.strength / (self.n - 1) * c * (c - 1.0) / 2.0 + self.base[x].sum(axis=1)


# ------------------------------------------------------------------------------- the family
def _build(n: int, q: int, token: int, strength: float, base: tuple) -> PlantedBasinModel:
    return PlantedBasinModel(n, q, token=token, strength=strength, base=np.array(base))


def _draw(draw: Any, n: int, q: int, options: Mapping[str, Any]) -> dict[str, Any]:
    from hypothesis import strategies as st

    from glauber.toy_models.draws import floats_in

    token = (draw(st.integers(0, q - 1)) if options["token"] is None
             else min(int(options["token"]), q - 1))
    strength = draw(floats_in(options["strength"]))
    if draw(st.sampled_from(options["base_modes"])) == "zero":
        base = (0.0,) * q
    else:
        base = tuple(draw(st.lists(floats_in(options["base"]), min_size=q, max_size=q)))
    return {"token": token, "strength": strength, "base": base}


def _preset(n: int, q: int, token: int, strength: float, seed: int | None,
            scale: float) -> PlantedBasinModel:
    if seed is None:
        return PlantedBasinModel(n, q, token=token, strength=strength)
    return PlantedBasinModel.with_random_base(
        n, q, rng=seed, scale=scale, token=token, strength=strength
    )


#: The planted family: a self-reinforcing token of either sign, per-token base scores.
PLANTED = ToyFamily(
    "planted", _build, _draw,
    {"token": None, "strength": (-6.0, 10.0), "base": (-8.0, 8.0),
     "base_modes": ("zero", "per-token")},
    min_sites=2, max_q=None,
    presets={"planted": Preset(
        _preset, {"n": 8, "q": 3, "token": 0, "strength": 4.0, "seed": None, "scale": 1.0},
        "self-reinforcing token (the '!' basin); seed=none: zero base scores, else "
        "Normal(0, scale^2) base scores")},
)


__all__ = ["PLANTED", "PlantedBasinModel"]
