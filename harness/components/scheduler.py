"""kube-scheduler: leader-elected, with the topology's lease timings, and its profiles.

The upstream default (one profile, default-scheduler) runs from flags alone. Other profiles need a
KubeSchedulerConfiguration file (`--config`); with one, kube-scheduler ignores its deprecated flags (--kubeconfig,
--profiling) and takes their settings from the file, while the leader-election flags still apply over it
(k8s.io/kubernetes cmd/kube-scheduler/app/options: ApplyTo)."""

from __future__ import annotations

from pathlib import Path

import yaml

from harness.components.base import ComponentSpec, HealthProbe, Layout
from harness.components.leader_elected import common_flags
from harness.topology import Component, Host
from harness.topology.base import FixedPort

SECURE_PORT = int(FixedPort.SCHEDULER)
CONFIG_API = "kubescheduler.config.k8s.io/v1"


def configuration(layout: Layout, host: Host) -> str:
    """The KubeSchedulerConfiguration of the topology's profiles on `host`."""
    return yaml.safe_dump({
        "apiVersion": CONFIG_API, "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(layout.kubeconfig(host.name, "scheduler"))},
        "enableProfiling": False,
        "profiles": [{"schedulerName": name} for name in layout.topology.scheduler.profiles],
    }, sort_keys=False)


def config_path(layout: Layout, host: Host) -> Path:
    """Where `host`'s kube-scheduler reads its configuration file."""
    return layout.config_dir(host.name) / "kube-scheduler.yaml"


def spec(layout: Layout, host: Host) -> ComponentSpec:
    flags = common_flags(layout, host, "scheduler", SECURE_PORT)
    files: dict[Path, str] = {}
    if layout.topology.scheduler.upstream_default:
        flags.append("--profiling=false")
    else:
        config = config_path(layout, host)
        files[config] = configuration(layout, host)
        flags = [f"--config={config}", *(flag for flag in flags if not flag.startswith("--kubeconfig="))]
    health = HealthProbe("https", layout.address(host), SECURE_PORT, "/healthz")
    return ComponentSpec(Component.SCHEDULER, host.name, [str(layout.binary("kube-scheduler")), *flags],
                         layout.topology.restart_policy(Component.SCHEDULER), health, files=files)
