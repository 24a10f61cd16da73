"""Request records of a load run, as the History takes them (harness/load/generator.py: import_records).

The locust workers write JSON lines (harness/load/users.py). The plain reader writes one fixed-size binary record per
request: its start and end (monotonic seconds, the History's clock), the task's index in TASK_ORDER, the HTTP status
(0: no answer) and the length of an error text that follows it, which only a request without an answer has (an HTTP
error's text is its status). Packing and reading one cost a fraction of a JSON line, which was the largest part of the
reader's own cost per request (docs/load.md has the figures)."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from harness.load.spec import TASKS

TASK_ORDER: tuple[str, ...] = tuple(TASKS)  # a task's index in a record
TASK_INDEX = {task: index for index, task in enumerate(TASK_ORDER)}
RECORD = struct.Struct("<ddBHH")  # t0, t1, task index, HTTP status, error length
MAX_ERROR = 200  # bytes of an error's text kept, as the workers keep 200 characters


@dataclass(frozen=True)
class Record:
    """One request, with what the workers' JSON lines carry (but the method)."""
    t0: float
    t1: float
    verb: str
    resource: str
    scope: str
    ok: bool
    status: int  # 0: no answer
    error: str


def ok(status: int) -> bool:
    """Whether a request that ended with `status` (0: no answer) succeeded, as the workers count it."""
    return 0 < status < 400


def write(out: BinaryIO, t0: float, t1: float, task_index: int, status: int, error: str = "") -> None:
    """One record; `error` is kept only for a request without an answer (status 0)."""
    text = error.encode(errors="replace")[:MAX_ERROR] if status == 0 else b""
    out.write(RECORD.pack(t0, t1, task_index, status, len(text)))
    if text:
        out.write(text)


def read(data: bytes) -> Iterator[Record]:
    """The records in `data`; a record cut short at the end (a process killed while writing) is left out, as the
    workers' torn last line is."""
    at, size = 0, RECORD.size
    while at + size <= len(data):
        t0, t1, task_index, status, length = RECORD.unpack_from(data, at)
        at += size
        if at + length > len(data):
            return
        if task_index >= len(TASK_ORDER):
            raise ValueError(f"a record at byte {at - size} names task {task_index}: not a reader's record file")
        text = data[at:at + length].decode(errors="replace")
        at += length
        succeeded = ok(status)
        yield Record(t0, t1, *TASKS[TASK_ORDER[task_index]], succeeded, status,
                     "" if succeeded else text if status == 0 else f"HTTP {status}")
