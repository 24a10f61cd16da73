"""work-resumed (harness/checkers/work.py) on hand-written histories: the first Deployment asked for after the
fault and done, one still waiting past the bound, and what is no evidence either way."""

from harness.checkers import Status
from harness.checkers.work import BINDING_PROBE, work_resumed
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
