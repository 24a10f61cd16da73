"""What a cluster's own configuration promises: the second check beside the objectives (what the user needs).
Part of the Target (harness/target/protocol.py); each bound a scenario judges by derives from one of these."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from harness.topology import Component

if TYPE_CHECKING:
    from harness.topology import EtcdSettings, HealthCheck, LeaderElection


class ConfiguredPromises(ABC):
    topology: Any

    @abstractmethod
    def restart_budget_s(self, component: Component | str, *, kill: int = 1, earlier_restarts: int = 0) -> float:
        """How long after the `kill`-th SIGKILL in a row the component is healthy again, as the cluster's own
        self-healing promises (its restart back-off plus the component's start-up allowance)."""

    def back_off_reset_in_s(self, component: Component | str, host: str) -> float:
        """Seconds until a crash of the component on `host` meets the cluster's first restart back-off again (0:
        it does now): a back-off that grows with recent restarts (a kubelet's, Quorum's supervisor's) resets only
        after a long enough run. A keeper whose back-off does not grow (systemd's RestartSec) is always there."""
        return 0.0

    @abstractmethod
    def held_return_s(self, component: Component | str, host: str) -> float:
        """From `release` of the component held on `host` until it answers again, as the cluster's self-healing
        promises (asked after the release: how long it was held may count)."""

    @abstractmethod
    def load_balancer_check(self) -> "HealthCheck | None":
        """The load balancer's health check of the apiservers as configured (None: it checks nothing)."""

    def leader_election(self) -> "LeaderElection":
        """The lease timings the configuration gives kube-controller-manager and kube-scheduler (the bounds of
        leader failover and give-up derive from them): the topology's, where Quorum wrote the configuration."""
        return self.topology.leader_election

    def upgrade_max_unavailable(self) -> int:
        """How many components of one kind the cluster's own upgrade strategy restarts at once (a self-hosted
        DaemonSet's maxUnavailable; one for a node-by-node upgrade): the topology's, where it says (kind's and an
        inventory's do not: their upgrades are kubeadm's, node by node)."""
        strategy = getattr(self.topology, "upgrade", None)
        return strategy.max_unavailable if strategy is not None else 1

    def etcd_settings(self) -> "EtcdSettings":
        """etcd's heartbeat and election timeout as configured (the bounds of a leader change derive from them)."""
        return self.topology.etcd
