"""The files a config names — which ones Veil may read or write, and reading them without surprises.

A config may come from someone Veil's operator does not trust with the machine (the database URL with its
password sits in the process's environment), so the files it names follow three rules:

- **where**: a hierarchy file or the report folder resolves (symlinks too) inside the config's folder, a
  folder the config lists in ``[files] allow``, or Veil's bundled demo hierarchies; nothing under ``/proc``,
  ``/sys`` or ``/dev`` (nor on the file systems mounted there), whatever is allowed;
- **what**: a file read is a regular file, checked before it is opened (a FIFO would block), opened
  non-blocking and checked again on the open descriptor (it could have been swapped meanwhile);
- **how much**: at most ``limit`` bytes, checked by its size and by the read itself (``/proc`` files say 0).

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp()).resolve()
>>> _ = (folder / "age.csv").write_text("28;<30;*\\n")
>>> read_bounded(folder / "age.csv", 100)
b'28;<30;*\\n'
>>> outside(folder / "age.csv", [folder]), outside(folder / ".." / "etc" / "passwd", [folder])
(False, True)
>>> refusal(Path("/proc/self/environ"))
'is under /proc, where Veil never reads or writes'
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from functools import cache
from pathlib import Path

MiB = 1 << 20
MAX_CONFIG_BYTES = 1 * MiB  # a config file
MAX_HIERARCHY_BYTES = 64 * MiB  # a hierarchy file (the census's largest is 60 KiB)
SPECIAL = (Path("/proc"), Path("/sys"), Path("/dev"))  # kernel interfaces and devices: never read
_CHUNK = MiB


class Refused(ValueError):
    """A file Veil will not read: the message says why, as a phrase after the file's name
    (``is a named pipe (FIFO), not a regular file``)."""


def size_text(n: int) -> str:
    """``64 MiB``, ``1 MiB``, ``4096 bytes``.

    >>> size_text(64 * MiB), size_text(4096)
    ('64 MiB', '4096 bytes')
    """
    return f"{n // MiB} MiB" if n % MiB == 0 else f"{n} bytes"


def bundled() -> Path:
    """Veil's own demo hierarchies (public data shipped with Veil, ``veil.demo.HIERARCHIES``): readable from any
    config.  Located next to this module, not imported: ``veil.demo`` is an entry point above the engine."""
    return real(Path(__file__).resolve().parent / "demo" / "data" / "hierarchies")


@cache
def _special_devices() -> frozenset[int]:
    """The devices of the file systems mounted at ``/proc``, ``/sys`` and ``/dev`` (a procfs mounted
    elsewhere is still refused); a folder that is no mount of its own (same device as ``/``) adds none."""
    try:
        root = os.stat("/").st_dev
    except OSError:
        return frozenset()
    found = set()
    for folder in SPECIAL:
        try:
            dev = os.stat(folder).st_dev
        except OSError:
            continue
        if dev != root:
            found.add(dev)
    return frozenset(found)


def real(path: Path) -> Path:
    """``path`` absolute, its symlinks resolved (a symlink loop is left as it is: opening it fails)."""
    return Path(os.path.realpath(path))


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def refusal(path: Path) -> str | None:
    """Why ``path`` may never be read or written (under ``/proc``, ``/sys`` or ``/dev``, as written or once
    its symlinks are resolved), or ``None``."""
    absolute = Path(os.path.abspath(path))
    for candidate in (absolute, real(absolute)):
        for folder in SPECIAL:
            if _under(candidate, folder):
                return f"is under {folder}, where Veil never reads or writes"
    return None


def outside(path: Path, roots: Sequence[Path]) -> bool:
    """Whether ``path``, its symlinks resolved (and ``..`` after them), lies outside every folder of
    ``roots`` (resolved too)."""
    resolved = real(path)
    return not any(_under(resolved, real(root)) for root in roots)


def _kind(mode: int) -> str | None:
    """What a file that is not a regular file is, or ``None`` for a regular file."""
    if stat.S_ISREG(mode):
        return None
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def check_regular(path: Path, limit: int) -> os.stat_result:
    """Refuse ``path`` unless it is a regular file of at most ``limit`` bytes outside ``/proc``, ``/sys`` and
    ``/dev`` (without opening it); its ``stat`` (``OSError`` if it cannot be found)."""
    why = refusal(path)
    if why:
        raise Refused(why)
    st = os.stat(path)
    kind = _kind(st.st_mode)
    if kind:
        raise Refused(f"is {kind}, not a regular file")
    if st.st_dev in _special_devices():
        raise Refused("is on a kernel file system (like /proc's), where Veil never reads or writes")
    if st.st_size > limit:
        raise Refused(f"is larger than {size_text(limit)} ({st.st_size} bytes)")
    return st


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, refused (:class:`Refused`) if it is anything else or holds
    more than ``limit`` bytes; ``OSError`` if it cannot be read.  Never blocks on a FIFO or a device."""
    before = check_regular(path, limit)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if (
            (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino)
            or _kind(st.st_mode)
            or st.st_dev in _special_devices()
        ):
            raise Refused("changed while it was opened; not read")
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    finally:
        os.close(fd)
    if total > limit:
        raise Refused(f"holds more than {size_text(limit)}")
    return b"".join(chunks)
