"""Apply a kind topology's deliberate defects (broken twins only), once kind has created the cluster."""

from __future__ import annotations

import yaml

from harness.backends.kind import load_balancer
from harness.backends.kind.static_pods import MANIFESTS, STATIC_PODS
from harness.net import shaping


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
        cds = load_balancer.without_health_checks(load_balancer.read(cluster, load_balancer.LB_CDS))
        cluster.replace_file(load_balancer.balancer(cluster), load_balancer.LB_CDS, cds)
        done.append("load balancer without health checks")
    if cluster.topology.defects.worker_link_mbit:
        rate = cluster.topology.defects.worker_link_mbit
        for node in cluster.hosts("worker"):
            cluster.exec(node, shaping.tbf("eth0", rate, burst_kb=512))  # the baseline's handle: it stays
        done.append(f"every worker's link throttled to {rate} Mbit/s")
    return done
