"""``veil.allocator``: with glibc's mmap threshold pinned, freed blocks of a few MiB go back to the system even when
small live blocks sit between them — the pattern of a release's cells (measured in fresh interpreters)."""

from __future__ import annotations

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
