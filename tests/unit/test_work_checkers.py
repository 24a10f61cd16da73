"""work-resumed and work-done (harness/checkers/work.py) on hand-written histories: the first Deployment asked for
after the fault and done, one still waiting past the bound, the slowest of a fault-free run's samples, and what is
no evidence either way."""

from harness.checkers import Status
from harness.checkers.work import BINDING_PROBE, work_done, work_resumed
from harness.history import History, Outcome


def kill(history: History, start: float = 10.0, in_place: float | None = 10.1) -> None:
    history.event("fault.start", t=start, id="f1", name="kill")
    if in_place is not None:
        history.event("fault.in_place", t=in_place, id="f1", name="kill")
    history.event("fault.end", t=start + 40.0, id="f1", name="kill")


def probe(history: History, invoke: float, complete: float, outcome: Outcome = Outcome.OK, name: str = "w",
          **extra) -> None:
    history.record("work", "work.replicas", "lb", invoke, outcome, value=name, complete=complete,
                   error="" if outcome is Outcome.OK else "not done", **extra)


def test_work_resumes_at_the_first_probe_asked_for_after_the_kill_that_is_done():
    h = History()
    probe(h, 1.0, 1.4, name="w1")
    kill(h)
    probe(h, 9.9, 10.3, name="w2")  # asked for before the kill: the old leader may have done it
    probe(h, 11.0, 32.6, name="w3")
    probe(h, 33.0, 33.3, name="w4")
    v = work_resumed(h, max_s=29.3)
    assert v.passed, v.explanation
    assert v.figures["reconcile_after_failover_s"] == 22.5 and v.figures["done_before_fault"] == 1
    assert "w3" in v.explanation and "in place at t=10.10" in v.explanation


def test_work_done_later_than_the_bound_fails_and_says_both_times():
    h = History()
    kill(h)
    probe(h, 10.5, 50.1)
    v = work_resumed(h, max_s=29.3)
    assert v.status is Status.FAIL and "40.00s" in v.explanation and "29.30s" in v.explanation


def test_a_probe_asked_for_before_the_kill_and_never_done_fails_once_it_waited_past_the_bound():
    """The new leader reconciles every Deployment when it starts, those asked for before the kill too: one of them
    still without its pods 40 s after the kill is work not resumed, even with no probe asked for since."""
    h = History()
    kill(h)
    probe(h, 9.0, 50.1, Outcome.UNKNOWN, pending=True)
    v = work_resumed(h, max_s=29.3)
    assert v.status is Status.FAIL and v.figures["waited_s"] == 40.0, v.explanation
    assert "after kill in place" in v.explanation


def test_a_probe_cut_short_before_the_bound_is_no_evidence():
    h = History()
    kill(h)
    probe(h, 11.0, 20.0, Outcome.UNKNOWN, pending=True)
    probe(h, 12.0, 12.5, Outcome.UNKNOWN)  # the API did not take the Deployment: no work was asked for
    v = work_resumed(h, max_s=29.3)
    assert v.status is Status.UNKNOWN and "(2 asked for after it)" in v.explanation, v.explanation


def test_a_probe_past_its_deadline_fails_without_a_bound():
    h = History()
    kill(h)
    probe(h, 11.0, 101.0, Outcome.FAIL)
    assert work_resumed(h).status is Status.FAIL


def test_no_fault_or_no_probe_is_unknown():
    h = History()
    probe(h, 1.0, 1.4)
    assert work_resumed(h, max_s=29.3).status is Status.UNKNOWN
    h2 = History()
    kill(h2)
    assert work_resumed(h2, max_s=29.3).status is Status.UNKNOWN


def test_without_the_in_place_event_the_clock_starts_at_the_fault():
    h = History()
    kill(h, in_place=None)
    probe(h, 10.2, 30.0)
    v = work_resumed(h, max_s=29.3)
    assert v.passed and v.figures["reconcile_after_failover_s"] == 20.0 and "started at t=10.00" in v.explanation


def test_the_binding_probe_gives_its_own_figure_and_a_pod_never_bound_fails():
    """The scheduler's probe (harness/monitors/binding.py) is judged by the same rule, under its own measure."""
    h = History()
    kill(h)
    h.record("binding", "work.binding", "lb", 11.0, Outcome.OK, value="b0-1", complete=28.0)
    v = work_resumed(h, max_s=29.3, probe=BINDING_PROBE)
    assert v.passed and v.figures["bind_after_failover_s"] == 17.9 and "reconcile_after_failover_s" not in v.figures
    never = History()
    kill(never)
    never.record("binding", "work.binding", "lb", 5.0, Outcome.UNKNOWN, value="b0-1", complete=50.0, pending=True,
                 error="the monitor stopped 45.0 s in, before pod b0-1 bound to a node")
    v = work_resumed(never, max_s=29.3, probe=BINDING_PROBE)
    assert v.status is Status.FAIL and "b0-1" in v.explanation and v.figures["bind_after_failover_s"] is None


def test_replicas_probes_say_nothing_of_the_scheduler():
    h = History()
    kill(h)
    probe(h, 11.0, 12.0)
    assert work_resumed(h, max_s=29.3, probe=BINDING_PROBE).status is Status.UNKNOWN


# work-done: without a fault, three of each probe done, the slowest judged


def steady(history: History, op: str, times: list[tuple[float, float]], outcome: Outcome = Outcome.OK,
           **extra) -> None:
    for n, (invoke, complete) in enumerate(times):
        history.record("work", op, "lb", invoke, outcome, value=f"{op}-{n}", complete=complete,
                       error="" if outcome is Outcome.OK else "not done", **extra)


BOUNDS = {"work.replicas": 5.0, "work.collect": 5.0, "work.namespace": 10.0}


def healthy(history: History) -> None:
    steady(history, "work.replicas", [(1.0, 1.2), (2.0, 2.3), (3.0, 3.1)])
    steady(history, "work.collect", [(1.3, 1.9), (2.4, 3.0), (3.2, 3.5)])
    steady(history, "work.namespace", [(1.0, 6.5), (7.0, 12.4), (13.0, 18.3)])


def test_work_done_three_times_each_within_the_allowance_passes_and_names_the_slowest():
    h = History()
    healthy(h)
    v = work_done(h, max_s=BOUNDS, samples=3)
    assert v.passed, v.explanation
    assert v.figures == {"replicas_done": 3, "replicas_slowest_s": 0.3, "collect_done": 3, "collect_slowest_s": 0.6,
                         "namespace_done": 3, "namespace_slowest_s": 5.5}
    assert "work.namespace 5.50s (allowed 10.00s)" in v.explanation


def test_one_probe_slower_than_the_allowance_fails_whatever_the_others():
    h = History()
    healthy(h)
    steady(h, "work.collect", [(6.0, 12.5)])
    v = work_done(h, max_s=BOUNDS, samples=3)
    assert v.status is Status.FAIL and "work.collect" in v.explanation, v.explanation
    assert "6.50s after it was asked for, more than the allowed 5.00s" in v.explanation, v.explanation


def test_a_controller_manager_that_does_no_work_fails_on_the_probes_still_waiting_at_the_stop():
    """idle-controller-manager: no Deployment gets its pods, no namespace goes; the monitor stops them pending."""
    h = History()
    steady(h, "work.replicas", [(1.0, 26.0), (2.0, 26.0)], Outcome.UNKNOWN, pending=True)
    steady(h, "work.namespace", [(1.0, 26.0)], Outcome.UNKNOWN, pending=True)
    v = work_done(h, max_s=BOUNDS, samples=3)
    assert v.status is Status.FAIL and "work.replicas" in v.explanation and "work.namespace" in v.explanation
    assert v.figures["replicas_done"] == 0 and v.figures["replicas_slowest_s"] == 25.0  # a wait is a floor, not fast


def test_a_probe_stuck_past_its_bound_is_the_slowest_even_when_the_others_were_fast():
    """The figure a measure takes (reconcile_s, bind_s) is the stuck probe's wait, never the fast ones' time."""
    h = History()
    healthy(h)
    steady(h, "work.replicas", [(4.0, 12.0)], Outcome.FAIL)  # its deadline passed without its pods
    v = work_done(h, max_s=BOUNDS, samples=3)
    assert v.status is Status.FAIL and v.figures["replicas_slowest_s"] == 8.0, v.figures
    assert "not done 8.00s after it was asked for" in v.explanation, v.explanation


def test_a_probe_cut_short_by_the_stop_neither_slows_nor_times_anything():
    h = History()
    healthy(h)
    steady(h, "work.collect", [(4.0, 4.1)], Outcome.UNKNOWN, pending=True)
    v = work_done(h, max_s=BOUNDS, samples=3)
    assert v.passed and v.figures["collect_slowest_s"] == 0.6, v.explanation
    steady(h2 := History(), "work.collect", [(4.0, 4.1)], Outcome.UNKNOWN, pending=True)
    assert work_done(h2, max_s=BOUNDS, samples=3).figures["collect_slowest_s"] is None


def test_too_few_samples_or_probes_the_api_never_took_are_unknown_not_a_pass():
    h = History()
    steady(h, "work.replicas", [(1.0, 1.2), (2.0, 2.3), (3.0, 3.1)])
    steady(h, "work.collect", [(1.3, 1.9)])
    steady(h, "work.namespace", [(1.0, 1.5), (2.0, 2.1)], Outcome.UNKNOWN)  # refused by the API: never asked
    steady(h, "work.namespace", [(4.0, 6.0)], Outcome.UNKNOWN, pending=True)  # stopped before it could be late
    v = work_done(h, max_s=BOUNDS, samples=3)
    assert v.status is Status.UNKNOWN, v.explanation
    assert "work.collect done 1 times" in v.explanation and "work.namespace done 0 times" in v.explanation
