"""``veil`` commands for the tests, each a process of its own forked from an interpreter that has already
imported Veil and its dependencies.

A test runs hundreds of ``python -m veil.cli …`` commands, and each paid about a second importing SQLAlchemy,
DuckDB, pandas, numpy and Veil before doing anything (two CPU cores, two test workers and a Spark cluster: the
imports were about a third of the suite's time).  Here one server per test worker imports them once; a command is
a ``fork`` of it that becomes ``python -m veil.cli`` (``runpy``, as ``-m`` runs it): its own PID, environment,
working directory, standard streams and exit status, its atexit handlers run at exit, signals reach it alone.
What a fork cannot give — a different interpreter setup (``PYTHON*``, locale variables) — runs as a plain
subprocess, as does everything when ``VEIL_TEST_FORKS=0``.

    >>> run(["--version"], cwd=None, env=dict(os.environ), timeout=60).stdout  # doctest: +SKIP
    'veil 0.1.0\\n'
"""

from __future__ import annotations

import atexit
import json
import locale
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# Imported by the server before it forks: what `veil release`, `search`, `check` and `init` import.
PRELOAD = (
    "veil.cli",
    "sqlalchemy",
    "duckdb",
    "duckdb_engine",
    "psycopg",
    "numpy",
    "pandas",
    "veil.run",
    "veil.search",
    "veil.release",
    "veil.backends.duckdb",
    "veil.backends.postgres",
)
# A variable the interpreter reads at start-up: a command changing one runs as a plain subprocess.
STARTUP_VARIABLES = ("PYTHON", "LC_", "LANG", "OPENBLAS", "OMP_", "MKL_")

SERVER = r"""
import ctypes, json, os, random, runpy, signal, socket, sys, time

ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: ends with the test worker that started it
for name in json.loads(sys.argv[2]):
    __import__(name)


def serve(path):
    # Accept a command; a waiter process forks it and reports its PID and exit status.  Returns in the command.
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # waiters are reaped by the kernel
    print("ready", flush=True)
    while True:
        conn, _ = listener.accept()
        if os.fork() != 0:
            conn.close()
            continue
        listener.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        pid = os.fork()
        if pid == 0:
            conn.close()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            return json.loads(message)
        for fd in fds:
            os.close(fd)
        conn.sendall(b"%d\n" % pid)
        _, status = os.waitpid(pid, 0)
        conn.sendall(b"%d\n" % os.waitstatus_to_exitcode(status))
        os._exit(0)


request = serve(sys.argv[1])
os.chdir(request["cwd"])
os.environ.clear()
os.environ.update(request["env"])
time.tzset()
random.seed()
sys.argv = ["-m", *request["args"]]
sys.modules.pop("veil.cli")  # run as ``-m`` runs it: a module ``__main__`` of its own
runpy.run_module("veil.cli", run_name="__main__", alter_sys=True)
"""


class _Server:
    """One forking server per test worker, started at its first command and stopped at exit."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="veil-forks-")
        self.path = os.path.join(self.dir, "server")
        self.env = dict(os.environ)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, self.path, json.dumps(PRELOAD)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the forking server of tests/prewarmed.py did not start")
        atexit.register(self.stop)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        Path(self.path).unlink(missing_ok=True)
        os.rmdir(self.dir)

    def forkable(self, env: dict[str, str]) -> bool:
        changed = {k for k in env.keys() | self.env.keys() if env.get(k) != self.env.get(k)}
        return not any(k.startswith(STARTUP_VARIABLES) for k in changed) and self.proc.poll() is None


_server: _Server | None = None
_lock = threading.Lock()


def _started() -> _Server | None:
    global _server
    if os.environ.get("VEIL_TEST_FORKS", "1") == "0":
        return None
    with _lock:
        if _server is None:
            _server = _Server()
        return _server


def run(
    args: list[str], cwd: Path | str | None, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([sys.executable, "-m", "veil.cli", *args], capture_output=True, text=True, …)``."""
    cmd = [sys.executable, "-m", "veil.cli", *args]
    server = _started()
    if server is None or not server.forkable(env):
        return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    stdin = os.open(os.devnull, os.O_RDONLY)
    request = {"args": args, "cwd": str(cwd if cwd is not None else os.getcwd()), "env": env}
    conn = socket.socket(socket.AF_UNIX)
    try:
        conn.connect(server.path)
        socket.send_fds(conn, [json.dumps(request).encode()], [stdin, out_w, err_w])
    finally:
        for fd in (stdin, out_w, err_w):
            os.close(fd)
    return _collect(conn, cmd, out_r, err_r, time.monotonic() + timeout, timeout)


def _collect(
    conn: socket.socket, cmd: list[str], out_r: int, err_r: int, deadline: float, timeout: float
) -> subprocess.CompletedProcess[str]:
    """Read the command's streams to their end and its PID and exit status from its waiter."""
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    replies = b""
    pid: int | None = None
    with selectors.DefaultSelector() as sel:
        for fd in (out_r, err_r, conn.fileno()):
            sel.register(fd, selectors.EVENT_READ)
        open_fds = 3
        while open_fds:
            left = deadline - time.monotonic()
            events = sel.select(max(left, 0)) if left > 0 else []
            if not events:
                if pid is not None:
                    os.kill(pid, signal.SIGKILL)
                conn.close()
                for fd in (out_r, err_r):
                    os.close(fd)
                out, err = (_text(b"".join(chunks[fd])) for fd in (out_r, err_r))
                raise subprocess.TimeoutExpired(cmd, timeout, out, err)
            for key, _ in events:
                data = os.read(key.fd, 1 << 16)
                if not data:
                    sel.unregister(key.fd)
                    open_fds -= 1
                elif key.fd == conn.fileno():
                    replies += data
                    if pid is None and b"\n" in replies:
                        pid = int(replies.split(b"\n")[0])
                else:
                    chunks[key.fd].append(data)
    conn.close()
    for fd in (out_r, err_r):
        os.close(fd)
    lines = replies.split()
    if len(lines) != 2:
        raise RuntimeError(f"the forking server of tests/prewarmed.py lost the command {cmd[3:]}")
    out, err = (_text(b"".join(chunks[fd])) for fd in (out_r, err_r))
    return subprocess.CompletedProcess(cmd, int(lines[1]), out, err)


def _text(data: bytes) -> str:
    """As ``text=True`` decodes a stream: the locale's encoding, universal newlines."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")
