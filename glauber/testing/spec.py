"""A drawn toy model as plain data: :class:`ModelSpec`, whose ``repr`` is Python that rebuilds it.

Every model drawn by :func:`glauber.testing.models` carries its ``spec`` (``model.spec``): the
family, the sizes and every parameter as Python literals (floats print with ``repr``, which
round-trips exactly), so ``eval(repr(spec)).build()`` is the same model, bit for bit. Random
tables and random joints are stored as a seed and a scale (their tables are drawn from
``numpy.random.default_rng(seed)``); every other family stores its couplings and fields.
"""

from __future__ import annotations

from typing import Any, Callable

import networkx as nx
import numpy as np

from glauber.core.restrict import RestrictedModel, restrict
from glauber.errors import InvalidParameterError, UnknownModelError
from glauber.toy_models.base import ToyModel
from glauber.toy_models.curie_weiss import CurieWeissModel
from glauber.toy_models.ising import AsymmetricIsingModel, IsingModel
from glauber.toy_models.planted import PlantedBasinModel
from glauber.toy_models.potts import PottsModel
from glauber.toy_models.random_models import RandomJointModel, RandomTableModel


def _literal(value: Any) -> Any:
    """``value`` as hashable Python literals: lists and arrays become tuples, numpy scalars
    become ``int``/``float``."""
    if isinstance(value, np.ndarray):
        return _literal(value.tolist())
    if isinstance(value, (list, tuple)):
        return tuple(_literal(v) for v in value)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if value is None or isinstance(value, (str, ModelSpec)):
        return value
    raise InvalidParameterError(
        f"a ModelSpec parameter must be a number, a string, None, a ModelSpec or a (nested) "
        f"tuple of those, "
        f"got {type(value).__name__}"
    )


def _graph(n: int, edges: tuple[tuple[int, int], ...]) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges)
    return graph


def _ising(n: int, q: int, edges: tuple, couplings: tuple, field: tuple) -> ToyModel:
    return IsingModel(_graph(n, edges), coupling=dict(zip(edges, couplings)),
                      field=np.array(field, dtype=np.float64))


def _potts(n: int, q: int, edges: tuple, couplings: tuple, field: tuple) -> ToyModel:
    return PottsModel(_graph(n, edges), q, coupling=dict(zip(edges, couplings)),
                      field=np.array(field, dtype=np.float64))


def _asym_ising(n: int, q: int, J: tuple, field: tuple) -> ToyModel:
    return AsymmetricIsingModel(np.array(J, dtype=np.float64),
                                field=np.array(field, dtype=np.float64))


def _curie_weiss(n: int, q: int, alpha: float, field: float) -> ToyModel:
    return CurieWeissModel(n, alpha, field=field)


def _planted(n: int, q: int, token: int, strength: float, base: tuple) -> ToyModel:
    return PlantedBasinModel(n, q, token=token, strength=strength, base=np.array(base))


def _random_table(n: int, q: int, seed: int, scale: float, bias: float) -> ToyModel:
    return RandomTableModel(n, q, seed, scale=scale, bias=bias)


def _random_joint(n: int, q: int, seed: int, scale: float) -> ToyModel:
    return RandomJointModel(n, q, seed, scale=scale)


def _restricted(n: int, q: int, base: ModelSpec, context: tuple, sites: tuple) -> RestrictedModel:
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


#: family -> builder ``(n, q, **params) -> model``.
BUILDERS: dict[str, Callable[..., ToyModel | RestrictedModel]] = {
    "ising": _ising,
    "curie-weiss": _curie_weiss,
    "potts": _potts,
    "planted": _planted,
    "random-joint": _random_joint,
    "asym-ising": _asym_ising,
    "random-table": _random_table,
    "restricted": _restricted,
}


class ModelSpec:
    """Family, sizes and parameters of a toy model; ``repr`` is a Python expression rebuilding it.

    Parameters
    ----------
    family : str
        One of :data:`BUILDERS` (``"ising"``, ``"potts"``, ``"asym-ising"``, ``"curie-weiss"``,
        ``"planted"``, ``"random-table"``, ``"random-joint"``, ``"restricted"``).
    n, q : int
        Sites and vocabulary size.
    **params
        The family's parameters, as numbers or nested tuples (lists and arrays are converted):

        * ``ising``: ``edges`` (site pairs), ``couplings`` (one per edge), ``field`` (per site);
        * ``potts``: ``edges``, ``couplings``, ``field`` (``n`` rows of ``q`` values);
        * ``asym-ising``: ``J`` (``n`` rows of ``n``, zero diagonal), ``field`` (per site);
        * ``curie-weiss``: ``alpha``, ``field`` (one value);
        * ``planted``: ``token``, ``strength``, ``base`` (``q`` values);
        * ``random-table``: ``seed``, ``scale``, ``bias``; ``random-joint``: ``seed``, ``scale``;
        * ``restricted``: ``base`` (the :class:`ModelSpec` of the full model, another family),
          ``context`` (one full state), ``sites`` (the ``n`` resampled sites, in window order):
          :func:`glauber.core.restrict.restrict` of the base model.

    Raises
    ------
    UnknownModelError
        If the family is unknown.

    Examples
    --------
    >>> spec = ModelSpec("curie-weiss", n=3, q=2, alpha=1.5, field=0.0)
    >>> spec
    ModelSpec('curie-weiss', n=3, q=2, alpha=1.5, field=0.0)
    >>> eval(repr(spec)) == spec, spec.build().n, spec.compatible
    (True, 3, True)
    """

    __slots__ = ("family", "n", "q", "params")

    def __init__(self, family: str, n: int, q: int, **params: Any) -> None:
        if family not in BUILDERS:
            raise UnknownModelError(
                f"unknown model family {family!r}; choose from {', '.join(BUILDERS)}"
            )
        self.family = family
        self.n = int(n)
        self.q = int(q)
        self.params = {key: _literal(value) for key, value in params.items()}

    def __repr__(self) -> str:
        items = "".join(f", {key}={value!r}" for key, value in self.params.items())
        return f"ModelSpec({self.family!r}, n={self.n}, q={self.q}{items})"

    def _key(self) -> tuple:
        return (self.family, self.n, self.q, tuple(sorted(self.params.items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @property
    def num_states(self) -> int:
        """``q**n``."""
        return self.q**self.n

    @property
    def compatible(self) -> bool:
        """Whether the conditionals are those of a joint law (Theorem 3), decided exactly.

        A single site is always compatible; Ising, Potts, Curie–Weiss, planted and random
        joints are Gibbs; an asymmetric Ising model is compatible iff ``J`` is symmetric
        (Proposition 4: ``|delta| = 4 |J_ij - J_ji|``); a random table only when its scale is 0.
        A restricted window of a compatible model is compatible (its chain is the Glauber chain
        of the conditional law given the frozen sites); of an asymmetric Ising model, iff ``J``
        among the chosen sites is symmetric (the frozen sites only add a field); of a random
        table with ``n >= 2``, not (its window's scores are i.i.d. normals with scale > 0).
        """
        if self.n == 1:
            return True
        if self.family == "restricted":
            base = self.params["base"]
            if base.compatible:
                return True
            if base.family == "asym-ising":
                sites = list(self.params["sites"])
                J = np.array(base.params["J"])[np.ix_(sites, sites)]
                return bool(np.array_equal(J, J.T))
            return False
        if self.family == "asym-ising":
            J = np.array(self.params["J"])
            return bool(np.array_equal(J, J.T))
        if self.family == "random-table":
            return self.params["scale"] == 0.0
        return True

    def label(self) -> str:
        """A short printable label, ``family:n=..,q=..``."""
        return f"{self.family}:n={self.n},q={self.q}"

    def build(self) -> ToyModel | RestrictedModel:
        """The model, with ``model.spec = self`` and ``model.name = self.label()``.

        Raises
        ------
        GlauberInputError
            If a parameter is invalid for the family (the model's own validation).
        """
        try:
            model = BUILDERS[self.family](self.n, self.q, **self.params)
        except TypeError as exc:
            raise InvalidParameterError(
                f"{self!r}: wrong parameters for family {self.family!r} ({exc}); see the "
                "ModelSpec docstring for each family's parameters"
            ) from exc
        model.spec = self
        model.name = self.label()
        return model


__all__ = ["BUILDERS", "ModelSpec"]
