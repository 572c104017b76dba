"""Small-vocabulary toy models, each a ConditionalModel with exact answers, one family a module.

Models: :class:`IsingModel`, :class:`AsymmetricIsingModel`, :class:`PottsModel`,
:class:`CurieWeissModel` (with its exact lumped chain :class:`CurieWeissLumpedChain`),
:class:`PlantedBasinModel`, :class:`RandomTableModel`, :class:`RandomJointModel`,
:class:`ClockModel`, :class:`FunctionModel` (any score function), and the exact
counterexamples of the statements that are false as printed. Each family module ends with its
record (:class:`ToyFamily`); the records are listed once, in :data:`FAMILIES`, which the command
line (:func:`parse_toy_spec`), :mod:`glauber.testing` and ``glauber verify --examples`` read.
The exact chains and their algorithms live in :mod:`glauber.exact`; :class:`ExactChain`,
:class:`CountChain`, :func:`gth_stationary`, :func:`stationary_distribution`,
:func:`mixing_time` and :func:`distance_curve` are re-exported here because the design's public
API names them under ``glauber.toy_models``.
"""

from glauber.exact import (
    CountChain,
    ExactChain,
    distance_curve,
    gth_stationary,
    mixing_time,
    stationary_distribution,
)
from glauber.toy_models.asym_ising import ASYM_ISING, AsymmetricIsingModel
from glauber.toy_models.base import FunctionModel, ToyModel
from glauber.toy_models.clock import CLOCK, ClockModel
from glauber.toy_models.counterexamples import (
    Counterexample,
    boundary_drift_counterexample,
    theorem5_counterexample,
    theorem5_gibbs_star_counterexample,
)
from glauber.toy_models.curie_weiss import CURIE_WEISS, CurieWeissLumpedChain, CurieWeissModel
from glauber.toy_models.family import (
    FamilyTable,
    ModelSpec,
    Preset,
    ToyFamily,
    register_families,
)
from glauber.toy_models.ising import ISING, IsingModel
from glauber.toy_models.planted import PLANTED, PlantedBasinModel
from glauber.toy_models.potts import POTTS, PottsModel
from glauber.toy_models.random_joint import RANDOM_JOINT, RandomJointModel
from glauber.toy_models.random_table import RANDOM_TABLE, RandomTableModel
from glauber.toy_models.restricted import RESTRICTED
from glauber.toy_models.specs import parse_toy_spec, toy_presets

#: Every toy family, in shrinking order (a new family goes last; see :class:`FamilyTable`).
FAMILIES = register_families(FamilyTable(ISING, CURIE_WEISS, POTTS, PLANTED, RANDOM_JOINT,
                                         ASYM_ISING, RANDOM_TABLE, RESTRICTED, CLOCK))

__all__ = [
    "AsymmetricIsingModel",
    "ClockModel",
    "CountChain",
    "Counterexample",
    "CurieWeissLumpedChain",
    "CurieWeissModel",
    "ExactChain",
    "FAMILIES",
    "FamilyTable",
    "FunctionModel",
    "IsingModel",
    "ModelSpec",
    "PlantedBasinModel",
    "PottsModel",
    "Preset",
    "RandomJointModel",
    "RandomTableModel",
    "ToyFamily",
    "ToyModel",
    "boundary_drift_counterexample",
    "distance_curve",
    "gth_stationary",
    "mixing_time",
    "parse_toy_spec",
    "stationary_distribution",
    "theorem5_counterexample",
    "theorem5_gibbs_star_counterexample",
    "toy_presets",
]
