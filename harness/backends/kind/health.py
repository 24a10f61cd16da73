"""What is unhealthy in a kind cluster right now: the API, its nodes, each apiserver, the static pods, etcd
members and the leases."""

from __future__ import annotations

from typing import TYPE_CHECKING

import requests

from harness.backends.kind import static_pods
from harness.backends.kind.self_hosted import LABEL, SELF_HOSTED
from harness.backends.kind.static_pods import ETCD_CLIENT_PORT, STATIC_PODS
from harness.clients.kubeapi import ApiClient
from harness.target.health import Health
from harness.target.protocol import component_name
from harness.topology import Component

if TYPE_CHECKING:
    from harness.backends.kind.target import KindTarget

# kubeadm binds the controller-manager's and the scheduler's secure ports to 127.0.0.1: asked from inside the node
LOCAL_HEALTH_PORTS = {"kube-controller-manager": 10257, "kube-scheduler": 10259}


def get(api: ApiClient, path: str) -> dict | None:
    try:
        response = api.get(path, timeout=3.0)
    except requests.RequestException:
        return None
    return response.json() if response.status_code == 200 else None


def _ready(conditions: list[dict] | None) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions or [])


def not_ready_reason(node: dict | None) -> str | None:
    """Why a Node object is not Ready, in the kubelet's words (its Ready condition's reason and message);
    None when it is Ready."""
    if node is None:
        return "not registered"
    conditions = node.get("status", {}).get("conditions") or []
    if _ready(conditions):
        return None
    ready = next((c for c in conditions if c.get("type") == "Ready"), None)
    if ready is None:
        return "no Ready condition yet"
    return f"{ready.get('reason') or 'NotReady'}: {ready.get('message') or 'no message'}"[:300]


def static_pods_ready(target) -> dict[str, bool]:
    """'<component>@<node>' -> whether the kubelet reports that component's pod on the node Ready: the static pod's
    mirror pod, or on a self-hosted control plane the workload's pod (self_hosted.LABEL names its component)."""
    pods = (get(target.api, "/api/v1/namespaces/kube-system/pods") or {"items": []})["items"]
    ready = {p["metadata"]["name"]: _ready(p.get("status", {}).get("conditions")) for p in pods}
    hosted = {(p["metadata"].get("labels", {}).get(LABEL), p["spec"].get("nodeName")) for p in pods
              if _ready(p.get("status", {}).get("conditions"))} if target.topology.kind.self_hosted else set()
    return {f"{component}@{node}": ((component, target.container(node)) in hosted
                                    if target.topology.kind.self_hosted and component in SELF_HOSTED
                                    else ready.get(f"{component}-{target.container(node)}", False))
            for node in target.hosts("controller") for component in STATIC_PODS}


class KindHealth(Health):
    target: "KindTarget"

    def problems(self) -> list[str]:
        """/readyz through the LB or of any apiserver, any node not Ready, any control-plane static pod not Ready,
        an etcd member that does not answer, an unheld leader lease. Empty when healthy."""
        target = self.target
        if not target.api.ready():
            return ["/readyz via the load balancer"]
        found = []
        nodes = get(target.api, "/api/v1/nodes")
        registered = {n["metadata"]["name"]: n for n in (nodes or {"items": []})["items"]}
        controllers = target.hosts("controller")
        for short in target.hosts():
            # the kubelet's reason goes with it: a worker can stay not Ready for minutes, and why would be lost
            if (why := not_ready_reason(registered.get(target.container(short)))) is not None:
                found.append(f"node {short} not Ready ({why})")
        # a mirror pod's status can stay Ready while its node's apiserver is down (seen with a corrupted manifest),
        # so each apiserver is also asked directly
        addresses = target.addresses(controllers)
        found += [f"kube-apiserver@{node} not ready (its own /readyz)" for node in controllers
                  if not (addresses[node] and target.apiserver_ready(node, address=addresses[node]))]
        found += [f"static pod {pod} not Ready" for pod, ok in static_pods_ready(target).items() if not ok]
        # an apiserver and its mirror pods can look ready while its node's etcd member is still on its way back (a
        # held member returns after the kubelet's crash back-off): the next scenario would start on two
        found += [f"etcd member in {node} not answering" for node in controllers
                  if addresses[node]
                  and target.etcd.status(f"https://{addresses[node]}:{ETCD_CLIENT_PORT}", timeout=2.0) is None]
        found += [f"lease {name} unheld" for name, node in self.lease_holders().items() if node is None]
        return found

    def component_healthy(self, component: Component | str, host: str) -> bool:
        """The apiserver's /readyz, etcd's status, the controller-manager's and the scheduler's /healthz (from
        inside the node, with its curl)."""
        target = self.target
        name = static_pods.checked(component_name(component))
        if name == "kube-apiserver":
            return target.apiserver_ready(host)
        if name == "etcd":
            address = target.address(host)
            return address is not None and target.etcd.status(f"https://{address}:{ETCD_CLIENT_PORT}",
                                                              timeout=1.0) is not None
        url = f"https://127.0.0.1:{LOCAL_HEALTH_PORTS[name]}/healthz"
        return target.exec(host, ["curl", "-sk", "--max-time", "1", url], check=False).strip() == "ok"

    def lease_host(self, identity: str) -> str:
        """kubeadm's identities are '<node container>_<uuid>'; the short node name."""
        return identity.split("_", 1)[0].removeprefix(f"{self.target.kind_name}-")
