"""Flags shared by the leader-elected components (controller-manager and scheduler)."""

from __future__ import annotations

from harness.components.base import Layout, duration
from harness.components.flags import go_duration_s
from harness.topology import Host, LeaderElection

# component-base's leader-election defaults: what runs when a command line leaves the flags out (kubeadm does)
LEADER_ELECTION_DEFAULTS = {"--leader-elect": "true", "--leader-elect-lease-duration": "15s",
                            "--leader-elect-renew-deadline": "10s", "--leader-elect-retry-period": "2s"}


def election_of(flags: dict[str, str]) -> LeaderElection:
    """The lease timings a running command line gives (the defaults where it leaves a flag out)."""
    running = LEADER_ELECTION_DEFAULTS | flags
    return LeaderElection(enabled=running["--leader-elect"] == "true",
                          lease_duration_s=go_duration_s(running["--leader-elect-lease-duration"]),
                          renew_deadline_s=go_duration_s(running["--leader-elect-renew-deadline"]),
                          retry_period_s=go_duration_s(running["--leader-elect-retry-period"]))


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
