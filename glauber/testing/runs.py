"""How :mod:`glauber.testing` runs Hypothesis: quiet, seeded, and writing nothing to the cwd.

Hypothesis keeps an example database and a cache of constants under ``.hypothesis/`` in the
working directory. Runs made here use no example database unless one is passed, and
:func:`storage_outside_cwd` points Hypothesis's storage at a per-user temporary folder for the
duration of a run (unless the user chose a folder with ``HYPOTHESIS_STORAGE_DIRECTORY`` or
``set_hypothesis_home_dir``).
"""

from __future__ import annotations

import contextlib
import getpass
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator, Sequence

from hypothesis import HealthCheck, Phase, Verbosity, configuration, settings
from hypothesis.database import ExampleDatabase

#: Where Hypothesis stores its caches during runs of :mod:`glauber.testing`.
STORAGE = Path(tempfile.gettempdir()) / f"glauber-hypothesis-{getpass.getuser()}"

_HOME = "__hypothesis_home_directory"


@contextlib.contextmanager
def storage_outside_cwd() -> Iterator[None]:
    """Point Hypothesis's storage at :data:`STORAGE` while the block runs, then restore it."""
    chosen = os.getenv("HYPOTHESIS_STORAGE_DIRECTORY") or getattr(configuration, _HOME, None)
    setter = getattr(configuration, "set_hypothesis_home_dir", None)
    if chosen is not None or setter is None:
        yield
        return
    setter(STORAGE)
    try:
        yield
    finally:
        setter(None)


def run_settings(max_examples: int, phases: Sequence[Phase],
                 database: ExampleDatabase | None = None, **extra: Any) -> settings:
    """Settings of a quiet run: no deadline, no health checks, no database unless given."""
    return settings(max_examples=int(max_examples), database=database, deadline=None,
                    phases=list(phases), suppress_health_check=list(HealthCheck),
                    verbosity=Verbosity.quiet, **extra)


__all__ = ["STORAGE", "run_settings", "storage_outside_cwd"]
