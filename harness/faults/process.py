"""Process faults: kill, pause, stop (no self-healing), restart with a modified command line."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field
from pathlib import Path

from harness.backends.process.target import Cluster
from harness.errors import FaultError
from harness.faults.base import Fault, wait_for


def _running_pid(cluster: Cluster, component: str) -> int:
    pid = cluster.control(component).child_pid()
    if pid is None:
        raise FaultError(f"{component} is not running, so it cannot be faulted", "check `quorum status`")
    return pid


def _signal(pid: int | None, signum: int) -> None:
    if pid is None:
        return
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


@dataclass
class Kill(Fault):
    """Send a signal (SIGKILL by default) to a component. The supervisor's restart policy decides what follows;
    heal restarts the component if it is still down (a `never` policy, or a long backoff)."""

    name = "kill"
    component: str = ""  # "<component>@<host>"
    signal: str = "SIGKILL"

    def plan(self, cluster: Cluster) -> None:
        self.captured["pid"] = _running_pid(cluster, self.component)

    def act(self, cluster: Cluster) -> None:
        _signal(self.captured["pid"], getattr(signal, self.signal))

    def undo(self, cluster: Cluster) -> None:
        cluster.control(self.component).kick()


@dataclass
class Pause(Fault):
    """SIGSTOP a component; heal sends SIGCONT. The process keeps its sockets: peers see a silent host."""

    name = "pause"
    component: str = ""

    def plan(self, cluster: Cluster) -> None:
        self.captured["pid"] = _running_pid(cluster, self.component)

    def act(self, cluster: Cluster) -> None:
        pid = self.captured["pid"]
        _signal(pid, signal.SIGSTOP)
        wait_for(lambda: process_state(pid) in ("T", None), 5, interval_s=0.01, what=f"{self.component} to stop")

    def undo(self, cluster: Cluster) -> None:
        _signal(self.captured.get("pid"), signal.SIGCONT)


@dataclass
class Stop(Fault):
    """Stop a component and keep it stopped (the supervisor holds it) until heal. SIGTERM (a graceful stop,
    SIGKILL after 2 s) by default; signal="SIGKILL" for a crash: an etcd leader told to stop goes on leading
    while it shuts down, so a failover timed from a SIGTERM includes etcd's shutdown."""

    name = "stop"
    component: str = ""
    signal: str = "SIGTERM"

    def __post_init__(self) -> None:
        if self.signal not in ("SIGTERM", "SIGKILL"):
            raise FaultError(f"stop signal {self.signal!r} is not supported", 'use signal="SIGTERM" or "SIGKILL"')

    def act(self, cluster: Cluster) -> None:
        cluster.control(self.component).hold()
        terminate(cluster, self.component, grace_s=0.0 if self.signal == "SIGKILL" else TERM_GRACE_S)

    def undo(self, cluster: Cluster) -> None:
        control = cluster.control(self.component)
        control.release()
        control.kick()


@dataclass
class ModifyFlags(Fault):
    """Restart a component with a modified command line: flags added, removed or replaced. The bad command
    line stays in force across the supervisor's restarts; heal restores the last good one.

    add/replace: {"--flag": "value"}; remove: ["--flag"]. A flag given in `replace` that the command line
    does not have is added, like an operator editing a manifest."""

    name = "modify-flags"
    component: str = ""
    add: dict[str, str] = field(default_factory=dict)
    remove: list[str] = field(default_factory=list)
    replace: dict[str, str] = field(default_factory=dict)

    def modified(self, argv: list[str]) -> list[str]:
        def flag(arg: str) -> str:
            return arg.split("=", 1)[0]

        result = [argv[0]]
        for arg in argv[1:]:
            name = flag(arg)
            if name in self.remove:
                continue
            result.append(f"{name}={self.replace[name]}" if name in self.replace else arg)
        present = {flag(arg) for arg in result}
        result += [f"{name}={value}" for name, value in self.replace.items() if name not in present]
        result += [f"{name}={value}" for name, value in self.add.items()]
        return result

    def plan(self, cluster: Cluster) -> None:
        good = cluster.control(self.component).spec().argv
        self.captured["argv"] = self.modified(good)

    def act(self, cluster: Cluster) -> None:
        control = cluster.control(self.component)
        control.override(self.captured["argv"])
        terminate(cluster, self.component)  # the supervisor starts it again, with the override
        control.kick()

    def undo(self, cluster: Cluster) -> None:
        control = cluster.control(self.component)
        control.clear_override()
        pid = control.child_pid()
        if pid is not None and _cmdline(pid) != control.spec().argv:
            terminate(cluster, self.component)
        control.kick()


TERM_GRACE_S = 2.0


def terminate(cluster: Cluster, component: str, grace_s: float = TERM_GRACE_S) -> None:
    """Stop the running component now: SIGTERM, then SIGKILL after a short grace. (kube-apiserver drains
    in-flight requests for up to a minute on SIGTERM; a restart fault must not wait for that.)"""
    control = cluster.control(component)
    pid = control.child_pid()
    if pid is None:
        return
    _signal(pid, signal.SIGCONT)
    if grace_s > 0:
        _signal(pid, signal.SIGTERM)
        try:
            wait_for(lambda: control.child_pid() != pid, grace_s, interval_s=0.05, what=f"{component} to stop")
            return
        except FaultError:
            pass
    _signal(pid, signal.SIGKILL)
    wait_for(lambda: control.child_pid() != pid, 10, interval_s=0.05, what=f"{component} to die")


def process_state(pid: int) -> str | None:
    """The one-letter state from /proc (R, S, T for stopped, Z...), None if the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _cmdline(pid: int) -> list[str] | None:
    try:
        return [part.decode() for part in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if part]
    except OSError:
        return None
