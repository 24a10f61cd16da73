"""Faults of one control-plane component, wherever it runs: killed, paused, kept down, or run with a modified
command line. `component` names it as '<component>@<host>' (e.g. kube-scheduler@c1); the target decides how the
signal, the hold or the new command line reaches it (Quorum's supervisor, a kubelet's static pod, ...)."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.errors import FaultError
from harness.faults.base import Fault, wait_for
from harness.target.capabilities import Capability
from harness.target.protocol import Target, split_id

SIGNALS = ("SIGKILL", "SIGTERM", "SIGSTOP", "SIGCONT", "SIGINT", "SIGHUP", "SIGQUIT")


@dataclass
class ComponentFault(Fault):
    component: str = ""  # "<component>@<host>"

    def where(self) -> tuple[str, str]:
        return split_id(self.component)

    def running_pid(self, target: Target) -> int:
        name, host = self.where()
        if host not in target.component_hosts(name):
            raise KeyError(f"{host} runs no {name}; it runs on {', '.join(target.component_hosts(name)) or 'no host'}")
        pid = target.pid(name, host)
        if pid is None:
            raise FaultError(f"{self.component} is not running, so it cannot be faulted", "check `quorum status`")
        return pid


@dataclass
class Kill(ComponentFault):
    """Send a signal (SIGKILL by default) to a component. What follows is the cluster's own self-healing; heal
    starts the component if it is still down and nothing else will (e.g. a supervisor's `never` policy)."""

    name = "kill"
    requires = (Capability.SIGNAL,)
    signal: str = "SIGKILL"

    def plan(self, target: Target) -> None:
        if self.signal not in SIGNALS:
            raise FaultError(f"signal {self.signal!r} is not one Quorum sends", f"use one of {', '.join(SIGNALS)}")
        self.captured["pid"] = self.running_pid(target)

    def act(self, target: Target) -> None:
        target.signal(*self.where(), self.signal, pid=self.captured["pid"])

    def undo(self, target: Target) -> None:
        target.ensure_running(*self.where())


@dataclass
class Pause(ComponentFault):
    """SIGSTOP a component; heal sends SIGCONT to exactly that process. It keeps its sockets: peers see a silent
    host. The paused pid is captured["pid"]."""

    name = "pause"
    requires = (Capability.SIGNAL,)

    def plan(self, target: Target) -> None:
        self.captured["pid"] = self.running_pid(target)
        self.captured["started"] = target.process_started(self.where()[1], self.captured["pid"])

    def act(self, target: Target) -> None:
        pid, (_, host) = self.captured["pid"], self.where()
        target.signal(*self.where(), "SIGSTOP", pid=pid)
        wait_for(lambda: target.process_state(host, pid) in ("T", None), 5, interval_s=0.01,
                 what=f"{self.component} to stop")

    def undo(self, target: Target) -> None:
        pid = self.captured.get("pid")
        if pid is None:
            return
        # only the process it paused: after a reboot the pid may name another process, which must not be touched
        started = target.process_started(self.where()[1], pid)
        if started is not None and started == self.captured.get("started", started):
            target.signal(*self.where(), "SIGCONT", pid=pid)


@dataclass
class Stop(ComponentFault):
    """Stop a component and keep it stopped (nothing restarts it) until heal. SIGTERM (a graceful stop) by default;
    signal="SIGKILL" for a crash: an etcd leader told to stop goes on leading while it shuts down, so a failover
    timed from a SIGTERM includes etcd's shutdown."""

    name = "stop"
    requires = (Capability.HOLD,)
    signal: str = "SIGTERM"

    def __post_init__(self) -> None:
        if self.signal not in ("SIGTERM", "SIGKILL"):
            raise FaultError(f"stop signal {self.signal!r} is not supported", 'use signal="SIGTERM" or "SIGKILL"')

    def plan(self, target: Target) -> None:
        name, host = self.where()
        if host not in target.component_hosts(name):
            raise KeyError(f"{host} runs no {name}; it runs on {', '.join(target.component_hosts(name)) or 'no host'}")

    def act(self, target: Target) -> None:
        target.hold(*self.where(), self.signal)

    def undo(self, target: Target) -> None:
        target.release(*self.where())


@dataclass
class ModifyFlags(ComponentFault):
    """Run a component with a modified command line: flags added, removed or replaced (a corrupted manifest or
    unit, a bad upgrade). It stays in force across restarts; heal restores the configured command line.

    add/replace: {"--flag": "value"}; remove: ["--flag"]. A flag given in `replace` that the command line
    does not have is added, like an operator editing a manifest."""

    name = "modify-flags"
    requires = (Capability.OVERRIDE_ARGS,)
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

    def plan(self, target: Target) -> None:
        for name in [*self.add, *self.remove, *self.replace]:
            if not name.startswith("--") or any(c.isspace() for c in name):
                raise FaultError(f"{name!r} is not a flag", "name flags as --flag-name")
        self.captured["argv"] = self.modified(target.command_line(*self.where()))

    def act(self, target: Target) -> None:
        target.override_command_line(*self.where(), self.captured["argv"])

    def undo(self, target: Target) -> None:
        target.restore_command_line(*self.where())
