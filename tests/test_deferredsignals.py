"""``veil.backends.deferredsignals``: a signal landing inside a client library is deferred (the server asked to
stop, the signal delivered again until it lands in Veil's code); elsewhere the original handler runs at once.
A fake client package stands in for gRPC: its frames carry the module name the wrapper looks for."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import types
from collections.abc import Iterator

import pytest

from veil.backends.deferredsignals import DeferredSignals
from veil.errors import Interruption

CLIENT_CODE = """
import os, signal, time

def wait_for_server(seconds, done):
    os.kill(os.getpid(), signal.SIGTERM)
    end = time.monotonic() + seconds
    while time.monotonic() < end:  # Python bytecode all along: a raising handler would raise in here
        pass
    done.append("returned")

def here():
    import sys
    return sys._getframe()
"""


class Stopped(BaseException):
    """What the run's own SIGTERM handler raises in these tests."""


@pytest.fixture
def client() -> Iterator[types.ModuleType]:
    module = types.ModuleType("fakeclient.channel")
    exec(compile(CLIENT_CODE, "<fakeclient>", "exec"), module.__dict__)
    yield module


@pytest.fixture
def raising_handler() -> Iterator[list[int]]:
    """SIGTERM's handler raises ``Stopped`` (as ``veil.contract``'s does), restored afterwards."""
    if threading.current_thread() is not threading.main_thread():
        pytest.fail("signal tests need the main thread")
    seen: list[int] = []

    def handler(signum: int, frame: object) -> None:
        seen.append(signum)
        raise Stopped

    previous = signal.signal(signal.SIGTERM, handler)
    yield seen
    signal.signal(signal.SIGTERM, previous)


def test_frames_of_the_client_are_recognized(client: types.ModuleType) -> None:
    deferred = DeferredSignals(lambda: None, client=("fakeclient",))
    assert deferred.inside(client.here())
    assert not deferred.inside(sys._getframe())
    assert not DeferredSignals(lambda: None, client=("otherclient",)).inside(client.here())


def test_a_signal_inside_the_client_is_deferred_until_veils_code(
    client: types.ModuleType, raising_handler: list[int]
) -> None:
    interrupts: list[float] = []
    done: list[str] = []
    with DeferredSignals(lambda: interrupts.append(time.monotonic()), client=("fakeclient",)):
        with pytest.raises(Stopped):
            client.wait_for_server(0.5, done)  # SIGTERM lands in the client's frames: it must not raise there
            time.sleep(2)  # Veil's code: a delivery lands here within RETRY
            pytest.fail("the deferred signal was never delivered")
    assert done == ["returned"], "the handler raised inside the client"
    assert len(interrupts) == 1 and raising_handler and set(raising_handler) == {signal.SIGTERM}


def test_a_signal_elsewhere_runs_the_handler_at_once(raising_handler: list[int]) -> None:
    interrupts: list[str] = []
    with DeferredSignals(lambda: interrupts.append("x"), client=("fakeclient",)):
        with pytest.raises(Stopped):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(2)
    assert interrupts == [] and raising_handler == [signal.SIGTERM]


def test_a_failed_call_takes_the_pending_signal_as_its_interruption(client: types.ModuleType) -> None:
    """The backend sees the call the server stopped first: ``pending()`` is the interruption, and it ends the
    deliveries (no second exception while the run unwinds)."""
    deferred = DeferredSignals(lambda: None, client=("fakeclient",))
    deferred.handle(signal.SIGTERM, client.here())
    stopped = deferred.pending()
    assert isinstance(stopped, Interruption) and str(stopped) == "terminated (SIGTERM)"
    assert deferred.pending() is None
    Interruption.last = ""


def test_nothing_is_delivered_inside_a_shielded_block(raising_handler: list[int]) -> None:
    with DeferredSignals(lambda: None, client=("fakeclient",)) as deferred:
        finished = False
        with pytest.raises(Stopped):
            with deferred.shielded():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.5)  # several RETRY periods: nothing raises in here
                finished = True
        assert finished and raising_handler == [signal.SIGTERM]


def test_the_handlers_are_restored(raising_handler: list[int]) -> None:
    before = signal.getsignal(signal.SIGTERM)
    with DeferredSignals(lambda: None) as deferred:
        assert signal.getsignal(signal.SIGTERM) == deferred.handle
    assert signal.getsignal(signal.SIGTERM) is before
