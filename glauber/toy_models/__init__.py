"""Exact small-vocabulary models and their exact Glauber chains."""

from glauber.toy_models.base import FunctionModel, ToyModel

__all__ = ["FunctionModel", "ToyModel"]
