"""Apply a kind topology's deliberate defects (broken twins only): those a team writes into kubeadm's own
configuration when kind creates the cluster, the others once kind has created it."""

from __future__ import annotations

import yaml

from harness.backends.kind import load_balancer
from harness.backends.kind.static_pods import MANIFESTS, STATIC_PODS
from harness.net import shaping


def kubeadm_patches(defects) -> list[dict]:
    """The defects planted through kubeadm's configuration, as kind's kubeadm config patches (KindDefects)."""
    patches = []
    if defects.control_plane_untainted:
        # kubeadm's documented way to leave a control-plane node untainted: an empty list (an absent one is defaulted
        # to the control-plane taint)
        patches += [{"kind": kind, "nodeRegistration": {"taints": []}} for kind in ("InitConfiguration",
                                                                                     "JoinConfiguration")]
    return patches


def without_priority(manifest: str) -> str:
    """A static pod's manifest without its priority, its priority class and its containers' resources."""
    pod = yaml.safe_load(manifest)
    pod["spec"].pop("priority", None)
    pod["spec"].pop("priorityClassName", None)
    for container in pod["spec"]["containers"]:
        container.pop("resources", None)
    return yaml.safe_dump(pod, sort_keys=False)


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
    if cluster.topology.defects.static_pods_without_priority:
        for node in cluster.hosts("controller"):
            for component in STATIC_PODS:
                manifest = f"{MANIFESTS}/{component}.yaml"
                cluster.put_file(node, manifest, without_priority(cluster.exec(node, ["cat", manifest])))
        done.append("no priority, priority class or resources in any control-plane manifest")
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
