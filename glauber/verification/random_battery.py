"""Random instances for ``glauber verify --examples N``, drawn from :mod:`glauber.testing`.

For every family of :data:`glauber.testing.FAMILIES` (restricted windows included), and for two
Ising sub-families that the textbook oracles need (zero field, one positive coupling on every
edge: any graph for Dobrushin's influences, cycles for Levin–Peres–Wilmer Theorem 15.5), ``N``
models are drawn by
:func:`glauber.testing.model_specs` (seeded), each with two count basins drawn by
:func:`glauber.testing.basins` plus its perfect trap. Each model runs at two temperatures on the
scale of its own interactions, ``tau = f * tau_7`` with Corollary 7's threshold
``tau_7 = max_i sum_j Delta_ij / 4``: a high one (``f`` in [1.05, 4], where Corollary 7,
Theorem 5 and Dobrushin's hypotheses hold) and a low one (``f`` in [0.35, 1], where the basin
statements bite). A model without interactions (``tau_7 = 0``) runs at ``f`` itself. No
temperature goes below ``1/30`` of the model's largest score difference or largest ``|score|``:
then no conditional falls below ``e^-30``, and the rounding of a score (about ``1e-16`` of it)
stays below ``1e-14`` once divided by ``tau``, under the checks' absolute tolerance ``1e-13``.
Weak couplings beside strong fields would otherwise give a tiny ``tau_7`` where float64 cannot
resolve the influences: a Potts chain with couplings ``1e-9`` and fields ``1.8`` at
``tau = 3e-9`` failed Theorem 3's tolerance, and at ``tau = 1.8e-4`` Lemma 6's, by rounding
alone.

Needs Hypothesis (the ``test`` extra).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

import networkx as nx
import numpy as np
from hypothesis import strategies as st

from glauber.core.restrict import RestrictedModel
from glauber.exact.basins import NamedMask
from glauber.exact.chain import ExactChain
from glauber.testing import FAMILIES, basins, model_specs, sample
from glauber.toy_models import ModelSpec
from glauber.toy_models.draws import floats_in
from glauber.verification.battery import perfect_trap
from glauber.verification.instances import ChainInstance, IsingData

#: Largest state space of a random instance (every statement is exact and fast up to here).
MAX_STATES = 128
#: Ranges of ``f`` in ``tau = f * tau_7`` (high and low temperature).
HIGH, LOW = (1.05, 4.0), (0.35, 1.0)
#: ``tau >= max(largest score difference, largest |score|) / SPREAD`` (see the module docstring).
SPREAD = 30.0

_TEXTBOOK = {"coupling_modes": ("uniform",), "coupling": (0.1, 2.0), "field_modes": ("zero",)}

#: The Ising sub-families of the textbook oracles: ``(families argument, min_sites)``.
_TEXTBOOK_GROUPS = {
    "ising-dobrushin": ({"ising": dict(_TEXTBOOK)}, 2),
    "ising-cycle": ({"ising": {**_TEXTBOOK, "graphs": ("cycle",)}}, 3),
}


def _groups() -> dict[str, tuple[dict[str, dict[str, Any]], int]]:
    """One group per family of :data:`glauber.toy_models.FAMILIES`, in its order, with the
    textbook groups before the restricted windows (where they stood when they were added)."""
    groups: dict[str, tuple[dict[str, dict[str, Any]], int]] = {}
    for name in FAMILIES:
        if name == "restricted":
            groups.update(_TEXTBOOK_GROUPS)
        groups[name] = ({name: {}}, 2)
    return groups


#: Group name -> ``(families argument of model_specs, min_sites)``. Each group's draws are
#: seeded by its position, so a family registered later goes last (the others keep their draws).
GROUPS = _groups()


@dataclass(frozen=True)
class RandomDraw:
    """One drawn model of a group: its spec, temperature factors and count basins."""

    group: str
    spec: ModelSpec
    high: float
    low: float
    basins: tuple[NamedMask, ...]


def _draws(group: str) -> st.SearchStrategy[RandomDraw]:
    families, min_sites = GROUPS[group]
    specs = model_specs(MAX_STATES, families=families, min_sites=min_sites)

    @st.composite
    def draw(draw: st.DrawFn) -> RandomDraw:
        spec = draw(specs)
        found = draw(st.lists(basins(spec, kinds=("count",)), min_size=2, max_size=2))
        return RandomDraw(group, spec, draw(floats_in(HIGH)), draw(floats_in(LOW)), tuple(found))

    return draw()


def _is_cycle(J: np.ndarray) -> bool:
    graph = nx.from_numpy_array(J != 0.0)
    n = J.shape[0]
    return n >= 3 and graph.number_of_edges() == n and all(d == 2 for _, d in graph.degree()) \
        and nx.is_connected(graph)


def _ising_data(model: Any, spec: ModelSpec) -> IsingData | None:
    """The spin couplings of a spin family (its record's ``spin_couplings``), else None."""
    spin_couplings = FAMILIES[spec.family].spin_couplings
    if spin_couplings is None:
        return None
    J, h = (np.asarray(v, dtype=np.float64) for v in spin_couplings(model))
    edges = J[J != 0.0]
    uniform = (float(edges[0]) if edges.size and np.array_equal(J, J.T)
               and np.all(edges == edges[0]) and edges[0] > 0 else None)
    return IsingData(J, not np.any(h), uniform, _is_cycle(J))


def _log_weight(model: Any, spec: ModelSpec) -> Callable[[np.ndarray], np.ndarray] | None:
    """The closed-form log weight of a compatible model (None if it has none).

    A restricted window of a Gibbs model is the Glauber chain of the conditional law given its
    frozen sites, ``pi(w) ∝ exp(E(x(w)) / tau)`` with ``x(w)`` the context with ``w`` in place.
    """
    if not spec.compatible:
        return None
    if isinstance(model, RestrictedModel):
        full = getattr(model.model, "log_weight", None)
        return None if full is None else lambda states: full(model.embed(states))
    return getattr(model, "log_weight", None)


def _instances(d: RandomDraw, index: int) -> Iterator[ChainInstance]:
    model = d.spec.build()
    chain = ExactChain(model, 1.0)
    threshold = float(chain.oscillation_matrix().sum(axis=1).max()) / 4.0
    scores = chain.scores()
    spread = float((scores.max(axis=-1) - scores.min(axis=-1)).max())
    floor = max(spread, float(np.abs(scores).max())) / SPREAD
    log_weight = _log_weight(model, d.spec)
    data = _ising_data(model, d.spec)
    found = d.basins + perfect_trap(model)
    for factor in (d.high, d.low):
        tau = max(factor * threshold, floor) if threshold > 1e-12 else max(factor, floor)
        yield ChainInstance(f"{d.group}#{index} {d.spec!r} @ tau={tau!r}", d.group, model,
                            tau, log_weight=log_weight, ising=data, basins=found)


def build_random_battery(examples: int, seed: int = 0) -> list[ChainInstance]:
    """``examples`` random models per group, each at two temperatures (see the module docstring).

    Parameters
    ----------
    examples : int
        Models per group (>= 1).
    seed : int
        Seed of the draws (the same seed gives the same battery).

    Returns
    -------
    list of ChainInstance
    """
    out: list[ChainInstance] = []
    for k, group in enumerate(GROUPS):
        for index, d in enumerate(sample(_draws(group), examples, seed=seed * 1000 + k)):
            out.extend(_instances(d, index))
    return out


__all__ = ["GROUPS", "HIGH", "LOW", "MAX_STATES", "RandomDraw", "SPREAD", "build_random_battery"]
