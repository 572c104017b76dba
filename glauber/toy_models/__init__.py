"""Exact small-vocabulary models and their exact Glauber chains."""

from glauber.toy_models.base import FunctionModel, ToyModel
from glauber.toy_models.curie_weiss import CurieWeissLumpedChain, CurieWeissModel
from glauber.toy_models.ising import AsymmetricIsingModel, IsingModel
from glauber.toy_models.planted import PlantedBasinModel
from glauber.toy_models.potts import PottsModel
from glauber.toy_models.specs import TOY_FAMILIES, parse_toy_spec

__all__ = [
    "AsymmetricIsingModel",
    "CurieWeissLumpedChain",
    "CurieWeissModel",
    "FunctionModel",
    "IsingModel",
    "PlantedBasinModel",
    "PottsModel",
    "TOY_FAMILIES",
    "ToyModel",
    "parse_toy_spec",
]
