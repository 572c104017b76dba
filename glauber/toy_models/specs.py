"""Toy models from short text specifications, for the command line.

A specification is ``family`` or ``family:key=value,key=value``, e.g. ``ising-cycle:n=8,J=1.0``,
``potts-cycle:n=6,q=3`` or ``curie-weiss:n=8,alpha=1.5``. Keys left out take the defaults of
:data:`TOY_FAMILIES`. The model returned carries ``.name``, the canonical specification with every
key spelled out in a fixed order, so ``parse_toy_spec(model.name)`` rebuilds the same model.
"""

from __future__ import annotations

from typing import Any, Callable

import networkx as nx

from glauber.core.validation import check_positive_int
from glauber.errors import InvalidParameterError, UnknownModelError
from glauber.toy_models.base import ToyModel
from glauber.toy_models.curie_weiss import CurieWeissModel
from glauber.toy_models.ising import AsymmetricIsingModel, IsingModel
from glauber.toy_models.planted import PlantedBasinModel
from glauber.toy_models.potts import PottsModel


def _cycle(n: int) -> nx.Graph:
    if check_positive_int(n, "n") < 3:
        raise InvalidParameterError(f"a cycle needs n >= 3 sites, got n={n}; use a path instead")
    return nx.cycle_graph(n)


def _ising_cycle(n: int, J: float, h: float) -> ToyModel:
    return IsingModel(_cycle(n), coupling=J, field=h)


def _ising_path(n: int, J: float, h: float) -> ToyModel:
    return IsingModel(nx.path_graph(check_positive_int(n, "n")), coupling=J, field=h)


def _ising_grid(rows: int, cols: int, J: float, h: float) -> ToyModel:
    graph = nx.grid_2d_graph(check_positive_int(rows, "rows"), check_positive_int(cols, "cols"))
    return IsingModel(graph, coupling=J, field=h)


def _ising_star(n: int, J: float, h: float, hub_h: float) -> ToyModel:
    graph = nx.star_graph(check_positive_int(n, "n") - 1)  # hub 0 and n - 1 leaves
    field = {v: h for v in graph.nodes}
    field[0] = h + hub_h
    return IsingModel(graph, coupling=J, field=field)


def _ising_complete(n: int, J: float, h: float) -> ToyModel:
    return IsingModel(nx.complete_graph(check_positive_int(n, "n")), coupling=J, field=h)


def _potts_cycle(n: int, q: int, J: float) -> ToyModel:
    return PottsModel(_cycle(n), q, coupling=J)


def _asym_ising(n: int, seed: int, asym: float, scale: float, h: float) -> ToyModel:
    return AsymmetricIsingModel.random(n, rng=seed, scale=scale, asym=asym, field=h)


def _curie_weiss(n: int, alpha: float, h: float) -> ToyModel:
    return CurieWeissModel(n, alpha, field=h)


def _planted(
    n: int, q: int, token: int, strength: float, seed: int | None, scale: float
) -> ToyModel:
    if seed is None:
        return PlantedBasinModel(n, q, token=token, strength=strength)
    return PlantedBasinModel.with_random_base(
        n, q, rng=seed, scale=scale, token=token, strength=strength
    )


#: family name -> (builder, default keyword arguments in canonical order, one-line help).
TOY_FAMILIES: dict[str, tuple[Callable[..., ToyModel], dict[str, Any], str]] = {
    "ising-cycle": (
        _ising_cycle, {"n": 8, "J": 1.0, "h": 0.0},
        "Ising on the n-cycle (LPW Theorem 15.5 gives its relaxation time), coupling J, field h",
    ),
    "ising-path": (_ising_path, {"n": 8, "J": 1.0, "h": 0.0}, "Ising on the path of n sites"),
    "ising-grid": (
        _ising_grid, {"rows": 3, "cols": 3, "J": 1.0, "h": 0.0},
        "Ising on the rows x cols grid (free boundary)",
    ),
    "ising-star": (
        _ising_star, {"n": 6, "J": 1.0, "h": 0.0, "hub_h": 0.0},
        "Ising on a star: hub site 0 and n-1 leaves; field h everywhere plus hub_h on the hub",
    ),
    "ising-complete": (
        _ising_complete, {"n": 6, "J": 1.0, "h": 0.0}, "Ising on the complete graph K_n",
    ),
    "potts-cycle": (
        _potts_cycle, {"n": 6, "q": 3, "J": 1.0}, "q-colour Potts on the n-cycle, coupling J",
    ),
    "asym-ising": (
        _asym_ising, {"n": 6, "seed": 0, "asym": 0.5, "scale": 1.0, "h": 0.0},
        "random couplings J = scale (S + asym A) (asym=0: symmetric; >0: incompatible)",
    ),
    "curie-weiss": (
        _curie_weiss, {"n": 8, "alpha": 1.5, "h": 0.0},
        "Curie-Weiss: complete graph, pair coupling alpha/n (alpha > 1: slow, bimodal)",
    ),
    "planted": (
        _planted,
        {"n": 8, "q": 3, "token": 0, "strength": 4.0, "seed": None, "scale": 1.0},
        "self-reinforcing token (the '!' basin); seed=none: zero base scores, else "
        "Normal(0, scale^2) base scores",
    ),
}


def describe_toy_families() -> str:
    """One line per family: the canonical default specification and its help."""
    return "\n".join(
        f"{_canonical(family, defaults)}\n    {text}"
        for family, (_, defaults, text) in TOY_FAMILIES.items()
    )


def _format(value: Any) -> str:
    if value is None:
        return "none"
    return repr(float(value)) if isinstance(value, float) else str(value)


def _canonical(family: str, values: dict[str, Any]) -> str:
    return family + ":" + ",".join(f"{k}={_format(v)}" for k, v in values.items())


def _parse_value(family: str, key: str, text: str, default: Any) -> Any:
    try:
        if isinstance(default, float):
            return float(text)
        if default is None and text.lower() == "none":
            return None
        return int(text)
    except ValueError:
        kind = "a number" if isinstance(default, float) else "an integer"
        extra = " or 'none'" if default is None else ""
        raise InvalidParameterError(
            f"{family}: {key}={text!r} is not {kind}{extra}; e.g. {key}={_format(default)}"
        ) from None


def parse_toy_spec(spec: str) -> ToyModel:
    """Build a toy model from ``family[:key=value,...]``.

    Parameters
    ----------
    spec : str
        E.g. ``"ising-grid:rows=3,cols=3"``, ``"asym-ising:n=6,seed=0,asym=0.5"``,
        ``"planted:n=8,q=3,strength=4"``. See :data:`TOY_FAMILIES` for families and keys.

    Returns
    -------
    ToyModel
        With ``.name`` set to the canonical specification (all keys, fixed order).

    Raises
    ------
    UnknownModelError
        Unknown family or key (the message lists the choices), or a malformed item.
    InvalidParameterError
        A value of the wrong type, a repeated key, or a value the model rejects.

    Examples
    --------
    >>> parse_toy_spec("curie-weiss:n=4").name
    'curie-weiss:n=4,alpha=1.5,h=0.0'
    """
    if not isinstance(spec, str):
        raise UnknownModelError(f"a toy specification is a string, got {type(spec).__name__}")
    family, _, rest = spec.strip().partition(":")
    family = family.strip()
    if family not in TOY_FAMILIES:
        raise UnknownModelError(
            f"unknown toy model family {family!r}; choose one of: {', '.join(TOY_FAMILIES)} "
            "(e.g. 'ising-cycle:n=8,J=1.0')"
        )
    builder, defaults, _ = TOY_FAMILIES[family]
    values = dict(defaults)
    seen: set[str] = set()
    for item in filter(None, (piece.strip() for piece in rest.split(","))):
        key, eq, text = (part.strip() for part in item.partition("="))
        if key not in defaults:
            raise UnknownModelError(
                f"{family}: unknown key {key!r}; its keys are {', '.join(defaults)}"
            )
        if not eq or not text:
            raise UnknownModelError(f"{family}: item {item!r} must read key=value")
        if key in seen:
            raise InvalidParameterError(f"{family}: key {key!r} is given twice")
        seen.add(key)
        values[key] = _parse_value(family, key, text, defaults[key])
    model = builder(**values)
    model.name = _canonical(family, values)
    return model


__all__ = ["TOY_FAMILIES", "describe_toy_families", "parse_toy_spec"]
