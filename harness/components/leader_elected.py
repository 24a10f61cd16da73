"""Flags shared by the leader-elected components (controller-manager and scheduler)."""

from __future__ import annotations

from harness.components.base import Layout, duration
from harness.topology import Host


def common_flags(layout: Layout, host: Host, who: str, secure_port: int) -> list[str]:
    election = layout.topology.leader_election
    kubeconfig = layout.kubeconfig(host.name, who)
    flags = [
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        f"--bind-address={layout.address(host)}",
        f"--secure-port={secure_port}",
        f"--leader-elect={'true' if election.enabled else 'false'}",
    ]
    if election.enabled:
        flags += [
            f"--leader-elect-lease-duration={duration(election.lease_duration_s)}",
            f"--leader-elect-renew-deadline={duration(election.renew_deadline_s)}",
            f"--leader-elect-retry-period={duration(election.retry_period_s)}",
        ]
    return flags
