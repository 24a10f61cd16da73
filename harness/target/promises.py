"""What a cluster's own configuration promises: the second check beside the objectives (what the user needs).
Part of the Target (harness/target/protocol.py); each bound a scenario judges by derives from one of these or from
what a component's keeper promises after a kill (harness/target/keeper.py)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:
    from harness.objectives.bounds import NodeMonitoring
    from harness.topology import EtcdSettings, HealthCheck, LeaderElection


class ConfiguredPromises(ABC):
    topology: Any

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

    def node_monitoring(self) -> "NodeMonitoring":
        """The node lifecycle controller's grace and monitor periods (how soon a dead node is declared NotReady): the
        controller-manager's flags as the topology gives them, else their upstream defaults."""
        from harness.components.flags import go_duration_s
        from harness.objectives.bounds import NodeMonitoring

        settings = getattr(self.topology, "controller_manager", None)
        flags = settings.extra_flags if settings is not None else {}
        defaults = NodeMonitoring()
        grace, period = flags.get("--node-monitor-grace-period"), flags.get("--node-monitor-period")
        return NodeMonitoring(grace_s=go_duration_s(grace) if grace else defaults.grace_s,
                              period_s=go_duration_s(period) if period else defaults.period_s)
