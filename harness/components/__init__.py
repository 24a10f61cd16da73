"""One module per control-plane component: its flags, config files and health URL. Backend-agnostic."""

from __future__ import annotations

from harness.components.base import ComponentSpec, HealthProbe, Layout
from harness.components import apiserver, controller_manager, etcd, haproxy, kwok, scheduler
from harness.topology import Component, Host

_BUILDERS = {
    Component.ETCD: etcd.spec,
    Component.APISERVER: apiserver.spec,
    Component.CONTROLLER_MANAGER: controller_manager.spec,
    Component.SCHEDULER: scheduler.spec,
    Component.HAPROXY: haproxy.spec,
    Component.KWOK: kwok.spec,
}


BINARIES = {Component.ETCD: "etcd", Component.APISERVER: "kube-apiserver",
            Component.CONTROLLER_MANAGER: "kube-controller-manager", Component.SCHEDULER: "kube-scheduler",
            Component.HAPROXY: "haproxy", Component.KWOK: "kwok"}


def binaries_for(topology) -> list[str]:
    """The binaries a topology runs (plus kubectl, which Quorum itself uses), sorted."""
    return sorted({BINARIES[c] for host in topology.hosts for c in topology.components_on(host)} | {"kubectl"})


def specs_for(layout: Layout) -> list[ComponentSpec]:
    """Every component of the topology, in start order (etcd first, the load balancer last)."""
    order = list(Component)
    specs = [_BUILDERS[c](layout, host) for host in layout.topology.hosts for c in layout.topology.components_on(host)]
    return sorted(specs, key=lambda s: (order.index(s.component), s.host))


def spec_for(layout: Layout, component: Component, host: Host) -> ComponentSpec:
    return _BUILDERS[component](layout, host)


__all__ = ["ComponentSpec", "HealthProbe", "Layout", "binaries_for", "specs_for", "spec_for"]
