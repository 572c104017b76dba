"""Keep freed memory in the process heap during a long run of same-sized forwards (glibc).

glibc serves every allocation above its mmap threshold (at most 32 MiB) with a fresh ``mmap``
and gives it back with ``munmap`` when freed. A transformer forward of 256 rows on CPU holds a
256 MB feed-forward intermediate, so a score table of thousands of forwards maps, faults in and
zeroes the same quarter-gigabyte again at every forward: the 4-site AntiBERTy table of
2026-12-07 spent 538 s of system time in 160 million minor page faults (docs/performance.md,
"A 4-site window end to end"). :func:`heap_reuse` switches ``mmap`` off for allocations and
raises the trim threshold for the duration of a block, so that a freed intermediate is reused
by the next forward. On leaving it returns the free memory to the system (``malloc_trim``) and
sets the thresholds that glibc's own dynamic threshold reaches once a block of 32 MiB or more
has been freed (mmap above 32 MiB, trim above 64 MiB): any ``mallopt`` call switches the dynamic
threshold off for good, and glibc's start-up values (128 KiB) would then map every array above
128 KiB afresh for the rest of the process (the cached 4-site certificate spent 64 s of system
time so, 2026-12-07). The values computed are unchanged; only where their memory comes from
differs. Elsewhere (macOS, musl, Windows) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

#: ``mallopt`` parameters (glibc's malloc.h).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_MMAP_MAX = -1, -3, -4
#: Set on leaving the outermost :func:`heap_reuse` block: glibc's largest dynamic mmap threshold
#: (``DEFAULT_MMAP_THRESHOLD_MAX`` on 64-bit), twice it for trimming (as its dynamic rule sets),
#: and its default count of mappings.
AFTER_MMAP_THRESHOLD, AFTER_TRIM_THRESHOLD, AFTER_MMAP_MAX = 32 << 20, 64 << 20, 65536
#: The trim threshold inside a block (the largest ``int``: never trim while it runs).
KEEP_TRIM_THRESHOLD = 2**31 - 1

_lock = threading.Lock()
_depth = 0


def _glibc() -> ctypes.CDLL | None:
    """glibc with ``mallopt`` and ``malloc_trim``, or None on another C library or system."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # glibc only (musl has mallopt as a no-op stub)
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):
        return None
    return libc


@contextmanager
def heap_reuse() -> Iterator[bool]:
    """Within the block, serve allocations from the heap and keep freed memory there.

    Yields True where it took effect (glibc), False where it does nothing. Blocks nest and may
    be entered from several threads: the thresholds after (module docstring) are set when the
    outermost one ends.

    Examples
    --------
    >>> with heap_reuse() as active:
    ...     isinstance(active, bool)
    True
    """
    global _depth
    libc = _glibc()
    if libc is None:
        yield False
        return
    with _lock:
        if _depth == 0:
            libc.mallopt(M_MMAP_MAX, 0)
            libc.mallopt(M_TRIM_THRESHOLD, KEEP_TRIM_THRESHOLD)
        _depth += 1
    try:
        yield True
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                libc.mallopt(M_MMAP_MAX, AFTER_MMAP_MAX)
                libc.mallopt(M_MMAP_THRESHOLD, AFTER_MMAP_THRESHOLD)
                libc.mallopt(M_TRIM_THRESHOLD, AFTER_TRIM_THRESHOLD)
                libc.malloc_trim(0)


__all__ = ["heap_reuse"]
