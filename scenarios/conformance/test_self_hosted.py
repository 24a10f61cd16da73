"""Conformance of a self-hosted control plane (requires `self-hosted`): what keeps a DaemonSet apiserver alive through
a power loss and an update, read through the API only (docs/checkpointer.md). From seed 002 (Lokomotive pull request
#72): the apiserver's pods are checkpointed, a pod checkpointer runs on every control-plane node, and an update never
stops the last apiserver (a new pod beside the old one, and a PodDisruptionBudget against evictions)."""

import pytest

from harness.checkpointer.manifest import CHECKPOINT
from harness.clients.checkpoints import CHECKPOINTERS, LABEL, parents
from harness.target.capabilities import Capability

pytestmark = [pytest.mark.conformance, pytest.mark.requires(Capability.SELF_HOSTED)]

NAMESPACE = "/api/v1/namespaces/kube-system"
APISERVER = "kube-apiserver"


def _get(cluster, path: str) -> dict:
    response = cluster.api.request("GET", path, timeout=10.0)
    assert response.status_code == 200, f"GET {path}: HTTP {response.status_code} {response.text[:200]}"
    return response.json()


def _pods(cluster, app: str) -> list[dict]:
    """The pods of a self-hosted workload, not the checkpoints of them."""
    return parents(_get(cluster, f"{NAMESPACE}/pods")["items"], app)


def _control_plane_nodes(cluster) -> set[str]:
    items = _get(cluster, "/api/v1/nodes?labelSelector=node-role.kubernetes.io%2Fcontrol-plane")["items"]
    return {node["metadata"]["name"] for node in items}


def test_every_self_hosted_apiserver_pod_carries_the_checkpoint_annotation(cluster):
    """Seed 002: the checkpointer keeps a copy only of the pods annotated for it; an apiserver pod without the
    annotation is not brought back after a power loss of every control-plane node."""
    pods = _pods(cluster, APISERVER)
    assert pods, f"no pod labelled {LABEL}={APISERVER} in kube-system: the apiserver is not self-hosted here"
    missing = [p["metadata"]["name"] for p in pods if (p["metadata"].get("annotations") or {}).get(CHECKPOINT) != "true"]
    assert not missing, f"apiserver pods without {CHECKPOINT}=true: {missing}"


def test_a_pod_checkpointer_runs_on_every_control_plane_node(cluster):
    """Seed 002: the checkpointer acts on its own node only; a control-plane node without one comes back from a power
    loss with no apiserver."""
    nodes = _control_plane_nodes(cluster)
    running = {p["spec"].get("nodeName") for app in CHECKPOINTERS for p in _pods(cluster, app)
               if p.get("status", {}).get("phase") == "Running"}
    assert nodes and nodes <= running, (f"control-plane nodes without a running pod checkpointer ({LABEL} one of "
                                        f"{', '.join(CHECKPOINTERS)}): {sorted(nodes - running)}")


def test_an_apiserver_update_starts_the_new_pod_beside_the_old_and_a_budget_guards_the_last(cluster):
    """Seed 002's fix: with one apiserver per node replaced in place, a bad flag in an update stops the only apiserver
    of a single control plane. The DaemonSet must surge (maxSurge >= 1, maxUnavailable 0: two apiservers per node
    during the update, sharing the port) and a PodDisruptionBudget must cover the apiserver pods."""
    daemonset = _get(cluster, f"/apis/apps/v1/namespaces/kube-system/daemonsets/{APISERVER}")
    strategy = daemonset["spec"].get("updateStrategy") or {}
    rolling = strategy.get("rollingUpdate") or {}
    assert strategy.get("type") == "RollingUpdate" and str(rolling.get("maxUnavailable")) == "0" \
        and str(rolling.get("maxSurge", "0")) not in ("0", "0%"), \
        f"the {APISERVER} DaemonSet stops an apiserver before its successor is Ready: {strategy}"
    budgets = _get(cluster, "/apis/policy/v1/namespaces/kube-system/poddisruptionbudgets")["items"]
    covering = [b["metadata"]["name"] for b in budgets
                if (b["spec"].get("selector") or {}).get("matchLabels") == {LABEL: APISERVER}]
    assert covering, f"no PodDisruptionBudget selects {LABEL}={APISERVER}: a drain may evict the last apiserver"
