"""Named models that load without a network: ``load_model(name, **kw)``.

``MODEL_REGISTRY`` maps a name to a loader ``loader(**kw) -> ConditionalModel``. Other modules
register theirs with :func:`register_model` when imported; the modules in
:data:`PLUGIN_MODULES` are imported on the first lookup so that their models appear here
without this module importing them eagerly.
"""

from __future__ import annotations

import difflib
import importlib
import os
from typing import Any, Callable

from glauber.errors import InvalidParameterError, UnknownModelError

Loader = Callable[..., Any]

#: Modules that register further offline models when imported (e.g. the Sapiens checkpoints).
PLUGIN_MODULES = ("glauber.mlm_backend.sapiens",)
#: Prefix that asks :func:`load_model` to fetch a model from the Hugging Face hub by name.
HUB_PREFIX = "hf:"


def _antiberty(**kw: Any) -> Any:
    from glauber.mlm_backend.antiberty import load_antiberty

    return load_antiberty(**kw)


def _tiny_gpt2_control(**kw: Any) -> Any:
    from glauber.mlm_backend.autoregressive import tiny_gpt2_control

    return tiny_gpt2_control(**kw)


MODEL_REGISTRY: dict[str, Loader] = {
    "antiberty": _antiberty,
    "tiny-gpt2-control": _tiny_gpt2_control,
}
_plugins_loaded = False


def register_model(name: str, loader: Loader, replace: bool = False) -> None:
    """Register ``loader(**kw) -> ConditionalModel`` under ``name`` (lower case, no spaces).

    Raises
    ------
    InvalidParameterError
        If the name is empty, has whitespace or upper case, starts with ``"hf:"``, or is
        taken (unless ``replace=True``).
    """
    if not name or name != name.strip().lower() or any(c.isspace() for c in name):
        raise InvalidParameterError(f"model names are lower case without spaces, got {name!r}")
    if name.startswith(HUB_PREFIX):
        raise InvalidParameterError(f"model names may not start with {HUB_PREFIX!r}")
    if name in MODEL_REGISTRY and not replace:
        raise InvalidParameterError(f"model {name!r} is already registered; pass replace=True")
    MODEL_REGISTRY[name] = loader


def available_models() -> list[str]:
    """Sorted names of the registered (offline) models."""
    _load_plugins()
    return sorted(MODEL_REGISTRY)


def load_model(name: str, **kw: Any) -> Any:
    """Load a model by registered name, local directory, or ``"hf:<hub name>"``.

    Parameters
    ----------
    name : str
        A registered name (see :func:`available_models`), a local directory holding an
        ``AutoModelForMaskedLM`` checkpoint and its tokenizer, or ``"hf:"`` followed by a hub
        name (downloaded by ``transformers`` only because it was asked for).
    **kw
        Passed to the loader (e.g. ``n``, ``device``).

    Raises
    ------
    UnknownModelError
        If the name is none of those; the message lists the registered offline names.
    """
    _load_plugins()
    if name in MODEL_REGISTRY:
        return MODEL_REGISTRY[name](**kw)
    if name.startswith(HUB_PREFIX) or os.path.isdir(name):
        from glauber.mlm_backend.hf_masked_lm import HFMaskedLM

        return HFMaskedLM(name.removeprefix(HUB_PREFIX), **kw)
    close = difflib.get_close_matches(name.lower(), list(MODEL_REGISTRY), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise UnknownModelError(
        f"unknown model {name!r}.{hint} Models available offline: "
        f"{', '.join(sorted(MODEL_REGISTRY))}; or pass a local checkpoint directory, or "
        f"'{HUB_PREFIX}<hub name>' to download a masked LM from the Hugging Face hub"
    )


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for module in PLUGIN_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
