"""Realising a topology's hollow nodes: Node objects created at a controlled rate for the kwok
controllers to play, then a Deployment that puts pods_per_node pods on each; returns when all are
Ready/Running, or raises a ClusterError saying how far it got."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import requests

from harness.components.kwok import HOLLOW_LABEL, HOST_LABEL
from harness.errors import ClusterError
from harness.clients.kubeapi import ApiClient
from harness.topology import Topology
from harness.wait import until

NAMESPACE = "quorum-hollow"
DEPLOYMENT = "hollow-pods"
NODES_PATH = "/api/v1/nodes"
SELECTOR = f"labelSelector={HOLLOW_LABEL}%3Dtrue"
# on a cluster Quorum did not build, its owner's workloads stay off nodes that do not exist (the hollow pods and the
# load's pods tolerate it; a DaemonSet that tolerates every taint still puts its pods there, and kwok plays them)
HOLLOW_TAINT = {"key": HOLLOW_LABEL, "value": "true", "effect": "NoSchedule"}
HOLLOW_TOLERATION = {"key": HOLLOW_LABEL, "operator": "Exists", "effect": "NoSchedule"}
CREATORS = 8  # concurrent creates; the rate limit, not this, sets the pace
READY_MARGIN_S = 120.0  # beyond the creation time, for the last nodes and pods to turn Ready

Say = Callable[[str], None]


@dataclass(frozen=True)
class HollowFigures:
    nodes: int
    pods: int
    nodes_created_s: float  # from the first create to the last
    nodes_ready_s: float  # from the first create until every node is Ready
    pods_running_s: float  # from the Deployment's create until every pod is available


def node_object(name: str, player: str, kubelet_version: str, *, tainted: bool = False,
                labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> dict:
    """A hollow Node for the kwok controller whose selector is HOST_LABEL=`player`. Tainted (HOLLOW_TAINT) on a
    cluster Quorum did not build, so that its owner's workloads are not scheduled onto nodes that do not exist."""
    capacity = {"cpu": "32", "memory": "256Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    node = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {HOLLOW_LABEL: "true", HOST_LABEL: player, "kubernetes.io/hostname": name,
                       "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok", **(labels or {})},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake", **(annotations or {})},
        },
        "status": {"capacity": capacity, "allocatable": capacity,
                   "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux",
                                "kubeletVersion": kubelet_version}},
    }
    if tainted:
        node["spec"] = {"taints": [dict(HOLLOW_TAINT)]}
    return node


def topology_nodes(topology: Topology) -> list[dict]:
    """The hollow Nodes of a topology Quorum builds, each for the kwok controller of its nodes host."""
    return [node_object(name, host.name, f"{topology.kubernetes}-kwok")
            for host in topology.node_hosts for name in topology.hollow_node_names(host)]


def deployment_object(replicas: int) -> dict:
    labels = {"app": DEPLOYMENT}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": DEPLOYMENT, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeSelector": {HOLLOW_LABEL: "true"},
                    "tolerations": [dict(HOLLOW_TOLERATION)],
                    "automountServiceAccountToken": False,
                    # never pulled: kwok plays the containers
                    "containers": [{"name": "hollow", "image": "quorum.invalid/hollow:never-pulled"}],
                },
            },
        },
    }


def _check(response: requests.Response, what: str, allowed: tuple[int, ...] = (200, 201)) -> None:
    if response.status_code not in allowed:
        raise ClusterError(f"{what}: HTTP {response.status_code} {response.text[:300]}",
                           "read the apiserver logs (`quorum logs kube-apiserver@HOST`)")


class Progress:
    """Progress lines at every tenth, so long runs show they are moving without flooding a log."""

    def __init__(self, say: Say, what: str, total: int) -> None:
        self.say, self.what, self.total = say, what, total
        self.done = 0
        self.lock = threading.Lock()
        self.started = time.monotonic()

    def advance(self) -> None:
        with self.lock:
            self.done += 1
            step = max(1, self.total // 10)
            if self.done % step == 0 or self.done == self.total:
                rate = self.done / max(time.monotonic() - self.started, 1e-3)
                self.say(f"{self.what}: {self.done}/{self.total} ({rate:.0f}/s)")


def create_nodes(api: ApiClient, nodes: list[dict], rate_per_s: float, say: Say) -> float:
    """Create every hollow node (existing ones are kept), at `rate_per_s`; how long it took."""
    interval = 1.0 / rate_per_s
    progress = Progress(say, "hollow nodes created", len(nodes))
    started = time.monotonic()

    def create(index: int) -> None:
        delay = started + index * interval - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        name = nodes[index]["metadata"]["name"]
        for attempt in range(5):
            try:
                response = api.request("POST", NODES_PATH, nodes[index])
            except requests.RequestException as error:
                if attempt == 4:
                    raise ClusterError(f"creating node {name}: {error}", "check the apiservers are up") from None
                time.sleep(0.5 * (attempt + 1))
                continue
            if response.status_code in (429, 500, 503) and attempt < 4:
                time.sleep(0.5 * (attempt + 1))
                continue
            _check(response, f"creating node {name}", (200, 201, 409))
            break
        progress.advance()

    with ThreadPoolExecutor(CREATORS, thread_name_prefix="hollow-create") as pool:
        list(pool.map(create, range(len(nodes))))
    return time.monotonic() - started


def node_readiness(api: ApiClient, selector: str = SELECTOR) -> tuple[int, set[str]]:
    """(hollow nodes, names of those Ready), from the apiserver's watch cache; `selector`: which hollow nodes."""
    response = api.request("GET", f"{NODES_PATH}?{selector}&resourceVersion=0", timeout=30.0)
    _check(response, "listing hollow nodes")
    items = response.json().get("items", [])
    ready = {node["metadata"]["name"] for node in items
             if any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in node.get("status", {}).get("conditions", []))}
    return len(items), ready


KWOK_LOGS = "read the kwok logs (`quorum logs kwok@HOST`); lower hollow_nodes.count or add nodes hosts"


def wait_nodes_ready(api: ApiClient, count: int, timeout_s: float, say: Say, selector: str = SELECTOR,
                     fix: str = KWOK_LOGS) -> None:
    """Until every hollow node has been seen Ready (not necessarily in the same sample: whether they stay
    Ready is what the load suite's heartbeat verdict judges)."""
    seen, ever_ready, last = 0, set(), -1

    def all_seen_ready() -> bool:
        nonlocal seen, last
        seen, ready = node_readiness(api, selector)
        ever_ready.update(ready)
        if len(ever_ready) < count and len(ever_ready) != last:
            say(f"hollow nodes Ready: {len(ever_ready)}/{count}")
            last = len(ever_ready)
        return len(ever_ready) >= count

    if until(all_seen_ready, timeout_s, 2.0).held:
        return
    raise ClusterError(f"only {len(ever_ready)} of {count} hollow nodes became Ready within {timeout_s:.0f}s "
                       f"({seen} exist)", fix)


def ensure_namespace(api: ApiClient, name: str) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    try:
        response = api.request("POST", "/api/v1/namespaces", body)
    except requests.ConnectionError:
        # a kept-alive connection closed before it answered (the LB shuts the sessions of a backend it marks down,
        # seen in CI on a CPU-starved apiserver): once more on a new one; 409 covers a first try that landed
        try:
            response = api.request("POST", "/api/v1/namespaces", body)
        except requests.ConnectionError as error:
            raise ClusterError(f"creating namespace {name}: the connection closed twice without an answer ({error})",
                               "check that the apiserver answers (`quorum status`), then run again") from error
    _check(response, f"creating namespace {name}", (200, 201, 409))


def run_pods(api: ApiClient, replicas: int, timeout_s: float, say: Say) -> None:
    ensure_namespace(api, NAMESPACE)
    path = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments"
    response = api.request("POST", path, deployment_object(replicas))
    _check(response, f"creating deployment {DEPLOYMENT}", (200, 201, 409))
    available, last = 0, -1

    def all_available() -> bool:
        nonlocal available, last
        response = api.request("GET", f"{path}/{DEPLOYMENT}")
        _check(response, f"reading deployment {DEPLOYMENT}")
        available = response.json().get("status", {}).get("availableReplicas", 0) or 0
        if available < replicas and available != last:
            say(f"hollow pods available: {available}/{replicas}")
            last = available
        return available >= replicas

    if until(all_available, timeout_s, 2.0).held:
        return
    raise ClusterError(f"only {available} of {replicas} hollow pods available after {timeout_s:.0f}s",
                       "read the kube-scheduler, kube-controller-manager and kwok logs")


def realise(api: ApiClient, topology: Topology, say: Say = lambda _: None) -> HollowFigures:
    hollow = topology.hollow_nodes
    budget = hollow.count / hollow.create_rate_per_s + READY_MARGIN_S
    started = time.monotonic()
    created_s = create_nodes(api, topology_nodes(topology), hollow.create_rate_per_s, say)
    wait_nodes_ready(api, hollow.count, budget - (time.monotonic() - started), say)
    ready_s = time.monotonic() - started
    say(f"{hollow.count} hollow nodes Ready in {ready_s:.1f}s")
    pods = hollow.count * hollow.pods_per_node
    pods_s = 0.0
    if pods:
        pods_started = time.monotonic()
        run_pods(api, pods, pods / 20.0 + READY_MARGIN_S, say)  # the scheduler binds ~50/s on its default QPS
        pods_s = time.monotonic() - pods_started
        say(f"{pods} hollow pods Running in {pods_s:.1f}s")
    return HollowFigures(hollow.count, pods, created_s, ready_s, pods_s)
