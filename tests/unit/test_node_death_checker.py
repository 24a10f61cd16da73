"""node-declared-not-ready (harness/checkers/node_death.py) on hand-written histories: the node monitor's first
NodeNotReady for the node after its heartbeats stopped, against the bound; a node never declared fails only after a
watch longer than the bound while the fault lasted."""

from harness.checkers import Status
from harness.checkers.node_death import node_declared_not_ready
from harness.history import History, Outcome
from harness.objectives.bounds import UPSTREAM, NodeMonitoring, node_not_ready_bound_s

NODE = "hollow-n1-0000"


def stop(history: History, start: float = 100.0, in_place: float | None = 100.2, lasted: float = 90.0) -> None:
    history.event("fault.start", t=start, id="f1", name="stop-node-heartbeats")
    if in_place is not None:
        history.event("fault.in_place", t=in_place, id="f1", name="stop-node-heartbeats")
    history.event("fault.end", t=start + lasted, id="f1", name="stop-node-heartbeats")


def reads(history: History, first: float, last: float, every: float = 5.0) -> None:
    t = first
    while t <= last:
        history.record("nodes", "nodes.list", "lb", t, Outcome.OK, value=1000, complete=t + 0.3)
        t += every


def test_the_first_not_ready_of_the_node_after_the_stop_is_its_detection():
    h = History()
    h.event("nodes.not_ready", t=40.0, node=NODE, message="earlier")  # before the stop: not this fault's
    stop(h)
    h.event("nodes.not_ready", t=130.0, node="hollow-n1-0001", message="another node")
    h.event("nodes.not_ready", t=150.7, node=NODE, message="Node hollow-n1-0000 status is now: NodeNotReady")
    v = node_declared_not_ready(h, node=NODE, max_s=60.5)
    assert v.passed, v.explanation
    assert v.figures["node_not_ready_s"] == 50.5 and "in place at t=100.20" in v.explanation


def test_a_sample_finding_the_node_not_ready_counts_when_no_event_came_or_came_later():
    h = History()
    stop(h)
    h.event("nodes.went_not_ready", t=142.3, node=NODE)
    h.event("nodes.not_ready", t=147.0, node=NODE, message="NodeNotReady")
    v = node_declared_not_ready(h, node=NODE, max_s=65.5)
    assert v.passed and v.figures["node_not_ready_s"] == 42.1, v.explanation
    assert "a sample found it not Ready" in v.explanation


def test_a_detection_later_than_the_bound_fails_with_both_times():
    h = History()
    stop(h, lasted=200.0)
    h.event("nodes.not_ready", t=230.2, node=NODE, message="NodeNotReady")
    v = node_declared_not_ready(h, node=NODE, max_s=60.5)
    assert v.status is Status.FAIL
    assert "130.00s" in v.explanation and "60.50s" in v.explanation


def test_never_declared_fails_after_a_longer_watch_and_is_unknown_after_a_shorter_one():
    h = History()
    stop(h, lasted=90.0)
    reads(h, 101.0, 186.0)
    v = node_declared_not_ready(h, node=NODE, max_s=60.5)
    assert v.status is Status.FAIL and v.figures["watched_s"] > 60.5, v.explanation
    short = History()
    stop(short, lasted=30.0)
    reads(short, 101.0, 200.0)  # reads after the heal see a live node: not counted
    v = node_declared_not_ready(short, node=NODE, max_s=60.5)
    assert v.status is Status.UNKNOWN and v.figures["watched_s"] < 30.0, v.explanation


def test_no_fault_is_unknown():
    h = History()
    h.event("nodes.not_ready", t=10.0, node=NODE, message="NodeNotReady")
    assert node_declared_not_ready(h, node=NODE).status is Status.UNKNOWN


def test_the_bound_is_the_grace_and_monitor_periods_and_the_reads():
    assert node_not_ready_bound_s(UPSTREAM.node_monitoring()) == 50.0 + 2 * 5.0 + 5.0 + 0.5
    assert node_not_ready_bound_s(NodeMonitoring(grace_s=120.0, period_s=5.0)) == 135.5
