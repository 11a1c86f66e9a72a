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
DUMP_WAIT = 3.0  # seconds a hung command has to write its stacks, and its readers to end once it is killed
TAIL = 6000  # characters of a hung command's stderr shown
# The server runs under this name (see _Server); an interpreter without it beside it runs plain subprocesses.
VEIL_SCRIPT = Path(sys.executable).with_name("veil")

SERVER = r"""
import ctypes, json, os, random, runpy, signal, socket, sys, time

ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: ends with the test worker that started it
sys.executable = sys.argv[3]  # the interpreter, under the name of the command (see _Server)
for name in json.loads(sys.argv[2]):
    try:
        __import__(name)
    except ImportError:  # an optional one missing: the command imports what it needs itself
        pass


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
            import faulthandler
            faulthandler.register(signal.SIGUSR2, all_threads=True)  # every thread's stack, asked when it hangs
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
        # Named as the venv's ``veil`` script, as a command is: DuckDB's lock error names the holder's PID and
        # Veil tells another veil run from other holders by the command line (``backends.duckdb.busy``).
        self.proc = subprocess.Popen(
            [str(VEIL_SCRIPT), "-c", SERVER, self.path, json.dumps(PRELOAD), sys.executable],
            executable=sys.executable,
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


_server: _Server | None = None  # none where this interpreter has no ``veil`` script beside it: subprocesses
_lock = threading.Lock()


def _started() -> _Server | None:
    global _server
    if os.environ.get("VEIL_TEST_FORKS", "1") == "0":
        return None
    with _lock:
        if _server is None:
            _server = _Server() if VEIL_SCRIPT.exists() else None
        return _server


def run(
    args: list[str], cwd: Path | str | None, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([sys.executable, "-m", "veil.cli", *args], capture_output=True, text=True, …)``."""
    proc = Popen(args, cwd=cwd, env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return subprocess.CompletedProcess(proc.args, proc.wait(), out, err)


def Popen(  # noqa: N802 - it stands in for ``subprocess.Popen``
    args: list[str], cwd: Path | str | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen[str] | Forked:
    """``subprocess.Popen([sys.executable, "-m", "veil.cli", *args], stdout=PIPE, stderr=PIPE, text=True, …)``:
    a forked command where the server can run it, else that very ``Popen``."""
    env = dict(os.environ) if env is None else env
    server = _started()
    if server is None or not server.forkable(env):
        return subprocess.Popen(
            [sys.executable, "-m", "veil.cli", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=env,
        )
    return Forked(server, args, cwd, env)


class Forked:
    """A command forked by the server, with what the tests use of ``subprocess.Popen``: ``pid``, ``args``,
    ``stdout`` and ``stderr`` (text), ``poll``, ``wait``, ``communicate``, ``send_signal``, ``terminate``,
    ``kill``, ``returncode``."""

    def __init__(self, server: _Server, args: list[str], cwd: Path | str | None, env: dict[str, str]) -> None:
        self.args = [sys.executable, "-m", "veil.cli", *args]
        self.returncode: int | None = None
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        stdin = os.open(os.devnull, os.O_RDONLY)
        request = {"args": args, "cwd": str(cwd if cwd is not None else os.getcwd()), "env": env}
        self._conn = socket.socket(socket.AF_UNIX)
        try:
            self._conn.connect(server.path)
            socket.send_fds(self._conn, [json.dumps(request).encode()], [stdin, out_w, err_w])
        finally:
            for fd in (stdin, out_w, err_w):
                os.close(fd)
        encoding = locale.getpreferredencoding(False)
        self.stdout = open(out_r, encoding=encoding)  # noqa: SIM115 - closed by communicate
        self.stderr = open(err_r, encoding=encoding)  # noqa: SIM115
        self._replies = self._conn.makefile("rb")
        self.pid = int(self._replies.readline())
        self._readers: list[threading.Thread] = []
        self._texts: dict[str, str] = {}
        self._status = threading.Thread(target=self._await_status, daemon=True)
        self._status.start()

    def _await_status(self) -> None:
        line = self._replies.readline()
        self._replies.close()
        self._conn.close()
        if not line:
            raise RuntimeError(f"the forking server of tests/prewarmed.py lost the command {self.args[3:]}")
        self.returncode = int(line)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._status.join(timeout)
        if self._status.is_alive():
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        if self.returncode is None:
            raise RuntimeError(f"the forking server of tests/prewarmed.py lost the command {self.args[3:]}")
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """The rest of stdout and stderr (what the caller's reads left buffered included), once both end."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._readers:  # started once: a second call after a timeout waits for the same reads
            self._readers = [
                threading.Thread(target=lambda n=name: self._texts.__setitem__(n, getattr(self, n).read()), daemon=True)
                for name in ("stdout", "stderr")
            ]
            for reader in self._readers:
                reader.start()
        for reader in self._readers:
            reader.join(None if deadline is None else max(deadline - time.monotonic(), 0))
            if reader.is_alive():
                raise self._hung(timeout or 0.0)
        self.stdout.close()
        self.stderr.close()
        self.wait(None if deadline is None else max(deadline - time.monotonic(), 0))
        return self._texts["stdout"], self._texts["stderr"]

    def _hung(self, timeout: float) -> Hung:
        """A command still running after ``timeout``: its threads' stacks (``faulthandler``) and what it wrote, then
        killed, so the failure says where it hung."""
        self.send_signal(signal.SIGUSR2)
        time.sleep(DUMP_WAIT)
        self.kill()
        for reader in self._readers:
            reader.join(DUMP_WAIT)
        err = self._texts.get("stderr", "(its stderr still open)")
        return Hung(self.args, timeout, err[-TAIL:])


class Hung(subprocess.TimeoutExpired):
    """``TimeoutExpired`` whose message carries the end of the command's stderr: its stacks when it hung."""

    def __init__(self, args: list[str], timeout: float, tail: str) -> None:
        super().__init__(args, timeout)
        self.tail = tail

    def __str__(self) -> str:
        return f"{super().__str__()}; the end of its stderr, stacks dumped before it was killed:\n{self.tail}"
