"""The optional dependency of :mod:`glauber.testing`: Hypothesis (the ``test`` extra)."""

from __future__ import annotations

import importlib

from glauber.errors import MissingDependencyError

#: How to install what :mod:`glauber.testing` needs.
INSTALL_HINT = "pip install 'glauber[test]' (the test extra), or pip install hypothesis"


def require_hypothesis() -> None:
    """Import Hypothesis, or raise a typed error naming the ``test`` extra.

    Raises
    ------
    MissingDependencyError
        If Hypothesis is not installed.
    """
    try:
        importlib.import_module("hypothesis")
    except ImportError as exc:
        raise MissingDependencyError(
            f"glauber.testing needs Hypothesis, which is not installed: {INSTALL_HINT}"
        ) from exc


__all__ = ["INSTALL_HINT", "require_hypothesis"]
