"""Conformance where the cluster has nodes: seed 001's invariants of the nodes and the pods on them.

Read-only (marker `conformance`): objects come from the Kubernetes API, a port is tried from inside another host.
Typhoon's kubelet and manifest notes (seed 001) keep three invariants a kubeadm-style cluster may lose:
- kube-proxy serves its metrics on every address (`--metrics-bind-address=0.0.0.0`, port 10249), so that a
  Prometheus on a worker can scrape the proxies on every node; upstream's default is loopback only;
- the control plane's static pods run at the highest priority with a small CPU request, so that contention on a
  node favours them;
- the control-plane nodes are labelled for their role and tainted, so that ordinary workloads stay off them.
They run where the API lists real kubelets' nodes (Capability.NODES: kind, a target); a cluster without the objects
a check reads (no kube-proxy, a control plane that does not run as pods, controllers without a kubelet, no
workers) skips that check, naming what it lacks; the policy says whether that may be (`may_lack`).
"""

import ipaddress
from decimal import Decimal
from urllib.parse import quote

import pytest
from kubernetes.utils.quantity import parse_quantity

from harness.scenario.skips import lacks
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole

pytestmark = [pytest.mark.conformance, pytest.mark.requires(Capability.NODES)]

KUBE_PROXY_METRICS_PORT = 10249  # kube-proxy's metrics port (--metrics-bind-address's default port)
# Kubernetes reserves priorities above one billion for its two system classes: system-cluster-critical
# (2000000000) and system-node-critical (2000001000); a user's class cannot reach them
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
# "small": kubeadm requests 100-250m for its control-plane pods and Typhoon 100-150m (seed 001); a core or more is
# a reservation, not a tie-breaker
SMALL_CPU_REQUEST = Decimal(1)
ROLE_LABEL = "node-role.kubernetes.io/"  # kubeadm's node-role.kubernetes.io/control-plane, Typhoon's own roles
# taints the node lifecycle controller sets for a node's condition: they keep workloads off a sick node, not off
# the control plane
CONDITION_TAINT = "node.kubernetes.io/"


def _kube_system_pods(cluster, selector: str) -> list[dict]:
    response = cluster.api.get(f"/api/v1/namespaces/kube-system/pods?labelSelector={quote(selector)}", 10.0)
    response.raise_for_status()
    return response.json()["items"]


def _nodes(cluster) -> list[dict]:
    response = cluster.api.get("/api/v1/nodes", 10.0)
    response.raise_for_status()
    return response.json()["items"]


def _node_of(nodes: list[dict], host: str, address: str | None) -> dict | None:
    """The Node of a host: the one with the host's address (or, on an inventory that names hosts by their
    hostnames, with the host's name) among its addresses or as its name."""
    for node in nodes:
        known = {entry["address"] for entry in node.get("status", {}).get("addresses", [])} | {node["metadata"]["name"]}
        if (address and address in known) or host in known:
            return node
    return None


def _metrics_answer(cluster, prober: str, address: str) -> str:
    """The status line kube-proxy's metrics endpoint at `address` gives a plain HTTP GET sent from inside `prober`
    ('' when nothing answers)."""
    ip = ipaddress.ip_address(address)  # from the API: checked before it reaches a command line
    script = (f"exec 3<>/dev/tcp/{ip}/{KUBE_PROXY_METRICS_PORT} && "
              f"printf 'GET /metrics HTTP/1.0\\r\\nHost: {ip}\\r\\n\\r\\n' >&3 && head -n 1 <&3")
    return cluster.exec(prober, ["timeout", "5", "bash", "-c", script], check=False).strip()


def test_kube_proxy_serves_its_metrics_to_the_other_hosts(cluster):
    """Invariant: every node's kube-proxy serves /metrics on the node's address, port 10249, not on loopback only,
    so that a Prometheus on a worker scrapes it. Source: seed 001 (kube-proxy --metrics-bind-address=0.0.0.0, with
    the firewall rules to match); upstream's default is 127.0.0.1:10249. Tried from inside another host."""
    proxies = [pod for pod in _kube_system_pods(cluster, "k8s-app=kube-proxy") if pod["status"].get("hostIP")]
    if not proxies:
        lacks("kube-proxy", "no kube-proxy pod runs in kube-system (a cluster without nodes, or a proxy replacement)")
    hosts = {host: cluster.address(host) for host in cluster.hosts()}
    silent = []
    for pod in proxies:
        node_ip = pod["status"]["hostIP"]
        prober = next((host for host, address in hosts.items() if address and address != node_ip),
                      cluster.hosts()[0])
        answer = _metrics_answer(cluster, prober, node_ip)
        if not (answer.startswith("HTTP/1.") and " 200" in answer):
            silent.append(f"{pod['spec'].get('nodeName')} ({node_ip}, from {prober}: {answer or 'no answer'})")
    assert not silent, (f"kube-proxy does not serve its metrics on the node's address, port "
                        f"{KUBE_PROXY_METRICS_PORT}, on: {'; '.join(silent)} (bound to loopback? seed 001 sets "
                        "--metrics-bind-address=0.0.0.0:10249, metricsBindAddress in kubeadm's KubeProxyConfiguration)")


def _cpu_request(pod: dict) -> Decimal:
    """The pod's CPU request: what its containers request together."""
    return sum((parse_quantity(container.get("resources", {}).get("requests", {}).get("cpu", "0"))
                for container in pod["spec"]["containers"]), Decimal(0))


def test_control_plane_pods_run_at_system_priority_with_a_small_cpu_request(cluster):
    """Invariant: every control-plane pod (kube-system, tier=control-plane: kubeadm's and Typhoon's static pods) has
    a system-critical priority and a CPU request above nothing and below a core, so that a busy node favours the
    control plane without reserving the node for it. Source: seed 001 (small CPU requests on the static pods, the
    highest priority class for them); Kubernetes' reserved priorities (system-cluster-critical and above)."""
    pods = _kube_system_pods(cluster, "tier=control-plane")
    if not pods:
        lacks("control-plane-pods", "no pod in kube-system is labelled tier=control-plane: the control plane does "
                                    "not run as pods the API shows")
    wrong = []
    for pod in pods:
        name, spec = pod["metadata"]["name"], pod["spec"]
        priority = spec.get("priority") or 0
        if priority < SYSTEM_CRITICAL_PRIORITY:
            wrong.append(f"{name}: priority {priority} (class {spec.get('priorityClassName') or 'none'}), below "
                         f"system-cluster-critical's {SYSTEM_CRITICAL_PRIORITY}")
        cpu = _cpu_request(pod)
        if not 0 < cpu < SMALL_CPU_REQUEST:
            wrong.append(f"{name}: a CPU request of {cpu} cores (wanted above 0, below {SMALL_CPU_REQUEST})")
    assert not wrong, "control-plane pods outside seed 001's priority and CPU request: " + "; ".join(wrong)


def test_control_plane_nodes_are_labelled_for_their_role_and_tainted_against_workloads(cluster):
    """Invariant: the node of every controller carries a role label (node-role.kubernetes.io/...) and a taint that
    keeps ordinary workloads off it (NoSchedule or NoExecute, not one the node lifecycle sets for a condition),
    when there are workers to run them. Source: seed 001 (control-plane nodes tainted to isolate them from ordinary
    workloads; node labels and taints). A cluster of control planes only must schedule on them (kind removes the
    taint then): nothing to judge."""
    nodes = _nodes(cluster)
    controllers = {host: cluster.address(host) for host in cluster.hosts(HostRole.CONTROLLER)}
    theirs = {host: _node_of(nodes, host, address) for host, address in controllers.items()}
    if not any(theirs.values()):
        lacks("control-plane-nodes", "no controller runs a kubelet whose Node object the API shows")
    controller_nodes = {node["metadata"]["name"] for node in theirs.values() if node}
    if not [node for node in nodes if node["metadata"]["name"] not in controller_nodes]:
        lacks("workers", "every node is a controller: ordinary workloads can only run on the control plane")
    wrong = []
    for host, node in theirs.items():
        if node is None:
            wrong.append(f"{host}: no Node object has its address {controllers[host]}")
            continue
        name = node["metadata"]["name"]
        if not any(label.startswith(ROLE_LABEL) for label in node["metadata"].get("labels", {})):
            wrong.append(f"{name}: no {ROLE_LABEL}<role> label")
        guarding = [taint for taint in node["spec"].get("taints") or []
                    if taint.get("effect") in ("NoSchedule", "NoExecute") and not taint["key"].startswith(CONDITION_TAINT)]
        if not guarding:
            wrong.append(f"{name}: no NoSchedule or NoExecute taint keeps workloads off it "
                         f"(taints: {', '.join(t['key'] for t in node['spec'].get('taints') or []) or 'none'})")
    assert not wrong, "control-plane nodes open to ordinary workloads or without their role: " + "; ".join(wrong)
