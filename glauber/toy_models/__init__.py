"""Small-vocabulary toy models, each a ConditionalModel with exact answers.

Models: :class:`IsingModel`, :class:`AsymmetricIsingModel`, :class:`PottsModel`,
:class:`CurieWeissModel` (with its exact lumped chain :class:`CurieWeissLumpedChain`),
:class:`PlantedBasinModel`, :class:`FunctionModel` (any score function), by name with
:func:`parse_toy_spec`, and the exact counterexamples of the statements that are false as
printed. The exact chains and their algorithms live in :mod:`glauber.exact`;
:class:`ExactChain`, :class:`CountChain`, :func:`gth_stationary`,
:func:`stationary_distribution`, :func:`mixing_time` and :func:`distance_curve` are re-exported
here because the design's public API names them under ``glauber.toy_models``.
"""

from glauber.exact import (
    CountChain,
    ExactChain,
    distance_curve,
    gth_stationary,
    mixing_time,
    stationary_distribution,
)
from glauber.toy_models.base import FunctionModel, ToyModel
from glauber.toy_models.counterexamples import (
    Counterexample,
    boundary_drift_counterexample,
    theorem5_counterexample,
    theorem5_gibbs_star_counterexample,
)
from glauber.toy_models.curie_weiss import CurieWeissLumpedChain, CurieWeissModel
from glauber.toy_models.ising import AsymmetricIsingModel, IsingModel
from glauber.toy_models.planted import PlantedBasinModel
from glauber.toy_models.potts import PottsModel
from glauber.toy_models.specs import TOY_FAMILIES, parse_toy_spec

__all__ = [
    "AsymmetricIsingModel",
    "CountChain",
    "Counterexample",
    "CurieWeissLumpedChain",
    "CurieWeissModel",
    "ExactChain",
    "FunctionModel",
    "IsingModel",
    "PlantedBasinModel",
    "PottsModel",
    "TOY_FAMILIES",
    "ToyModel",
    "boundary_drift_counterexample",
    "distance_curve",
    "gth_stationary",
    "mixing_time",
    "parse_toy_spec",
    "stationary_distribution",
    "theorem5_counterexample",
    "theorem5_gibbs_star_counterexample",
]
