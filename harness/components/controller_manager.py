"""kube-controller-manager: leader-elected, with the topology's lease timings."""

from __future__ import annotations

from harness.components.base import ComponentSpec, HealthProbe, Layout
from harness.components.leader_elected import common_flags
from harness.topology import Component, Host
from harness.topology.base import FixedPort

SECURE_PORT = int(FixedPort.CONTROLLER_MANAGER)


def spec(layout: Layout, host: Host) -> ComponentSpec:
    pki = layout.pki
    argv = [
        str(layout.binary("kube-controller-manager")),
        *common_flags(layout, host, "controller-manager", SECURE_PORT),
        f"--cluster-name={layout.topology.name}",
        f"--root-ca-file={pki.ca.cert}",
        f"--service-account-private-key-file={pki.service_account_key}",
        f"--cluster-signing-cert-file={pki.ca.cert}",
        f"--cluster-signing-key-file={pki.ca.key}",
        "--use-service-account-credentials=true",
        "--profiling=false",
    ]
    argv += [f"--{name.lstrip('-')}={value}" for name, value in layout.topology.controller_manager.extra_flags.items()]
    # the serving certificate is self-signed in memory: the probe uses TLS without verification
    health = HealthProbe("https", layout.address(host), SECURE_PORT, "/healthz")
    return ComponentSpec(Component.CONTROLLER_MANAGER, host.name, argv,
                         layout.topology.restart_policy(Component.CONTROLLER_MANAGER), health)
