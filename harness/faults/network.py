"""Network faults inside the hosts' namespaces: partitions and packet loss (iptables), bandwidth (tbf),
latency (netem, only where the kernel has it). Every rule carries the comment quorum-fault:<id>, and heal
removes exactly the rules with that comment, so heal is idempotent and never touches anything else."""

from __future__ import annotations

import functools
import secrets
import shlex
from dataclasses import dataclass, field

from harness.net.netns import shape
from harness.backends.process.target import Cluster
from harness.errors import FaultError
from harness.faults.base import Fault
from harness.shell import CommandError, run

TAG = "quorum-fault"


def rule_tag(fault_id: str) -> list[str]:
    """iptables arguments that mark a rule as this fault's (what remove_tagged_rules looks for)."""
    return ["-m", "comment", "--comment", f"{TAG}:{fault_id}"]


def _iptables(cluster: Cluster, host: str, *args: str) -> None:
    cluster.exec(host, ["iptables", "-w", *args])


def remove_tagged_rules(cluster: Cluster, host: str, fault_id: str | None = None) -> int:
    """Delete the rules of one fault (or of every fault) inside a host. Returns how many were removed."""
    marker = f"{TAG}:{fault_id}" if fault_id else f"{TAG}:"
    removed = 0
    saved = cluster.exec(host, ["iptables-save", "-t", "filter"], check=False)
    for line in saved.splitlines():
        if line.startswith("-A ") and marker in line:
            cluster.exec(host, ["iptables", "-w", "-D", *shlex.split(line)[1:]], check=False)
            removed += 1
    return removed


@dataclass
class Partition(Fault):
    """Cut the hosts of side_a off from the hosts of side_b. Symmetric: nothing crosses either way;
    one-way: packets from side_a to side_b are dropped (side_b can still send to side_a)."""

    name = "partition"
    side_a: list[str] = field(default_factory=list)
    side_b: list[str] = field(default_factory=list)
    symmetric: bool = True

    def plan(self, cluster: Cluster) -> None:
        for host in [*self.side_a, *self.side_b]:
            cluster.topology.host(host)  # KeyError with the known names
        if set(self.side_a) & set(self.side_b) or not self.side_a or not self.side_b:
            raise FaultError(f"partition sides must be non-empty and disjoint: {self.side_a} | {self.side_b}")

    def _drop(self, cluster: Cluster, sender: str, receiver: str) -> None:
        src, dst = str(cluster.topology.address_of(sender)), str(cluster.topology.address_of(receiver))
        _iptables(cluster, sender, "-I", "OUTPUT", "-d", dst, *rule_tag(self.id), "-j", "DROP")
        _iptables(cluster, receiver, "-I", "INPUT", "-s", src, *rule_tag(self.id), "-j", "DROP")

    def act(self, cluster: Cluster) -> None:
        for a in self.side_a:
            for b in self.side_b:
                self._drop(cluster, a, b)
                if self.symmetric:
                    self._drop(cluster, b, a)

    def undo(self, cluster: Cluster) -> None:
        for host in {*self.side_a, *self.side_b}:
            remove_tagged_rules(cluster, host, self.id)


@dataclass
class IsolateEtcdLeader(Fault):
    """Partition the current etcd leader from the other etcd members: it is alone in the minority."""

    name = "isolate-etcd-leader"

    def plan(self, cluster: Cluster) -> None:
        leader = cluster.etcd.leader()
        if leader is None:
            raise FaultError("no etcd leader agreed on by the members; cannot isolate it")
        self.captured["leader"] = leader
        self.captured["others"] = [h.name for h in cluster.topology.etcd_hosts if h.name != leader]

    def _partition(self) -> Partition:
        return Partition(side_a=[self.captured["leader"]], side_b=self.captured["others"], id=self.id)

    def act(self, cluster: Cluster) -> None:
        self._partition().act(cluster)

    def undo(self, cluster: Cluster) -> None:
        if "leader" in self.captured:
            self._partition().undo(cluster)


@dataclass
class PacketLoss(Fault):
    """Drop a random fraction of a host's packets on its link, both directions (iptables statistic)."""

    name = "packet-loss"
    host: str = ""
    probability: float = 0.3

    def plan(self, cluster: Cluster) -> None:
        if not 0 < self.probability <= 1:
            raise FaultError(f"probability {self.probability} must be in (0, 1]")

    def act(self, cluster: Cluster) -> None:
        stat = ["-m", "statistic", "--mode", "random", "--probability", str(self.probability)]
        link = cluster.link(self.host)
        _iptables(cluster, self.host, "-I", "INPUT", "-i", link, *stat, *rule_tag(self.id), "-j", "DROP")
        _iptables(cluster, self.host, "-I", "OUTPUT", "-o", link, *stat, *rule_tag(self.id), "-j", "DROP")

    def undo(self, cluster: Cluster) -> None:
        remove_tagged_rules(cluster, self.host, self.id)


def _qdisc_root(cluster: Cluster, host: str) -> str:
    return cluster.exec(host, ["tc", "qdisc", "show", "dev", cluster.link(host), "root"], check=False)


@dataclass
class Bandwidth(Fault):
    """Limit what a host sends on its link with a token bucket (tbf)."""

    name = "bandwidth"
    host: str = ""
    rate_mbit: float = 100.0
    burst_kb: int = 256
    latency_ms: int = 50

    def act(self, cluster: Cluster) -> None:
        shape(cluster.netns(self.host), self.rate_mbit, self.burst_kb, self.latency_ms)

    def undo(self, cluster: Cluster) -> None:
        restore_link(cluster, self.host)


def restore_link(cluster: Cluster, host: str) -> None:
    """Back to the topology's own link: unshaped, or its baseline link_rate_mbit."""
    baseline = cluster.topology.network.link_rate_mbit
    if baseline:
        shape(cluster.netns(host), baseline)
    elif " tbf " in f" {_qdisc_root(cluster, host)} ":
        cluster.exec(host, ["tc", "qdisc", "del", "dev", cluster.link(host), "root"], check=False)


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
    host: str = ""
    delay_ms: int = 100
    jitter_ms: int = 0

    def unavailable(self, cluster: Cluster) -> str | None:
        return netem_missing()

    def act(self, cluster: Cluster) -> None:
        argv = ["tc", "qdisc", "replace", "dev", cluster.link(self.host), "root", "netem", "delay", f"{self.delay_ms}ms"]
        cluster.exec(self.host, argv + ([f"{self.jitter_ms}ms"] if self.jitter_ms else []))

    def undo(self, cluster: Cluster) -> None:
        if " netem " in f" {_qdisc_root(cluster, self.host)} ":
            cluster.exec(self.host, ["tc", "qdisc", "del", "dev", cluster.link(self.host), "root"], check=False)
