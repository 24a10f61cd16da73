"""Visible progress for long steps: which step, what it is doing, how long it has taken.

On a terminal a live status line is redrawn; elsewhere (CI logs) a line is printed when a step
starts, every `heartbeat_s` while it runs, and when it ends, so a log never goes quiet for long.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from rich.console import Console


class Step:
    def __init__(self, title: str, console: Console, heartbeat_s: float) -> None:
        self.title = title
        self.detail = ""
        self.started = time.monotonic()
        self._console = console
        self._heartbeat_s = heartbeat_s
        self._last_print = self.started
        self._status = None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def update(self, detail: str) -> None:
        self.detail = detail
        line = f"{self.title}: {detail} [{self.elapsed:5.0f}s]"
        if self._status is not None:
            self._status.update(line)
        elif time.monotonic() - self._last_print >= self._heartbeat_s:
            self._console.print(f"  … {line}", highlight=False)
            self._last_print = time.monotonic()


class Reporter:
    def __init__(self, console: Console | None = None, heartbeat_s: float = 20.0) -> None:
        self.console = console or Console(stderr=True)
        self.heartbeat_s = heartbeat_s

    def info(self, message: str) -> None:
        self.console.print(message, highlight=False)

    @contextlib.contextmanager
    def step(self, title: str) -> Iterator[Step]:
        step = Step(title, self.console, self.heartbeat_s)
        self.console.print(f"▶ {title}", highlight=False)
        stop = threading.Event()
        ticker = None
        if self.console.is_terminal:
            step._status = self.console.status(title)
            step._status.start()
        else:
            # a heartbeat even when the command prints nothing for minutes (Go compiling one package)
            def tick() -> None:
                while not stop.wait(self.heartbeat_s):
                    step.update(step.detail or "working")
            ticker = threading.Thread(target=tick, daemon=True)
            ticker.start()
        try:
            yield step
        except BaseException:
            self.console.print(f"✗ {title} failed after {step.elapsed:.1f}s", highlight=False)
            raise
        finally:
            stop.set()
            if step._status is not None:
                step._status.stop()
        self.console.print(f"✓ {title} ({step.elapsed:.1f}s)", highlight=False)
