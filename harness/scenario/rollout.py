"""A rolling flag change across the apiservers, one at a time, gated on readiness.

This is the procedure the Lokomotive upgrade lacked (seed 002): change one apiserver, wait until it is
ready again, and only then touch the next; if it does not become ready, roll that one back and stop,
so the API never loses all of its backends.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from harness.target.protocol import HostRole, Target
from harness.faults import ModifyFlags, Nemesis
from harness.faults.base import Fault


@dataclass
class RolloutResult:
    changed: list[str] = field(default_factory=list)  # hosts running the new flags
    failed_on: str | None = None  # the host that did not become ready (rolled back)
    faults: list[Fault] = field(default_factory=list)  # the changes still applied (healed by the nemesis)

    @property
    def completed(self) -> bool:
        return self.failed_on is None


def _ready_within(cluster: Target, host: str, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cluster.apiserver(host).ready(timeout=1.0):
            return True
        time.sleep(0.2)
    return False


def rolling_flag_change(cluster: Target, nemesis: Nemesis, flags: dict[str, str], *, ready_timeout_s: float,
                        readiness_gate: bool = True) -> RolloutResult:
    """Apply `flags` (replaced or added) to each apiserver in turn. Without the readiness gate (the
    defect), every apiserver is changed without waiting."""
    result = RolloutResult()
    for host in cluster.hosts(HostRole.CONTROLLER):
        fault = nemesis.inject(ModifyFlags(component=f"kube-apiserver@{host}", replace=flags))
        if readiness_gate and not _ready_within(cluster, host, ready_timeout_s):
            nemesis.heal(fault)
            _ready_within(cluster, host, ready_timeout_s)
            result.failed_on = host
            return result
        result.changed.append(host)
        result.faults.append(fault)
    return result


def roll_back(cluster: Target, nemesis: Nemesis, result: RolloutResult, *, ready_timeout_s: float) -> bool:
    """Undo a rolling change the way it was made: one apiserver at a time, newest first, each ready again before
    the next is touched. Whether every one was. (Healing all the changes at once restarts every apiserver
    together: an outage through the LB, and the controller-manager and scheduler leaders, unable to renew,
    exit about a renew deadline later, in the middle of whatever runs next; seen in CI.)"""
    ready = True
    for host, fault in reversed(list(zip(result.changed, result.faults))):
        nemesis.heal(fault)
        ready = _ready_within(cluster, host, ready_timeout_s) and ready
    result.faults.clear()
    return ready
