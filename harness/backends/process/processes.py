"""Processes of a process-backend run on this machine: signals, command lines, who lives in the run's namespaces."""

from __future__ import annotations

import os
from pathlib import Path

from harness.net.netns import list_netns
from harness.shell import run


def send(pid: int | None, signum: int) -> None:
    if pid is None:
        return
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def cmdline(pid: int) -> list[str] | None:
    try:
        return [part.decode() for part in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if part] or None
    except OSError:
        return None


def pids_in_netns(names: list[str]) -> set[int]:
    present = set(list_netns())
    pids: set[int] = set()
    for name in names:
        if name in present:
            pids |= {int(p) for p in run(["ip", "netns", "pids", name], check=False).split()}
    return pids

