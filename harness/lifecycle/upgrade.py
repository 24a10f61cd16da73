"""A rolling release upgrade of the control plane: planned whole against the version skew policy before anything
acts, then one component at a time (apiservers, controller-managers, schedulers), each ready on the new release
before the next is touched; a step that is not is rolled back and the upgrade stops."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.faults import Nemesis, Upgrade
from harness.faults.upgrade import control_plane_versions
from harness.lifecycle.skew import check_step, upgrade_steps
from harness.scenario.rollout import RolloutResult, Timeout, component_ready, roll_back, rolling_change
from harness.target.health import LEASES
from harness.target.protocol import Target, split_id
from harness.objectives.bounds import leader_failover_bound_s
from harness.thresholds import STARTUP_ALLOWANCE_S
from harness.toolchain.versions import Version
from harness.topology import Component


def plan_upgrade(versions: dict[str, Version], to: Version, steps: list[str] | None = None) -> list[str]:
    """The steps (component ids) in the order the policy requires, or `steps` in the order given, each checked
    against the skew policy as the control plane would stand after the steps before it: a SkewViolation names
    the first step the policy does not support, before anything acts."""
    order = list(steps) if steps is not None else upgrade_steps(list(versions))
    state = dict(versions)
    for component_id in order:
        check_step(state, component_id, to)
        state[component_id] = to
    return order


class ReleaseGate:
    """When an upgrade (or rollback) step is done: the component ready and running its release; for a leader-elected
    one, its lease held by a running process that is not the one the step restarted. (Gated on health alone, the
    next step restarts the candidates while the restarted holder's lease is still running out: each fresh candidate
    then waits a whole lease duration from its own start, and the lease stays unheld past a failover; seen on ha3,
    29-31 s against 24.3 s, docs/lifecycle.md.)"""

    def __init__(self, release: Callable[[str], Version]) -> None:
        self.release = release  # component id -> the release it must run once the step is done
        self.holders: dict[str, str | None] = {}  # component id -> the lease identity its step restarts, if any

    def before(self, cluster: Target, component_id: str) -> None:
        component, host = split_id(component_id)
        if component in LEASES:
            holder = cluster.api.lease_holder(component)
            on_host = holder is not None and cluster.health.lease_host(holder.identity) == host
            self.holders[component_id] = holder.identity if on_host else None

    def __call__(self, cluster: Target, component_id: str) -> bool:
        component, host = split_id(component_id)
        if not component_ready(cluster, component_id) or \
                cluster.running_version(component, host) != self.release(component_id):
            return False
        if component not in LEASES:
            return True
        holder = cluster.api.lease_holder(component)
        return holder is not None and holder.identity != self.holders.get(component_id) and \
            cluster.pid(component, cluster.health.lease_host(holder.identity)) is not None


@dataclass
class UpgradeResult:
    to: Version
    before: dict[str, Version]  # each component's release before the upgrade
    rollout: RolloutResult  # what changed, where it stopped, each step's time until ready on the new release

    @property
    def completed(self) -> bool:
        return self.rollout.completed


def step_timeout_s(cluster: Target) -> Callable[[str], float]:
    """How long a step may take to pass its gate, per component: its start-up allowance, and for a leader-elected
    one also a lease failover as the configuration promises it (the restarted holder's lease runs out first; a
    cluster with slow leases must not have its upgrade aborted for them)."""
    failover = leader_failover_bound_s(cluster.leader_election())

    def timeout(component_id: str) -> float:
        component = split_id(component_id)[0]
        return STARTUP_ALLOWANCE_S[Component(component)] + (failover if component in LEASES else 0.0)
    return timeout


def rolling_upgrade(cluster: Target, nemesis: Nemesis, to: Version, *, ready_timeout_s: Timeout | None = None,
                    steps: list[str] | None = None, flags: dict[str, dict[str, str]] | None = None,
                    at_once: int = 1) -> UpgradeResult:
    """Upgrade every running control-plane component (or `steps`) to `to`, `at_once` components at a time (the
    cluster's own strategy: Target.upgrade_max_unavailable), each step given `ready_timeout_s` (default:
    step_timeout_s); `flags` gives, per component id, flags the new release runs with (replaced or added). The
    changes stay applied (the nemesis heals them at the end; `roll_back_upgrade` undoes them in order)."""
    before = control_plane_versions(cluster)
    order = plan_upgrade(before, to, steps)
    changes = [Upgrade(component=cid, to=str(to), replace=(flags or {}).get(cid, {})) for cid in order]
    gate = ReleaseGate(lambda component_id: to)
    timeout = step_timeout_s(cluster) if ready_timeout_s is None else ready_timeout_s
    return UpgradeResult(to, before, rolling_change(cluster, nemesis, changes, ready_timeout_s=timeout,
                                                    ready=gate, before_each=gate.before, at_once=at_once))


def roll_back_upgrade(cluster: Target, nemesis: Nemesis, result: UpgradeResult, *,
                      ready_timeout_s: Timeout | None = None) -> bool:
    """Every upgraded component back on its release from before, newest step first (schedulers, then
    controller-managers, then apiservers: the policy's order backwards), each ready on it before the next."""
    gate = ReleaseGate(lambda component_id: result.before[component_id])
    timeout = step_timeout_s(cluster) if ready_timeout_s is None else ready_timeout_s
    return roll_back(cluster, nemesis, result.rollout, ready_timeout_s=timeout, ready=gate, before_each=gate.before)
