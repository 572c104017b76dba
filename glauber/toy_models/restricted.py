"""Restricted windows as a toy family: a model of another family on more sites, restricted by
:func:`glauber.core.restrict.restrict` to some of them, the others frozen at a context.

A drawn window has ``n`` resampled sites and ``m`` frozen ones (``m`` within the ``frozen`` range,
cut so that the full model has at most :data:`MAX_BASE_STATES` states; one frozen site is always
kept); its base is drawn from the families named in ``families`` (default: every other family,
with that family's own default options). Windows on the command line are named
``model@context[sites]`` (:mod:`glauber.models`), so this family has no preset.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from glauber.core.restrict import RestrictedModel, restrict
from glauber.errors import InvalidParameterError
from glauber.toy_models.family import ModelSpec, ToyFamily, registered_families

#: Largest state space of the full model behind a restricted window (its frozen sites are cut
#: to fit; one frozen site is always kept).
MAX_BASE_STATES = 4096


def _build(n: int, q: int, base: ModelSpec, context: tuple, sites: tuple) -> RestrictedModel:
    if not isinstance(base, ModelSpec) or base.family == "restricted":
        raise InvalidParameterError(
            f"a restricted model's base must be the ModelSpec of another family, got {base!r}"
        )
    if (base.q, len(sites)) != (q, n):
        raise InvalidParameterError(
            f"a restricted model has q = {q} and n = {n} sites, but its base has q = {base.q} "
            f"and {len(sites)} sites are chosen; make them agree"
        )
    return restrict(base.build(), np.array(context, dtype=np.int64), list(sites))


def _bases(options: Mapping[str, Any], q: int | None = None) -> list[str]:
    """The base families of a window (those with ``q`` tokens when ``q`` is given).

    Families of any ``q`` come first, so that the list for a larger ``q`` is a prefix of the
    list for ``q = 2``: a drawn index keeps its family while Hypothesis shrinks ``q``. The
    random joint, which draws the fewest values, comes first: Hypothesis shrinks towards it.
    """
    families = registered_families()
    names = sorted(options["families"], key=lambda name: (families[name].max_q is not None,
                                                          name != "random-joint"))
    return [name for name in names
            if q is None or families[name].max_q is None or q <= families[name].max_q]


def _draw(draw: Any, n: int, q: int, options: Mapping[str, Any]) -> dict[str, Any]:
    from hypothesis import strategies as st

    from glauber.toy_models.draws import largest_n

    lo, hi = options["frozen"]
    full = n + max(lo, min(draw(st.integers(lo, hi)), largest_n(q, MAX_BASE_STATES) - n))
    base = registered_families()[draw(st.sampled_from(_bases(options, q)))]
    spec = base.draw_spec(draw, full, q, base.defaults)
    sites = draw(st.permutations(range(full)))[:n]  # shrinks towards the first n sites in order
    context = draw(st.lists(st.integers(0, q - 1), min_size=full, max_size=full))
    return {"base": spec, "context": context, "sites": sites}


def _options() -> dict[str, Any]:
    return {"families": tuple(name for name in registered_families() if name != "restricted"),
            "frozen": (1, 3)}


def _compatible(spec: ModelSpec) -> bool:
    """A window of a compatible model is compatible (its chain is the Glauber chain of the
    conditional law given the frozen sites); of a spin family, iff ``J`` among the chosen sites
    is symmetric (the frozen sites only add a field); of any other incompatible base, not (a
    random table's window has i.i.d. normal scores with scale > 0)."""
    base = spec.params["base"]
    if base.compatible:
        return True
    family = registered_families()[base.family]
    if family.spin_couplings is None:
        return False
    sites = list(spec.params["sites"])
    J = family.spin_couplings(base.build())[0][np.ix_(sites, sites)]
    return bool(np.array_equal(J, J.T))


def _q_limit(options: Mapping[str, Any]) -> int | None:
    limits = [registered_families()[name].max_q for name in _bases(options)]
    return None if None in limits else max(limits)


def _compatible_draws(options: Mapping[str, Any]) -> bool | None:
    families = registered_families()
    verdicts = {families[name].compatible_draws(families[name].defaults)
                for name in _bases(options)}
    return True if verdicts == {True} else None


#: The restricted family: windows of the other families.
RESTRICTED = ToyFamily(
    "restricted", _build, _draw, _options, min_sites=1, max_q=None, compatible=_compatible,
    compatible_draws=_compatible_draws, q_limit=_q_limit,
)


__all__ = ["MAX_BASE_STATES", "RESTRICTED"]
