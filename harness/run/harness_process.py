"""Which harness process did something, told apart from every other: machine id, boot id, pid and the process's start
time (a pid is reused; the pair of pid and start time is not). What outlives the process (a fault's record on a
remote host, a work monitor's namespace) names it, so that a later `quorum heal` leaves a live harness's work alone
and takes back what a dead one left."""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (proc(5), stat field 22): a pid reused later differs."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


@dataclass(frozen=True)
class Harness:
    """One harness process (a pytest session, a bench, a `quorum` command): what it left names it."""

    machine: str
    boot: str
    pid: int
    start: int | None
    command: str = ""

    @classmethod
    def this(cls) -> "Harness":
        machine = _read("/etc/machine-id") or socket.gethostname()
        return cls(machine, _read("/proc/sys/kernel/random/boot_id"), os.getpid(), _start_ticks(os.getpid()),
                   " ".join(sys.argv)[:200])

    @classmethod
    def of(cls, pid: int, command: str) -> "Harness":
        """Another process of this machine (one the harness started, which outlives it), named by `command`."""
        here = cls.this()
        return cls(here.machine, here.boot, pid, _start_ticks(pid), command[:200])

    def alive(self) -> bool | None:
        """Whether it still runs; None when it ran on another machine (nobody here can tell)."""
        here = Harness.this()
        if self.machine != here.machine:
            return None
        return self.boot == here.boot and self.start is not None and _start_ticks(self.pid) == self.start
