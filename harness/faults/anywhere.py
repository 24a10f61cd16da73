"""Faults that name what to break the same way on every backend and pick the implementation for the cluster."""

from __future__ import annotations

from harness.faults.base import Fault
from harness.faults.kind_node import KindEtcdLeaderPartition
from harness.faults.network import IsolateEtcdLeader
from harness.faults.process import Kill, Pause, Stop
from harness.faults.static_pod import StaticPodKill, StaticPodPause, StaticPodStop


def kill_component(cluster, component: str, host: str) -> Fault:
    """SIGKILL a control-plane component wherever it runs: the process Quorum's supervisor keeps on the process
    and docker backends, the kubelet's static pod on kind. Bringing it back is the cluster's own job either way."""
    if cluster.state.backend == "kind":
        return StaticPodKill(node=host, component=component)
    return Kill(component=f"{component}@{host}")


def pause_component(cluster, component: str, host: str) -> Fault:
    """SIGSTOP a control-plane component until heal (SIGCONT), wherever it runs: the supervisor's process, or on
    kind the static pod's process in its node. The paused pid is captured["pid"]."""
    if cluster.state.backend == "kind":
        return StaticPodPause(node=host, component=component)
    return Pause(component=f"{component}@{host}")


def crash_and_keep_down(cluster, component: str, host: str) -> Fault:
    """SIGKILL a control-plane component and keep it down until heal, wherever it runs: the supervisor holds its
    process on the process and docker backends; on kind its manifest leaves the kubelet's manifest directory."""
    if cluster.state.backend == "kind":
        return StaticPodStop(node=host, component=component)
    return Stop(component=f"{component}@{host}", signal="SIGKILL")


def isolate_etcd_leader(cluster) -> Fault:
    """Cut the etcd leader off from the other members, wherever they run: the leader's host from the other etcd
    hosts (iptables in their namespaces), or on kind the leader's control-plane node from every other node. The
    leader is resolved when the fault is planned (captured["leader"])."""
    if cluster.state.backend == "kind":
        return KindEtcdLeaderPartition()
    return IsolateEtcdLeader()
