"""How :mod:`glauber.testing` runs Hypothesis: quiet, seeded, reproducible, nothing in the cwd.

Two things Hypothesis does by default would break "same seed, same result" and leave files
behind, so every run made here (:func:`glauber.testing.check_bound`,
:func:`glauber.testing.sample`) happens inside :func:`isolated_run`:

* Hypothesis mixes numeric constants found in the *local* modules (files under the working
  directory that are loaded, e.g. an editable ``glauber`` checkout) into its draws, so the same
  seed draws different examples depending on the working directory and on what was imported.
  Inside :func:`isolated_run` that pool is empty (Hypothesis's built-in constants stay); its
  cache is cleared on entry and on exit, so the user's own Hypothesis tests are unaffected.
  This uses Hypothesis internals (``HypothesisProvider._local_constants``, ``CONSTANTS_CACHE``);
  on a Hypothesis without them nothing is changed and runs are reproducible only for a given
  working directory and set of imported modules.
* Hypothesis keeps an example database and a constants cache under ``.hypothesis/`` in the
  working directory. Runs here use no database unless one is passed, and Hypothesis's storage
  points at a per-user temporary folder (:data:`STORAGE`) unless the user chose one with
  ``HYPOTHESIS_STORAGE_DIRECTORY`` or ``set_hypothesis_home_dir``.
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
def _storage_outside_cwd() -> Iterator[None]:
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


@contextlib.contextmanager
def _no_local_constants() -> Iterator[None]:
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants

        provider = providers.HypothesisProvider
        saved = provider.__dict__["_local_constants"]
        cache = providers.CONSTANTS_CACHE.cache
    except (ImportError, AttributeError, KeyError):  # another Hypothesis: leave it alone
        yield
        return
    empty = Constants()
    provider._local_constants = property(lambda self: empty)
    cache.clear()
    try:
        yield
    finally:
        provider._local_constants = saved
        cache.clear()


@contextlib.contextmanager
def isolated_run() -> Iterator[None]:
    """Run Hypothesis reproducibly and without writing to the working directory (see above)."""
    with _storage_outside_cwd(), _no_local_constants():
        yield


def run_settings(max_examples: int, phases: Sequence[Phase],
                 database: ExampleDatabase | None = None, **extra: Any) -> settings:
    """Settings of a quiet run: no deadline, no health checks, no database unless given."""
    return settings(max_examples=int(max_examples), database=database, deadline=None,
                    phases=list(phases), suppress_health_check=list(HealthCheck),
                    verbosity=Verbosity.quiet, **extra)


__all__ = ["STORAGE", "isolated_run", "run_settings"]
