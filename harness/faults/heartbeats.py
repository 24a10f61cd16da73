"""Stop one hollow node's heartbeats, as when a node's kubelet dies: the kwok controller that plays the node lets go of
it (its host label is moved off every controller's selector), so nothing renews its Lease or posts its status, and
the node lifecycle controller must declare it NotReady and taint it. Undone by giving the label back: the node's kwok
controller plays it again and it turns Ready. Written only against the target protocol and the API."""

from __future__ import annotations

from dataclasses import dataclass

import requests

from harness.components.kwok import HOST_LABEL
from harness.errors import FaultError
from harness.faults.base import Fault
from harness.load.hollow import NODES_PATH
from harness.target.capabilities import Capability
from harness.target.protocol import Target

ORPHANED = "quorum-no-kwok"  # a host label no kwok controller selects (harness/components/kwok.py)
PATCH_TIMEOUT_S = 20.0


@dataclass
class StopNodeHeartbeats(Fault):
    """`node`: one hollow node; empty, the first of the target's (captured["node"], with captured["host"], the kwok
    controller that played it, so a `quorum heal` gives it back to the same one)."""

    name = "stop-node-heartbeats"
    requires = (Capability.HOLLOW_NODES,)
    node: str = ""

    def plan(self, target: Target) -> None:
        played_by = target.hollow_players()
        if not played_by:
            raise FaultError("the cluster has no hollow nodes whose heartbeats could stop",
                             "use a topology with hollow_nodes (clusters/ha3-1000.yaml), or an inventory's "
                             "hollow_nodes on a disposable target")
        node = self.node or min(played_by)
        if node not in played_by:
            raise FaultError(f"{node!r} is not a hollow node of {target.name}",
                             f"name one of its hollow nodes, e.g. {min(played_by)}")
        self.captured.update(node=node, host=played_by[node])

    def act(self, target: Target) -> None:
        self._label(target, ORPHANED)

    def undo(self, target: Target) -> None:
        if "host" in self.captured:  # planned: the label may have moved
            self._label(target, self.captured["host"])

    def _label(self, target: Target, host: str) -> None:
        node = self.captured["node"]
        try:
            response = target.api.request("PATCH", f"{NODES_PATH}/{node}",
                                          {"metadata": {"labels": {HOST_LABEL: host}}}, timeout=PATCH_TIMEOUT_S,
                                          content_type="application/merge-patch+json")
        except requests.RequestException as error:
            raise FaultError(f"node {node}'s label {HOST_LABEL} could not be set to {host}: {error}",
                             "check that the API answers (quorum status), then quorum heal") from None
        if response.status_code == 404:
            return  # the node is gone: nothing plays it or needs its label back
        if response.status_code >= 300:
            raise FaultError(f"node {node}'s label {HOST_LABEL} could not be set to {host}: HTTP "
                             f"{response.status_code} {response.text[:200]}", "quorum heal tries again")
