"""`quorum analyze`: a saved History judged again by the checkers it records, on the History as each checker saw it
and with the scenario's arguments (harness/checkers/rejudge.py)."""

import json
import subprocess
import sys
from pathlib import Path

from harness.checkers import availability, failover_time
from harness.checkers.rejudge import Again, rejudge
from harness.checkers.verdict import CHECKED
from harness.history import History, Outcome

ROOT = Path(__file__).resolve().parents[2]


def failover_history(path: Path) -> History:
    """A leader killed at t=10, in place at 10.5, a new one seen at 13.2; an API probed through it."""
    history = History(path)
    history.event("leader", t=5.0, subject="kube-scheduler", holder="c1_a", host="c1")
    history.event("fault.start", t=10.0, id="f1", name="kill")
    history.event("fault.in_place", t=10.5, id="f1")
    history.event("leader", t=13.2, subject="kube-scheduler", holder="c2_b", host="c2")
    history.event("fault.end", t=14.0, id="f1")
    for i in range(20):
        history.record("api-0", "api.readyz", "lb", 9.0 + i * 0.5, Outcome.FAIL if 11 <= 9.0 + i * 0.5 < 12 else Outcome.OK,
                       complete=9.1 + i * 0.5)
    return history


def test_a_saved_history_is_judged_again_the_same_way(tmp_path):
    path = tmp_path / "test_failover.jsonl"
    history = failover_history(path)
    first = failover_time(history, subject="kube-scheduler", max_s=5.0)
    second = availability(history, threshold_pct=50.0, window=(9.0, 19.0))
    history.close()
    rejudged = rejudge(History.load(path))
    assert [r.checker for r in rejudged] == ["failover_time", "availability"]
    assert all(r.again is Again.SAME for r in rejudged), rejudged
    assert rejudged[0].now.figures == first.figures and rejudged[0].now.figures["failover_s"] == 2.7
    assert rejudged[1].now.status is second.status and rejudged[1].then_figures == json.loads(json.dumps(second.figures))


def test_what_was_written_after_a_checker_ran_is_not_what_it_is_judged_on_again(tmp_path):
    path = tmp_path / "test_failover.jsonl"
    history = failover_history(path)
    failover_time(history, subject="kube-scheduler", max_s=5.0)
    history.event("leader", t=12.0, subject="kube-scheduler", holder="c3_c", host="c3")  # after the verdict
    history.close()
    assert [r.again for r in rejudge(History.load(path))] == [Again.SAME]


def test_an_edited_history_is_judged_differently_and_says_so(tmp_path):
    path = tmp_path / "test_failover.jsonl"
    history = failover_history(path)
    failover_time(history, subject="kube-scheduler", max_s=5.0)
    history.close()
    text = path.read_text().replace('"t": 13.2', '"t": 16.9')  # the new leader seen later: 6.4 s, over the 5 s
    path.write_text(text)
    (rejudged,) = rejudge(History.load(path))
    assert rejudged.again is Again.DIFFERENT
    assert (rejudged.then_status, rejudged.now_status) == ("pass", "fail")


def test_a_run_whose_arguments_a_history_cannot_hold_is_kept_apart_as_cannot_re_judge(tmp_path):
    path = tmp_path / "test_failover.jsonl"
    history = failover_history(path)
    failover_time(history, subject="kube-scheduler", fault=object())  # not a value JSON holds: unknown, not recorded
    history.event(CHECKED, checker="a_checker_since_removed", call={"positional": [], "arguments": {}}, ops=0,
                  events=0, status="pass", figures={})
    history.event(CHECKED, checker="failover_time", call={"positional": [], "arguments": {"subject": "x"}},
                  ops="many", events=0, status="pass", figures={})  # a record edited by hand
    history.close()
    again = rejudge(History.load(path))
    assert [r.again for r in again] == [Again.CANNOT] * 3
    assert "not values a History can hold" in again[0].why and "no checker of that name" in again[1].why
    assert "not one Quorum writes" in again[2].why


def test_quorum_analyze_prints_the_verdicts_and_fails_when_one_differs(tmp_path):
    history = failover_history(tmp_path / "test_failover.jsonl")
    failover_time(history, subject="kube-scheduler", max_s=5.0)
    history.close()

    def analyze(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", "from harness.cli import main; main()", "analyze", *args],
                              cwd=ROOT, capture_output=True, text=True, timeout=60)

    same = analyze(str(tmp_path))
    assert same.returncode == 0 and "failover_time" in same.stdout and "1 the same, 0 different" in same.stdout, same
    path = tmp_path / "test_failover.jsonl"
    path.write_text(path.read_text().replace('"t": 13.2', '"t": 16.9'))
    differs = analyze(str(path))
    assert differs.returncode == 1 and "0 the same, 1 different" in differs.stdout, differs
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = analyze(str(empty))
    assert nothing.returncode == 2 and "records a checker's run" in nothing.stderr and "Traceback" not in nothing.stderr


def test_the_checkers_of_a_scenarios_own_observations_are_judged_again_from_what_the_history_kept(tmp_path):
    """Hollow pods kept, a marker object kept (a refused write among them) and a scale's memberships: the
    observations ride with the run (arguments, or the scenario's events), so each is judged again the same way."""
    from harness.checkers.membership import SHAPE, membership_agreed
    from harness.checkers.recovery import object_kept
    from harness.checkers.slo import pods_kept
    from harness.clients.marker import MarkerWrite

    path = tmp_path / "test_observed.jsonl"
    history = History(path)
    kept = pods_kept(history, ["u1", "u2"], ["u1", "u3"])
    refused = object_kept(history, what="a ConfigMap", written=MarkerWrite(None, "HTTP 500", 3, 45.2), read=None)
    read_back = object_kept(history, what="a ConfigMap", written="a1", read="a1")
    history.event(SHAPE, when="joined", controllers=["c1", "c2"], voters=["c1"], rotation=["c1", "c2"])
    agreed = membership_agreed(history)
    history.close()
    rejudged = rejudge(History.load(path))
    assert [r.checker for r in rejudged] == ["pods_kept", "object_kept", "object_kept", "membership_agreed"]
    assert all(r.again is Again.SAME for r in rejudged), rejudged
    assert [r.now.status for r in rejudged] == [kept.status, refused.status, read_back.status, agreed.status]
    assert not kept and not refused and read_back and not agreed  # the re-judged failures are failures again


def test_every_checker_judges_a_history_so_every_verdict_can_be_judged_again():
    import inspect

    from harness.checkers.rejudge import load_checkers
    from harness.checkers.verdict import CHECKERS

    load_checkers()
    first = {name: next(iter(inspect.signature(function.__wrapped__).parameters), None)
             for name, function in CHECKERS.items()}
    assert len(first) > 15 and not {name for name, parameter in first.items() if parameter != "history"}
