"""Exact small-vocabulary models and their exact Glauber chains."""

from glauber.toy_models.base import FunctionModel, ToyModel
from glauber.toy_models.counterexamples import (
    Counterexample,
    boundary_drift_counterexample,
    theorem5_counterexample,
    theorem5_gibbs_star_counterexample,
)
from glauber.toy_models.curie_weiss import CurieWeissLumpedChain, CurieWeissModel
from glauber.toy_models.exact_chain import ExactChain
from glauber.toy_models.ising import AsymmetricIsingModel, IsingModel
from glauber.toy_models.planted import PlantedBasinModel
from glauber.toy_models.potts import PottsModel
from glauber.toy_models.specs import TOY_FAMILIES, parse_toy_spec

__all__ = [
    "AsymmetricIsingModel",
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
    "parse_toy_spec",
    "theorem5_counterexample",
    "theorem5_gibbs_star_counterexample",
]
