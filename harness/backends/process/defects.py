"""Apply a topology's deliberate defects (broken twins only). Each defect is applied after the part of the
cluster it breaks exists, and marked so that `quorum heal` never "repairs" a twin into a healthy cluster."""

from __future__ import annotations

from harness.backends.process import cpu_limit
from harness.net import netns
from harness.components import etcd as etcd_component
from harness.components.base import ComponentSpec, Layout
from harness.shell import run
from harness.topology import Component, Topology

TAG = "quorum-defect"


def not_in_containers(topology: Topology) -> str | None:
    """Why the twin cannot be built with its hosts as containers (None: it can)."""
    if topology.defects.cpu_limit_m:
        return ("the cpu_limit_m defect is applied by the process backend's keepers on this machine's cgroups, not "
                "inside containers")
    return None


def after_pki(topology: Topology, layout: Layout) -> None:
    if topology.defects.key_mode is not None:
        for key in layout.pki.directory.rglob("*.key"):
            key.chmod(int(topology.defects.key_mode, 8))


def after_network(topology: Topology, run_id: str) -> None:
    for member in topology.etcd_hosts:
        for blocked in topology.defects.block_etcd_clients_from:
            if blocked == member.name:
                continue
            run(["ip", "netns", "exec", netns.netns_name(run_id, member.name), "iptables", "-w", "-I", "INPUT",
                 "-s", str(topology.address_of(blocked)), "-p", "tcp", "--dport", str(etcd_component.CLIENT_PORT),
                 "-m", "comment", "--comment", TAG, "-j", "DROP"])


def after_ready(topology: Topology, cluster) -> None:
    if topology.defects.phantom_etcd_member:
        nobody = topology.network.subnet.broadcast_address - 2  # inside our subnet, owned by no host
        cluster.etcd.post(cluster.etcd_urls[0], "/v3/cluster/member/add",
                          {"peerURLs": [f"https://{nobody}:{etcd_component.PEER_PORT}"]})


def cpu_cgroup(topology: Topology, run_id: str, spec: ComponentSpec) -> str:
    """The cgroup a limited component's keeper puts each of its starts in ("" for every other component)."""
    if spec.component in topology.defects.cpu_limit_m:
        return str(cpu_limit.directory(run_id, spec.id))
    return ""


def after_up(topology: Topology, cluster, run_id: str) -> None:
    """Once the cluster is up (a limit from the start would slow the build by minutes): each limited component's CPU
    quota, its running processes moved in; their keepers put every restart in the same cgroups."""
    for component, millicores in topology.defects.cpu_limit_m.items():
        for host in cluster.component_hosts(component):
            path = cpu_limit.create(run_id, f"{component.value}@{host}", millicores)
            pid = cluster.pid(component, host)
            if pid is not None:
                cpu_limit.join(path, pid)
