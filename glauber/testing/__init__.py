"""Property-based testing of bounds on Glauber dynamics against exact small chains.

Hypothesis strategies over toy models (every family of :data:`glauber.toy_models.FAMILIES`, each
model carrying a :class:`ModelSpec` that rebuilds it), tiny random transformer masked LMs
(:func:`masked_lms`, :mod:`glauber.testing.transformers`), temperatures, target distances,
basins and pairs of states; :func:`exact`, a cached exact chain; and :func:`check_bound`, which
runs a bound against exact values and returns a :class:`BoundReport` with the shrunk
counterexample and a script that reproduces it. See ``docs/testing.md``.

Needs Hypothesis (the ``test`` extra); importing this package without it raises
:class:`~glauber.errors.MissingDependencyError`.
"""

from glauber.testing.dependency import require_hypothesis

require_hypothesis()

from glauber.testing.chains import CachedChain, clear_cache, exact  # noqa: E402
from glauber.testing.check import (  # noqa: E402
    BoundReport,
    Counterexample,
    check_bound,
)
from glauber.testing.matrices import (  # noqa: E402
    influence_matrices,
    integer_weights,
    rational_transition_matrices,
    transition_matrices,
)
from glauber.testing.strategies import (  # noqa: E402
    basins,
    coupling_matrices,
    couplings,
    epsilons,
    graphs,
    model_specs,
    models,
    sample,
    state_pairs,
    states,
    temperatures,
)
from glauber.toy_models import FAMILIES, ModelSpec  # noqa: E402
from glauber.toy_models.restricted import MAX_BASE_STATES  # noqa: E402

#: Names of :mod:`glauber.testing.transformers` (tiny random masked LMs), imported on first use
#: so that ``import glauber.testing`` does not load transformers.
_TRANSFORMERS = ("MaskedLMSpec", "masked_lm_specs", "masked_lms")


def __getattr__(name: str):
    if name in _TRANSFORMERS:
        from glauber.testing import transformers

        return getattr(transformers, name)
    raise AttributeError(f"module 'glauber.testing' has no attribute {name!r}")


__all__ = [
    "BoundReport",
    "MaskedLMSpec",
    "CachedChain",
    "Counterexample",
    "FAMILIES",
    "MAX_BASE_STATES",
    "ModelSpec",
    "basins",
    "check_bound",
    "clear_cache",
    "coupling_matrices",
    "couplings",
    "epsilons",
    "exact",
    "graphs",
    "influence_matrices",
    "integer_weights",
    "masked_lm_specs",
    "masked_lms",
    "model_specs",
    "models",
    "rational_transition_matrices",
    "sample",
    "state_pairs",
    "states",
    "temperatures",
    "transition_matrices",
]
