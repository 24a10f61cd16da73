"""One History per test: operations and events on one monotonic clock, persisted as JSONL as they happen.

The clock is CLOCK_MONOTONIC (time.monotonic), which is system-wide on Linux: the supervisor's
component events (written by other processes) and the monitors' operations share it, so a fault
window, a component restart and a failed request can be compared directly.

Records (one JSON object per line):
    {"kind": "op", "process": "api-0", "f": "api.readyz", "target": "lb", "invoke": 12.3, "complete": 12.31,
     "outcome": "ok" | "fail" | "unknown", "value": ..., "error": "...", "extra": {...}}
    {"kind": "event", "t": 12.4, "type": "fault.start" | "fault.in_place" | "fault.end" | "component.exit" | ..., ...}

An operation is written when it completes; an operation whose outcome cannot be known (a timeout after
the request was sent) is recorded as unknown, never as ok.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.objectives.policy import Objectives


class Outcome(str, Enum):
    OK = "ok"
    FAIL = "fail"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Op:
    process: str
    f: str
    target: str
    invoke: float
    complete: float
    outcome: Outcome
    value: Any = None
    error: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK

    @property
    def latency(self) -> float:
        return self.complete - self.invoke


@dataclass(frozen=True)
class Event:
    t: float
    type: str
    attrs: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.attrs[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)


def now() -> float:
    return time.monotonic()


class History:
    """Append-only record of a test. Thread-safe; every record is flushed to disk as it is written."""

    def __init__(self, path: Path | None = None, objectives: Objectives | None = None) -> None:
        self.path = path
        # what its measurements are judged against (the session's policy, `pytest --policy`; the defaults when the
        # History is not a session's)
        self._objectives = objectives
        self.ops: list[Op] = []
        self.events: list[Event] = []
        self._lock = threading.Lock()
        self._file = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = path.open("a", buffering=1)  # line-buffered: a crash loses at most a partial line

    @property
    def objectives(self) -> Objectives:
        """The objectives this History's measurements are judged against: its session's policy, or the defaults."""
        if self._objectives is None:
            from harness.objectives.policy import Objectives  # the record itself needs no policy to be read

            self._objectives = Objectives()
        return self._objectives

    # ---- writing -------------------------------------------------------------------------------

    def _write(self, record: dict) -> None:
        if self._file is not None:
            self._file.write(json.dumps(record, default=str) + "\n")

    def add_op(self, op: Op) -> Op:
        with self._lock:
            self.ops.append(op)
            record = {"kind": "op", **asdict(op), "outcome": op.outcome.value}
            self._write(record)
        return op

    def record(self, process: str, f: str, target: str, invoke: float, outcome: Outcome, *, value: Any = None,
               error: str = "", complete: float | None = None, **extra: Any) -> Op:
        return self.add_op(Op(process, f, target, invoke, complete if complete is not None else now(), outcome,
                              value, error, extra))

    def event(self, type: str, t: float | None = None, **attrs: Any) -> Event:
        event = Event(t if t is not None else now(), type, attrs)
        with self._lock:
            self.events.append(event)
            self._write({"kind": "event", "t": event.t, "type": type, **attrs})
        return event

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    # ---- reading -------------------------------------------------------------------------------

    def ops_of(self, f: str | None = None, *, target: str | None = None, process: str | None = None) -> list[Op]:
        with self._lock:
            ops = list(self.ops)
        return sorted(
            (o for o in ops if (f is None or o.f == f) and (target is None or o.target == target)
             and (process is None or o.process == process)),
            key=lambda o: o.invoke,
        )

    def events_of(self, type: str | None = None, **match: Any) -> list[Event]:
        with self._lock:
            events = list(self.events)
        return sorted(
            (e for e in events if (type is None or e.type == type) and all(e.get(k) == v for k, v in match.items())),
            key=lambda e: e.t,
        )

    def fault_windows(self, name: str | None = None) -> list[tuple[float, float | None, Event]]:
        """(start, end or None if never healed, start event) for each fault, in order."""
        windows = []
        ends = {e["id"]: e.t for e in self.events_of("fault.end")}
        for start in self.events_of("fault.start"):
            if name is None or start.get("name") == name:
                windows.append((start.t, ends.get(start["id"]), start))
        return windows

    def in_place_at(self, fault_id: str) -> float | None:
        """When a fault's act had finished (the fault wholly in effect), or None if not recorded."""
        return next((e.t for e in self.events_of("fault.in_place", id=fault_id)), None)

    def span(self) -> tuple[float, float] | None:
        times = [o.invoke for o in self.ops] + [o.complete for o in self.ops] + [e.t for e in self.events]
        return (min(times), max(times)) if times else None

    @classmethod
    def load(cls, path: Path) -> "History":
        """Read a History back (for re-running checkers offline); tolerates a torn last line."""
        history = cls(None)
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            kind = record.pop("kind", None)
            if kind == "op":
                record["outcome"] = Outcome(record["outcome"])
                history.ops.append(Op(**record))
            elif kind == "event":
                history.events.append(Event(record.pop("t"), record.pop("type"), record))
        return history

    def extent(self) -> tuple[int, int]:
        """How many operations and events it holds so far: with `prefix`, what a checker saw when it ran."""
        with self._lock:
            return len(self.ops), len(self.events)

    def prefix(self, ops: int, events: int) -> "History":
        """The History as it was when it held its first `ops` operations and `events` events (in the order they
        were written), not written anywhere."""
        earlier = History(None)
        with self._lock:
            earlier.ops, earlier.events = list(self.ops[:ops]), list(self.events[:events])
        return earlier

    def __iter__(self) -> Iterator[Op | Event]:
        return iter(sorted([*self.ops, *self.events], key=lambda r: r.invoke if isinstance(r, Op) else r.t))
