"""Kubernetes writer: ConfigMaps created through the load balancer with the official client; a final
LIST reads them back. Client-side retries are off, so every failure the API returns is recorded."""

from __future__ import annotations

import secrets
import time

import urllib3
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException

from harness.target.protocol import Target
from harness.history import History, Outcome, now
from harness.monitors.base import Monitor

NAMESPACE = "default"
LABEL = "quorum.io/writer"


def api_client(cluster: Target) -> k8s.ApiClient:
    configuration = k8s.Configuration()
    k8s_config.load_kube_config(config_file=str(cluster.admin_kubeconfig), client_configuration=configuration)
    configuration.retries = False  # a retried request would hide the failure and stretch the latency
    return k8s.ApiClient(configuration)


class KubeWriter(Monitor):
    name = "kube"

    def __init__(self, cluster: Target, history: History, *, rate: float = 5.0, workers: int = 2,
                 timeout: float = 3.0, **limits) -> None:
        super().__init__(cluster, history, rate=rate, workers=workers, **limits)
        self.timeout = timeout
        self.tag = secrets.token_hex(3)
        self._apis = [k8s.CoreV1Api(api_client(cluster)) for _ in range(workers)]
        self._seq = [0] * workers

    def step(self, worker: int) -> None:
        self._seq[worker] += 1
        name = f"qw-{self.tag}-{worker}-{self._seq[worker]:06d}"
        body = k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name=name, labels={LABEL: self.tag}), data={"seq": name})
        invoke = now()
        try:
            created = self._apis[worker].create_namespaced_config_map(NAMESPACE, body, _request_timeout=self.timeout)
            self.history.record(f"kube-{worker}", "kube.create", "lb", invoke, Outcome.OK, value=name,
                                resource_version=int(created.metadata.resource_version))
        except ApiException as error:
            # 4xx: refused, not stored; 5xx: the apiserver may have stored it before failing
            outcome = Outcome.FAIL if error.status and error.status < 500 else Outcome.UNKNOWN
            self.history.record(f"kube-{worker}", "kube.create", "lb", invoke, outcome, value=name,
                                error=f"HTTP {error.status} {error.reason}")
        except (urllib3.exceptions.HTTPError, OSError) as error:
            self.history.record(f"kube-{worker}", "kube.create", "lb", invoke, Outcome.UNKNOWN, value=name,
                                error=type(error).__name__)

    def finish(self) -> None:
        self.read_back()

    def read_back(self, deadline_s: float = 60.0, delete: bool = True) -> list[str] | None:
        api = k8s.CoreV1Api(api_client(self.cluster))
        invoke = now()
        end = time.monotonic() + deadline_s
        error = ""
        while time.monotonic() < end:
            try:
                listing = api.list_namespaced_config_map(NAMESPACE, label_selector=f"{LABEL}={self.tag}",
                                                         _request_timeout=10)
            except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
                error = f"{type(exc).__name__}: {exc}"
                time.sleep(1.0)
                continue
            names = sorted(item.metadata.name for item in listing.items)
            self.history.record("kube-check", "kube.read_all", "lb", invoke, Outcome.OK, value=names,
                                resource_version=int(listing.metadata.resource_version))
            if delete:
                self._clean_up(api)
            return names
        self.history.record("kube-check", "kube.read_all", "lb", invoke, Outcome.FAIL, error=error[:200])
        return None

    def _clean_up(self, api: k8s.CoreV1Api) -> None:
        """Delete what was read back: cleaning only, never followed by another read (the server may go on deleting
        after the client gave up, and a second read would judge those writes lost: docs/design.md). Leftovers keep
        their writer's label."""
        try:
            api.delete_collection_namespaced_config_map(NAMESPACE, label_selector=f"{LABEL}={self.tag}",
                                                        _request_timeout=30)
        except (ApiException, urllib3.exceptions.HTTPError, OSError):
            pass
