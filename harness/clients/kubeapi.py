"""Small, fast Kubernetes API access with the admin certificate (for readiness, leases and probes).

The official client is used where objects are created; this stays dependency-light so monitors can
issue many short requests with tight timeouts.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from datetime import datetime

import requests

from harness.clients.health import session
from harness.pki import Pair

LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{name}"


@dataclass(frozen=True)
class PodRestarts:
    """How often the kubelet restarted a pod's containers, and when the newest of them started (epoch seconds;
    None: none is running)."""

    restarts: int
    started_at: float | None


@dataclass(frozen=True)
class LeaseHolder:
    identity: str
    renew_time: str | None
    transitions: int


class ApiClient:
    def __init__(self, endpoint: str, ca: str, client: Pair | None, token: str | None = None) -> None:
        """A client certificate, or a bearer token (a kubeconfig of a cluster Quorum did not build may hold one)."""
        self.endpoint = endpoint.rstrip("/")
        self.session = session()
        self.session.verify = ca
        if client is not None:
            self.session.cert = (str(client.cert), str(client.key))
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def get(self, path: str, timeout: float = 2.0) -> requests.Response:
        return self.session.get(self.endpoint + path, timeout=timeout)

    def on_a_new_connection(self) -> "ApiClient":
        """The same endpoint and credentials on a session of its own, so the next request opens a new
        connection (like kubectl): behind a TCP load balancer a kept-alive one stays with its first apiserver."""
        other = copy.copy(self)
        other.session = session()
        other.session.verify, other.session.cert = self.session.verify, self.session.cert
        other.session.headers.update(self.session.headers)
        return other

    def request(self, method: str, path: str, body: dict | list | None = None, timeout: float = 10.0,
                content_type: str = "application/json") -> requests.Response:
        data = None if body is None else json.dumps(body)
        return self.session.request(method, self.endpoint + path, data=data, timeout=timeout,
                                    headers={"Content-Type": content_type} if data else None)

    def ready(self, timeout: float = 2.0) -> bool:
        try:
            return self.get("/readyz", timeout).status_code == 200
        except requests.RequestException:
            return False

    def mirror_pod(self, component: str, node: str, timeout: float = 5.0) -> PodRestarts | None:
        """The restarts of the static pod `component` on `node` (its mirror pod is named <component>-<node>); None
        when the API does not show that mirror pod."""
        try:
            response = self.get(f"/api/v1/namespaces/kube-system/pods/{component}-{node}", timeout)
        except requests.RequestException:
            return None
        if response.status_code != 200:
            return None
        return pod_restarts(response.json())

    def mirror_pod_restarts(self, component: str, node: str, timeout: float = 5.0) -> int | None:
        pod = self.mirror_pod(component, node, timeout)
        return None if pod is None else pod.restarts

    def lease_holder(self, name: str, timeout: float = 2.0) -> LeaseHolder | None:
        try:
            response = self.get(LEASE_PATH.format(name=name), timeout)
        except requests.RequestException:
            return None
        if response.status_code != 200:
            return None
        spec = response.json().get("spec", {})
        identity = spec.get("holderIdentity")
        if not identity:
            return None
        return LeaseHolder(identity, spec.get("renewTime"), spec.get("leaseTransitions", 0))


def pod_restarts(pod: dict) -> PodRestarts:
    """A pod object's restart count and its newest running container's start."""
    statuses = pod.get("status", {}).get("containerStatuses") or []
    starts = [datetime.fromisoformat(started.replace("Z", "+00:00")).timestamp() for status in statuses
              if (started := (status.get("state") or {}).get("running", {}).get("startedAt"))]
    return PodRestarts(sum(status.get("restartCount", 0) for status in statuses), max(starts, default=None))
