"""Named models that load without a network: ``load_model(name, **kw)``.

``MODEL_REGISTRY`` maps a name to a loader ``loader(**kw) -> ConditionalModel``. The built-in
models (:data:`BUILTIN_MODELS`) are entries like any other, whose loaders import their module on
first use (so listing names imports neither torch-heavy loaders nor the Sapiens converter);
users add theirs with :func:`register_model`. No module registers itself on import: this module
is the one catalogue, and nothing it loads imports it back.
"""

from __future__ import annotations

import difflib
import importlib
import os
from typing import Any, Callable

from glauber.errors import InvalidParameterError, UnknownModelError

Loader = Callable[..., Any]

#: Prefix that asks :func:`load_model` to fetch a model from the Hugging Face hub by name.
HUB_PREFIX = "hf:"
#: The built-in offline models: name -> (module, loader function, keyword arguments).
BUILTIN_MODELS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "antiberty": ("glauber.mlm_backend.antiberty", "load_antiberty", {}),
    "sapiens-vh": ("glauber.mlm_backend.sapiens", "load_sapiens", {"chain": "vh"}),
    "sapiens-vl": ("glauber.mlm_backend.sapiens", "load_sapiens", {"chain": "vl"}),
    "rxnmapper": ("glauber.mlm_backend.reactions", "load_rxnmapper", {}),
    "rxnfp": ("glauber.mlm_backend.reactions", "load_rxnfp", {}),
    "sceptr": ("glauber.mlm_backend.sceptr", "load_sceptr", {}),
    "sceptr-cdr3": ("glauber.mlm_backend.sceptr", "load_sceptr",
                    {"variant": "cdr3_only_mlm_only"}),
    "tiny-gpt2-control": ("glauber.mlm_backend.autoregressive", "tiny_gpt2_control", {}),
}


def _lazy_loader(module: str, function: str, preset: dict[str, Any]) -> Loader:
    """A loader that imports ``module`` on its first call and calls ``function(**preset, **kw)``."""

    def load(**kw: Any) -> Any:
        return getattr(importlib.import_module(module), function)(**preset, **kw)

    return load


MODEL_REGISTRY: dict[str, Loader] = {
    name: _lazy_loader(*entry) for name, entry in BUILTIN_MODELS.items()
}


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
        If the name is none of those, or names a checkpoint that cannot be loaded; the message
        lists the registered offline names.
    """
    if name in MODEL_REGISTRY:
        return MODEL_REGISTRY[name](**kw)
    if name.startswith(HUB_PREFIX) or os.path.isdir(name):
        from glauber.mlm_backend.hf_masked_lm import HFMaskedLM

        try:
            return HFMaskedLM(name.removeprefix(HUB_PREFIX), **kw)
        except UnknownModelError as exc:
            raise UnknownModelError(
                f"{exc}; models available offline: {', '.join(available_models())}"
            ) from exc
    close = difflib.get_close_matches(name.lower(), list(MODEL_REGISTRY), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise UnknownModelError(
        f"unknown model {name!r}.{hint} Models available offline: "
        f"{', '.join(sorted(MODEL_REGISTRY))}; or pass a local checkpoint directory, or "
        f"'{HUB_PREFIX}<hub name>' to download a masked LM from the Hugging Face hub"
    )


__all__ = [
    "BUILTIN_MODELS",
    "HUB_PREFIX",
    "MODEL_REGISTRY",
    "available_models",
    "load_model",
    "register_model",
]
