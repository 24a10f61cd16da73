"""What a remote cluster's own configuration promises, read from what runs there (Quorum did not write it): the
lease timings of the controller-manager and the scheduler, and etcd's heartbeat and election timeout. What each
component's keeper promises after a kill is the keeper's own (harness/backends/remote/keepers.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.components.etcd import settings_of
from harness.components.leader_elected import election_of
from harness.topology import Component, EtcdSettings, LeaderElection

if TYPE_CHECKING:
    from harness.backends.remote.target import RemoteTarget


def leader_election(target: "RemoteTarget") -> LeaderElection:
    """The slowest lease timings any running controller-manager or scheduler has (each bound the slowest allows)."""
    elections = [election_of(flags) for component in (Component.CONTROLLER_MANAGER, Component.SCHEDULER)
                 for flags in target.live_flags(component).values()]
    return LeaderElection(enabled=all(e.enabled for e in elections),
                          lease_duration_s=max(e.lease_duration_s for e in elections),
                          renew_deadline_s=max(e.renew_deadline_s for e in elections),
                          retry_period_s=max(e.retry_period_s for e in elections))


def etcd_settings(target: "RemoteTarget") -> EtcdSettings:
    """The slowest heartbeat and election timeout any running member has."""
    members = [settings_of(flags) for flags in target.live_flags(Component.ETCD).values()]
    return EtcdSettings(heartbeat_ms=max(m.heartbeat_ms for m in members),
                        election_timeout_ms=max(m.election_timeout_ms for m in members))
