"""Where the cells of an experiment run: in this process, or on a Ray cluster.

An :class:`Executor` has one method, ``map(fn, cells)``, that yields ``fn(cell)`` for each cell
**in the order of** ``cells`` (so results can be checkpointed as they arrive). ``fn`` must be a
module-level function and cells plain data, so that a remote executor can pickle them.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence

from glauber.errors import ClusterUnavailableError, MissingDependencyError


class Executor(Protocol):
    """Runs ``fn`` over cells and yields the results in cell order."""

    def map(self, fn: Callable[[Any], Any], cells: Iterable[Any]) -> Iterator[Any]:
        """Yield ``fn(cell)`` for each cell, in order."""
        ...


class LocalExecutor:
    """Run every cell in this process, one after the other (the default)."""

    def map(self, fn: Callable[[Any], Any], cells: Iterable[Any]) -> Iterator[Any]:
        """Yield ``fn(cell)`` for each cell, in order, computing each lazily."""
        for cell in cells:
            yield fn(cell)


class RayExecutor:
    """Run cells as Ray tasks (``pip install ray``), yielding results in cell order.

    Parameters
    ----------
    address : str, optional
        A Ray cluster address (``"auto"``, ``"ray://host:10001"``); ``None`` starts a local Ray.
    num_cpus : float
        CPUs reserved per task.

    Raises
    ------
    MissingDependencyError
        If ``ray`` is not installed.
    ClusterUnavailableError
        If Ray cannot reach the cluster at ``address`` (or cannot start): one line in glauber's
        own terms (:func:`ray_error_line`).
    """

    def __init__(self, address: str | None = None, num_cpus: float = 1.0) -> None:
        try:
            self._ray = importlib.import_module("ray")
        except ModuleNotFoundError as exc:
            raise MissingDependencyError(
                "--ray needs the ray package, which is not installed: pip install ray "
                "(or drop --ray to run the cells in this process)"
            ) from exc
        if not self._ray.is_initialized():
            try:
                self._ray.init(address=address, ignore_reinit_error=True)
            except Exception as exc:  # Ray's own errors advise flags glauber does not have
                raise ClusterUnavailableError(ray_error_line(address, exc)) from exc
        self.num_cpus = float(num_cpus)

    def map(self, fn: Callable[[Any], Any], cells: Iterable[Any]) -> Iterator[Any]:
        """Submit every cell at once, then yield the results in cell order."""
        remote = self._ray.remote(num_cpus=self.num_cpus)(fn)
        futures = [remote.remote(cell) for cell in cells]
        for future in futures:
            yield self._ray.get(future)


#: The progress bar of :func:`run_cells`: whole cells in the counter, the bar moving within one.
CELL_BAR = "{l_bar}{bar}| {cells}/{total_fmt} cells [{elapsed}<{remaining}]"


def _cell_bar(**kw: Any) -> Any:
    """A ``tqdm`` bar whose counter shows finished cells as an integer (``{cells}``) while its
    bar and percentage also move with a cell's own progress."""
    from tqdm.auto import tqdm

    class CellBar(tqdm):  # type: ignore[misc, valid-type]
        @property
        def format_dict(self) -> dict:
            d = super().format_dict
            d["cells"] = math.floor(d["n"] + 1e-9)
            return d

    return CellBar(bar_format=CELL_BAR, **kw)


def ray_error_line(address: str | None, exc: BaseException) -> str:
    """Ray's failure to connect or start, said once in glauber's terms: what was asked, Ray's
    first sentence (without its advice on flags and variables glauber does not read), and
    what to do.

    Examples
    --------
    >>> ray_error_line("auto", ConnectionError(
    ...     "Could not find any running Ray instance. Please specify the one to connect to by "
    ...     "setting `--address` flag or `RAY_ADDRESS` environment variable."))
    '--ray auto: Ray could not reach a cluster (Could not find any running Ray instance); start \
one with `ray start --head` and give its address (--ray auto on its head node, or --ray \
ray://HOST:10001), or give --ray alone to start Ray in this process'
    """
    said = " ".join(str(exc).split()).split(". ")[0].rstrip(".")
    if not said or "--address" in said or "RAY_ADDRESS" in said:
        said = type(exc).__name__
    if address is None:
        return (f"--ray: Ray could not start in this process ({said}); drop --ray to run the "
                "cells without Ray")
    return (f"--ray {address}: Ray could not reach a cluster ({said}); start one with `ray "
            "start --head` and give its address (--ray auto on its head node, or --ray "
            "ray://HOST:10001), or give --ray alone to start Ray in this process")


def make_executor(ray: str | bool | None = None) -> Executor:
    """The executor a command asked for: ``None``/``False`` local; ``True`` or an address, Ray.

    Raises
    ------
    MissingDependencyError
        If Ray is requested and not installed.
    """
    if ray is None or ray is False:
        return LocalExecutor()
    return RayExecutor(None if ray is True or ray == "" else str(ray))


def run_cells(
    log: Any,
    fn: Callable[[dict], dict],
    cells: Sequence[dict],
    executor: Executor,
    desc: str,
    progress: bool = True,
) -> list[dict]:
    """Run the cells not yet in ``log`` (a :class:`ResultsLog`), checkpointing each result.

    Cells are dicts with a unique ``"key"``. Results are appended as they arrive (in cell
    order), so an interrupted run loses at most the cells in flight. A ``tqdm`` bar shows
    progress and the ETA; in process, a cell function with a ``progress`` keyword gets a
    callback taking the fraction of the cell done, so the bar moves within long cells. Returns
    every cell's result in the order of ``cells``.
    """
    todo = [c for c in cells if c["key"] not in log]
    finished = len(cells) - len(todo)
    with _cell_bar(total=len(cells), initial=finished, desc=desc, disable=not progress,
                   unit="cell") as bar:
        if isinstance(executor, LocalExecutor) and "progress" in inspect.signature(fn).parameters:
            done = [0.0]  # fraction of the current cell already shown

            def within(fraction: float) -> None:  # a cell's own progress moves the bar
                step = min(max(float(fraction), 0.0), 1.0) - done[0]
                if step > 0:
                    bar.update(step)
                    done[0] += step

            cell_fn = functools.partial(fn, progress=within)
        else:
            done, cell_fn = [0.0], fn
        for cell, result in zip(todo, executor.map(cell_fn, todo)):
            log.append(cell["key"], result)
            finished += 1
            bar.n = finished  # whole cells exactly: fractions never add up to 5.999.../6
            bar.refresh()
            done[0] = 0.0
    done = log.done
    return [done[c["key"]] for c in cells]


__all__ = ["Executor", "LocalExecutor", "RayExecutor", "make_executor", "ray_error_line",
           "run_cells"]
