"""Hollow node readiness, sampled: every few seconds a list of the hollow nodes (from the apiserver's
watch cache) counts those whose Ready condition is True, recorded as a `nodes.ready` event."""

from __future__ import annotations

import requests

from harness.hollow import NODES_PATH, SELECTOR
from harness.history import Outcome, now
from harness.monitors.base import Monitor

SAMPLE_PERIOD_S = 5.0  # well inside the 40 s node-monitor grace period: a NotReady spell cannot slip by


class NodeReadiness(Monitor):
    name = "nodes"

    def __init__(self, cluster, history, **kwargs) -> None:
        super().__init__(cluster, history, rate=1.0 / SAMPLE_PERIOD_S, workers=1, **kwargs)

    def step(self, worker: int) -> None:
        invoke = now()
        try:
            response = self.cluster.api.request("GET", f"{NODES_PATH}?{SELECTOR}&resourceVersion=0", timeout=20.0)
            response.raise_for_status()
            items = response.json().get("items", [])
        except (requests.RequestException, ValueError) as error:
            self.history.record(self.name, "nodes.list", "lb", invoke, Outcome.FAIL, error=str(error)[:200])
            return
        not_ready = [n["metadata"]["name"] for n in items
                     if not any(c.get("type") == "Ready" and c.get("status") == "True"
                                for c in n.get("status", {}).get("conditions", []))]
        self.history.record(self.name, "nodes.list", "lb", invoke, Outcome.OK, value=len(items))
        self.history.event("nodes.ready", total=len(items), ready=len(items) - len(not_ready),
                           examples=not_ready[:5])
