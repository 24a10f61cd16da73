"""A monitor: worker threads on a fixed schedule, bounded in operations and in time.

Each worker owns slots `start + k * period` (period = workers / rate); a worker that falls behind
(a request that took longer than its period) skips the slots it missed instead of bursting, so the
achieved rate drops visibly instead of the load piling up. Every loop ends at max_ops or max_s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from harness.target.protocol import Target
from harness.history import History

DEFAULT_MAX_S = 1800.0  # no monitor outlives half an hour, whatever the test does


class Monitor:
    name = "monitor"

    def __init__(self, cluster: Target, history: History, *, rate: float, workers: int = 1,
                 max_ops: int = 200_000, max_s: float = DEFAULT_MAX_S) -> None:
        if rate <= 0 or workers < 1:
            raise ValueError("rate must be positive and workers at least 1")
        self.cluster = cluster
        self.history = history
        self.rate = rate
        self.workers = workers
        self.max_ops = max_ops
        self.max_s = max_s
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._count = 0
        self._count_lock = threading.Lock()
        self.started_at: float | None = None

    def step(self, worker: int) -> None:
        """One operation, recorded in the History. Must not raise."""
        raise NotImplementedError

    def setup(self) -> None:
        """Before the workers start (e.g. check the routes are local)."""
        self.cluster.ensure_local()

    def finish(self) -> None:
        """After the workers stopped (e.g. a final read-back)."""

    def _take(self) -> bool:
        with self._count_lock:
            if self._count >= self.max_ops:
                return False
            self._count += 1
            return True

    def _loop(self, worker: int, start: float) -> None:
        period = self.workers / self.rate
        slot = start + worker * period / self.workers
        while not self._stop.is_set() and time.monotonic() - start < self.max_s and self._take():
            delay = slot - time.monotonic()
            if delay > 0 and self._stop.wait(delay):
                break
            guarded(lambda: self.step(worker))
            slot += period
            behind = time.monotonic() - slot
            if behind > 0:
                slot += (int(behind / period) + 1) * period

    def start(self) -> "Monitor":
        self.setup()
        self.started_at = time.monotonic()
        for worker in range(self.workers):
            thread = threading.Thread(target=self._loop, args=(worker, self.started_at), daemon=True,
                                      name=f"{self.name}-{worker}")
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)
        self._threads.clear()
        self.finish()

    @property
    def running(self) -> bool:
        return bool(self._threads)

    @property
    def operations(self) -> int:
        return self._count

    def __enter__(self) -> "Monitor":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def guarded(step: Callable[[], None]) -> None:
    """Run one step; a bug in a monitor must not kill its thread silently (it would look like an outage)."""
    try:
        step()
    except Exception as error:  # noqa: BLE001
        import sys

        print(f"quorum monitor error: {type(error).__name__}: {error}", file=sys.stderr)
