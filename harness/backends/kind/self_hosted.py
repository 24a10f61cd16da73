"""A self-hosted control plane on kind, bootstrapped as bootkube did: kubeadm's static pods bring the cluster up,
then kube-apiserver moves to a DaemonSet on the control-plane nodes (host network, checkpointed) and
kube-controller-manager and kube-scheduler to Deployments, and the bootstrap static manifests leave the kubelet's
directory. etcd stays a static pod. Why and what keeps it alive through a power loss: docs/checkpointer.md.

The apiservers share port 6443 while both run (`--permit-port-sharing`, SO_REUSEPORT; the static one gets it from
kind's kubeadm patch), so the API never goes away during the pivot. The controller-manager and the scheduler bind
fixed host ports, so their Deployments' pods wait until the static ones leave (their pods are bound first, by the
static scheduler: nothing would schedule them after)."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import TYPE_CHECKING

import requests
import yaml

from harness.backends.kind.static_pods import MANIFESTS
from harness.checkpointer.manifest import CHECKPOINT
from harness.clients.checkpoints import pod_ready
from harness.clients import kubeapi
from harness.clients.kubeapi import PodRestarts
from harness.components.static_pod_keeper import StaticPodKeeper
from harness.errors import ClusterError, FaultError, FaultRefused
from harness.target.capabilities import Capability
from harness.wait import wait_for

if TYPE_CHECKING:
    from harness.backends.kind.target import KindTarget

BOOTSTRAP = "/etc/kubernetes/bootstrap-manifests"  # where the static manifests go once the pivot is done
SELF_HOSTED = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
LABEL = "k8s-app"
PORT_SHARING = "--permit-port-sharing=true"
PIVOT_TIMEOUT_S = 240.0


def _pod_template(component: str, manifest: dict) -> dict:
    """The static pod's spec as a workload's template: scheduled on the control-plane nodes, tolerating their
    taints; the node's own address comes from the downward API instead of kubeadm's per-node value."""
    spec = copy.deepcopy(manifest["spec"])
    container = spec["containers"][0]
    # no declared ports: with the host network they are host ports, which the scheduler would refuse beside the
    # static pod's; the probes that name one get its number
    named = {port.get("name"): port["containerPort"] for port in container.pop("ports", [])}
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        check = container.get(probe, {}).get("httpGet")
        if check is not None and check.get("port") in named:
            check["port"] = named[check["port"]]
    if component == "kube-apiserver":
        container["command"] = [("--advertise-address=$(POD_IP)" if arg.startswith("--advertise-address=") else arg)
                                for arg in container["command"]]
        if PORT_SHARING not in container["command"]:
            container["command"].append(PORT_SHARING)
        container.setdefault("env", []).append({"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}})
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):  # the pod's (the node's) address
            container.get(probe, {}).get("httpGet", {}).pop("host", None)
    spec["nodeSelector"] = {"node-role.kubernetes.io/control-plane": ""}
    spec["tolerations"] = [{"operator": "Exists"}]
    annotations = {CHECKPOINT: "true"} if component == "kube-apiserver" else {}
    return {"metadata": {"labels": {LABEL: component, "tier": "control-plane"}, "annotations": annotations},
            "spec": spec}


def workload(component: str, manifest: dict, control_planes: int, in_place: bool = False) -> dict:
    """The DaemonSet (the apiserver) or Deployment (the others) that replaces a static pod. The apiserver's update
    starts each node's new pod beside the old one (maxSurge 1, maxUnavailable 0: two apiservers share the port),
    so a new pod that never turns Ready leaves the old one serving (docs/checkpointer.md); `in_place` is the twin's
    update, which stops the old pod first."""
    template = _pod_template(component, manifest)
    metadata = {"name": component, "namespace": "kube-system", "labels": {LABEL: component}}
    selector = {"matchLabels": {LABEL: component}}
    if component == "kube-apiserver":
        return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": metadata,
                "spec": {"selector": selector, "template": template, "updateStrategy": update_strategy(in_place)}}
    template["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}]}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata,
            "spec": {"replicas": control_planes, "selector": selector, "template": template,
                     # host ports: a new pod can only start where the old one has gone
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}}}


def update_strategy(in_place: bool = False) -> dict:
    """The apiserver DaemonSet's: each node's new pod beside the old one, or (the twin's) the old one stopped first."""
    rolling = {"maxUnavailable": 1, "maxSurge": 0} if in_place else {"maxUnavailable": 0, "maxSurge": 1}
    return {"type": "RollingUpdate", "rollingUpdate": rolling}


def disruption_budget(control_planes: int) -> dict:
    """No eviction (a drain) may take the last apiserver, nor more than one of several at a time."""
    limit = {"minAvailable": 1} if control_planes == 1 else {"maxUnavailable": 1}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "kube-apiserver", "namespace": "kube-system"},
            "spec": {**limit, "selector": {"matchLabels": {LABEL: "kube-apiserver"}}}}


def _path(kind: str) -> str:
    if kind == "PodDisruptionBudget":
        return "/apis/policy/v1/namespaces/kube-system/poddisruptionbudgets"
    return "/apis/apps/v1/namespaces/kube-system/" + ("daemonsets" if kind == "DaemonSet" else "deployments")


def create(cluster: "KindTarget", body: dict) -> None:
    response = cluster.api.request("POST", _path(body["kind"]), body, timeout=30.0)
    if response.status_code not in (200, 201, 409):
        raise ClusterError(f"creating the self-hosted {body['metadata']['name']}: HTTP {response.status_code} "
                           f"{response.text[:300]}", "the kind cluster's apiserver log says why")


def pods(cluster: "KindTarget", component: str) -> list[dict]:
    """The component's self-hosted pods; none while the API does not answer (a power loss, a bad update)."""
    try:
        response = cluster.api.request("GET", f"/api/v1/namespaces/kube-system/pods?labelSelector={LABEL}%3D{component}",
                                       timeout=10.0)
    except requests.RequestException:
        return []
    return response.json().get("items", []) if response.status_code == 200 else []


def ready_nodes(cluster: "KindTarget", component: str) -> set[str]:
    """The nodes (kind container names) whose self-hosted pod of `component` is Ready."""
    return {p["spec"].get("nodeName", "") for p in pods(cluster, component) if pod_ready(p)}


def wait_pivot(predicate, what: str, doing: str = "the pivot to a self-hosted control plane") -> None:
    def answered() -> bool:  # an apiserver that goes away mid-pivot is a "not yet", not an error
        try:
            return predicate()
        except requests.RequestException:
            return False

    try:
        wait_for(answered, PIVOT_TIMEOUT_S, 2.0, what=what)
    except FaultError as error:
        raise ClusterError(f"{doing} stopped: no {what} within "
                           f"{PIVOT_TIMEOUT_S:.0f}s", "the kubelet's journal in the node (docker exec NODE journalctl "
                           "-u kubelet) and `kubectl -n kube-system get pods` say why") from error


def _mirror_gone(cluster: "KindTarget", node: str, component: str) -> bool:
    path = f"/api/v1/namespaces/kube-system/pods/{component}-{cluster.container(node)}"
    return cluster.api.request("GET", path, timeout=5.0).status_code == 404


def _retire_static(cluster: "KindTarget", node: str, component: str) -> None:
    cluster.exec(node, ["sh", "-c", f"mkdir -p {BOOTSTRAP} && mv {MANIFESTS}/{component}.yaml {BOOTSTRAP}/"])


def pivot(cluster: "KindTarget", say=lambda _: None) -> None:
    """Move the control plane from the static pods to its self-hosted workloads, node by node."""
    nodes = cluster.hosts("controller")
    everywhere = {cluster.container(node) for node in nodes}
    manifests = {c: yaml.safe_load(cluster.exec(nodes[0], ["cat", f"{MANIFESTS}/{c}.yaml"])) for c in SELF_HOSTED}
    say("self-hosted: kube-apiserver as a DaemonSet beside the static pods")
    in_place = cluster.topology.defects.apiserver_updated_in_place
    create(cluster, workload("kube-apiserver", manifests["kube-apiserver"], len(nodes), in_place=in_place))
    if not in_place:
        create(cluster, disruption_budget(len(nodes)))
    wait_pivot(lambda: ready_nodes(cluster, "kube-apiserver") >= everywhere,
          "the self-hosted kube-apiserver Ready on every control-plane node")
    for node in nodes:
        _retire_static(cluster, node, "kube-apiserver")
        wait_pivot(lambda: _mirror_gone(cluster, node, "kube-apiserver") and cluster.apiserver_ready(node),
              f"the static kube-apiserver gone from {node} and the self-hosted one serving there")
    for component in ("kube-controller-manager", "kube-scheduler"):
        say(f"self-hosted: {component} as a Deployment")
        create(cluster, workload(component, manifests[component], len(nodes)))
    wait_pivot(lambda: all({p["spec"].get("nodeName") for p in pods(cluster, c)} >= everywhere
                      for c in ("kube-controller-manager", "kube-scheduler")),
          "every self-hosted controller-manager and scheduler pod bound to its node")
    for node in nodes:
        for component in ("kube-controller-manager", "kube-scheduler"):
            _retire_static(cluster, node, component)
    for component in ("kube-controller-manager", "kube-scheduler"):
        wait_pivot(lambda: ready_nodes(cluster, component) >= everywhere,
              f"the self-hosted {component} Ready on every control-plane node")


def pod_restarts(cluster: "KindTarget", component: str, node: str) -> PodRestarts | None:
    """How often the kubelet restarted the self-hosted pod of `component` on `node`, and when its container
    started; None when there is none."""
    here = [p for p in pods(cluster, component) if p["spec"].get("nodeName") == cluster.container(node)]
    if not here:
        return None
    counted = [kubeapi.pod_restarts(p) for p in here]
    return PodRestarts(sum(c.restarts for c in counted), max((c.started_at for c in counted if c.started_at),
                                                             default=None))


def is_self_hosted(cluster: "KindTarget", component: str) -> bool:
    return bool(cluster.topology.kind.self_hosted) and component in SELF_HOSTED


class SelfHostedKeeper(StaticPodKeeper):
    """A self-hosted component's pods: the kubelet runs them for a DaemonSet or a Deployment, not from a manifest
    on the node's disk, so holds and flag overrides (manifest moves and rewrites) are refused; its restarts, back-off
    and logs are read as a static pod's."""

    # a DaemonSet's or a Deployment's pods, kept on each node's disk by the pod checkpointer; no manifest to move
    OFFERS = frozenset({Capability.SELF_HOSTED})

    def _refuse(self, what: str) -> FaultRefused:
        workload_kind = "DaemonSet" if self.name == "kube-apiserver" else "Deployment"
        return FaultRefused(f"{what} {self.name} on a self-hosted control plane: it is a {workload_kind} pod, not a "
                            "static pod whose manifest Quorum can move or rewrite (not built yet: issue #23)")

    def hold(self, host: str, signal: str = "SIGKILL") -> None:
        raise self._refuse("holding")

    def command_line(self, host: str) -> list[str]:
        raise self._refuse("changing the command line of")

    def override(self, host: str, argv: list[str]) -> None:
        raise self._refuse("overriding the flags of")


@contextlib.contextmanager
def bootstrap_apiserver(cluster: "KindTarget") -> Iterator[None]:
    """The bootstrap static apiserver back in the kubelet's directory on every control-plane node while the block
    runs (it shares the port with the self-hosted one), then retired again: bootkube's recovery of an API that a
    bad update of the self-hosted apiserver took away."""
    nodes = cluster.hosts("controller")
    for node in nodes:
        cluster.exec(node, ["sh", "-c", f"test -e {MANIFESTS}/kube-apiserver.yaml || "
                                        f"cp {BOOTSTRAP}/kube-apiserver.yaml {MANIFESTS}/kube-apiserver.yaml"])
    try:
        wait_pivot(lambda: any(cluster.apiserver_ready(node) for node in nodes), "apiserver answering",
                   doing="starting the bootstrap apiserver")
        yield
    finally:
        for node in nodes:
            cluster.exec(node, ["rm", "-f", f"{MANIFESTS}/kube-apiserver.yaml"])
        for node in nodes:
            wait_pivot(lambda: _mirror_gone(cluster, node, "kube-apiserver") and cluster.apiserver_ready(node),
                       f"the bootstrap kube-apiserver gone from {node} and the self-hosted one serving there",
                       doing="retiring the bootstrap apiserver")
