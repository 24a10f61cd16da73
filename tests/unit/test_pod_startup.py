"""The pod startup verdict on hand-made Histories."""

from harness.checkers import Status
from harness.checkers.pod_startup import pod_startup_slo
from harness.clients.pod_startup import OP, PodWatch
from harness.history import History, Op, Outcome


def started(history, name, created, running, bound=None, ok=True):
    history.add_op(Op("pod-startup", OP, name, created, running, Outcome.OK if ok else Outcome.UNKNOWN,
                      extra={"bound": bound}))


def test_the_p99_of_creation_to_running_is_judged_and_throughput_reported():
    h = History()
    for i in range(100):
        started(h, f"p{i}", i * 0.1, i * 0.1 + (6.0 if i == 99 else 1.0), bound=i * 0.1 + 0.5)
    verdict = pod_startup_slo(h)
    assert verdict.passed and verdict.figures["p99_s"] == 1.0  # nearest rank: one slow pod of 100 is the 100th
    assert verdict.figures["scheduling_throughput_per_s"] == round(100 / 10.4, 1)
    started(h, "p100", 10.0, 16.0)
    started(h, "p101", 10.1, 16.1)
    assert pod_startup_slo(h).status is Status.FAIL


def test_a_pod_never_seen_running_fails_and_no_pod_is_unknown():
    h = History()
    started(h, "p0", 0.0, 1.0)
    started(h, "p1", 0.1, 61.0, ok=False)
    verdict = pod_startup_slo(h)
    assert verdict.status is Status.FAIL and "1 of 2 pods were never seen Running" in verdict.explanation
    assert pod_startup_slo(History()).status is Status.UNKNOWN


def test_the_watch_keeps_the_first_binding_and_the_first_running_it_sees():
    watch = PodWatch.__new__(PodWatch)  # no cluster: only the event handling
    watch.seen, watch.version, watch.lock = {}, "1", __import__("threading").Lock()
    pod = {"metadata": {"name": "p", "resourceVersion": "5"}, "spec": {}, "status": {"phase": "Pending"}}
    watch._event({"type": "ADDED", "object": pod}, 1.0)
    watch._event({"type": "MODIFIED", "object": pod | {"spec": {"nodeName": "n"}}}, 2.0)
    watch._event({"type": "MODIFIED", "object": pod | {"spec": {"nodeName": "n"}, "status": {"phase": "Running"}}}, 3.0)
    watch._event({"type": "MODIFIED", "object": pod | {"spec": {"nodeName": "n"}, "status": {"phase": "Running"}}}, 4.0)
    assert (watch.seen["p"].bound, watch.seen["p"].running, watch.version) == (2.0, 3.0, "5")
