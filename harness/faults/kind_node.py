"""Faults of one kind node container: frozen (`docker pause`), or cut off from the cluster's other nodes by
iptables inside it (any node, or the one whose stacked etcd member leads). Heal leaves the node running and
connected; partition rules carry the fault's tag (harness/faults/network.py), so heal removes exactly them, also
after a killed run (`quorum heal`)."""

from __future__ import annotations

from dataclasses import dataclass

from python_on_whales.exceptions import DockerException

from harness.backends.docker.engine import client
from harness.errors import FaultError
from harness.faults.network import remove_tagged_rules, rule_tag
from harness.faults.static_pod import KindNodeFault


@dataclass
class KindNodePause(KindNodeFault):
    """`docker pause` a node (cgroup freezer): its kubelet and static pods stop, sockets stay open; peers see
    a silent node rather than a dead one."""

    name = "kind-node-pause"

    def act(self, cluster) -> None:
        client().container.pause(cluster.node(self.node))

    def undo(self, cluster) -> None:
        name = cluster.node(self.node)
        try:
            if client().container.inspect(name).state.paused:
                client().container.unpause(name)
        except DockerException as error:
            raise FaultError(f"could not unpause kind node {self.node}: {error}", f"docker unpause {name}") from None


@dataclass
class KindNodePartition(KindNodeFault):
    """iptables inside `node` drop every packet from and to the cluster's other nodes. Not the load balancer
    and not the host: on a control-plane node its etcd member is alone in the minority while its apiserver
    stays reachable, so the balancer's health check (not a dead socket) must take it out of rotation."""

    name = "kind-node-partition"

    def plan(self, cluster) -> None:
        super().plan(cluster)
        peers = {node: cluster.address(node) for node in cluster.nodes() if node != self.node}
        stopped = sorted(node for node, address in peers.items() if address is None)
        if stopped:
            raise FaultError(f"kind nodes {stopped} are not running, so there is nothing to cut {self.node} from",
                             "quorum status; quorum down and up again")
        self.captured["peers"] = peers

    def act(self, cluster) -> None:
        for address in self.captured["peers"].values():
            cluster.exec(self.node, ["iptables", "-w", "-I", "INPUT", "-s", address, *rule_tag(self.id), "-j", "DROP"])
            cluster.exec(self.node, ["iptables", "-w", "-I", "OUTPUT", "-d", address, *rule_tag(self.id), "-j", "DROP"])

    def undo(self, cluster) -> None:
        remove_tagged_rules(cluster, self.node, self.id)


@dataclass
class KindEtcdLeaderPartition(KindNodePartition):
    """The control-plane node whose etcd member leads, cut off from the cluster's other nodes: on kubeadm's stacked
    etcd each control-plane node holds one member, so the leader is alone in the minority (the kind form of
    isolate-etcd-leader). The leader is resolved when the fault is planned, so the journal names its node."""

    name = "kind-isolate-etcd-leader"

    def plan(self, cluster) -> None:
        leader = cluster.etcd.leader()
        if leader is None:
            raise FaultError("no etcd leader agreed on by the members; cannot isolate it",
                             "quorum status shows the members; wait until etcd has a leader")
        self.node = leader
        self.captured["leader"] = leader
        super().plan(cluster)
