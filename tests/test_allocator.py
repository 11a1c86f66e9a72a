"""``veil.allocator``: with glibc's mmap threshold pinned, freed blocks of a few MiB go back to the system even when
small live blocks sit between them — the pattern of a release's cells (measured in fresh interpreters)."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

PROGRAM = """
import re, sys
import numpy as np
from veil.allocator import pin_mmap_threshold

def rss():
    return int(re.search(r"VmRSS:\\s+(\\d+)", open("/proc/self/status").read())[1]) // 1024

pinned = pin_mmap_threshold() if sys.argv[1] == "pin" else False
scratch = np.ones(20 << 17)   # a 20 MiB block, mapped and freed: glibc raises its threshold past 8 MiB
del scratch
base = rss()
blocks, live = [], []
for _ in range(40):
    blocks.append(np.ones(1 << 20))   # 8 MiB each, 320 MiB in all
    live.append(np.ones(1 << 15))     # 256 KiB each, kept
del blocks
print(pinned, rss() - base)
"""


def held(mode: str) -> tuple[bool, int]:
    out = subprocess.run([sys.executable, "-c", PROGRAM, mode], capture_output=True, text=True, check=True).stdout
    pinned, mib = out.split()
    return pinned == "True", int(mib)


def test_freed_blocks_return_to_the_system_once_the_threshold_is_pinned() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("glibc's allocator: Linux only")
    plain_pinned, plain = held("plain")
    pinned, kept = held("pin")
    assert pinned and not plain_pinned
    assert plain >= 250  # the heap kept the 320 MiB it was given back
    assert kept <= 40  # the live 10 MiB and a little more


REUSING = """
import ctypes
import numpy as np
from veil.allocator import pin_mmap_threshold, reusing

class Info(ctypes.Structure):  # glibc's struct mallinfo2
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info

def mapped():
    before = libc.mallinfo2().hblkhd
    block = np.ones(1 << 19)   # 4 MiB
    grew = libc.mallinfo2().hblkhd - before
    del block
    return grew >> 20

assert pin_mmap_threshold()
pinned = mapped()
with reusing():
    inside = mapped()
print(pinned, inside, mapped())
"""


def test_reusing_serves_blocks_from_the_heap_then_pins_the_threshold_again() -> None:
    """Inside ``reusing`` a 4 MiB block comes from the heap (reused once freed); before and after it, with the
    threshold pinned, it is a mapping of its own (glibc's ``mallinfo2``: mapped bytes)."""
    if not sys.platform.startswith("linux") or not hasattr(ctypes.CDLL(None), "mallinfo2"):
        pytest.skip("glibc's allocator (2.33 or newer): Linux only")
    out = subprocess.run([sys.executable, "-c", REUSING], capture_output=True, text=True, check=True).stdout
    assert list(map(int, out.split())) == [4, 0, 4]
