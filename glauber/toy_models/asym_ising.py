"""The asymmetric Ising model: Ising-type conditionals of a general coupling matrix, and its
toy family record.

When ``J`` is not symmetric no joint law has these conditionals (the rectangle test of
Proposition 4 gives ``|delta| = 4 |J_ij - J_ji|``): the toy analogue of a masked LM.
"""

from __future__ import annotations

import itertools
from typing import Any, Mapping

import numpy as np

from glauber.core.validation import as_real_array, check_finite_float, check_positive_int
from glauber.errors import InvalidParameterError
from glauber.theory.influence_bounds import OscillationBound
from glauber.toy_models.base import ToyModel
from glauber.toy_models.family import ModelSpec, Preset, ToyFamily
from glauber.toy_models.ising import (
    FIELD_MODES,
    ising_scores,
    site_field,
    spin_oscillation_bound,
    spins,
)


class AsymmetricIsingModel(ToyModel):
    """Ising-type conditionals with a general, possibly asymmetric, coupling matrix.

    ``s_i(s; x_{-i}) = s * (h_i + sum_k J_ik s(x_k))``: the influence of ``k`` on ``i`` is
    ``J_ik``. If ``J`` is symmetric this is :class:`IsingModel`; otherwise the conditionals are
    incompatible (no joint law has them: the rectangle of Proposition 4 flipping spins ``i`` and
    ``j`` has ``|delta| = 4 |J_ij - J_ji|`` at ``tau = 1``), the toy analogue of an MLM.

    Parameters
    ----------
    J : array_like, shape (n, n)
        Real, finite, zero diagonal.
    field : float or array_like of shape (n,), default 0.0
    name : str, optional

    Raises
    ------
    InvalidParameterError
        If ``J`` is not a finite square matrix with zero diagonal, or the field is malformed.
    """

    def __init__(
        self, J: Any, field: float | np.ndarray = 0.0, name: str | None = None
    ) -> None:
        mat = as_real_array(J, "couplings J")
        if mat.ndim != 2 or mat.shape[0] != mat.shape[1] or mat.shape[0] < 1:
            raise InvalidParameterError(f"J must be a square n x n matrix, got shape {mat.shape}")
        if not np.isfinite(mat).all():
            raise InvalidParameterError("J must be finite; replace its NaN/inf entries")
        if np.any(np.diag(mat) != 0.0):
            raise InvalidParameterError(
                "J must have a zero diagonal (a site does not influence itself); set "
                "np.fill_diagonal(J, 0)"
            )
        super().__init__(mat.shape[0], 2, name=name or "asym-ising", labels=("-1", "+1"))
        self.J = mat
        self.h = site_field(field, tuple(range(self.n)))

    @classmethod
    def random(
        cls,
        n: int,
        rng: np.random.Generator | int | None = None,
        scale: float = 1.0,
        asym: float = 0.5,
        field: float | np.ndarray = 0.0,
    ) -> "AsymmetricIsingModel":
        """Random couplings ``J = scale * (S + asym * A)``, ``G`` i.i.d. standard normal off the
        diagonal, ``S = (G + G^T)/2``, ``A = (G - G^T)/2``.

        ``asym = 0`` gives a symmetric (compatible) ``J``; ``asym = 1`` gives ``J = scale * G``
        with independent entries.

        Raises
        ------
        InvalidParameterError
            If ``n < 1``, ``scale`` is not finite, or ``asym`` is outside ``[0, 1]``.
        """
        n = check_positive_int(n, "n")
        scale = check_finite_float(scale, "scale")
        asym = check_finite_float(asym, "asym")
        if not 0.0 <= asym <= 1.0:
            raise InvalidParameterError(f"asym must lie in [0, 1], got {asym}")
        g = np.random.default_rng(rng).standard_normal((n, n))
        np.fill_diagonal(g, 0.0)
        sym, anti = (g + g.T) / 2.0, (g - g.T) / 2.0
        return cls(scale * (sym + asym * anti), field=field)

    def is_compatible(self) -> bool:
        """True iff ``J`` is exactly symmetric (then the model is Gibbs, Theorem 3)."""
        return bool(np.array_equal(self.J, self.J.T))

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        # J[site, site] = 0, so the token at `site` does not enter.
        return ising_scores(self.h[site] + spins(states) @ self.J[site])

    def oscillation_upper_bound(self) -> OscillationBound:
        """Lemma 6's oscillation in closed form, ``4 |J_ij|`` plus rounding
        (:func:`~glauber.toy_models.ising.spin_oscillation_bound`)."""
        return spin_oscillation_bound(self.J, self.h)


# ------------------------------------------------------------------------------- the family
def _build(n: int, q: int, J: tuple, field: tuple) -> AsymmetricIsingModel:
    return AsymmetricIsingModel(np.array(J, dtype=np.float64),
                                field=np.array(field, dtype=np.float64))


#: Smallest nonzero asymmetry ``|a_ij|`` a draw makes: a rectangle on the pair has
#: ``|delta| = 4 |J_ij - J_ji| = 8 |a_ij| >= 8e-3``, far above float64 rounding (a draw of
#: ``a = 1e-14`` made a 2-site window "incompatible" whose largest ``|delta|`` was ``8e-14``).
VISIBLE_ASYM = 1e-3


def _draw(draw: Any, n: int, q: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """``J_ij = s_ij + a_ij``, ``J_ji = s_ij - a_ij``, with ``|a_01| >= min_asym`` and every other
    ``a_ij`` either 0 or at least :data:`VISIBLE_ASYM` in size."""
    from hypothesis import strategies as st

    from glauber.toy_models.draws import draw_site_values, floats_in

    J = [[0.0] * n for _ in range(n)]
    pairs = sorted(itertools.combinations(range(n), 2), key=lambda p: (p[1], p[0]))
    for i, j in pairs:  # (0, 1), (0, 2), (1, 2), (0, 3), ...: lowering n drops the last draws
        s = draw(floats_in(options["coupling"]))
        if (i, j) == (0, 1) and options["min_asym"] > 0.0:
            lo = options["min_asym"]
            a = draw(floats_in((lo, max(lo, options["asym"][1]))))
            a = -a if draw(st.booleans()) else a
        else:  # an asymmetry is 0 or visible: |a| < VISIBLE_ASYM would make an "incompatible"
            a = draw(floats_in(options["asym"]))  # window whose rectangles are at rounding level
            a = 0.0 if abs(a) < VISIBLE_ASYM else a
        J[i][j], J[j][i] = s + a, s - a
    field = draw_site_values(draw, n, options["field"], options["field_modes"])
    return {"J": J, "field": field}


def _symmetric(spec: ModelSpec) -> bool:
    """Proposition 4: compatible iff ``J`` is symmetric."""
    J = np.array(spec.params["J"])
    return bool(np.array_equal(J, J.T))


#: The asymmetric Ising family: incompatible whenever ``J`` is not symmetric.
ASYM_ISING = ToyFamily(
    "asym-ising", _build, _draw,
    {"coupling": (-2.0, 2.0), "asym": (-1.0, 1.0), "min_asym": 0.1, "field": (-2.0, 2.0),
     "field_modes": FIELD_MODES}, min_sites=2, max_q=2, compatible=_symmetric,
    compatible_draws=lambda options: False if options["min_asym"] > 0.0 else None,
    presets={"asym-ising": Preset(
        lambda n, seed, asym, scale, h: AsymmetricIsingModel.random(
            n, rng=seed, scale=scale, asym=asym, field=h),
        {"n": 6, "seed": 0, "asym": 0.5, "scale": 1.0, "h": 0.0},
        "random couplings J = scale (S + asym A) (asym=0: symmetric; >0: incompatible)")},
    spin_couplings=lambda model: (model.J, model.h),
)


__all__ = ["ASYM_ISING", "AsymmetricIsingModel"]
