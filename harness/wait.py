"""Waiting for a condition with a deadline, the one way faults and backends wait."""

from __future__ import annotations

import time
from collections.abc import Callable

from harness.errors import FaultError


def wait_for(predicate: Callable[[], bool], timeout_s: float, interval_s: float = 0.1, what: str = "condition") -> float:
    """Poll until predicate() is true; return the time it took; raise FaultError on timeout."""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if predicate():
            return time.monotonic() - start
        time.sleep(interval_s)
    raise FaultError(f"timed out after {timeout_s:.0f}s waiting for {what}")
