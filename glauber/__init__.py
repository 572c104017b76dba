"""glauber: exact and numerical certificates for Glauber dynamics on masked language models.

The names a user needs first, each imported on first use (``import glauber`` stays light):

- :func:`certify` (:mod:`glauber.certify`): every estimator on one model at one temperature;
- :class:`ExactChain` (:mod:`glauber.exact`): the exact chain of a small model or window;
- :func:`restrict` (:mod:`glauber.core.restrict`): chosen sites of a full sequence, the rest
  frozen;
- :func:`resolve_model` (:mod:`glauber.models`): a model from its name (``"antiberty"``,
  ``"ising-cycle:n=8"``, ``"antiberty@trastuzumab-vh[98-100]"``);
- :func:`load_antiberty` (:mod:`glauber.mlm_backend`): the embedded default masked LM.
"""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

#: Public name -> the module that defines it (imported lazily by :func:`__getattr__`).
_EXPORTS = {
    "certify": "glauber.certify",
    "ExactChain": "glauber.exact",
    "restrict": "glauber.core.restrict",
    "resolve_model": "glauber.models",
    "load_antiberty": "glauber.mlm_backend",
}

__all__ = ["ExactChain", "certify", "load_antiberty", "resolve_model", "restrict"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'glauber' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
