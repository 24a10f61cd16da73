"""Signals never leave a fault behind: SIGINT, SIGTERM and SIGHUP become KeyboardInterrupt, so every `finally`
(the Nemesis' heals, the cluster's teardown) runs; while faults are being healed, further signals wait until the
heal is done instead of cutting it short (a CI cancel sends SIGINT, then SIGTERM seconds later)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.faults.base import Nemesis

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _raise(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def interrupt_on_signals() -> None:
    """For the whole process (a pytest session, a quorum command): the stopping signals raise KeyboardInterrupt.
    SIGINT is set explicitly too: a process started in the background by a non-interactive shell (`cmd &` in a CI
    script) inherits SIGINT ignored, so Python's own handler is not installed there (seen: `kill -INT` left a
    partition and a paused scheduler in place for 10 minutes)."""
    if threading.current_thread() is threading.main_thread():
        for signum in STOPPING:
            signal.signal(signum, _raise)


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Inside the block the stopping signals are blocked (held pending by the kernel); they are delivered, and
    raise, when it ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def heal_on_signals(nemesis: "Nemesis") -> Iterator[None]:
    """A stopping signal inside the block raises KeyboardInterrupt; on the way out every active fault is healed,
    with further signals deferred until the heal is done."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _raise) for signum in STOPPING}
    try:
        yield
    finally:
        try:
            nemesis.heal_all()  # defers signals itself
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
