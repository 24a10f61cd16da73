"""Faults of whole hosts: power loss (one host, or several at once and back), a frozen host, a host whose network
interface is removed. The target does it its way (a container killed, paused, restarted; a node rebooted) and
heal leaves every host running, unfrozen and connected, with its address."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.errors import FaultError
from harness.faults.base import Fault
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole, Target


@dataclass
class NodeFault(Fault):
    requires = (Capability.NODE_POWER,)
    host: str = ""

    def plan(self, target: Target) -> None:
        if self.host not in target.hosts():
            raise KeyError(f"no host {self.host!r}; hosts: {', '.join(target.hosts())}")

    def undo(self, target: Target) -> None:
        target.power.on([self.host])


@dataclass
class NodeKill(NodeFault):
    """Power off a host at once (`docker kill` for a container): the node and all its components vanish."""

    name = "node-kill"

    def act(self, target: Target) -> None:
        target.power.off([self.host])


@dataclass
class NodePause(NodeFault):
    """Freeze every process of a host (cgroup freezer): sockets stay open; peers see a silent host rather than a
    dead one."""

    name = "node-pause"

    def act(self, target: Target) -> None:
        target.power.freeze(self.host)


@dataclass
class NodeDisconnect(NodeFault):
    """Remove the host's network interface: its processes run on, unreachable."""

    name = "node-disconnect"
    requires = (Capability.NODE_DISCONNECT,)

    def act(self, target: Target) -> None:
        target.power.disconnect(self.host)


@dataclass
class NodeRestart(Fault):
    """Power loss of several hosts at once, then all started again (every control-plane host by default): what
    comes back is what they have on disk. Heal only makes sure they all run."""

    name = "node-restart"
    requires = (Capability.NODE_POWER,)
    hosts: list[str] | None = None

    def plan(self, target: Target) -> None:
        if self.hosts == []:
            raise FaultError("node-restart was given an empty list of hosts",
                             "name the hosts to restart, or leave hosts out for every control-plane host")
        chosen = self.hosts or target.hosts(HostRole.CONTROLLER)
        unknown = sorted(set(chosen) - set(target.hosts()))
        if unknown:
            raise KeyError(f"no hosts {unknown}; hosts: {', '.join(target.hosts())}")
        self.captured["hosts"] = chosen

    def act(self, target: Target) -> None:
        target.power.cycle(self.captured["hosts"])

    def undo(self, target: Target) -> None:
        target.power.on(self.captured.get("hosts", []))
