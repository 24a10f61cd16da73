"""A kubelet as a component's keeper (harness/target/keeper.py), on any target whose hosts run one: kind's nodes, a
kubeadm host over SSH. Holds and overrides are StaticPods' manifest moves and rewrites (harness/components/
static_pod.py); the restarts are the mirror pod's, and the promises the kubelet's crash back-off
(harness/thresholds.py). Where the target finds the mirror pod and the node's name is its own business: it hands
them over as functions of the host."""

from __future__ import annotations

import time
from collections.abc import Callable

from harness.clients.kubeapi import PodRestarts
from harness.components.static_pod import CRASH_LOOP, Host, StaticPods
from harness.errors import ClusterError
from harness.target.capabilities import Capability
from harness.target.keeper import Keeper
from harness.thresholds import (KUBELET_MANIFEST_PICKUP_S, crash_loop_return_s, held_manifest_return_s,
                                kubelet_back_off_reset_in_s, static_pod_restart_budget_s)
from harness.topology import Component

# the newest container log of the pod <name>-<node> as the kubelet keeps it; the names are arguments, never script
LOG_TAIL = 'ls -t /var/log/pods/kube-system_"$1"-"$2"_*/"$1"/*.log 2>/dev/null | head -n 1 | xargs -r tail -n "$3"'


class StaticPodKeeper(Keeper):
    """`pod_restarts(host)`: the component's pod there as the API reports it; `node_name(host)`: the kubelet's
    name for the host (its pods are named <component>-<node name>)."""

    OFFERS = Keeper.OFFERS | {Capability.STATIC_PODS}
    override_applied_within_s = KUBELET_MANIFEST_PICKUP_S  # the kubelet's file check, then its relist

    def __init__(self, hosts: Host, pods: StaticPods, component: Component,
                 pod_restarts: Callable[[str], PodRestarts], node_name: Callable[[str], str]) -> None:
        self.hosts = hosts
        self.pods = pods
        self.component = component
        self.pod_restarts = pod_restarts
        self.node_name = node_name

    @property
    def name(self) -> str:
        return self.component.value

    def hold(self, host: str, signal: str = "SIGKILL") -> None:
        earlier = None
        if self.name in CRASH_LOOP:  # its return waits out the back-off these restarts add to
            try:
                earlier = self.restarts(host)
            except ClusterError:
                pass  # unknown: held_return_s allows the back-off's cap
        self.pods.hold(self.hosts, host, self.name, signal, earlier_restarts=earlier)

    def release(self, host: str) -> bool:
        return self.pods.release(self.hosts, host, self.name)

    def held(self, host: str) -> bool:
        return self.pods.is_held(self.hosts, host, self.name)

    def command_line(self, host: str) -> list[str]:
        """The manifest's, which is what the kubelet starts next (the running process may predate it)."""
        return self.pods.command_line(self.hosts, host, self.name)

    def override(self, host: str, argv: list[str]) -> None:
        self.pods.override(self.hosts, host, self.name, argv)

    def restore(self, host: str) -> bool:
        return self.pods.restore(self.hosts, host, self.name)

    def restarts(self, host: str) -> int:
        """The pod's restartCount: the kubelet's crash back-off doubles with each restart (reset after 10 min
        without one)."""
        return self.pod_restarts(host).restarts

    def restart_budget_s(self, *, kill: int = 1, earlier_restarts: int = 0) -> float:
        return static_pod_restart_budget_s(self.component, kill, earlier_restarts)

    def back_off_reset_in_s(self, host: str) -> float:
        pod = self.pod_restarts(host)
        return kubelet_back_off_reset_in_s(pod.restarts, pod.started_at, time.time())

    def held_return_s(self, host: str) -> float:
        """The manifest's pick-up and one crash back-off step; for a crash loop, the back-off its kills built."""
        if self.name not in CRASH_LOOP:
            return held_manifest_return_s(self.component)
        earlier, kills = self.pods.crashes(self.hosts, host, self.name)
        return crash_loop_return_s(self.component, earlier, kills)

    def log_tail(self, host: str, lines: int = 80) -> str:
        return self.hosts.exec(host, ["sh", "-c", LOG_TAIL, "sh", self.name, self.node_name(host), str(int(lines))],
                               check=False)

    def sweep(self, host: str) -> list[str]:
        return self.pods.sweep(self.hosts, host, (self.name,))
