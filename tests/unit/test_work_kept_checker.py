"""work-kept (harness/checkers/work.py) on hand-written histories: the controllers' work while a component is killed
and once it is back, counted from the later of a probe's asking and the work's possible return (the component healthy
again, or the controller-manager's lease's last change), and what is no evidence either way."""

from harness.checkers import Status
from harness.checkers.work import (COLLECT_PROBE, NAMESPACE_PROBE, REPLICAS_PROBE, reconcile_bounds,
                                   slowest_reconcile_s, work_kept)
from harness.history import History, Outcome

BOUNDS = reconcile_bounds(5.0, 5.0)
LEASE = "kube-controller-manager"


def kill(history: History, start: float, fault_id: str = "f1") -> None:
    history.event("fault.start", t=start, id=fault_id, name="kill")
    history.event("fault.end", t=start + 30.0, id=fault_id, name="kill")


def leader(history: History, t: float, holder: str) -> None:
    history.event("leader", t=t, subject=LEASE, holder=holder, host=holder.split("_")[0])


def probes(history: History, op: str, spans: list[tuple[float, float]], outcome: Outcome = Outcome.OK,
           **extra) -> None:
    for n, (invoke, complete) in enumerate(spans):
        history.record("work", op, "lb", invoke, outcome, value=f"{op}-{invoke}-{n}", complete=complete,
                       error="" if outcome is Outcome.OK else "not done", **extra)


def steady_work(history: History, start: float, end: float, took: float = 0.4) -> None:
    """Every probe done `took` after its asking, one of each every 2 s from `start` to `end`."""
    t = start
    while t < end:
        probes(history, REPLICAS_PROBE, [(t, t + took)])
        probes(history, COLLECT_PROBE, [(t + took, t + 2 * took)])
        probes(history, NAMESPACE_PROBE, [(t, t + 5 + took)])
        t += 2.0


def apiserver_killed(history: History) -> None:
    """A leader observed, steady work, the apiserver killed at t=10 and healthy again at t=15."""
    leader(history, 0.5, "c1_a")
    steady_work(history, 1.0, 9.0)
    kill(history, 10.0)


def test_work_that_goes_on_through_the_kill_passes_and_names_the_resumption():
    h = History()
    apiserver_killed(h)
    probes(h, REPLICAS_PROBE, [(9.5, 16.0)])  # waiting on the dead apiserver: counted from t=15
    probes(h, COLLECT_PROBE, [(11.0, 17.5)])
    steady_work(h, 16.0, 30.0)
    v = work_kept(h, max_s=BOUNDS, undone_at=[15.0])
    assert v.passed, v.explanation
    assert v.figures["resumed_after_s"] == [5.0] and v.figures["leader_changes"] == 0
    assert v.figures["replicas_slowest_s"] == 1.0 and v.figures["collect_slowest_s"] == 2.5
    assert v.figures["replicas_done_after"] == 7
    assert "work resumed 5.00s after the fault's start" in v.explanation


def test_work_still_waiting_past_its_bound_after_the_component_is_back_fails():
    """A controller-manager whose informers never came back from its apiserver's death (kubernetes#125530's class)."""
    h = History()
    apiserver_killed(h)
    probes(h, REPLICAS_PROBE, [(12.0, 40.0), (14.0, 40.0)], Outcome.UNKNOWN, pending=True)
    probes(h, COLLECT_PROBE, [(11.0, 40.0)], Outcome.UNKNOWN, pending=True)
    probes(h, NAMESPACE_PROBE, [(11.0, 40.0)], Outcome.UNKNOWN, pending=True)
    v = work_kept(h, max_s=BOUNDS, undone_at=[15.0])
    assert v.status is Status.FAIL, v.explanation
    assert "not done" in v.explanation and "25.00s after the work could resume" in v.explanation
    assert v.figures["replicas_slowest_s"] == 25.0 and v.figures["replicas_done_after"] == 0
    assert slowest_reconcile_s(v, 5.0) == 25.0  # the measure takes the wait, not the fast probes before the kill


def test_work_done_late_after_the_component_is_back_fails_with_both_times():
    h = History()
    apiserver_killed(h)
    probes(h, REPLICAS_PROBE, [(16.0, 23.5)])
    steady_work(h, 24.0, 30.0)
    v = work_kept(h, max_s=BOUNDS, undone_at=[15.0])
    assert v.status is Status.FAIL and "done 7.50s after the work could resume" in v.explanation, v.explanation


def test_a_leader_change_during_the_fault_moves_the_resumption_to_the_new_leader():
    """The controller-manager's own kill: the new leader's first sync is reconcile_after_failover_s's to judge."""
    h = History()
    apiserver_killed(h)
    leader(h, 24.0, "c2_b")
    probes(h, REPLICAS_PROBE, [(11.0, 26.0), (13.0, 25.5)])
    steady_work(h, 26.0, 34.0)
    v = work_kept(h, max_s=BOUNDS, undone_at=[12.0])
    assert v.passed, v.explanation
    assert v.figures["resumed_after_s"] == [14.0] and v.figures["leader_changes"] == 1
    assert v.figures["replicas_slowest_s"] == 2.0


def test_each_of_repeated_faults_counts_from_its_own_resumption():
    h = History()
    apiserver_killed(h)
    steady_work(h, 16.0, 30.0)
    kill(h, 40.0, "f2")
    probes(h, REPLICAS_PROBE, [(39.5, 46.0)])  # asked before the second kill, done 1 s after its component is back
    steady_work(h, 46.0, 52.0)
    assert work_kept(h, max_s=BOUNDS, undone_at=[15.0, 45.0]).passed
    late = History()
    apiserver_killed(late)
    steady_work(late, 16.0, 30.0)
    kill(late, 40.0, "f2")
    probes(late, REPLICAS_PROBE, [(39.5, 51.0)])
    steady_work(late, 52.0, 58.0)
    assert work_kept(late, max_s=BOUNDS, undone_at=[15.0, 45.0]).status is Status.FAIL


def test_no_fault_a_fault_never_undone_or_no_leader_seen_is_unknown():
    h = History()
    leader(h, 0.5, "c1_a")
    steady_work(h, 1.0, 20.0)
    assert work_kept(h, max_s=BOUNDS, undone_at=[]).status is Status.UNKNOWN
    kill(h, 10.0)
    v = work_kept(h, max_s=BOUNDS, undone_at=[None])
    assert v.status is Status.UNKNOWN and "never undone" in v.explanation
    unwatched = History()
    steady_work(unwatched, 1.0, 20.0)
    kill(unwatched, 10.0)
    v = work_kept(unwatched, max_s=BOUNDS, undone_at=[12.0])
    assert v.status is Status.UNKNOWN and "a leader change would go unseen" in v.explanation


def test_no_probe_done_after_the_resumption_is_unknown_not_a_pass():
    """Probes cut short by the stop soon after the component came back: the work's return is not shown."""
    h = History()
    apiserver_killed(h)
    for op in (REPLICAS_PROBE, COLLECT_PROBE, NAMESPACE_PROBE):
        probes(h, op, [(15.5, 17.0)], Outcome.UNKNOWN, pending=True)
    v = work_kept(h, max_s=BOUNDS, undone_at=[15.0])
    assert v.status is Status.UNKNOWN and "not shown" in v.explanation, v.explanation
    assert v.figures["replicas_slowest_s"] is None  # a short wait cut by the stop times nothing


def test_a_moment_per_fault_window_is_required():
    h = History()
    apiserver_killed(h)
    v = work_kept(h, max_s=BOUNDS, undone_at=[15.0, 16.0])
    assert v.status is Status.UNKNOWN and "2 moments for 1 fault windows" in v.explanation, v.explanation
