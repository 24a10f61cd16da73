from harness.checkers import (Status, availability, durability, failover_time, lb_detection, monotonicity,
                             restart_accounting, write_outage)
from harness.history import History, Outcome
from harness.monitors.api import failed_checks


def probes(history, pattern, start=0.0, step=0.05, target="lb"):
    """pattern: a string of '.' (ok) and 'x' (fail) and '?' (unknown), one request per step."""
    outcome = {".": Outcome.OK, "x": Outcome.FAIL, "?": Outcome.UNKNOWN}
    for i, char in enumerate(pattern):
        t = start + i * step
        history.record("api-0", "api.readyz", target, t, outcome[char], complete=t + 0.01)


def fault(history, start, end=None, name="kill", fid="f1"):
    history.event("fault.start", t=start, id=fid, name=name)
    if end is not None:
        history.event("fault.end", t=end, id=fid, name=name)


# ---- availability --------------------------------------------------------------------------------

def test_availability_with_no_requests_is_unknown_not_pass():
    verdict = availability(History())
    assert verdict.status is Status.UNKNOWN and not verdict


def test_availability_counts_and_measures_the_longest_outage():
    h = History()
    probes(h, "....xxx......x...")  # 17 requests, 4 failed; longest outage 3 requests (0.15 s)
    fault(h, 0.19, 0.4)
    v = availability(h, threshold_pct=99.5)
    assert v.status is Status.FAIL
    assert v.figures["requests"] == 17 and v.figures["failed"] == 4
    assert abs(v.figures["longest_outage_s"] - 0.15) < 1e-9
    assert "below 99.5%" in v.explanation and "kill" in v.explanation


def test_availability_passes_at_the_threshold():
    h = History()
    probes(h, "." * 199 + "x")
    assert availability(h, threshold_pct=99.5).passed


def test_availability_window_only_counts_requests_inside_it():
    h = History()
    probes(h, "xxxx......")
    assert availability(h, window=(0.2, 1.0), threshold_pct=100).passed


def test_availability_on_new_connections_judges_only_the_requests_sent_each_on_a_new_connection():
    h = History()
    for i in range(1000):  # every fifth request on a new connection; 3 of those 200 fail (a blind LB's way)
        fresh = i % 5 == 0
        outcome = Outcome.FAIL if i in (100, 500, 900) else Outcome.OK
        h.record("api-0" if fresh else "api-1", "api.get", "lb", i * 0.01, outcome, complete=i * 0.01 + 0.005,
                 fresh=fresh)
    assert availability(h, f="api.get", threshold_pct=99.5).passed  # 997 of 1000
    routed = availability(h, f="api.get", threshold_pct=99.5, new_connections=True)
    assert not routed.passed and routed.figures["requests"] == 200 and routed.figures["failed"] == 3
    assert "api.get requests to lb on new connections ok (98.50%)" in routed.explanation


def test_outage_running_to_the_end_counts_and_means_no_recovery():
    h = History()
    probes(h, "....xxxxx")
    fault(h, 0.15, 0.3)
    v = availability(h, max_recovery_s=1.0)
    assert v.status is Status.FAIL and "never recovered" in v.explanation
    assert v.figures["longest_outage_s"] > 0.2


def test_recovery_is_measured_from_the_end_of_the_fault():
    h = History()
    probes(h, "..xxxxxx....")  # failures at 0.1..0.35, first ok after at 0.40 (complete 0.41)
    fault(h, 0.1, 0.2)
    v = availability(h, max_recovery_s=0.5)
    assert v.passed and abs(v.figures["recovery_s"] - 0.21) < 1e-9


def test_fault_that_never_ended_still_gives_a_verdict():
    h = History()
    probes(h, "...xx...")
    fault(h, 0.1)  # no fault.end: a harness crash mid-fault
    v = availability(h, threshold_pct=50)
    assert v.passed and v.figures["recovery_s"] is None and "n/a" in v.explanation


def test_unknown_outcomes_count_as_unavailable():
    h = History()
    probes(h, "..??..")
    assert availability(h).figures["failed"] == 2


# ---- failover ------------------------------------------------------------------------------------

def leader(h, t, holder, subject="kube-scheduler"):
    h.event("leader", t=t, subject=subject, holder=holder)


def test_failover_time_from_fault_start_to_new_holder():
    h = History()
    leader(h, 1.0, "c1")
    fault(h, 5.0, 5.1)
    leader(h, 5.2, None)
    leader(h, 21.6, "c2")
    v = failover_time(h, subject="kube-scheduler", max_s=17.0)
    assert v.passed and v.figures["failover_s"] == 16.6 and v.figures["new_holder"] == "c2"


def test_failover_is_timed_from_when_the_fault_was_wholly_in_place():
    h = History()
    leader(h, 1.0, "m1", subject="etcd")
    fault(h, 5.0, 12.0, name="isolate-etcd-leader")
    h.event("fault.in_place", t=6.2, id="f1", name="isolate-etcd-leader")  # a partition's last rule, 1.2 s later
    leader(h, 9.7, "m2", subject="etcd")
    v = failover_time(h, subject="etcd", max_s=3.5)
    assert v.passed and v.figures["failover_s"] == 3.5 and v.figures["acting_s"] == 1.2, v.explanation
    assert "in place at t=6.20" in v.explanation


def test_failover_too_slow_fails_and_says_by_how_much():
    h = History()
    leader(h, 1.0, "c1")
    fault(h, 5.0, 5.1)
    leader(h, 30.0, "c3")
    v = failover_time(h, subject="kube-scheduler", max_s=17.0)
    assert v.status is Status.FAIL and "25.00s" in v.explanation and "17.00s" in v.explanation


def test_same_holder_coming_back_is_not_a_failover():
    h = History()
    leader(h, 1.0, "c1")
    fault(h, 5.0, 5.1)
    leader(h, 6.0, None)
    leader(h, 8.0, "c1")
    assert failover_time(h, subject="kube-scheduler").status is Status.FAIL


def test_failover_without_a_fault_or_a_prior_holder_is_unknown():
    h = History()
    leader(h, 1.0, "c1")
    assert failover_time(h, subject="kube-scheduler").status is Status.UNKNOWN
    h2 = History()
    fault(h2, 1.0, 2.0)
    assert failover_time(h2, subject="kube-scheduler").status is Status.UNKNOWN


def test_clock_tie_between_fault_and_observation_counts_as_before():
    h = History()
    leader(h, 1.0, "c1")
    leader(h, 5.0, "c2")  # observed at the very instant the fault starts: it cannot be the failover
    fault(h, 5.0, 6.0)
    v = failover_time(h, subject="kube-scheduler")
    assert v.status is Status.FAIL and v.figures["old_holder"] == "c2"


# ---- durability ----------------------------------------------------------------------------------

def writes(h, keys_and_outcomes, f="etcd.put"):
    for i, (key, outcome) in enumerate(keys_and_outcomes):
        h.record("etcd-0", f, "etcd", i * 0.1, outcome, value=key, complete=i * 0.1 + 0.01)


def test_durability_finds_a_lost_acknowledged_write():
    h = History()
    writes(h, [("k1", Outcome.OK), ("k2", Outcome.OK), ("k3", Outcome.FAIL)])
    h.record("etcd-check", "etcd.read_all", "etcd", 9.0, Outcome.OK, value=["k1"])
    v = durability(h, system="etcd")
    assert v.status is Status.FAIL and v.figures["lost"] == 1 and "k2" in v.explanation


def test_durability_passes_and_reports_unknown_writes_that_landed():
    h = History()
    writes(h, [("k1", Outcome.OK), ("k2", Outcome.UNKNOWN), ("k3", Outcome.UNKNOWN)])
    h.record("etcd-check", "etcd.read_all", "etcd", 9.0, Outcome.OK, value=["k1", "k2"])
    v = durability(h, system="etcd")
    assert v.passed and v.figures["unknown_outcome"] == 2 and v.figures["unknown_applied"] == 1


def test_durability_without_read_back_or_without_writes_is_unknown():
    h = History()
    writes(h, [("k1", Outcome.OK)])
    assert durability(h, system="etcd").status is Status.UNKNOWN
    h2 = History()
    h2.record("kube-check", "kube.read_all", "lb", 1.0, Outcome.OK, value=[])
    assert durability(h2, system="kube").status is Status.UNKNOWN


# ---- monotonicity --------------------------------------------------------------------------------

def test_revision_going_back_for_one_reader_fails():
    h = History()
    for i, rev in enumerate([5, 6, 9, 7]):
        h.record("etcd-0", "etcd.put", "etcd", i, Outcome.OK, complete=i + 0.1, revision=rev)
    v = monotonicity(h, f="etcd.put")
    assert v.status is Status.FAIL and "from 9" in v.explanation


def test_different_readers_may_interleave():
    h = History()
    for i, (proc, rev) in enumerate([("a", 5), ("b", 3), ("a", 6), ("b", 4)]):
        h.record(proc, "etcd.put", "etcd", i, Outcome.OK, complete=i + 0.1, revision=rev)
    assert monotonicity(h, f="etcd.put").passed


def test_monotonicity_without_observations_is_unknown():
    assert monotonicity(History(), f="kube.list", field="resource_version").status is Status.UNKNOWN


# ---- restarts ------------------------------------------------------------------------------------

def comp(h, t, event, component="etcd@c1"):
    h.event(f"component.{event}", t=t, component=component)


def test_restart_within_backoff_passes():
    h = History()
    comp(h, 0.0, "start")
    comp(h, 5.0, "exit")
    comp(h, 6.1, "start")
    assert restart_accounting(h, component="etcd@c1", max_backoff_s=1.0).passed


def test_never_restarted_fails():
    h = History()
    comp(h, 5.0, "exit")
    v = restart_accounting(h, component="etcd@c1", max_backoff_s=1.0)
    assert v.status is Status.FAIL and "never started again" in v.explanation


def test_late_restart_fails():
    h = History()
    comp(h, 5.0, "exit")
    comp(h, 9.0, "start")
    assert restart_accounting(h, component="etcd@c1", max_backoff_s=1.0).status is Status.FAIL


def test_no_exit_when_one_was_expected_fails():
    assert restart_accounting(History(), component="etcd@c1", max_backoff_s=1.0).status is Status.FAIL


# ---- robustness ----------------------------------------------------------------------------------

def test_an_exception_inside_a_checker_gives_unknown_never_pass():
    h = History()
    h.record("etcd-0", "etcd.put", "etcd", 0, Outcome.OK, complete=0.1, revision="not-a-number")
    h.record("etcd-0", "etcd.put", "etcd", 1, Outcome.OK, complete=1.1, revision="7")
    v = monotonicity(h, f="etcd.put")
    assert v.status is Status.UNKNOWN and "checker itself failed" in v.explanation and not v


def test_history_round_trips_through_jsonl(tmp_path):
    h = History(tmp_path / "h.jsonl")
    probes(h, "..x.")
    fault(h, 0.05, 0.12)
    h.close()
    with (tmp_path / "h.jsonl").open("a") as torn:
        torn.write('{"kind": "op", "proc')  # a crash mid-line
    again = History.load(tmp_path / "h.jsonl")
    assert availability(again).figures == availability(h).figures
    assert again.fault_windows()[0][:2] == (0.05, 0.12)



# ---- write outage --------------------------------------------------------------------------------

def puts(h, pattern, start=0.0, step=0.1):
    """'.' an acknowledged put, '?' a put whose answer never came (timed out after 2 s)."""
    for i, char in enumerate(pattern):
        t = start + i * step
        ok = char == "."
        h.record("etcd-0", "etcd.put", "etcd", t, Outcome.OK if ok else Outcome.UNKNOWN,
                 complete=t + (0.01 if ok else 2.0))


def test_write_outage_is_the_longest_stretch_between_acknowledgements():
    h = History()
    puts(h, "....")
    puts(h, "....", start=3.0)  # nothing acknowledged between t=0.31 and t=3.01
    verdict = write_outage(h, max_gap_s=2.0)
    assert verdict.status is Status.FAIL and abs(verdict.figures["longest_gap_s"] - 2.7) < 1e-9


def test_writes_that_never_come_back_are_an_outage_to_the_last_attempt():
    h = History()
    puts(h, "....??????????")  # the last attempt ends at 1.3 + 2.0 s
    verdict = write_outage(h, max_gap_s=2.0)
    assert verdict.status is Status.FAIL
    assert abs(verdict.figures["longest_gap_s"] - (3.3 - 0.31)) < 1e-9


def test_write_outage_without_acknowledged_writes_is_a_failure_and_without_attempts_unknown():
    h = History()
    puts(h, "???")
    assert write_outage(h).status is Status.FAIL
    assert write_outage(History()).status is Status.UNKNOWN


# ---- lb-detection --------------------------------------------------------------------------------

def test_lb_detection_from_fault_start_to_marked_down():
    h = History()
    fault(h, 10.0, 40.0, name="partition")
    h.event("lb.marked-down", t=5.0, server="c3")  # before the fault: not this fault's detection
    h.event("lb.marked-down", t=22.5, server="c2")  # another server
    h.event("lb.marked-down", t=23.0, server="c3")
    v = lb_detection(h, server="c3", max_s=14.5)
    assert v.passed and v.figures["detection_s"] == 13.0


def test_lb_detection_too_slow_or_never_fails_and_without_a_fault_is_unknown():
    h = History()
    fault(h, 10.0, 40.0, name="partition")
    for t, state in ((9.0, "UP"), (12.0, "UP 2/3"), (14.0, "UP"), (15.0, "UP 2/3")):
        h.event("lb.state", t=t, server="c3", state=state)
    never = lb_detection(h, server="c3", max_s=14.5)  # never marked down: it says what the LB reported
    assert never.status is Status.FAIL and never.explanation.endswith("the states it reported: UP, UP 2/3")
    h.event("lb.marked-down", t=25.0, server="c3")
    slow = lb_detection(h, server="c3", max_s=14.5)
    assert slow.status is Status.FAIL and "more than the allowed 14.50s" in slow.explanation
    assert lb_detection(History(), server="c3", max_s=14.5).status is Status.UNKNOWN


def test_a_failing_readyz_is_recorded_with_the_checks_it_names():
    body = "[+]ping ok\n[-]shutdown failed: reason withheld\n[+]log ok\n[-]etcd failed: reason withheld\nreadyz check failed"
    assert failed_checks(body) == " (shutdown, etcd)"
    assert failed_checks("Internal Server Error") == ""
