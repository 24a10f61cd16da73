"""The capacity core: the expected load's default and its checks (harness/capacity/expected.py), the knee of a
rising load (knee.py) and the headroom verdict (harness/checkers/capacity.py), each on recorded steps."""

import pytest
from pydantic import ValidationError

from fixtures.settings import PROFILES
from harness.capacity.expected import DEFAULT_USER_RATE_PER_S, ExpectedLoad, rates_of_mix
from harness.capacity.knee import KneeLimits, find_knee
from harness.capacity.steps import CapacityStep, record_step, steps_of
from harness.checkers.capacity import capacity_headroom
from harness.checkers.rejudge import Again, rejudge
from harness.checkers.verdict import Status
from harness.history import History
from harness.load.spec import DEFAULT_MIX

SLO = {"mutating": 1.0, "get": 1.0, "list_namespace": 5.0, "list_cluster": 30.0}
LIMITS = {"slo_s": SLO, "failed_pct": 0.5, "shortfall_pct": 10.0, "generator_busy_pct": 80.0}
MIX = {"mutating": 0.5, "get": 0.3, "list_namespace": 0.1, "list_cluster": 0.1}
EXPECTED = {"mutating": 100.0, "get": 60.0, "list_namespace": 20.0, "list_cluster": 20.0}  # 200 requests/s
NODES_RPS = {"mutating": 100.0}  # a thousand nodes' Lease renewals


def step(rps: float, *, answered: float | None = None, p99: dict | None = None, rejected: int = 0, failed: int = 0,
         busy: float | None = 30.0, up: int = 3, saturation: dict | None = None, nodes_rps: float = 100.0,
         renewals: float | None = None, machine: float | None = 60.0) -> CapacityStep:
    """A step offering `rps` in MIX beside `nodes_rps` of the nodes' renewals (`renewals` measured), answered at
    `answered` (default: all of it), over a 60 s window."""
    answered = rps if answered is None else answered
    return CapacityStep(offered_rps={k: rps * share for k, share in MIX.items()},
                        achieved_rps={k: answered * share for k, share in MIX.items()},
                        p99_s=p99 or {"mutating": 0.2, "get": 0.1, "list_namespace": 0.5, "list_cluster": 2.0},
                        rejected=rejected, failed=failed, requests=int(rps * 60), generator_busy_pct=busy,
                        apiservers_up=up, saturation=saturation or {}, background_rps={"mutating": nodes_rps},
                        lease_renewals_rps=renewals, machine_busy_pct=machine)


def headroom(*steps: CapacityStep, objective_x: float = 1.5, up: int | None = None):
    history = History()
    for s in steps:
        record_step(history, s)
    return capacity_headroom(history, expected_user_rps=EXPECTED, expected_background_rps=NODES_RPS,
                             objective_x=objective_x, apiservers_up=up, **LIMITS)


def test_the_default_expected_load_is_a_thousand_nodes_heartbeats_and_the_nightly_users_mix():
    expected = ExpectedLoad()
    assert DEFAULT_USER_RATE_PER_S == PROFILES["nightly"].load_rate_per_s
    # the mix's watches (a stream, not a rate) are left out of the rates
    watches = sum(w for task, w in DEFAULT_MIX.items() if task.startswith("watch")) / sum(DEFAULT_MIX.values())
    assert sum(expected.user_rps.values()) == pytest.approx(DEFAULT_USER_RATE_PER_S * (1 - watches))
    assert expected.rps()["mutating"] == pytest.approx(expected.user_rps["mutating"] + 1000 / 10)
    assert expected.rps()["get"] == expected.user_rps["get"]


def test_a_policy_sets_some_classes_and_the_others_keep_their_defaults():
    expected = ExpectedLoad.model_validate({"nodes": 0, "user_rps": {"get": 500.0}})
    assert expected.rps()["get"] == 500.0
    assert expected.rps()["mutating"] == rates_of_mix(DEFAULT_MIX, DEFAULT_USER_RATE_PER_S)["mutating"]


@pytest.mark.parametrize("bad, named", [
    ({"user_rps": {"writes": 5.0}}, "unknown SLO classes ['writes']"),
    ({"user_rps": {"get": -1.0}}, "from 0 to 100000"),
    ({"user_rps": {"get": "5"}}, "valid number"),
    ({"nodes": True}, "valid integer"),
    ({"node": 5}, "Extra inputs"),
    ({"user_rps": {k: 0.0 for k in ("mutating", "get", "list_namespace", "list_cluster")}}, "send no request at all"),
])
def test_a_wrong_expected_load_is_refused_naming_what_is_wrong(bad, named):
    with pytest.raises(ValidationError, match=named.replace("[", r"\[").replace("]", r"\]")):
        ExpectedLoad.model_validate(bad)


def test_the_knee_is_what_the_step_before_the_first_broken_slo_carried():
    knee = find_knee([step(100), step(200), step(400, p99={"mutating": 1.4, "get": 0.3}, saturation={
        "kube-apiserver@c1 cpu": 0.97, "etcd@c1 cpu": 0.4})], KneeLimits(**LIMITS))
    assert knee.cluster_limit and knee.at_step == 2
    assert knee.carried == step(200) and knee.carried_user_rps == 200.0
    assert knee.carried_rps == {k: 200 * share + NODES_RPS.get(k, 0.0) for k, share in MIX.items()}
    assert "mutating p99 1.400 s over its 1 s" in knee.stopped_by and "get" not in knee.stopped_by
    assert knee.busiest == ("kube-apiserver@c1 cpu", 0.97)


@pytest.mark.parametrize("broken, named", [
    (step(400, rejected=12), "priority and fairness rejected 12 requests"),
    (step(400, failed=400 * 60 // 100), "1.00 % of 24000 requests failed (budget 0.5 %)"),
    (step(400, answered=300, busy=40.0), "answered 300.0 of 400.0 requests per second offered"),
])
def test_rejections_errors_and_an_unanswered_rate_with_the_generator_idle_are_the_clusters_limit(broken, named):
    knee = find_knee([step(200), broken], KneeLimits(**LIMITS))
    assert knee.cluster_limit and knee.at_step == 1 and named in knee.stopped_by
    assert knee.carried_user_rps == 200.0


@pytest.mark.parametrize("last, named", [
    (step(400, answered=300, busy=95.0), "busiest process reached 95 %"),
    (step(400, busy=85.0), "busiest process reached 85 %"),
    (step(400, answered=300, busy=None), "not measured, so the limit may be the generator's"),
    (step(400, answered=300, busy=40.0, machine=97.0), "with the generator's machine 97 % busy (its limit 90 %)"),
])
def test_a_generator_out_of_room_ends_the_search_without_a_knee(last, named):
    knee = find_knee([step(200), last], KneeLimits(**LIMITS))
    assert not knee.cluster_limit and named in knee.stopped_by
    assert knee.carried_rps["get"] == pytest.approx(60.0)


def test_a_busy_machine_bounds_only_a_short_answer_a_step_answered_in_full_goes_on():
    knee = find_knee([step(200, machine=99.0), step(400, machine=99.0, rejected=2)], KneeLimits(**LIMITS))
    assert knee.cluster_limit and knee.carried_user_rps == 200.0 and "rejected 2" in knee.stopped_by
    unmeasured = find_knee([step(200), step(400, answered=300, busy=40.0, machine=None)], KneeLimits(**LIMITS))
    assert unmeasured.cluster_limit and "busiest process at 40 % of its core" in unmeasured.stopped_by


def test_a_short_answer_within_the_tolerance_is_carried():
    knee = find_knee([step(200, answered=185)], KneeLimits(**LIMITS))
    assert knee.stopped_by is None and knee.carried_user_rps == pytest.approx(200.0)


def test_the_headroom_passes_when_the_clusters_knee_is_far_enough_above_the_expected_load():
    verdict = headroom(step(200), step(400), step(800, p99={"get": 2.0}))
    assert verdict.status is Status.PASS, verdict.explain()
    assert verdict.figures["headroom_x"] == 2.0 and verdict.figures["knee_step"] == 2


def test_the_headroom_fails_when_the_clusters_knee_is_below_the_objective():
    verdict = headroom(step(200), step(250, rejected=3))
    assert verdict.status is Status.FAIL, verdict.explain()
    assert verdict.figures["headroom_x"] == 1.0 and "priority and fairness" in verdict.explanation


def test_a_cluster_that_breaks_at_the_first_step_carried_nothing_and_fails():
    verdict = headroom(step(200, p99={"list_cluster": 31.0}))
    assert verdict.status is Status.FAIL and verdict.figures["headroom_x"] == 0.0, verdict.explain()


def test_a_lower_bound_passes_only_when_it_already_meets_the_objective_and_never_fails():
    met = headroom(step(200), step(400), step(800, busy=90.0))
    assert met.status is Status.PASS and met.explanation.startswith("at least"), met.explain()
    short = headroom(step(200), step(250, busy=90.0))
    assert short.status is Status.UNKNOWN and "busiest process reached 90 %" in short.explanation, short.explain()
    ran_out = headroom(step(200), step(250))
    assert ran_out.status is Status.UNKNOWN and "ended before the cluster showed a limit" in ran_out.explanation


def test_the_n_minus_one_headroom_is_judged_on_the_steps_with_one_apiserver_down_only():
    steps = (step(200), step(400), step(800, p99={"get": 2.0}), step(200, up=2), step(250, up=2, rejected=5))
    assert headroom(*steps, up=3).status is Status.PASS
    n_minus_one = headroom(*steps, up=2)
    assert n_minus_one.status is Status.FAIL and "with 2 apiservers serving" in n_minus_one.explanation
    assert headroom(*steps, up=1).status is Status.UNKNOWN


def test_no_steps_or_no_expected_requests_cannot_be_judged():
    assert headroom().status is Status.UNKNOWN
    history = History()
    record_step(history, step(200))
    verdict = capacity_headroom(history, expected_user_rps={"get": 0.0}, expected_background_rps=NODES_RPS,
                                objective_x=1.0, **LIMITS)
    assert verdict.status is Status.UNKNOWN and "names no user requests" in verdict.explanation


def test_the_steps_and_the_verdict_are_judged_again_from_the_saved_history(tmp_path):
    history = History(tmp_path / "history.jsonl")
    for s in (step(200), step(250, rejected=3)):
        record_step(history, s)
    capacity_headroom(history, expected_user_rps=EXPECTED, expected_background_rps=NODES_RPS, objective_x=1.5,
                      **LIMITS)
    history.close()
    saved = History.load(tmp_path / "history.jsonl")
    assert steps_of(saved) == [step(200), step(250, rejected=3)]
    (again,) = rejudge(saved)
    assert again.again is Again.SAME and again.now.status is Status.FAIL


def test_a_mix_for_the_expected_users_sends_each_class_its_share():
    from harness.capacity.expected import mix_for

    expected = ExpectedLoad.model_validate({"user_rps": {"mutating": 10.0, "get": 30.0, "list_namespace": 0.0,
                                                         "list_cluster": 10.0}})
    mix = mix_for(expected.user_rps)
    assert not {"watch_node", "watch_pods", "readyz", "list_pods_namespace"} & set(mix)
    shares = rates_of_mix(mix, 50.0)
    assert shares == pytest.approx({"mutating": 10.0, "get": 30.0, "list_namespace": 0.0, "list_cluster": 10.0},
                                   abs=0.1)
    with pytest.raises(ValueError, match="no user requests"):
        mix_for({"mutating": 0.0})
    with pytest.raises(ValueError, match="no task of the load's mix sends get"):
        mix_for({"get": 1.0}, {"configmap": 1})


def test_the_headroom_figure_is_the_failing_one_none_for_a_lower_bound_else_the_smallest():
    from harness.checkers.capacity import headroom_figure

    passed, lower = headroom(step(200), step(400), step(800, p99={"get": 2.0})), headroom(step(200), step(250))
    failed = headroom(step(200), step(250, rejected=3))
    assert headroom_figure([passed, failed]) == 1.0
    assert headroom_figure([passed, lower]) is None and headroom_figure([]) is None
    assert headroom_figure([passed, passed]) == 2.0


def test_the_nodes_renewals_count_among_the_carried_requests_but_the_headroom_multiplies_the_users_load():
    knee = find_knee([step(200), step(400, rejected=1)], KneeLimits(**LIMITS))
    assert knee.carried_rps["mutating"] == pytest.approx(200.0) and knee.carried_rps["get"] == pytest.approx(60.0)
    # 400 user requests/s carried beside the nodes' 100: twice the users' 200 expected, not 500 / 300
    verdict = headroom(step(200), step(400), step(800, rejected=1))
    assert verdict.figures["headroom_x"] == 2.0 and verdict.figures["carried_user_rps"] == 400.0, verdict.explain()


def test_renewals_falling_behind_the_nodes_period_are_the_clusters_limit():
    knee = find_knee([step(200, renewals=98.0), step(400, renewals=80.0)], KneeLimits(**LIMITS))
    assert knee.cluster_limit and knee.at_step == 1, knee
    assert "the nodes' Lease renewals fell to 80.0/s of 100/s" in knee.stopped_by
    assert find_knee([step(200, renewals=None), step(400, renewals=91.0)], KneeLimits(**LIMITS)).stopped_by is None


def test_steps_beside_fewer_nodes_than_expected_can_fail_the_headroom_but_never_pass_it():
    verdict = headroom(step(200, nodes_rps=50.0), step(400, nodes_rps=50.0, rejected=1), objective_x=1.0)
    assert verdict.status is Status.UNKNOWN, verdict.explain()
    assert "less of the nodes' load than expected (mutating 50/s of 100/s)" in verdict.explanation
    broke = headroom(step(200, nodes_rps=20.0, rejected=4))
    assert broke.status is Status.FAIL and broke.figures["headroom_x"] == 0.0, broke.explain()
    assert "mutating 20/s of 100/s), which only spared it" in broke.explanation


def test_the_objective_verdict_shows_a_multiple_as_one():
    from harness.objectives.judge import meets
    from harness.objectives.measurement import Measurement
    from harness.objectives.policy import Objectives

    verdict = meets(Measurement("capacity_headroom_x", 0.994), Objectives(capacity_headroom_x=1.0))
    assert verdict.status is Status.FAIL and "0.994x, the objective is at least 1x" in verdict.explanation


def test_the_policy_declares_its_expected_load_and_a_session_judges_by_it(tmp_path):
    from pathlib import Path

    import yaml

    from harness.gate.policy import Policy

    root = Path(__file__).resolve().parents[2]
    assert Policy.load(root / "gate.yaml").expected_load == ExpectedLoad()
    data = yaml.safe_load((root / "gate.yaml").read_text())
    data["expected_load"] = {"nodes": 50, "user_rps": {"list_cluster": 2.0}}
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump(data))
    policy = Policy.load(tmp_path / "policy.yaml")
    assert policy.expected_load.rps()["mutating"] == pytest.approx(17.2 + 5.0)  # what the expected_load fixture gives
    assert policy.expected_load.rps()["list_cluster"] == 2.0
    data["expected_load"] = {"nodes": -1}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data))
    from harness.errors import QuorumError

    with pytest.raises(QuorumError, match="expected_load"):
        Policy.load(tmp_path / "bad.yaml")


def test_a_measurement_is_judged_by_the_objectives_its_history_was_given_and_else_by_the_defaults():
    """The session's policy reaches judge() through the History the plugin's fixture opens with it (no module state):
    the same headroom passes the default objective and fails a stricter policy's."""
    from harness.objectives.measurement import Measurement
    from harness.objectives.policy import Objectives
    from harness.scenario import judge

    headroom = Measurement("capacity_headroom_x", 1.5)
    by_default = judge(History(), measures=[headroom])
    by_policy = judge(History(objectives=Objectives(capacity_headroom_x=2.0)), measures=[headroom])
    assert [v.status for v in by_default] == [Status.PASS]
    assert [v.status for v in by_policy] == [Status.FAIL] and "at least 2x" in by_policy[0].explanation
