"""A rolling change across control-plane components, one at a time, gated on readiness.

This is the procedure the Lokomotive upgrade lacked (seed 002): change one component, wait until it is ready
again, and only then touch the next; if it does not become ready, roll that one back and stop, so the API never
loses all of its backends. A flag change and a release upgrade (harness/lifecycle/) are both rolled this way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from harness.objectives.policy import Objectives
from harness.faults import ModifyFlags, Nemesis
from harness.faults.component import ComponentFault
from harness.target.protocol import HostRole, Target, split_id
from harness.scenario.helpers import lb_takes_back_s
from harness.thresholds import AVAILABILITY_MIN_WINDOW_S
from harness.topology import Component
from harness.wait import eventually


@dataclass
class RolloutResult:
    changed: list[str] = field(default_factory=list)  # components ('<component>@<host>') running the change
    failed_on: str | None = None  # the component that did not become ready (rolled back)
    faults: list[ComponentFault] = field(default_factory=list)  # the changes still applied (healed by the nemesis)
    step_s: dict[str, float] = field(default_factory=dict)  # each changed component: change made until ready

    @property
    def completed(self) -> bool:
        return self.failed_on is None


def component_ready(cluster: Target, component_id: str) -> bool:
    """An apiserver ready (/readyz: what the LB routes by), any other component passing its health check."""
    component, host = split_id(component_id)
    if component == Component.APISERVER.value:
        return cluster.apiserver(host).ready(timeout=1.0)
    return cluster.health.component_healthy(component, host)


Timeout = float | Callable[[str], float]  # seconds, or seconds per component id


def ready_within(cluster: Target, component_id: str, timeout_s: Timeout,
                 ready: Callable[[Target, str], bool] = component_ready) -> bool:
    return eventually(lambda: ready(cluster, component_id),
                      timeout_s(component_id) if callable(timeout_s) else timeout_s, 0.2)


def inject_together(nemesis: Nemesis, changes: list[ComponentFault]) -> list[ComponentFault]:
    """Inject every change at the same moment (a restart blocks for the component's shutdown delay: one after
    the other would not be at once); the first error is raised once all have returned."""
    if len(changes) == 1:
        return [nemesis.inject(changes[0])]
    with ThreadPoolExecutor(max_workers=len(changes)) as pool:
        futures = [pool.submit(nemesis.inject, change) for change in changes]
    return [future.result() for future in futures]


def rolling_change(cluster: Target, nemesis: Nemesis, changes: list[ComponentFault], *, ready_timeout_s: Timeout,
                   readiness_gate: bool = True, ready: Callable[[Target, str], bool] = component_ready,
                   before_each: Callable[[Target, str], None] | None = None, at_once: int = 1) -> RolloutResult:
    """Inject the changes `at_once` at a time. With the readiness gate, each component must be `ready` within
    `ready_timeout_s` before the next batch is touched; a batch with one that is not has those healed, and the
    rollout stops. Without it (the defect), every change is made without waiting. `before_each` sees each
    component just before its change (what the gate must compare with afterwards)."""
    result = RolloutResult()
    for first in range(0, len(changes), max(1, at_once)):
        chunk = changes[first:first + max(1, at_once)]
        for change in chunk if readiness_gate else ():
            # one that restarts by itself is waited for: a change must see what it changes (when a batch took every
            # apiserver down, the controller-manager leaders lost their leases and exited; docs/lifecycle.md)
            ready_within(cluster, change.component, ready_timeout_s)
        for change in chunk if before_each else ():
            before_each(cluster, change.component)
        started = time.monotonic()
        batch = inject_together(nemesis, chunk)
        stuck = []
        for fault in batch:
            if readiness_gate and not ready_within(cluster, fault.component, ready_timeout_s, ready):
                stuck.append(fault)
                continue
            if readiness_gate:
                result.step_s[fault.component] = round(time.monotonic() - started, 2)
            result.changed.append(fault.component)
            result.faults.append(fault)
        if stuck:
            for fault in stuck:  # back on its configured command line: ready as before the change
                nemesis.heal(fault)
                ready_within(cluster, fault.component, ready_timeout_s)
            result.failed_on = stuck[0].component
            return result
    return result


def rolling_flag_change(cluster: Target, nemesis: Nemesis, flags: dict[str, str], *, ready_timeout_s: float,
                        readiness_gate: bool = True) -> RolloutResult:
    """Apply `flags` (replaced or added) to each apiserver in turn."""
    changes = [ModifyFlags(component=f"{Component.APISERVER.value}@{host}", replace=flags)
               for host in cluster.hosts(HostRole.CONTROLLER)]
    return rolling_change(cluster, nemesis, changes, ready_timeout_s=ready_timeout_s, readiness_gate=readiness_gate)


def roll_back(cluster: Target, nemesis: Nemesis, result: RolloutResult, *, ready_timeout_s: Timeout,
              ready: Callable[[Target, str], bool] = component_ready,
              before_each: Callable[[Target, str], None] | None = None) -> bool:
    """Undo a rolling change the way it was made: one component at a time, newest first, each ready again before
    the next is touched. Whether every one was. (Healing all the changes at once restarts every apiserver
    together: an outage through the LB, and the controller-manager and scheduler leaders, unable to renew,
    exit about a renew deadline later, in the middle of whatever runs next; seen in CI.)"""
    all_ready = True
    for component_id, fault in reversed(list(zip(result.changed, result.faults))):
        if before_each:
            before_each(cluster, component_id)
        nemesis.heal(fault)
        all_ready = ready_within(cluster, component_id, ready_timeout_s, ready) and all_ready
    result.faults.clear()
    return all_ready


def settle(cluster: Target, prober, objectives: Objectives) -> None:
    """After a rolling change, before judging: the LB has seen the last restarted apiserver up (its rise checks, or
    where the configuration states none the objective), and the prober's availability window is long enough to
    judge."""
    time.sleep(lb_takes_back_s(cluster, objectives) + 1)
    time.sleep(max(0.0, prober.started_at + AVAILABILITY_MIN_WINDOW_S - time.monotonic()))
