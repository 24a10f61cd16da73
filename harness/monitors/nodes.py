"""Hollow node readiness, two ways, every few seconds:

- a list of the hollow nodes (from the apiserver's watch cache) counts those whose Ready condition is
  True, recorded as a `nodes.ready` event;
- the node lifecycle controller's `NodeNotReady` Events since the monitor started, recorded as
  `nodes.not_ready` events. A sample can miss a short flap (kwok marks a node Ready again within
  milliseconds of the controller declaring it dead); the controller's Event cannot be missed.

A node a sample finds not Ready that the previous one found Ready is also recorded, as a `nodes.went_not_ready`
event: a dead node stays not Ready, so the samples time its declaration too, where its Event may not be read (on
1000 hollow nodes none was, for a node whose heartbeats stopped: docs/benchmarks.md); harness/checkers/node_death.py
takes the earlier of the two.
"""

from __future__ import annotations

import time
from datetime import datetime

import requests

from harness.load.hollow import NODES_PATH
from harness.history import Outcome, now
from harness.monitors.base import Monitor

SAMPLE_PERIOD_S = 5.0  # well inside the 40-50 s node-monitor grace period
EVENTS_PATH = "/api/v1/events?fieldSelector=reason%3DNodeNotReady%2CinvolvedObject.kind%3DNode"


def _when(event: dict) -> float:
    stamp = event.get("lastTimestamp") or event.get("eventTime") or event["metadata"]["creationTimestamp"]
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


class NodeReadiness(Monitor):
    name = "nodes"

    def __init__(self, cluster, history, **kwargs) -> None:
        super().__init__(cluster, history, rate=1.0 / SAMPLE_PERIOD_S, workers=1, **kwargs)
        self.since_wall = time.time()
        self.seen: set[tuple[str, int]] = set()
        self.not_ready: set[str] | None = None  # the last sample's, None before the first

    def setup(self) -> None:
        super().setup()
        self.since_wall = time.time() - 1.0  # Event times have whole seconds

    def step(self, worker: int) -> None:
        invoke = now()
        try:
            response = self.cluster.api.request("GET", f"{NODES_PATH}?{self.cluster.hollow_selector()}"
                                                f"&resourceVersion=0", timeout=20.0)
            response.raise_for_status()
            items = response.json().get("items", [])
            events = self.cluster.api.request("GET", EVENTS_PATH, timeout=20.0)
            events.raise_for_status()
        except (requests.RequestException, ValueError) as error:
            self.history.record(self.name, "nodes.list", "lb", invoke, Outcome.FAIL, error=str(error)[:200])
            return
        not_ready = [n["metadata"]["name"] for n in items
                     if not any(c.get("type") == "Ready" and c.get("status") == "True"
                                for c in n.get("status", {}).get("conditions", []))]
        self.history.record(self.name, "nodes.list", "lb", invoke, Outcome.OK, value=len(items))
        self.history.event("nodes.ready", total=len(items), ready=len(items) - len(not_ready),
                           examples=not_ready[:5])
        if self.not_ready is not None:
            for node in sorted(set(not_ready) - self.not_ready):
                self.history.event("nodes.went_not_ready", node=node)
        self.not_ready = set(not_ready)
        for event in events.json().get("items", []):
            key = (event["metadata"]["uid"], int(event.get("count") or 1))
            if key in self.seen or _when(event) < self.since_wall:
                continue
            self.seen.add(key)
            self.history.event("nodes.not_ready", node=event.get("involvedObject", {}).get("name"),
                               message=str(event.get("message", ""))[:120], count=key[1])
