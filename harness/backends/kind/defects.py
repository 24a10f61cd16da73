"""Apply a kind topology's deliberate defects (broken twins only), once kind has created the cluster."""

from __future__ import annotations

import yaml

from harness.backends.docker.engine import client
from harness.backends.kind.static_pods import MANIFESTS, STATIC_PODS
from harness.net import shaping

LB_CDS = "/home/envoy/cds.yaml"  # where kind writes its load balancer's apiservers (and their health check)


def without_health_checks(cds: str) -> str:
    """kind's rendered cds.yaml with every cluster's health_checks removed."""
    document = yaml.safe_load(cds)
    for resource in document.get("resources") or []:
        resource.pop("health_checks", None)
    return yaml.safe_dump(document, sort_keys=False)


def apply(cluster) -> list[str]:
    """Break a freshly created kind cluster as its topology asks; returns what was done."""
    done = []
    if cluster.topology.defects.kubelet_disabled_at_boot:
        for node in cluster.hosts():
            cluster.exec(node, ["systemctl", "disable", "kubelet"])
        done.append("kubelet disabled at boot on every node")
    if cluster.topology.defects.static_pods_restart_never:
        for node in cluster.hosts("controller"):
            for component in STATIC_PODS:
                pod = yaml.safe_load(cluster.exec(node, ["cat", f"{MANIFESTS}/{component}.yaml"]))
                pod["spec"]["restartPolicy"] = "Never"
                cluster.put_file(node, f"{MANIFESTS}/{component}.yaml", yaml.safe_dump(pod, sort_keys=False))
        done.append("restartPolicy Never in every control-plane manifest")
    if cluster.topology.defects.lb_without_health_checks:
        balancer = f"{cluster.kind_name}-external-load-balancer"
        cluster.replace_file(balancer, LB_CDS, without_health_checks(client().container.execute(balancer, ["cat", LB_CDS])))
        done.append("load balancer without health checks")
    if cluster.topology.defects.worker_link_mbit:
        rate = cluster.topology.defects.worker_link_mbit
        for node in cluster.hosts("worker"):
            cluster.exec(node, shaping.tbf("eth0", rate, burst_kb=512))  # the baseline's handle: it stays
        done.append(f"every worker's link throttled to {rate} Mbit/s")
    return done
