"""Pods started as ClusterLoader2's PodStartupLatency measures them: stateless pods created at a steady rate on the
hollow nodes (kwok plays their containers: no image pull, which the SLO leaves out anyway), each watched from its
creation until the watch reports it Running. Each pod becomes an operation in the History (`pod.startup`: invoke =
its create request answered 201, complete = Running observed), which harness/checkers/pod_startup.py judges; the
moment the watch first saw it bound to a node is kept for the scheduling throughput."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass

import requests

from harness.clients.kubeapi import ApiClient
from harness.components.kwok import HOLLOW_LABEL
from harness.load.hollow import HOLLOW_TOLERATION
from harness.history import History, Op, Outcome
from harness.wait import until

LABEL = "quorum-startup"
OP = "pod.startup"


@dataclass
class Seen:
    created: float | None = None
    bound: float | None = None
    running: float | None = None


class PodWatch:
    """A watch on the namespace's startup pods, in a thread, re-opened from the last resourceVersion until stopped."""

    def __init__(self, api: ApiClient, namespace: str) -> None:
        self.api, self.namespace = api, namespace
        self.seen: dict[str, Seen] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.version = ""
        self._relist()
        self.thread = threading.Thread(target=self._run, name="pod-startup-watch", daemon=True)

    def _relist(self) -> None:
        """The pods as they are now and the version to watch from (at start, and when the watch's version expired)."""
        listed = self.api.request("GET", self._path(), timeout=30.0)
        listed.raise_for_status()
        for item in listed.json().get("items", []):
            self._event({"type": "MODIFIED", "object": item}, time.monotonic())
        self.version = listed.json()["metadata"]["resourceVersion"]

    def _path(self, **query: str) -> str:
        extra = "".join(f"&{key}={value}" for key, value in query.items())
        return f"/api/v1/namespaces/{self.namespace}/pods?labelSelector=app%3D{LABEL}{extra}"

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                with self.api.session.get(self.api.endpoint + self._path(watch="1", resourceVersion=self.version,
                                                                         timeoutSeconds="5"),
                                          stream=True, timeout=(5.0, 10.0)) as response:
                    for line in response.iter_lines():
                        if line:
                            self._event(json.loads(line), time.monotonic())
            except (requests.RequestException, ValueError):
                time.sleep(0.2)  # the next watch resumes from the last version seen

    def _event(self, event: dict, now: float) -> None:
        if event.get("type") == "ERROR":  # e.g. 410 Gone: the version is too old to resume from
            self._relist()
            return
        pod = event.get("object", {})
        self.version = pod.get("metadata", {}).get("resourceVersion", self.version)
        name = pod.get("metadata", {}).get("name")
        if event.get("type") not in ("ADDED", "MODIFIED") or not name:
            return
        with self.lock:
            seen = self.seen.setdefault(name, Seen())
            if seen.bound is None and pod.get("spec", {}).get("nodeName"):
                seen.bound = now
            if seen.running is None and pod.get("status", {}).get("phase") == "Running":
                seen.running = now

    def start(self) -> "PodWatch":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(15.0)


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": LABEL}},
            "spec": {"nodeSelector": {HOLLOW_LABEL: "true"}, "tolerations": [dict(HOLLOW_TOLERATION)],
                     "automountServiceAccountToken": False,
                     "containers": [{"name": "c", "image": "quorum.invalid/hollow:never-pulled"}]}}


def _delete_all(api: ApiClient, namespace: str) -> None:
    api.request("DELETE", f"/api/v1/namespaces/{namespace}/pods?labelSelector=app%3D{LABEL}&gracePeriodSeconds=0",
                timeout=60.0)


def start_pods(api: ApiClient, history: History, namespace: str, *, count: int, rate_per_s: float,
               timeout_s: float) -> dict[str, Seen]:
    """Create `count` pods at `rate_per_s`, wait (at most timeout_s after the last) until the watch saw each Running,
    record them in the History, and delete them all. Bounded: count creates, and the wait."""
    _delete_all(api, namespace)  # a killed run's pods would keep their names taken
    watch = PodWatch(api, namespace).start()
    try:
        started = time.monotonic()
        for index in range(count):
            time.sleep(max(0.0, started + index / rate_per_s - time.monotonic()))
            name = f"{LABEL}-{index:04d}"
            response = api.request("POST", f"/api/v1/namespaces/{namespace}/pods", pod(name), timeout=30.0)
            if response.status_code == 201:
                with watch.lock:
                    watch.seen.setdefault(name, Seen()).created = time.monotonic()
        def all_running() -> bool:
            with watch.lock:
                return all(s.running for s in watch.seen.values() if s.created)

        until(all_running, timeout_s, 0.2)
    finally:
        watch.stop()
        _delete_all(api, namespace)
    for name, seen in sorted(watch.seen.items()):
        if seen.created is not None:
            history.add_op(Op("pod-startup", OP, name, seen.created, seen.running or time.monotonic(),
                              Outcome.OK if seen.running else Outcome.UNKNOWN, extra={"bound": seen.bound}))
    return watch.seen
