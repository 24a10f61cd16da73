"""A self-hosted component's pods as the API shows them: its parent pods (the DaemonSet's) and the checkpoints of
them that run as static pods (their mirror pods carry the checkpoint-of annotation: docs/checkpointer.md). Read
through the API only, so it works on any self-hosted cluster with a bootkube-style checkpointer."""

from __future__ import annotations

from dataclasses import dataclass, field

import requests

from harness.checkpointer.manifest import CHECKPOINT_OF
from harness.checkpointer.manifest import ready as pod_ready  # one definition, the node's
from harness.clients.kubeapi import ApiClient

LABEL = "k8s-app"  # how the self-hosted workloads label their pods (Typhoon and bootkube do the same)
CHECKPOINTERS = ("pod-checkpointer", "quorum-checkpointer")  # bootkube's and Typhoon's name, and Quorum's


@dataclass(frozen=True)
class Checkpointed:
    """Where the parents are Ready, and where a checkpoint of one of them runs (node names)."""

    parents: dict[str, bool]  # node -> its parent pod is Ready
    checkpoints: set[str]  # nodes where a checkpoint of a parent runs
    containers: dict[str, frozenset[str]] = field(default_factory=dict)  # node -> its parent's container ids

    def taken_over(self, nodes: int, since: "Checkpointed | None" = None) -> bool:
        """Every node's parent Ready again and no checkpoint left running. With `since`, a view read before a power
        loss: only parents whose containers are all new since then count, because the API's first answers after a
        power loss still show the statuses from before it until each kubelet reports again (docs/checkpointer.md)."""
        restarted = since is None or all(self.restarted_since(since, node) for node in self.parents)
        return restarted and len(self.parents) >= nodes and all(self.parents.values()) and not self.checkpoints

    def restarted_since(self, earlier: "Checkpointed", node: str) -> bool:
        """Whether `node`'s parent runs containers and none of them is one `earlier` saw."""
        now = self.containers.get(node, frozenset())
        return bool(now) and not now & earlier.containers.get(node, frozenset())


def namespace_pods(api: ApiClient, namespace: str = "kube-system") -> list[dict] | None:
    """Every pod of the namespace; None when the API does not answer."""
    try:
        response = api.get(f"/api/v1/namespaces/{namespace}/pods", timeout=5.0)
    except requests.RequestException:
        return None
    return response.json().get("items", []) if response.status_code == 200 else None


def parents(pods: list[dict], component: str) -> list[dict]:
    """The self-hosted workload's own pods among `pods` (labelled k8s-app=component), not the checkpoints of them."""
    return [p for p in pods if (p["metadata"].get("labels") or {}).get(LABEL) == component
            and CHECKPOINT_OF not in (p["metadata"].get("annotations") or {})]


def view(api: ApiClient, component: str = "kube-apiserver", namespace: str = "kube-system") -> Checkpointed | None:
    """None when the API does not answer."""
    pods = namespace_pods(api, namespace)
    if pods is None:
        return None
    own = {p["metadata"]["name"]: p for p in parents(pods, component)}
    running = {p.get("spec", {}).get("nodeName", "") for p in pods
               if (p["metadata"].get("annotations") or {}).get(CHECKPOINT_OF) in own}
    return Checkpointed({p.get("spec", {}).get("nodeName", ""): pod_ready(p) for p in own.values()}, running,
                        {p.get("spec", {}).get("nodeName", ""): _container_ids(p) for p in own.values()})


def _container_ids(pod: dict) -> frozenset[str]:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return frozenset(s["containerID"] for s in statuses if s.get("containerID"))


def stale(pods: list[dict], component: str, command: list[str]) -> dict[str, str]:
    """The checkpoints of `component` the kubelets run (their mirror pods; a DaemonSet's pods are named after it)
    whose command is not `command`, the workload's current one: node -> the parent pod it stands for."""
    found = {}
    for pod in pods:
        of = (pod["metadata"].get("annotations") or {}).get(CHECKPOINT_OF, "")
        if of.startswith(f"{component}-") and pod["spec"]["containers"][0].get("command") != command:
            found[pod.get("spec", {}).get("nodeName", "")] = of
    return found


def checkpointer_containers(pods: list[dict]) -> set[str]:
    """The names of the checkpointer pods' containers among `pods` (one per checkpointer image)."""
    return {container["name"] for app in CHECKPOINTERS for pod in parents(pods, app)
            for container in pod.get("spec", {}).get("containers", [])}
