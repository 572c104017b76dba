"""Exact small-vocabulary models and their exact Glauber chains.

Models (each a ConditionalModel): :class:`IsingModel`, :class:`AsymmetricIsingModel`,
:class:`PottsModel`, :class:`CurieWeissModel`, :class:`PlantedBasinModel`, :class:`FunctionModel`
(any score function), by name with :func:`parse_toy_spec`. Chains: :class:`ExactChain` (the exact
transition matrix over ``V^n`` and everything computable from it) and :class:`CountChain` (the
exact lumped chain of a token count; :class:`CurieWeissLumpedChain`). The Markov-chain algorithms
work on any transition matrix too: :func:`gth_stationary`, :func:`stationary_distribution`,
:func:`mixing_time`, :func:`distance_curve`.
"""

from glauber.toy_models.base import FunctionModel, ToyModel
from glauber.toy_models.count_chain import CountChain
from glauber.toy_models.counterexamples import (
    Counterexample,
    boundary_drift_counterexample,
    theorem5_counterexample,
    theorem5_gibbs_star_counterexample,
)
from glauber.toy_models.curie_weiss import CurieWeissLumpedChain, CurieWeissModel
from glauber.toy_models.exact_chain import ExactChain
from glauber.toy_models.ising import AsymmetricIsingModel, IsingModel
from glauber.toy_models.mixing import distance_curve, mixing_time
from glauber.toy_models.planted import PlantedBasinModel
from glauber.toy_models.potts import PottsModel
from glauber.toy_models.specs import TOY_FAMILIES, parse_toy_spec
from glauber.toy_models.stationary import gth_stationary, stationary_distribution

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
