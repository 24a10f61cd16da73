"""StopNodeHeartbeats (harness/faults/heartbeats.py): the node it names is resolved with the kwok controller that
plays it, its host label is moved off every controller's selector and given back, and what it cannot do is refused
before anything acts."""

import json
from dataclasses import dataclass, field

import pytest

from harness.components.kwok import HOST_LABEL
from harness.errors import FaultError
from harness.faults.base import Fault
from harness.faults.heartbeats import ORPHANED, StopNodeHeartbeats
from harness.topology import load_topology
from tests.unit.conftest import ROOT


@dataclass
class _Response:
    status_code: int = 200
    text: str = ""


@dataclass
class _Api:
    sent: list[tuple[str, str, dict, str]] = field(default_factory=list)
    status: int = 200

    def request(self, method, path, body=None, timeout=10.0, content_type="application/json"):
        self.sent.append((method, path, body, content_type))
        return _Response(self.status)


@dataclass
class _Target:
    topology: object
    name: str = "ha3-1000"
    api: _Api = field(default_factory=_Api)

    def hollow_players(self) -> dict[str, str]:
        """As the Target protocol's default: the topology's nodes, each with its nodes host."""
        return {n: h.name for h in self.topology.node_hosts for n in self.topology.hollow_node_names(h)}


def _hollow() -> _Target:
    return _Target(load_topology(ROOT / "clusters" / "ha3-1000.yaml"))


def test_the_first_hollow_node_is_taken_off_its_controller_and_given_back_to_it():
    target = _hollow()
    fault = StopNodeHeartbeats()
    fault.plan(target)
    assert fault.captured == {"node": "hollow-n1-0000", "host": "n1"}
    fault.act(target)
    fault.undo(target)
    labels = [(method, path, body["metadata"]["labels"][HOST_LABEL], kind)
              for method, path, body, kind in target.api.sent]
    assert labels == [("PATCH", "/api/v1/nodes/hollow-n1-0000", ORPHANED, "application/merge-patch+json"),
                      ("PATCH", "/api/v1/nodes/hollow-n1-0000", "n1", "application/merge-patch+json")]


def test_a_journaled_fault_rebuilt_by_a_heal_gives_the_label_back_and_one_never_planned_does_nothing():
    target = _hollow()
    fault = StopNodeHeartbeats(node="hollow-n1-0007")
    fault.plan(target)
    rebuilt = Fault.from_record(json.loads(json.dumps(fault.to_record())))
    rebuilt.undo(target)
    assert [body["metadata"]["labels"][HOST_LABEL] for _, _, body, _ in target.api.sent] == ["n1"]
    StopNodeHeartbeats().undo(target)  # act never ran: no label to give back
    assert len(target.api.sent) == 1


def test_a_node_that_is_not_hollow_or_a_cluster_without_hollow_nodes_is_refused_before_anything_acts():
    target = _hollow()
    with pytest.raises(FaultError, match="'c1' is not a hollow node of ha3-1000"):
        StopNodeHeartbeats(node="c1").plan(target)
    bare = _Target(load_topology(ROOT / "clusters" / "single.yaml"), name="single")
    with pytest.raises(FaultError, match="no hollow nodes"):
        StopNodeHeartbeats().plan(bare)
    assert target.api.sent == [] and bare.api.sent == []


def test_an_api_that_refuses_the_label_is_a_fault_error_and_a_node_gone_is_nothing_to_give_back():
    target = _hollow()
    fault = StopNodeHeartbeats()
    fault.plan(target)
    target.api.status = 403
    with pytest.raises(FaultError, match="HTTP 403"):
        fault.act(target)
    target.api.status = 404
    fault.undo(target)
