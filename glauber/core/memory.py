"""Refuse, before the work, a run whose arrays cannot fit in memory (or its files on disk).

A run that would allocate more than the machine has fails minutes later with numpy's
``ArrayMemoryError`` (or, worse, swaps). :func:`check_fits` compares a planned size with what
is available now and raises :class:`~glauber.errors.ResourceLimitError` naming what to change.
"""

from __future__ import annotations

import os
import shutil

from glauber.errors import ResourceLimitError


def available_memory() -> int | None:
    """Bytes of memory available now (``MemAvailable``, else free pages); None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def available_disk(path: str | os.PathLike[str]) -> int | None:
    """Bytes free on the file system holding ``path`` (its nearest existing folder)."""
    here = os.path.abspath(path)
    while not os.path.exists(here) and os.path.dirname(here) != here:
        here = os.path.dirname(here)
    try:
        return int(shutil.disk_usage(here).free)
    except OSError:
        return None


def human_bytes(nbytes: float) -> str:
    """``nbytes`` as ``"1.5 GiB"``."""
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.3g} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024
    return f"{value:.3g} PiB"  # pragma: no cover


def check_fits(nbytes: float, what: str, advice: str, disk: str | None = None) -> None:
    """Raise unless ``nbytes`` fit in the memory available now (or on ``disk``'s file system).

    Parameters
    ----------
    nbytes : float
        The planned size.
    what : str
        What needs it (``"the 100000 x 100000 influence matrices"``).
    advice : str
        What to change (``"use a model with fewer sites"``).
    disk : path, optional
        Check the free space of this path's file system instead of memory.

    Raises
    ------
    ResourceLimitError
        If the size is known to exceed what is available.
    """
    free = available_memory() if disk is None else available_disk(disk)
    if free is not None and nbytes > free:
        where = "memory available" if disk is None else f"free on the disk of {disk}"
        raise ResourceLimitError(
            f"{what} need about {human_bytes(nbytes)}, more than the {human_bytes(free)} "
            f"{where}; {advice}"
        )


__all__ = ["available_disk", "available_memory", "check_fits", "human_bytes"]
