"""pytest fixtures for property tests of bounds; loaded through the ``pytest11`` entry point.

Installing ``glauber`` registers this module with pytest (entry point
``glauber.testing.pytest_plugin``), so a test file needs no conftest::

    from glauber.testing import exact, models

    def test_my_bound(assert_bound):
        assert_bound(my_bound, lambda m, tau: exact(m, tau).mixing_time(), models=models())

Where plugin autoloading is off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``), add
``pytest_plugins = ["glauber.testing.pytest_plugin"]`` to a ``conftest.py``. Options:
``--glauber-examples N`` overrides ``max_examples`` of every ``assert_bound`` call and
``--glauber-seed S`` its seed (default: a hash of the test's node id, the same on every run).
Nothing here imports Hypothesis until a fixture is used.
"""

from __future__ import annotations

import zlib
from typing import Any, Callable

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--glauber-examples`` and ``--glauber-seed``."""
    group = parser.getgroup("glauber", "property tests of bounds (glauber.testing)")
    group.addoption("--glauber-examples", type=int, default=None, metavar="N",
                    help="max_examples of every assert_bound check (default: each call's own)")
    group.addoption("--glauber-seed", type=int, default=None, metavar="S",
                    help="seed of every assert_bound check (default: from the test's node id)")


@pytest.fixture
def assert_bound(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``assert_bound(bound, exact, **kwargs)``: :func:`glauber.testing.check_bound`, failing
    the test with the shrunk counterexample and its reproducer when the bound is violated.

    Returns the :class:`~glauber.testing.BoundReport` when the bound holds.
    """
    from glauber.testing import check_bound

    examples = request.config.getoption("glauber_examples")
    seed = request.config.getoption("glauber_seed")
    if seed is None:
        seed = zlib.crc32(request.node.nodeid.encode("utf-8"))

    def run(bound: Callable, exact: Callable, **kwargs: Any) -> Any:
        kwargs.setdefault("seed", seed)
        if examples is not None:
            kwargs["max_examples"] = examples
        report = check_bound(bound, exact, **kwargs)
        if not report.holds:
            pytest.fail(str(report), pytrace=False)
        return report

    return run


__all__ = ["assert_bound", "pytest_addoption"]
