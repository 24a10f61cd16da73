"""Copies the supervisor's component events (events.jsonl, written by the keepers) into the History as
they happen, so checkers inside a test see every exit and restart."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from harness.history import History, now


class SupervisorTail:
    name = "supervisor"

    def __init__(self, events_path: Path, history: History, period: float = 0.1) -> None:
        self.path = events_path
        self.history = history
        self.period = period
        self.since = now()
        self._offset = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def sync(self) -> int:
        """Copy every new event since the last call; returns how many."""
        with self._lock:
            if not self.path.exists():
                return 0
            with self.path.open() as handle:
                handle.seek(self._offset)
                chunk = handle.read()
            complete = chunk[: chunk.rfind("\n") + 1]  # a line still being written waits for the next call
            self._offset += len(complete.encode())
            copied = 0
            for line in complete.splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if record.get("t", 0.0) >= self.since:
                    attrs = {k: v for k, v in record.items() if k not in ("t", "event")}
                    self.history.event(f"component.{record['event']}", t=record["t"], **attrs)
                    copied += 1
            return copied

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self.sync()

    def start(self) -> "SupervisorTail":
        if self.path.exists():
            self._offset = self.path.stat().st_size  # only what happens from now on
        self._thread = threading.Thread(target=self._run, daemon=True, name="supervisor-tail")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        self.sync()
