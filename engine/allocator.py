"""The ``veil`` process's heap: big freed buffers go back to the operating system.

glibc's ``malloc`` maps a large block on its own and unmaps it when freed, but after the first such free it
raises that threshold (up to 32 MiB), so later blocks below it come from the heap, where freed memory stays
resident once smaller live blocks sit above it.  A release allocates and frees hundreds of MiB of cells in
blocks of a few MiB: its peak then grows by what the heap keeps, not by what it holds (10M census, a second
version: 1,191 MiB against 952 MiB with the threshold pinned).  ``pin_mmap_threshold`` fixes the threshold at
128 KiB (``mallopt(M_MMAP_THRESHOLD)``, which also ends the adjustment), so every block above it is returned
when freed.  Only the ``veil`` program calls it: a library leaves its host process's allocator alone.

The pinned threshold has a price where blocks of a few MiB are allocated and freed over and over: a search
counting nodes in memory (``veil.frequencies``) makes a few temporaries of the cells per node, and each one mapped
anew is faulted in page by page — Incognito on the 1M census (747,468 cells held) took 10.4 s so against 4.0 s.
``reusing`` lets the heap serve and reuse blocks up to glibc's own ceiling (32 MiB) for such a phase, bounded by
the cells held, then pins the threshold again and gives the heap's free pages back (``malloc_trim``).
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
from collections.abc import Iterator
from typing import Any

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameters
M_TRIM_THRESHOLD = -1
THRESHOLD = 128 * 1024  # glibc's default before any adjustment
REUSED = 32 * 1024 * 1024  # glibc's ceiling for its own adjustment (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit)
_pinned: list[Any] = []  # glibc's mallopt, once the program pinned the threshold with it


def pin_mmap_threshold() -> bool:
    """Pin glibc's mmap threshold at ``THRESHOLD``; ``False`` where there is no glibc ``mallopt`` to ask."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    pinned = bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD))
    if pinned:
        _pinned[:] = [mallopt]
    return pinned


@contextlib.contextmanager
def reusing() -> Iterator[None]:
    """Inside, blocks up to ``REUSED`` come from the heap and are reused; after, the threshold is pinned again
    and the heap's free pages go back to the system.  Nothing where the threshold was never pinned."""
    if not _pinned:
        yield
        return
    mallopt = _pinned[0]
    mallopt(M_MMAP_THRESHOLD, REUSED)
    mallopt(M_TRIM_THRESHOLD, 2 * REUSED)  # as glibc's own adjustment does: a freed block atop the heap stays
    try:
        yield
    finally:
        mallopt(M_MMAP_THRESHOLD, THRESHOLD)
        mallopt(M_TRIM_THRESHOLD, THRESHOLD)
        trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
        if trim is not None:
            trim(0)
