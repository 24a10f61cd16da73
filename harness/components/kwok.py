"""kwok: one controller per nodes host, playing the kubelet of that host's share of the hollow nodes.

It renews each node's Lease every 10 s (a 40 s lease, renewed at a quarter, as the kubelet does),
reports node status and moves pods bound to its nodes to Running, using the Stage objects kwokctl
runs by default (kwok_data/stages.yaml, copied from kwok v0.8.0).
"""

from __future__ import annotations

from importlib import resources

import yaml

from harness.components.base import ComponentSpec, HealthProbe, Layout
from harness.topology import Component, Host
from harness.topology.base import FixedPort

PORT = int(FixedPort.KWOK)
HOST_LABEL = "quorum.dev/hollow-host"  # which kwok controller plays the node
HOLLOW_LABEL = "quorum.dev/hollow"


def stages() -> str:
    return resources.files("harness.components").joinpath("kwok_data/stages.yaml").read_text()


def configuration_for(*, address: str, player: str, node_lease_s: int, pod_cidr: str, node_ip: str | None = None,
                      port: int = PORT) -> str:
    """A kwok controller's configuration: it serves its kubelet API on `address`:`port`, plays the nodes whose
    HOST_LABEL is `player`, and reports `node_ip` (default: `address`) as their address."""
    options = {
        "cidr": pod_cidr,
        "nodeIP": node_ip or address,
        "nodePort": port,
        "serverAddress": f"{address}:{port}",
        "manageAllNodes": False,
        "manageNodesWithLabelSelector": f"{HOST_LABEL}={player}",
        "nodeLeaseDurationSeconds": node_lease_s,  # renewed at a quarter, like the kubelet
        "nodeLeaseParallelism": 8,  # 1000 renewals per 10 s need more than the default 4 under load
        "podPlayStageParallelism": 4,
        "nodePlayStageParallelism": 4,
        "enableProfilingHandler": False,
        "enablePodsOnNodeSyncStreamWatch": True,
        "enablePodsOnNodeSyncListPager": False,
    }
    head = yaml.safe_dump({"apiVersion": "config.kwok.x-k8s.io/v1alpha1", "kind": "KwokConfiguration",
                           "options": options}, sort_keys=False)
    return f"{head}{stages()}"


def configuration(layout: Layout, host: Host) -> str:
    """The kwok controller of a nodes host of a topology Quorum builds: it plays that host's share of the nodes."""
    hollow = layout.topology.hollow_nodes
    return configuration_for(address=layout.address(host), player=host.name, node_lease_s=hollow.node_lease_s,
                             pod_cidr=str(hollow.pod_cidr))


def config_path(layout: Layout, host: Host):
    return layout.config_dir(host.name) / "kwok.yaml"


def spec(layout: Layout, host: Host) -> ComponentSpec:
    config = config_path(layout, host)
    argv = [str(layout.binary("kwok")), f"--config={config}", f"--kubeconfig={layout.kubeconfig(host.name, 'kwok')}",
            "--v=WARN"]  # INFO logs every lease renewal: 100 lines/s at 1000 nodes
    health = HealthProbe("http", layout.address(host), PORT, "/healthz")
    return ComponentSpec(Component.KWOK, host.name, argv, layout.topology.restart_policy(Component.KWOK), health,
                         files={config: configuration(layout, host)})
