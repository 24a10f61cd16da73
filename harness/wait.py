"""Waiting for a condition with a deadline: the one way Quorum waits (faults, backends, scenarios, monitors' set-up).

`until` is the loop; `eventually` (did it happen?) and `wait_for` (it must: a FaultError naming it otherwise) are
its two common readings. A look may do more than read (say its progress, record what it saw): it is asked every
`interval_s`, and once more at the deadline, so a slow look still gets its last chance.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from harness.errors import FaultError

T = TypeVar("T")


@dataclass(frozen=True)
class Waited(Generic[T]):
    """What the last look answered (true: the condition held) and how long the wait took."""

    value: T
    after_s: float

    @property
    def held(self) -> bool:
        return bool(self.value)


def until(look: Callable[[], T], timeout_s: float, interval_s: float = 0.1) -> Waited[T]:
    """Ask `look` until it answers something true or `timeout_s` has passed."""
    start = time.monotonic()
    deadline = start + timeout_s
    while True:
        value = look()
        now = time.monotonic()
        if value or now >= deadline:
            return Waited(value, now - start)
        time.sleep(min(interval_s, deadline - now))


def eventually(predicate: Callable[[], object], timeout_s: float, interval_s: float = 0.05) -> bool:
    """Whether `predicate` became true within `timeout_s`."""
    return until(predicate, timeout_s, interval_s).held


def wait_for(predicate: Callable[[], bool], timeout_s: float, interval_s: float = 0.1, what: str = "condition") -> float:
    """Until predicate() is true; the time it took; a FaultError naming `what` on timeout."""
    waited = until(predicate, timeout_s, interval_s)
    if not waited.held:
        raise FaultError(f"timed out after {timeout_s:.0f}s waiting for {what}")
    return waited.after_s
