"""The load verdicts on hand-made Histories: SLO classes, windows, exclusions, error budget, heartbeats."""

import pytest

from harness.checkers import Status
from harness.checkers.slo import error_rate, heartbeat_health, latency_slo, latency_table, percentile, pods_kept, slo_for
from harness.history import History, Outcome
from harness.load.spec import LoadSpecError, parse_spec


def request(history, t, latency, verb="get", resource="nodes", scope="resource", ok=True):
    history.record("load-0", f"load.{verb}", resource, t, Outcome.OK if ok else Outcome.FAIL, complete=t + latency,
                   scope=scope, status=200 if ok else 500)


def test_slo_classes_follow_the_published_numbers():
    assert slo_for("create", "resource") == slo_for("patch", "resource") == slo_for("get", "resource") == 1.0
    assert slo_for("list", "namespace") == 5.0 and slo_for("list", "cluster") == 30.0
    assert slo_for("watch", "namespace") is None  # streaming calls have no latency SLO


def test_nearest_rank_percentile():
    assert percentile([float(i) for i in range(1, 101)], 0.99) == 99.0
    assert percentile([0.1, 5.0], 0.99) == 5.0  # with few samples p99 is the maximum


def test_a_slow_window_fails_even_when_the_whole_run_looks_fine():
    h = History()
    for i in range(300):  # 300 s of fast gets, one per second
        request(h, float(i), 0.02)
    for i in range(5):  # inside one 20 s window: 5 of 20 requests take 1.5 s
        request(h, 100.0 + i * 0.1, 1.5)
    whole = latency_table(h, window_s=1000.0)[0]
    assert whole.p99_s == 1.5 and whole.count == 305
    verdict = latency_slo(h, window_s=20.0)
    assert verdict.status is Status.FAIL
    assert "get nodes (resource) p99 1.500s > 1s" in verdict.explanation


def test_a_cluster_list_of_ten_seconds_is_within_its_slo_but_a_namespace_list_is_not():
    h = History()
    request(h, 0.0, 0.05)  # the load starts
    request(h, 10.0, 10.0, verb="list", resource="pods", scope="cluster")
    assert latency_slo(h, window_s=60.0).passed
    request(h, 11.0, 10.0, verb="list", resource="pods", scope="namespace")
    assert latency_slo(h, window_s=60.0).status is Status.FAIL


def test_the_warm_up_is_not_judged_but_a_slow_request_after_it_is():
    h = History()
    request(h, 0.0, 1.1)  # a user's first request: its TCP and TLS handshakes, which the SLI does not count
    for i in range(1, 40):
        request(h, i * 0.5, 0.05)
    assert latency_slo(h, window_s=20.0, warmup_s=2.0).passed
    assert latency_slo(h, window_s=20.0, warmup_s=0.0).status is Status.FAIL
    request(h, 2.5, 1.1)
    assert latency_slo(h, window_s=20.0, warmup_s=2.0).status is Status.FAIL


def test_each_load_process_gets_its_own_warm_up():
    h = History()
    for i in range(40):
        request(h, i * 0.5, 0.05)  # load-0 from t=0
    h.record("load-1", "load.get", "nodes", 3.0, Outcome.OK, complete=5.5, scope="resource", status=200)
    # load-1 started 3 s later: its first request is inside its own warm-up, though outside load-0's
    assert latency_slo(h, window_s=20.0, warmup_s=2.0).passed
    h.record("load-1", "load.get", "nodes", 5.5, Outcome.OK, complete=7.0, scope="resource", status=200)
    assert latency_slo(h, window_s=20.0, warmup_s=2.0).status is Status.FAIL


def test_excluded_windows_are_not_judged():
    h = History()
    for i in range(60):
        request(h, float(i), 3.0 if 20 <= i < 30 else 0.05, verb="create", resource="configmaps")
    assert latency_slo(h, window_s=60.0).status is Status.FAIL
    assert latency_slo(h, window_s=60.0, exclude=[(19.5, 30.5)]).passed


def test_a_request_in_flight_when_the_window_starts_is_excluded_with_it():
    h = History()
    for i in range(30):
        request(h, float(i), 0.05)
    request(h, 9.0, 12.0)  # sent before the fault at t=10, answered during it
    assert latency_slo(h, window_s=60.0).status is Status.FAIL
    assert latency_slo(h, window_s=60.0, exclude=[(10.0, 15.0)]).passed


def test_no_load_requests_is_unknown_not_pass():
    assert latency_slo(History()).status is Status.UNKNOWN
    assert error_rate(History()).status is Status.UNKNOWN


def test_error_budget_is_half_a_percent():
    h = History()
    for i in range(1000):
        request(h, float(i), 0.01, ok=i >= 5)  # 5 failed of 1000: 0.5 %
    assert error_rate(h).passed
    request(h, 1000.0, 0.01, ok=False)
    verdict = error_rate(h)
    assert verdict.status is Status.FAIL and "get nodes: 500 x6" in verdict.explanation


def test_one_sample_with_a_node_not_ready_fails_heartbeats():
    h = History()
    for t in range(10):
        h.event("nodes.ready", t=float(t), total=1000, ready=1000, examples=[])
    assert heartbeat_health(h, expected=1000).passed
    h.event("nodes.ready", t=11.0, total=1000, ready=999, examples=["hollow-n1-0007"])
    verdict = heartbeat_health(h, expected=1000)
    assert verdict.status is Status.FAIL and "hollow-n1-0007" in verdict.explanation
    assert heartbeat_health(History(), expected=1000).status is Status.UNKNOWN


def test_a_flap_between_samples_is_caught_by_the_controllers_event():
    h = History()
    for t in range(10):
        h.event("nodes.ready", t=float(t * 5), total=200, ready=200, examples=[])
    assert heartbeat_health(h, expected=200).passed
    h.event("nodes.not_ready", t=12.0, node="hollow-n1-0003", message="Node hollow-n1-0003 status is now: NodeNotReady")
    verdict = heartbeat_health(h, expected=200)
    assert verdict.status is Status.FAIL and "declared 1 node(s) NotReady" in verdict.explanation


def test_a_vanished_node_counts_as_not_ready():
    h = History()
    h.event("nodes.ready", t=0.0, total=999, ready=999, examples=[])
    assert heartbeat_health(h, expected=1000).status is Status.FAIL


def test_pods_kept_compares_identities():
    assert pods_kept(History(), ["a", "b"], ["a", "b", "c"]).passed
    assert pods_kept(History(), ["a", "b"], ["a", "c"]).status is Status.FAIL  # b was evicted and replaced by c
    assert pods_kept(History(), [], []).status is Status.UNKNOWN


def _spec(**overrides):
    return {"endpoint": "https://10.213.4.10:6443", "ca": "/ca", "cert": "/c", "key": "/k", "nodes": ["n"], **overrides}


def test_a_load_above_the_churn_prerequisite_is_refused_with_a_fix():
    with pytest.raises(LoadSpecError, match=r"objects/s, above the SLOs' prerequisite of 20/s.*fix: lower rate_per_s"):
        parse_spec(_spec(rate_per_s=200))
    assert parse_spec(_spec(rate_per_s=20)).churn_per_s < 20


def test_load_spec_names_unknown_tasks():
    with pytest.raises(LoadSpecError, match=r"unknown tasks in mix \['get_secrets'\]"):
        parse_spec(_spec(mix={"get_secrets": 1}))


def test_mix_weights_are_whole_numbers():
    with pytest.raises(LoadSpecError, match="mix.get_node"):
        parse_spec(_spec(mix={"get_node": 0.5}))


def test_an_anonymous_load_may_only_read_the_health_endpoints():
    with pytest.raises(LoadSpecError, match=r"anonymous requests are refused .* \['get_node'\] .*fix: drop anonymous"):
        parse_spec(_spec(anonymous=True, mix={"get_node": 1, "readyz": 1}))
    assert parse_spec(_spec(anonymous=True, mix={"readyz": 1, "get_node": 0})).anonymous


def test_a_share_splits_users_and_rate_between_processes():
    spec = parse_spec(_spec(users=5, rate_per_s=10, processes=2))
    assert [spec.share(i).users for i in range(2)] == [3, 2]
    assert spec.share(0).rate_per_s == 5 and spec.share(1).processes == 1


def test_worker_records_become_history_operations_and_a_torn_line_is_skipped(tmp_path):
    from harness.load.generator import import_records

    records = tmp_path / "load-0.jsonl"
    ok = '{"t0": 1.0, "t1": 1.2, "verb": "list", "resource": "pods", "scope": "namespace", "method": "GET", ' \
         '"ok": true, "status": 200, "error": ""}'
    bad = ok.replace('"ok": true, "status": 200', '"ok": false, "status": 429').replace('"error": ""', '"error": "429"')
    records.write_text(f"{ok}\n{bad}\n{ok[:40]}")
    h = History()
    assert import_records(h, records, "load-0") == (2, 1)
    assert [(o.f, o.target, o.extra["scope"], o.ok) for o in h.ops] == [
        ("load.list", "pods", "namespace", True), ("load.list", "pods", "namespace", False)]
    assert abs(h.ops[0].latency - 0.2) < 1e-9


def test_a_mix_that_names_nodes_needs_nodes_and_the_target_mix_writes_nothing_but_config_maps():
    from harness.load.spec import CHURNING, NODE_TASKS, TARGET_MIX

    with pytest.raises(LoadSpecError, match=r"the tasks \['get_node'\] name a node, and nodes is empty"):
        parse_spec(_spec(nodes=[], mix={"get_node": 1, "configmap": 1}))
    assert parse_spec(_spec(nodes=[], mix={"configmap": 1})).nodes == []
    # on someone else's cluster: no pods (they would be scheduled), no node status patches; only config maps churn
    assert set(TARGET_MIX) & set(CHURNING) == {"configmap"} and "patch_node_status" not in TARGET_MIX
    assert set(TARGET_MIX) & NODE_TASKS == {"get_node", "watch_node", "list_pods_on_node"}  # they only read


def test_reader_records_become_the_same_history_operations_and_a_torn_record_is_skipped(tmp_path):
    import io

    from harness.load import records as reader_records
    from harness.load.generator import import_records

    out = io.BytesIO()
    task = reader_records.TASK_INDEX
    reader_records.write(out, 1.0, 1.25, task["list_pods_namespace"], 200)
    reader_records.write(out, 2.0, 2.5, task["get_node"], 500)
    reader_records.write(out, 3.0, 4.0, task["readyz"], 0, "the server closed the connection")
    reader_records.write(out, 5.0, 5.1, task["readyz"], 0, "x" * 500)  # kept to 200 bytes, as the workers keep
    whole = out.getvalue()
    records = tmp_path / "reads-0.records"
    records.write_bytes(whole + whole[:reader_records.RECORD.size - 3])  # a record cut short by a kill
    h = History()
    assert import_records(h, records, "reads-0") == (4, 3)
    assert [(o.f, o.target, o.extra["scope"], o.extra["status"], o.ok, o.error) for o in h.ops[:3]] == [
        ("load.list", "pods", "namespace", 200, True, ""), ("load.get", "nodes", "resource", 500, False, "HTTP 500"),
        ("load.get", "readyz", "health", 0, False, "the server closed the connection")]
    assert h.ops[3].error == "x" * 200 and abs(h.ops[0].latency - 0.25) < 1e-9
    with pytest.raises(ValueError, match="not a reader's record file"):
        list(reader_records.read(reader_records.RECORD.pack(1.0, 2.0, 250, 200, 0)))
