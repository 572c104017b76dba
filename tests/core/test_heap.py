"""glauber.core.heap.heap_reuse: freed memory is reused inside the block, glibc's defaults after.

The witness is the kernel's count of minor page faults: allocating, touching and freeing the
same 64 MiB block three times faults in its pages three times under glibc's defaults (each
``malloc`` above the mmap threshold is a fresh mapping), once inside :func:`heap_reuse`.
"""

from __future__ import annotations

import ctypes
import resource
import sys
import threading

import numpy as np
import pytest

from glauber.core import heap
from glauber.core.heap import heap_reuse

BLOCK = 64 << 20
PAGES = BLOCK // resource.getpagesize()

glibc_only = pytest.mark.skipif(heap._glibc() is None, reason="needs glibc's mallopt")


def _faults_of_three_blocks() -> int:
    """Minor page faults of allocating, touching and freeing a 64 MiB block three times."""
    libc = ctypes.CDLL(None)
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(3):
        block = libc.malloc(BLOCK)
        assert block
        ctypes.memset(block, 1, BLOCK)
        libc.free(block)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@glibc_only
def test_freed_blocks_are_reused_inside_and_unmapped_after():
    outside = _faults_of_three_blocks()
    with heap_reuse() as active:
        assert active is True
        inside = _faults_of_three_blocks()
    after = _faults_of_three_blocks()
    assert outside >= 3 * PAGES * 0.9  # three fresh mappings (huge pages would fault less)
    assert inside <= 1.5 * PAGES  # one: the second and third reuse the first
    assert after >= 3 * PAGES * 0.9  # defaults restored on leaving


@glibc_only
def test_nested_and_threaded_blocks_restore_only_at_the_outermost_exit():
    def other_thread() -> None:
        with heap_reuse():
            pass

    with heap_reuse():
        with heap_reuse():
            pass
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        assert heap._depth == 1
        still = _faults_of_three_blocks()  # neither inner exit restored the defaults
    assert heap._depth == 0
    assert still <= 1.5 * PAGES
    assert _faults_of_three_blocks() >= 3 * PAGES * 0.9


def test_values_are_the_same_inside_and_outside():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((300, 400)), rng.standard_normal((400, 500))
    with heap_reuse():
        inside = a @ b
    assert np.array_equal(inside, a @ b)


def test_elsewhere_it_does_nothing(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert heap._glibc() is None
    with heap_reuse() as active:
        assert active is False
    assert heap._depth == 0
