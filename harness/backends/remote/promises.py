"""What a remote cluster's own keepers promise after a component is killed, read from its hosts: a systemd unit's
restart policy (`systemctl show` over SSH), a static pod's kubelet crash back-off (the kubelet's defaults, its
restart count from the mirror pod). A plain process has no keeper Quorum knows: Unsupported, with the fix."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from harness.clients.kubeapi import PodRestarts
from harness.components.etcd import settings_of
from harness.components.leader_elected import election_of
from harness.components.systemd_unit import UnitRestartPolicy, parse_show, show_command
from harness.errors import ClusterError
from harness.inventory.model import StaticPod, SystemdUnit
from harness.target.protocol import Unsupported, component_name
from harness.thresholds import STARTUP_ALLOWANCE_S, kubelet_back_off_reset_in_s, static_pod_restart_budget_s
from harness.topology import Component, EtcdSettings, LeaderElection

if TYPE_CHECKING:
    from harness.backends.remote.target import RemoteTarget

NO_KEEPER_FIX = "describe it as a static pod or a systemd unit if a kubelet or systemd runs it (docs/target.md)"


def unit_policy(target: "RemoteTarget", host: str, unit: str) -> UnitRestartPolicy:
    return parse_show(unit, target.exec(host, show_command(unit)))


def restart_budget_s(target: "RemoteTarget", component: Component | str, kill: int, earlier_restarts: int) -> float:
    """The `kill`-th SIGKILL in a row until the component answers again, as its keeper promises: the worst over
    the hosts that run it (a systemd unit may be configured otherwise on one host)."""
    name = Component(component_name(component))
    how = target.topology.components[name]
    if isinstance(how, StaticPod):
        return static_pod_restart_budget_s(name, kill, earlier_restarts)
    if isinstance(how, SystemdUnit):
        delays = [unit_policy(target, host, how.unit).restart_delay_s(kill, earlier_restarts)
                  for host in target.component_hosts(name)]
        return max(delays, default=0.0) + STARTUP_ALLOWANCE_S[name]
    raise Unsupported(f"{name.value} runs as {how.runs_as}: what restarts it, and how soon, is not known",
                      NO_KEEPER_FIX)


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


def restarts(target: "RemoteTarget", component: Component | str, host: str) -> int:
    """How often the component's keeper restarted it: a unit's NRestarts, a static pod's restartCount."""
    name = Component(component_name(component))
    how = target.topology.components[name]
    if isinstance(how, SystemdUnit):
        return unit_policy(target, host, how.unit).restarts
    if isinstance(how, StaticPod):
        return _mirror_pod(target, name, host).restarts
    raise Unsupported(f"how often {name.value}@{host} restarted is not known: it runs as {how.runs_as}",
                      NO_KEEPER_FIX)


def back_off_reset_in_s(target: "RemoteTarget", component: Component | str, host: str) -> float:
    """A static pod's kubelet back-off resets 10 min after its last restart; systemd's RestartSec does not grow
    (unless RestartSteps is set, which Quorum does not read yet)."""
    name = Component(component_name(component))
    if not isinstance(target.topology.components[name], StaticPod):
        return 0.0
    pod = _mirror_pod(target, name, host)
    return kubelet_back_off_reset_in_s(pod.restarts, pod.started_at, time.time())


def _mirror_pod(target: "RemoteTarget", name: Component, host: str) -> PodRestarts:
    node = target.exec(host, ["hostname"]).strip()
    pod = target.api.mirror_pod(name.value, node)
    if pod is None:
        raise ClusterError(f"no mirror pod {name.value}-{node} for {host} through {target.topology.api_endpoint}",
                           "the kubelet names a static pod <name>-<node name>: is the node named otherwise? "
                           "(quorum inventory check shows whether the API answers)")
    return pod
