"""Locust users that do what a cluster's clients do. Importing this module imports locust (and so
monkey-patches with gevent): only worker processes import it.

Also a locustfile for locust's own command line, e.g. distributed against a remote cluster:
    QUORUM_LOAD_SPEC=spec.json locust -f harness/load/users.py --master --headless -u 50 -r 10 -t 10m
    QUORUM_LOAD_SPEC=spec.json locust -f harness/load/users.py --worker --master-host=MASTER
(spec.json is a LoadSpec: endpoint, CA and client certificate paths, node names; docs/load.md).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import time
from collections import deque

from gevent import ssl
from locust import constant_throughput, task
from locust.contrib.fasthttp import FastHttpUser

from harness.load.spec import TASKS, LoadSpec, read_path, spec_file_or_exit

_SPEC_FILE = os.environ.get("QUORUM_LOAD_SPEC")
SPEC: LoadSpec | None = spec_file_or_exit(_SPEC_FILE, "QUORUM_LOAD_SPEC") if _SPEC_FILE else None
_names = itertools.count()
JSON = {"Content-Type": "application/json"}
MERGE = {"Content-Type": "application/merge-patch+json"}
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}
OWNED_MAX = 3  # objects one user keeps alive before it deletes its oldest


def configure(spec: LoadSpec) -> None:
    global SPEC
    SPEC = spec
    ApiClientUser.host = spec.endpoint
    ApiClientUser.wait_time = constant_throughput(spec.rate_per_s / spec.users)
    ApiClientUser.network_timeout = spec.request_timeout_s
    ApiClientUser.connection_timeout = min(10.0, spec.request_timeout_s)
    ApiClientUser.tasks = [getattr(ApiClientUser, name) for name, weight in spec.mix.items() for _ in range(weight)]
    if spec.unpaced:  # as fast as the users can go: for measuring what one process can generate
        from locust import constant

        ApiClientUser.wait_time = constant(0)


def _ssl_context(cafile: str | None = None):
    """The cluster's CA only. geventhttpclient passes its default bundle as `cafile`, and adds that bundle to a
    context whose factory takes no such argument: the users would then trust every public CA for the apiserver."""
    assert SPEC is not None
    context = ssl.create_default_context(cafile=str(SPEC.ca))
    if not SPEC.anonymous:
        context.load_cert_chain(str(SPEC.cert), str(SPEC.key))
    return context


def label(task_name: str, verb: str | None = None) -> str:
    """The request name locust reports: 'verb resource scope'."""
    default_verb, resource, scope = TASKS[task_name]
    return f"{verb or default_verb} {resource} {scope}"


class ApiClientUser(FastHttpUser):
    """One API client. Every task is exactly one request, so the request rate is the task rate."""

    abstract = False
    host = SPEC.endpoint if SPEC else None
    insecure = False
    ssl_context_factory = staticmethod(_ssl_context)
    max_retries = 0

    def on_start(self) -> None:
        self.configmaps: deque[str] = deque()
        self.pods: deque[str] = deque()
        self.updates = 0
        self.prefix = f"load-{os.getpid()}-{next(_names)}"

    @property
    def spec(self) -> LoadSpec:
        assert SPEC is not None
        return SPEC

    def node(self) -> str:
        return random.choice(self.spec.nodes)

    def _name(self, kind: str) -> str:
        return f"{self.prefix}-{kind}-{next(_names)}"

    @task
    def get_node(self) -> None:
        self.client.get(read_path("get_node", self.spec, self.node()), name=label("get_node"))

    @task
    def list_nodes(self) -> None:
        self.client.get(read_path("list_nodes", self.spec, ""), name=label("list_nodes"))

    @task
    def watch_node(self) -> None:
        self.client.get(f"/api/v1/nodes?watch=1&timeoutSeconds=2&fieldSelector=metadata.name%3D{self.node()}",
                        name=label("watch_node"))

    @task
    def get_pod(self) -> None:
        # a pod that may not exist is still a real get; 404 counts as an answer, not an error
        name = self.pods[-1] if self.pods else "absent"
        with self.client.get(f"/api/v1/namespaces/{self.spec.namespace}/pods/{name}", name=label("get_pod"),
                             catch_response=True) as response:
            if response.status_code in (200, 404):
                response.success()

    @task
    def list_pods_namespace(self) -> None:
        self.client.get(read_path("list_pods_namespace", self.spec, ""), name=label("list_pods_namespace"))

    @task
    def list_pods_on_node(self) -> None:  # what a kubelet asks for
        self.client.get(read_path("list_pods_on_node", self.spec, self.node()), name=label("list_pods_on_node"))

    @task
    def watch_pods(self) -> None:
        self.client.get(f"/api/v1/namespaces/{self.spec.namespace}/pods?watch=1&timeoutSeconds=2",
                        name=label("watch_pods"))

    @task
    def configmap(self) -> None:
        base = f"/api/v1/namespaces/{self.spec.namespace}/configmaps"
        if len(self.configmaps) < OWNED_MAX:
            name = self._name("cm")
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"app": "quorum-load"}},
                    "data": {"n": "0"}}
            response = self.client.post(base, data=json.dumps(body), headers=JSON, name=label("configmap", "create"))
            if response.status_code == 201:
                self.configmaps.append(name)
        elif self.updates % 2 == 0:
            self.updates += 1
            patch = {"data": {"n": str(self.updates), "at": f"{time.time():.3f}"}}
            self.client.patch(f"{base}/{self.configmaps[-1]}", data=json.dumps(patch), headers=MERGE,
                              name=label("configmap", "update"))
        else:
            self.updates += 1
            self.client.delete(f"{base}/{self.configmaps.popleft()}", name=label("configmap", "delete"))

    @task
    def pod(self) -> None:
        base = f"/api/v1/namespaces/{self.spec.namespace}/pods"
        if len(self.pods) < OWNED_MAX:
            name = self._name("pod")
            body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "quorum-load"}},
                    "spec": {"nodeName": self.node(), "automountServiceAccountToken": False,
                             "containers": [{"name": "c", "image": "quorum.invalid/hollow:never-pulled"}]}}
            response = self.client.post(base, data=json.dumps(body), headers=JSON, name=label("pod", "create"))
            if response.status_code == 201:
                self.pods.append(name)
        else:
            # a grace period of 0: kwok plays no containers that would need one
            self.client.delete(f"{base}/{self.pods.popleft()}?gracePeriodSeconds=0", name=label("pod", "delete"))

    @task
    def readyz(self) -> None:
        self.client.get(read_path("readyz", self.spec, ""), name=label("readyz"))

    @task
    def patch_node_status(self) -> None:  # what a node-problem-detector does
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        patch = {"status": {"conditions": [{"type": "QuorumLoadProbe", "status": "False", "reason": "Probe",
                                            "message": "set by Quorum's API load", "lastHeartbeatTime": now,
                                            "lastTransitionTime": now}]}}
        self.client.patch(f"/api/v1/nodes/{self.node()}/status", data=json.dumps(patch), headers=STRATEGIC,
                          name=label("patch_node_status"))


if SPEC is not None:
    configure(SPEC)
