"""Toy models from short text specifications, for the command line.

A specification is ``preset`` or ``preset:key=value,key=value``, e.g. ``ising-cycle:n=8,J=1.0``,
``potts-cycle:n=6,q=3`` or ``curie-weiss:n=8,alpha=1.5``: a preset of a toy family
(:attr:`glauber.toy_models.family.ToyFamily.presets`; :func:`toy_presets` lists them all). Keys
left out take the preset's defaults. The model returned carries ``.name``, the canonical
specification with every key spelled out in a fixed order, so ``parse_toy_spec(model.name)``
rebuilds the same model.
"""

from __future__ import annotations

from typing import Any

from glauber.errors import InvalidParameterError, UnknownModelError
from glauber.toy_models.base import ToyModel
from glauber.toy_models.family import Preset, registered_families


def toy_presets() -> dict[str, Preset]:
    """Every command-line name of a toy family (the families' presets, in their order)."""
    return registered_families().presets


def describe_toy_families() -> str:
    """One line per family: the canonical default specification and its help."""
    return "\n".join(
        f"{_canonical(name, preset.defaults)}\n    {preset.help}"
        for name, preset in toy_presets().items()
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
        ``"planted:n=8,q=3,strength=4"``. See :func:`toy_presets` for the names and keys.

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
    presets = toy_presets()
    if family not in presets:
        raise UnknownModelError(
            f"unknown toy model family {family!r}; choose one of: {', '.join(presets)} "
            "(e.g. 'ising-cycle:n=8,J=1.0')"
        )
    builder, defaults, _ = presets[family]
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


__all__ = ["describe_toy_families", "parse_toy_spec", "toy_presets"]
