"""Polling a condition until it holds or time is up."""

from __future__ import annotations

import time
from typing import Callable


def eventually(predicate: Callable[[], object], timeout_s: float, interval_s: float = 0.05) -> bool:
    """Whether `predicate` became true within `timeout_s` (asked every `interval_s`, and once more at the end)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval_s)
    return bool(predicate())
