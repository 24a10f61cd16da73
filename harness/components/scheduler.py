"""kube-scheduler: leader-elected, with the topology's lease timings."""

from __future__ import annotations

from harness.components.base import ComponentSpec, HealthProbe, Layout
from harness.components.leader_elected import common_flags
from harness.topology import Component, Host
from harness.topology.base import FixedPort

SECURE_PORT = int(FixedPort.SCHEDULER)


def spec(layout: Layout, host: Host) -> ComponentSpec:
    argv = [str(layout.binary("kube-scheduler")), *common_flags(layout, host, "scheduler", SECURE_PORT), "--profiling=false"]
    health = HealthProbe("https", layout.address(host), SECURE_PORT, "/healthz")
    return ComponentSpec(Component.SCHEDULER, host.name, argv, layout.topology.restart_policy(Component.SCHEDULER), health)
