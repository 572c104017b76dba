"""One record per toy family: :class:`ToyFamily`, and :class:`ModelSpec`, a drawn model as data.

Each family module of :mod:`glauber.toy_models` (``ising``, ``potts``, ...) ends with its
record: the family's name, its constructor from exact parameters, its Hypothesis draw with the
draw's options (parameter ranges and modes) and their defaults, its size limits, whether its
models are compatible (a property of each spec, decided exactly), and its command-line presets
(``ising-cycle:n=8,J=1.0``). The package ``__init__`` lists the records once, in
:data:`glauber.toy_models.FAMILIES`, and registers that table here (:func:`register_families`),
so the modules below the package (:class:`ModelSpec`, the restricted family, the presets) read it
through :func:`registered_families` without importing the package back; everything else reads
:data:`~glauber.toy_models.FAMILIES`:
:func:`glauber.toy_models.parse_toy_spec` (the command line), :func:`glauber.testing.models`
(the Hypothesis strategies) and ``glauber verify --examples`` (one group per family). Adding a
family is its module, one line of the ``__init__``, and a test (docs/architecture.md, "How to add
a toy model").

A :class:`ModelSpec` is the family, the sizes and every parameter as Python literals; its ``repr``
is Python that rebuilds the model bit for bit (``eval(repr(spec)).build()``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, NamedTuple

import numpy as np

from glauber.errors import InvalidParameterError, UnknownModelError


class Preset(NamedTuple):
    """A command-line name of a family: ``name:key=value,...`` with these keys.

    Attributes
    ----------
    build : callable
        ``build(**values) -> model``, one keyword per key of ``defaults``.
    defaults : dict
        Every key with its default, in the canonical order of the model's ``.name``. A float
        default makes the key a number, an int default an integer, ``None`` an integer or
        ``none``.
    help : str
        One line for ``--help`` and the error messages.
    """

    build: Callable[..., Any]
    defaults: dict[str, Any]
    help: str


def _always(_: Any) -> bool:
    return True


@dataclass(frozen=True)
class ToyFamily:
    """A toy family, declared once in its model's module (see the module docstring).

    Attributes
    ----------
    name : str
        The family of its :class:`ModelSpec` (``"ising"``).
    build : callable
        ``build(n, q, **params) -> model``: the constructor from the exact parameters a
        :class:`ModelSpec` stores (numbers and nested tuples).
    draw : callable
        ``draw(draw_fn, n, q, options) -> params``: the Hypothesis draw of the parameters once
        the sizes are drawn (it imports Hypothesis itself, so that this package does not need
        it). Parameters are drawn with 0 inside their range, so a counterexample shrinks towards
        zero fields and small couplings.
    options : mapping or callable
        The draw's options and their defaults (ranges are ``(lo, hi)`` pairs, modes tuples of
        names); a callable returning them where they depend on the other families.
    min_sites : int
        Fewest sites the family allows.
    max_q : int or None
        Largest vocabulary (2 for the spin families; None: any).
    compatible : callable
        ``compatible(spec) -> bool`` for a spec with ``n >= 2``: whether a joint law has the
        model's conditionals (Theorem 3), decided exactly.
    compatible_draws : callable
        ``compatible_draws(options) -> bool or None``: whether every model drawn with these
        options is compatible (True), none is (False, for ``n >= 2``), or it varies (None).
    q_limit : callable, optional
        ``q_limit(options) -> int or None``: the largest vocabulary where it depends on the
        options (default: ``max_q``).
    presets : mapping
        Command-line names of the family (:class:`Preset`); none for a family only drawn.
    spin_couplings : callable, optional
        ``spin_couplings(model) -> (J, h)`` for spin families (tokens 0/1 are spins -1/+1, score
        of spin ``s`` at site ``i`` is ``s (h_i + sum_k J_ik s_k)``): the textbook oracles of
        ``glauber verify`` (Levin–Peres–Wilmer Theorems 15.1 and 15.5) read them.
    """

    name: str
    build: Callable[..., Any]
    draw: Callable[[Any, int, int, Mapping[str, Any]], dict[str, Any]]
    options: Mapping[str, Any] | Callable[[], Mapping[str, Any]]
    min_sites: int = 1
    max_q: int | None = None
    compatible: Callable[[ModelSpec], bool] = _always
    compatible_draws: Callable[[Mapping[str, Any]], bool | None] = _always
    q_limit: Callable[[Mapping[str, Any]], int | None] | None = None
    presets: Mapping[str, Preset] = field(default_factory=dict)
    spin_couplings: Callable[[Any], tuple[np.ndarray, np.ndarray]] | None = None

    @property
    def defaults(self) -> dict[str, Any]:
        """The draw's options with their default values."""
        return dict(self.options() if callable(self.options) else self.options)

    def largest_q(self, options: Mapping[str, Any]) -> int | None:
        """The largest vocabulary of a model drawn with ``options`` (None: any)."""
        return self.max_q if self.q_limit is None else self.q_limit(options)

    def draw_spec(self, draw: Any, n: int, q: int, options: Mapping[str, Any]) -> ModelSpec:
        """A :class:`ModelSpec` of this family on ``n`` sites and ``q`` tokens, drawn."""
        return ModelSpec(self.name, n, q, **self.draw(draw, n, q, options))


class FamilyTable(Mapping[str, ToyFamily]):
    """The registered families by name, in shrinking order (Hypothesis prefers the first).

    ``glauber verify --examples`` seeds each family's draws by its position, so a family added
    later goes last and the others keep their draws.

    Raises
    ------
    InvalidParameterError
        If two families, or two presets, share a name.
    """

    def __init__(self, *families: ToyFamily) -> None:
        self._families: dict[str, ToyFamily] = {}
        self._presets: dict[str, Preset] = {}
        for family in families:
            if family.name in self._families:
                raise InvalidParameterError(f"two toy families are named {family.name!r}")
            self._families[family.name] = family
            for name, preset in family.presets.items():
                if name in self._presets:
                    raise InvalidParameterError(f"two toy presets are named {name!r}")
                self._presets[name] = preset

    def __getitem__(self, name: str) -> ToyFamily:
        return self._families[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._families)

    def __len__(self) -> int:
        return len(self._families)

    @property
    def presets(self) -> dict[str, Preset]:
        """Every command-line preset, family by family."""
        return dict(self._presets)


#: The registered table: :data:`glauber.toy_models.FAMILIES`, once the package is imported.
_REGISTERED: list[FamilyTable] = []


def register_families(table: FamilyTable) -> FamilyTable:
    """Make ``table`` the families every :class:`ModelSpec` is built from, and return it.

    The package ``__init__`` calls it once, on :data:`glauber.toy_models.FAMILIES`; importing
    any module of the package runs the ``__init__`` first, so the table is always registered
    where a spec is made.
    """
    _REGISTERED[:] = [table]
    return table


def registered_families() -> FamilyTable:
    """The table :func:`register_families` registered (:data:`glauber.toy_models.FAMILIES`)."""
    if not _REGISTERED:
        raise RuntimeError("no toy family table is registered: import glauber.toy_models")
    return _REGISTERED[0]


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
        f"tuple of those, got {type(value).__name__}"
    )


class ModelSpec:
    """Family, sizes and parameters of a toy model; ``repr`` is a Python expression rebuilding it.

    Parameters
    ----------
    family : str
        One of :data:`glauber.toy_models.FAMILIES` (``"ising"``, ``"potts"``, ``"asym-ising"``,
        ``"curie-weiss"``, ``"planted"``, ``"random-table"``, ``"random-joint"``,
        ``"restricted"``, ...).
    n, q : int
        Sites and vocabulary size.
    **params
        The family's parameters, as numbers or nested tuples (lists and arrays are converted);
        each family's ``build`` documents its own:

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
        families = registered_families()
        if family not in families:
            raise UnknownModelError(
                f"unknown model family {family!r}; choose from {', '.join(families)}"
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

        A single site is always compatible; otherwise the family's ``compatible`` decides.
        """
        return self.n == 1 or bool(registered_families()[self.family].compatible(self))

    def label(self) -> str:
        """A short printable label, ``family:n=..,q=..``."""
        return f"{self.family}:n={self.n},q={self.q}"

    def build(self) -> Any:
        """The model, with ``model.spec = self`` and ``model.name = self.label()``.

        Raises
        ------
        GlauberInputError
            If a parameter is invalid for the family (the model's own validation).
        """
        try:
            model = registered_families()[self.family].build(self.n, self.q, **self.params)
        except TypeError as exc:
            raise InvalidParameterError(
                f"{self!r}: wrong parameters for family {self.family!r} ({exc}); see the "
                "ModelSpec docstring for each family's parameters"
            ) from exc
        model.spec = self
        model.name = self.label()
        return model


__all__ = [
    "FamilyTable", "ModelSpec", "Preset", "ToyFamily", "register_families", "registered_families",
]
