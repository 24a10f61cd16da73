"""Network faults: partitions and packet loss (tagged iptables rules inside the hosts), bandwidth (tbf), latency
(netem, only where the kernel has it). Every rule carries the fault's tag, so heal removes exactly its own rules,
and the target restores its own idea of a healthy link."""

from __future__ import annotations

import functools
import secrets
from dataclasses import dataclass, field

from harness.errors import FaultError
from harness.faults.base import Fault
from harness.shell import CommandError, run
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole, Target


def _known(target: Target, hosts: list[str]) -> None:
    unknown = sorted(set(hosts) - set(target.hosts()))
    if unknown:
        raise KeyError(f"no hosts {unknown}; hosts: {', '.join(target.hosts())}")


@dataclass
class Partition(Fault):
    """Cut the hosts of side_a off from the hosts of side_b. Symmetric: nothing crosses either way;
    one-way: packets from side_a to side_b are dropped (side_b can still send to side_a)."""

    name = "partition"
    requires = (Capability.NETWORK,)
    side_a: list[str] = field(default_factory=list)
    side_b: list[str] = field(default_factory=list)
    symmetric: bool = True

    def plan(self, target: Target) -> None:
        _known(target, [*self.side_a, *self.side_b])
        if set(self.side_a) & set(self.side_b) or not self.side_a or not self.side_b:
            raise FaultError(f"partition sides must be non-empty and disjoint: {self.side_a} | {self.side_b}")

    def act(self, target: Target) -> None:
        # the rules go on the smaller side only, all of a host's in one command: rules inside one host cut the traffic
        # both ways, so the partition is whole after the fewest commands, just before the nemesis records fault.in_place
        if len(self.side_a) <= len(self.side_b):
            for a in self.side_a:
                target.network.drop(a, destinations=self.side_b, sources=self.side_b if self.symmetric else [], tag=self.id)
        else:
            for b in self.side_b:
                target.network.drop(b, sources=self.side_a, destinations=self.side_a if self.symmetric else [], tag=self.id)

    def undo(self, target: Target) -> None:
        for host in {*self.side_a, *self.side_b}:
            target.network.heal(host, self.id)


@dataclass
class IsolateEtcdLeader(Fault):
    """Partition the current etcd leader's host from the other etcd members' hosts: it is alone in the minority.
    The leader is resolved when the fault is planned (captured["leader"]), so the journal names it."""

    name = "isolate-etcd-leader"
    requires = (Capability.NETWORK,)

    def plan(self, target: Target) -> None:
        leader = target.etcd.leader()
        if leader is None:
            raise FaultError("no etcd leader agreed on by the members; cannot isolate it",
                             "quorum status shows the members; wait until etcd has a leader")
        self.captured["leader"] = leader
        self.captured["others"] = [h for h in target.hosts(HostRole.ETCD) if h != leader]

    def _partition(self) -> Partition:
        return Partition(side_a=[self.captured["leader"]], side_b=self.captured["others"], id=self.id)

    def act(self, target: Target) -> None:
        self._partition().act(target)

    def undo(self, target: Target) -> None:
        if "leader" in self.captured:
            self._partition().undo(target)


@dataclass
class PacketLoss(Fault):
    """Drop a random fraction of a host's packets on its link, both directions (iptables statistic)."""

    name = "packet-loss"
    requires = (Capability.NETWORK,)
    host: str = ""
    probability: float = 0.3

    def plan(self, target: Target) -> None:
        _known(target, [self.host])
        if not 0 < self.probability <= 1:
            raise FaultError(f"probability {self.probability} must be in (0, 1]")

    def act(self, target: Target) -> None:
        target.network.drop_at_random(self.host, self.probability, tag=self.id)

    def undo(self, target: Target) -> None:
        target.network.heal(self.host, self.id)


@dataclass
class Bandwidth(Fault):
    """Limit what a host sends on its link with a token bucket (tbf); heal restores the target's own link."""

    name = "bandwidth"
    requires = (Capability.SHAPE,)
    host: str = ""
    rate_mbit: float = 100.0
    burst_kb: int = 256
    latency_ms: int = 50

    def plan(self, target: Target) -> None:
        _known(target, [self.host])
        if not self.rate_mbit > 0:
            raise FaultError(f"rate {self.rate_mbit} Mbit/s must be positive")

    def act(self, target: Target) -> None:
        target.network.shape(self.host, self.rate_mbit, burst_kb=self.burst_kb, latency_ms=self.latency_ms, tag=self.id)

    def undo(self, target: Target) -> None:
        target.network.restore_link(self.host, tag=self.id)  # only its own shaping: a later fault's stays until its undo


@functools.lru_cache(maxsize=1)
def netem_missing() -> str | None:
    """Why netem cannot be used here, or None. Probed once in a throwaway namespace."""
    probe = f"qrm-probe-{secrets.token_hex(3)}"
    try:
        run(["ip", "netns", "add", probe])
        run(["ip", "-n", probe, "link", "add", "d0", "type", "dummy"])
        run(["ip", "netns", "exec", probe, "tc", "qdisc", "add", "dev", "d0", "root", "netem", "delay", "1ms"])
        return None
    except CommandError as error:
        return f"the kernel has no netem qdisc (sch_netem): {error.output.strip()[:120]}"
    finally:
        run(["ip", "netns", "del", probe], check=False)


@dataclass
class Latency(Fault):
    """Delay a host's outgoing packets with netem. Unavailable (with the reason) where the kernel lacks netem."""

    name = "latency"
    requires = (Capability.SHAPE,)
    host: str = ""
    delay_ms: int = 100
    jitter_ms: int = 0

    def unavailable(self, target: Target) -> str | None:
        return super().unavailable(target) or netem_missing()

    def plan(self, target: Target) -> None:
        _known(target, [self.host])

    def act(self, target: Target) -> None:
        target.network.delay(self.host, self.delay_ms, self.jitter_ms, tag=self.id)

    def undo(self, target: Target) -> None:
        target.network.restore_link(self.host, tag=self.id)

