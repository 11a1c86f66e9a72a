"""The ``veil`` process's heap: big freed buffers go back to the operating system.

glibc's ``malloc`` maps a large block on its own and unmaps it when freed, but after the first such free it
raises that threshold (up to 32 MiB), so later blocks below it come from the heap, where freed memory stays
resident once smaller live blocks sit above it.  A release allocates and frees hundreds of MiB of cells in
blocks of a few MiB: its peak then grows by what the heap keeps, not by what it holds (10M census, a second
version: 1,191 MiB against 952 MiB with the threshold pinned).  ``pin_mmap_threshold`` fixes the threshold at
128 KiB (``mallopt(M_MMAP_THRESHOLD)``, which also ends the adjustment), so every block above it is returned
when freed.  Only the ``veil`` program calls it: a library leaves its host process's allocator alone.
"""

from __future__ import annotations

import ctypes
import sys

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
THRESHOLD = 128 * 1024  # glibc's default before any adjustment


def pin_mmap_threshold() -> bool:
    """Pin glibc's mmap threshold at ``THRESHOLD``; ``False`` where there is no glibc ``mallopt`` to ask."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD))
