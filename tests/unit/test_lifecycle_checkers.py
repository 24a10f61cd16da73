"""The lifecycle checkers over hand-written Histories: a lease handed over in time or not after an upgrade step
restarted its holder, a step on a host that did not hold it, and components on (or off) the intended release."""

from harness.checkers.lifecycle import lease_handovers, on_release, record_releases
from harness.checkers.verdict import Status
from harness.history import History


def step(history: History, t: float, component: str, fault_id: str) -> None:
    history.event("fault.start", t=t, id=fault_id, name="upgrade", params={"component": component})
    history.event("fault.in_place", t=t + 1.0, id=fault_id, name="upgrade")


def lease(history: History, t: float, holder: str | None) -> None:
    history.event("leader", t=t, subject="kube-controller-manager", holder=holder,
                  host=holder.partition("_")[0] if holder else None)


def test_a_handover_is_timed_from_the_restart_in_place_and_judged_against_the_bound():
    history = History()
    lease(history, 1.0, "c1_a")
    step(history, 10.0, "kube-controller-manager@c2", "f1")  # not the holder: nothing to hand over
    step(history, 20.0, "kube-controller-manager@c1", "f2")
    lease(history, 36.0, "c2_b")
    verdict = lease_handovers(history, subject="kube-controller-manager", fault="upgrade", max_s=24.3)
    assert verdict.status is Status.PASS
    assert verdict.figures["handovers"] == [{"from": "c1", "to": "c2", "took_s": 15.0}]
    late = lease_handovers(history, subject="kube-controller-manager", fault="upgrade", max_s=10.0)
    assert late.status is Status.FAIL and "not within 10.00s" in late.explanation


def test_a_lease_that_never_moves_fails_and_no_step_on_its_holder_is_unknown():
    history = History()
    lease(history, 1.0, "c1_a")
    step(history, 20.0, "kube-controller-manager@c1", "f1")
    lease(history, 22.0, None)  # released, never taken again
    never = lease_handovers(history, subject="kube-controller-manager", fault="upgrade", max_s=24.3)
    assert never.status is Status.FAIL and never.figures["longest_s"] is None
    other = History()
    lease(other, 1.0, "c1_a")
    step(other, 20.0, "kube-scheduler@c1", "f1")
    unknown = lease_handovers(other, subject="kube-controller-manager", fault="upgrade", max_s=24.3)
    assert unknown.status is Status.UNKNOWN


def test_a_release_stamped_just_before_the_step_still_counts_the_step_as_the_holders():
    """Seen on ha3 (2026-11-27): kube-scheduler releases its lease on SIGTERM, and the lease monitor stamps the
    midpoint of the poll that saw it, so the release (no holder) was recorded 0.01 s before the step's fault.start."""
    history = History()
    lease(history, 1.0, "c1_a")
    lease(history, 19.99, None)
    step(history, 20.0, "kube-controller-manager@c1", "f1")
    lease(history, 23.0, "c1_b")  # the restarted process on the same host took it
    verdict = lease_handovers(history, subject="kube-controller-manager", fault="upgrade", max_s=24.3)
    assert verdict.status is Status.PASS
    assert verdict.figures["handovers"] == [{"from": "c1", "to": "c1", "took_s": 2.0}]


def test_every_component_on_the_release_and_every_apiserver_reporting_it():
    history = History()
    record_releases(history, {"kube-apiserver@c1": "v1.35.4", "kube-scheduler@c1": "v1.35.4"},
                    {"kube-apiserver@c1": "v1.35.4"}, when="after-upgrade")
    record_releases(history, {"kube-apiserver@c1": "v1.35.4", "kube-scheduler@c1": "v1.34.4"},
                    {"kube-apiserver@c1": "no answer"}, when="after-rollback")
    assert on_release(history, expected="v1.35.4", when="after-upgrade").status is Status.PASS
    off = on_release(history, expected="v1.34.4", when="after-rollback")
    assert off.status is Status.FAIL
    assert "kube-apiserver@c1 runs v1.35.4" in off.explanation and "answers /version with no answer" in off.explanation
    assert on_release(history, expected="v1.35.4", when="never").status is Status.UNKNOWN
