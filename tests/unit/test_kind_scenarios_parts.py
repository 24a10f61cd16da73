"""The pieces of the kind backend's static-pod suite that need no cluster: the kind topology model, the
recovery and durability checkers, the derived bounds, and which scenarios each backend runs."""

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from harness.checkers.recovery import followed_within, never_observed, object_kept, recovered_within
from harness.clients.marker import MarkerWrite
from harness.checkers.verdict import Status
from harness.errors import TopologyError
from harness.history import History
from harness.backends.kind.pod_bandwidth import PodBandwidthError, parse_iperf3
from harness.backends.kind.topology import is_kind_topology, load_kind_topology
from harness.thresholds import (KIND_LB_DETECTION_S, kind_manifest_restore_s, kind_partition_recovery_s,
                                kind_power_loss_recovery_s, kind_whole_cluster_after_s, kubelet_back_off_reset_in_s,
                                static_pod_restart_budget_s)
from harness.clients.kubeapi import pod_restarts
from harness.topology import Component

ROOT = Path(__file__).resolve().parents[2]
# ---- topology ------------------------------------------------------------------------------------

def test_the_shipped_kind_topologies_load_and_say_what_they_are():
    default = load_kind_topology(ROOT / "clusters" / "kind.yaml")
    assert (default.kind.control_planes, default.kind.workers, default.disposable) == (3, 2, True)
    assert not default.defects.kubelet_disabled_at_boot and not default.defects.lb_without_health_checks
    assert load_kind_topology(ROOT / "clusters/defects/kind-kubelet-disabled.yaml").defects.kubelet_disabled_at_boot
    assert load_kind_topology(ROOT / "clusters/defects/kind-lb-no-health-check.yaml").defects.lb_without_health_checks
    assert load_kind_topology(ROOT / "clusters/defects/kind-restart-never.yaml").defects.static_pods_restart_never
    slow = load_kind_topology(ROOT / "clusters/defects/kind-slow-pod-network.yaml")
    assert slow.defects.worker_link_mbit == 1000 and slow.kind.workers == 2 and default.defects.worker_link_mbit is None
    assert is_kind_topology(ROOT / "clusters" / "kind.yaml") and not is_kind_topology(ROOT / "clusters" / "ha3.yaml")


def test_the_reference_kind_balancer_is_the_default_and_its_twin_gives_up_on_a_refused_connection():
    default = load_kind_topology(ROOT / "clusters" / "kind.yaml").load_balancer
    assert (default.health_check_path, default.close_connections_on_failure, default.connect_attempts) == (
        "/readyz", True, 3)
    twin = load_kind_topology(ROOT / "clusters/defects/kind-lb-no-health-check.yaml").load_balancer
    assert twin.connect_attempts == 1


@pytest.mark.parametrize("field, value, named", [("health_check_path", "/readyz\n  option external-check", "/livez"),
                                                 ("connect_attempts", 0, "greater than or equal to 1")])
def test_a_load_balancer_value_that_would_reach_its_config_unchecked_is_refused(tmp_path, field, value, named):
    data = yaml.safe_load((ROOT / "clusters" / "kind.yaml").read_text())
    data["load_balancer"][field] = value
    (tmp_path / "kind.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(TopologyError) as error:
        load_kind_topology(tmp_path / "kind.yaml")
    assert f"load_balancer.{field}" in error.value.problem and named in error.value.problem


def test_a_throttled_link_defect_without_workers_is_refused_with_the_fix(tmp_path):
    twin = tmp_path / "slow.yaml"
    data = yaml.safe_load((ROOT / "clusters/defects/kind-slow-pod-network.yaml").read_text())
    data["kind"]["workers"] = 0
    twin.write_text(yaml.safe_dump(data))
    with pytest.raises(TopologyError) as error:
        load_kind_topology(twin)
    assert "kind.workers is 0" in error.value.problem and "edit" in error.value.fix


def test_a_process_topology_given_to_kind_is_refused_with_the_fix():
    with pytest.raises(TopologyError) as error:
        load_kind_topology(ROOT / "clusters" / "ha3.yaml")
    assert "not a kind topology" in error.value.problem and "clusters/kind.yaml" in error.value.fix


def test_a_kind_topology_given_to_the_other_backends_is_refused_with_the_fix():
    from harness.topology import load_topology

    with pytest.raises(TopologyError) as error:
        load_topology(ROOT / "clusters" / "kind.yaml")
    assert "is a kind topology" in error.value.problem and "--backend kind" in error.value.fix


def test_a_bad_kind_topology_names_the_field(tmp_path):
    path = tmp_path / "k.yaml"
    path.write_text(yaml.safe_dump({"name": "k", "backend": "kind", "network": {"subnet": "10.213.60.0/24"},
                                    "kind": {"control_planes": 0, "wrokers": 1}}))
    with pytest.raises(TopologyError) as error:
        load_kind_topology(path)
    assert "kind.control_planes" in error.value.problem and "kind.wrokers: unknown key" in error.value.problem
    path.write_text(yaml.safe_dump({"name": "k", "backend": "kind", "network": {"subnet": "192.168.1.0/24"}}))
    with pytest.raises(TopologyError, match="network.subnet"):
        load_kind_topology(path)


# ---- checkers ------------------------------------------------------------------------------------

def _faulted(start=10.0, end=12.0):
    history = History()
    history.event("fault.start", t=start, id="f1", name="node-restart")
    history.event("fault.end", t=end, id="f1", name="node-restart")
    return history


def test_recovery_within_the_bound_passes_and_later_fails():
    history = _faulted()
    history.event("kind.healthy", t=40.0)
    assert recovered_within(history, event="kind.healthy", what="healthy", max_s=30.0, since="end").status is Status.PASS
    late = recovered_within(history, event="kind.healthy", what="healthy", max_s=20.0, since="end")
    assert late.status is Status.FAIL and late.figures["recovered_after_s"] == 28.0
    assert recovered_within(history, event="kind.healthy", what="x", max_s=29.0, since="start").status is Status.FAIL


def test_a_state_that_must_never_happen_fails_when_seen_after_the_faults_start_only():
    history = _faulted()
    history.event("checkpointer.stale", t=5.0, nodes={"n1": "kube-apiserver-old"})  # before the fault: not judged
    assert never_observed(history, event="checkpointer.stale", what="stale").status is Status.PASS
    history.event("checkpointer.stale", t=15.0, nodes={"n1": "kube-apiserver-old"})
    seen = never_observed(history, event="checkpointer.stale", what="stale")
    assert seen.status is Status.FAIL and "kube-apiserver-old" in seen.explanation and seen.figures["observed"] == 1
    assert never_observed(History(), event="checkpointer.stale", what="stale").status is Status.UNKNOWN


def test_recovery_is_timed_from_the_named_fault_when_a_later_fault_belongs_to_the_scenario():
    history = _faulted()
    history.event("fault.start", t=12.0, id="f2", name="container-kill")
    history.event("fault.end", t=14.0, id="f2", name="container-kill")
    history.event("kind.healthy", t=18.5)  # 4.5 s after the kill's end, 6.5 s after the power loss's
    assert recovered_within(history, event="kind.healthy", what="healthy", max_s=5.0, since="end").status is Status.PASS
    named = recovered_within(history, event="kind.healthy", what="healthy", max_s=5.0, since="end",
                             fault=history.fault_windows()[0][2]["name"])
    assert named.status is Status.FAIL and named.figures["recovered_after_s"] > 5.0


def test_followed_within_times_the_first_effect_after_the_cause():
    history = History()
    assert followed_within(history, cause="c", effect="e", what="x", max_s=5.0).status is Status.UNKNOWN
    history.event("e", t=1.0)  # before the cause: it does not count
    history.event("c", t=2.0)
    assert followed_within(history, cause="c", effect="e", what="x", max_s=5.0).status is Status.FAIL
    history.event("e", t=6.5)
    assert followed_within(history, cause="c", effect="e", what="x", max_s=5.0).status is Status.PASS
    late = followed_within(history, cause="c", effect="e", what="x", max_s=4.0)
    assert late.status is Status.FAIL and late.figures["after_s"] == 4.5


def test_recovery_never_seen_fails_and_without_a_fault_is_unknown():
    history = _faulted()
    history.event("kind.healthy", t=5.0)  # before the fault: it does not count
    assert recovered_within(history, event="kind.healthy", what="healthy", max_s=60.0).status is Status.FAIL
    assert recovered_within(History(), event="kind.healthy", what="healthy", max_s=60.0).status is Status.UNKNOWN


def test_recovery_since_a_recorded_action_counts_from_it_and_without_one_is_unknown_never_a_pass():
    history = _faulted()
    history.event("rollout.undo", t=14.0)
    history.event("kind.healthy", t=20.5)
    verdict = recovered_within(history, event="kind.healthy", what="healthy", max_s=7.0, since="rollout.undo")
    assert verdict.status is Status.PASS and verdict.figures["recovered_after_s"] == 6.5, verdict
    late = recovered_within(history, event="kind.healthy", what="healthy", max_s=6.0, since="rollout.undo")
    assert late.status is Status.FAIL and "after rollout.undo, more than" in late.explanation
    verdict = recovered_within(history, event="kind.healthy", what="healthy", max_s=60.0, since="stop")
    assert verdict.status is Status.UNKNOWN and "no stop was recorded" in verdict.explanation


def test_an_object_is_kept_only_if_it_reads_back_the_same():
    assert object_kept(History(), what="marker", written="a1", read="a1").status is Status.PASS
    assert object_kept(History(), what="marker", written="a1", read=None).status is Status.FAIL
    assert object_kept(History(), what="marker", written="a1", read="b2").status is Status.FAIL
    assert object_kept(History(), what="marker", written=MarkerWrite("a1"), read="a1").status is Status.PASS
    refused = object_kept(History(), what="marker", written=MarkerWrite(None, "HTTP 500 etcdserver: request timed out", 3, 45.2),
                          read=None)
    assert refused.status is Status.FAIL and refused.figures == {"write_attempts": 3, "write_s": 45.2}
    assert refused.explanation == ("marker could not be written in 3 attempt(s) over 45.20s: "
                                   "HTTP 500 etcdserver: request timed out")


def test_the_kind_bounds_follow_from_the_kubelet_and_balancer_settings():
    assert KIND_LB_DETECTION_S == 3 * 2.0 + 2 * 3.0 + 0.5
    assert static_pod_restart_budget_s() == 1.0 + 10.0 + 30.0
    # a pod killed again waits a doubled back-off, up to the kubelet's 5 min
    assert static_pod_restart_budget_s(Component.SCHEDULER, kill=3) == 1.0 + 40.0 + 20.0
    assert static_pod_restart_budget_s(Component.ETCD, kill=9) == 1.0 + 300.0 + 15.0
    # restarts the kubelet already made (e.g. a leader-election kill, a crash at start-up) double the back-off
    assert static_pod_restart_budget_s(Component.SCHEDULER, kill=1, earlier_restarts=1) == 1.0 + 10.0 + 20.0
    assert static_pod_restart_budget_s(Component.SCHEDULER, kill=1, earlier_restarts=2) == 1.0 + 20.0 + 20.0
    assert static_pod_restart_budget_s(Component.SCHEDULER, kill=2, earlier_restarts=3) == 1.0 + 80.0 + 20.0
    assert kind_power_loss_recovery_s() == 20.0 + 15.0 + 30.0 + 10.0 + 2.0
    assert kind_manifest_restore_s() == 21.0 + 41.0
    assert kind_whole_cluster_after_s(kind_partition_recovery_s()) == 30.0 + 2.0 + 120.0
    # a partition within a probe period of kubeadm's liveness threshold (7 periods after the first failure) may
    # have the apiserver restarted by its kubelet, up to a period after the heal: that period and its restart
    # budget, with the restarts it had before, count then
    assert kind_partition_recovery_s(59.9, earlier_restarts=3) == 30.0
    assert kind_partition_recovery_s(60.0, earlier_restarts=0) == 10.0 + 1.0 + 10.0 + 30.0
    assert kind_partition_recovery_s(74.0, earlier_restarts=3) == 10.0 + 1.0 + 40.0 + 30.0


def test_a_static_pods_back_off_resets_ten_minutes_after_the_kubelet_last_restarted_it():
    now = 1_000_000.0
    assert kubelet_back_off_reset_in_s(0, now - 5, now) == 0.0  # never restarted: no back-off yet
    assert kubelet_back_off_reset_in_s(2, now - 599, now) == 2.0  # 600 s and a second of margin
    assert kubelet_back_off_reset_in_s(2, now - 700, now) == 0.0
    assert kubelet_back_off_reset_in_s(1, None, now) == 600.0  # not running: the whole reset
    pod = {"status": {"containerStatuses": [
        {"restartCount": 3, "state": {"running": {"startedAt": "2026-11-28T13:00:00Z"}}},
        {"restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}}
    parsed = pod_restarts(pod)
    assert (parsed.restarts, parsed.started_at) == (4, 1795870800.0)
    assert pod_restarts({"status": {}}).started_at is None


# ---- which scenarios each backend runs -----------------------------------------------------------

def _collect(*args: str) -> str:
    with tempfile.TemporaryDirectory(prefix="quorum-collect-") as histories:  # no scenario runs: nothing is written
        result = subprocess.run([sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider", "-q", "-rs",
                                 "--no-header", "--history-dir", histories],
                                cwd=ROOT, capture_output=True, text=True, timeout=120)
    return result.stdout + result.stderr


def test_the_static_pod_suite_is_skipped_with_a_reason_off_kind_and_the_flag_suite_is_planned_on_kind():
    """The flag suite times the load balancer from outside where it has no admin interface (kind's has none), so it
    is planned there whole; --setup-plan runs no fixture, so no cluster is built."""
    off_kind = _collect("scenarios/static_pods")
    assert "4 skipped" in off_kind and "not on --backend process: it needs static-pods" in off_kind, off_kind[-1500:]
    plan = _collect("scenarios/apiserver_flags", "--backend", "kind", "--setup-plan")
    planned = {line.split()[0].split("::")[1] for line in plan.splitlines() if line.strip().startswith("scenarios/")}
    assert planned == {
        *(f"test_one_apiserver_with_a_bad_flag_is_routed_around[{c}]"
          for c in ("unknown-flag", "wrong-etcd-endpoint", "missing-certificate")),
        "test_a_rolling_bad_change_stops_at_the_first_apiserver_and_rolls_it_back",
        "test_a_rolling_good_change_reaches_every_apiserver_without_an_outage",
        "test_a_hung_apiserver_is_taken_out_of_rotation"}, plan[-1500:]


def test_the_conformance_checks_of_flags_and_endpoints_are_planned_on_kind_and_the_file_checks_say_why_not():
    plan = _collect("scenarios/conformance", "--backend", "kind", "--setup-plan")
    planned = {line.split()[0].split("::")[1] for line in plan.splitlines() if line.strip().startswith("scenarios/")}
    assert planned == {
        "test_etcd_members_are_exactly_the_etcd_hosts", "test_etcd_peer_and_client_listeners_use_tls",
        "test_the_etcd_client_port_is_reachable_from_every_controller", "test_plain_http_to_the_etcd_client_port_is_refused",
        "test_every_apiserver_lists_every_etcd_member", "test_leader_election_is_on_with_the_topology_timings[kube-scheduler]",
        "test_leader_election_is_on_with_the_topology_timings[kube-controller-manager]",
        "test_authorization_is_rbac_and_node", "test_anonymous_requests_are_refused_except_on_health_endpoints",
        *(f"test_the_restart_back_off_promises_the_time_to_healthy_objective[{c}]"
          for c in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")),
        *(f"test_the_lease_timings_promise_the_failover_and_give_up_objectives[{c}]"
          for c in ("kube-controller-manager", "kube-scheduler")),
        "test_the_load_balancers_checks_promise_the_detection_objectives",
        "test_the_etcd_timings_promise_the_leader_change_and_write_stall_objectives",
        "test_every_listener_serves_a_certificate_its_clients_trust_with_the_days_left_the_objective_needs",
        "test_kube_proxy_serves_its_metrics_to_the_other_hosts",
        "test_control_plane_pods_run_at_system_priority_with_a_small_cpu_request",
        "test_control_plane_nodes_are_labelled_for_their_role_and_tainted_against_workloads",
        "test_the_controller_manager_does_the_work_a_user_asks_of_it"}, plan[-1500:]
    # two read Quorum's files; three need a self-hosted control plane; the scheduler's binding and the endpoints'
    # check need hollow nodes
    assert "7 skipped" in plan, plan[-1500:]
    assert "not on --backend kind: it needs run-files (the cluster's configuration files and keys are the ones " \
           "Quorum wrote in the run directory)" in plan, plan[-1500:]


def test_the_leader_scenarios_run_on_kind_too_and_the_lease_timing_sweep_is_nightly():
    # --setup-plan evaluates the skip marks without bringing a cluster up: planned tests are those that would run
    plan = _collect("scenarios/leader_election", "--backend", "kind", "--setup-plan")
    assert "1 skipped" in plan and "nightly profile only" in plan, plan[-1500:]
    planned = {line.split()[0] for line in plan.splitlines() if line.strip().startswith("scenarios/")}
    assert planned == {f"scenarios/leader_election/test_leader_election.py::{scenario}[{lease}]"
                       for scenario in ("test_a_standby_takes_over_when_the_leader_is_killed",
                                        "test_a_leader_paused_past_its_renew_deadline_does_not_lead_after_it_resumes")
                       for lease in ("kube-controller-manager", "kube-scheduler")} | {
        "scenarios/leader_election/test_leader_election.py::"
        "test_the_new_controller_manager_leader_does_the_controllers_work_after_the_leader_is_killed"}, plan[-1500:]


def test_the_etcd_scenarios_run_on_kind_except_those_that_rewrite_a_members_command_line_which_say_why():
    plan = _collect("scenarios/etcd", "--backend", "kind", "--setup-plan")
    planned = {line.split()[0].split("::")[1] for line in plan.splitlines() if line.strip().startswith("scenarios/")}
    assert planned == {"test_members_use_tls_on_peer_and_client_urls", "test_writes_continue_when_the_leader_of_three_dies",
                       "test_without_quorum_writes_and_linearizable_reads_stop_and_nothing_is_lost",
                       "test_a_partitioned_leader_is_replaced_and_its_side_accepts_no_writes"}, plan[-1500:]
    assert "2 skipped" in plan and "it needs etcd-data (etcd members' command lines and data directories" in plan, \
        plan[-1500:]


def test_every_self_healing_scenario_is_planned_on_kind():
    plan = _collect("scenarios/self_healing", "--backend", "kind", "--setup-plan")
    planned = {line.split()[0] for line in plan.splitlines() if line.strip().startswith("scenarios/")}
    assert planned == {f"scenarios/self_healing/test_self_healing.py::test_a_killed_component_comes_back[{c}]"
                       for c in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "haproxy")
                       }, plan[-1500:]


def test_the_bandwidth_suite_runs_pod_to_pod_on_kind_and_host_to_host_elsewhere():
    off_kind = _collect("scenarios/bandwidth", "-k", "pod_to_pod")
    assert "1 skipped" in off_kind and "it needs pods (real kubelets that run pods)" in off_kind, off_kind[-1500:]
    on_kind = _collect("scenarios/bandwidth", "-k", "not pod_to_pod", "--backend", "kind")
    assert "3 skipped" in on_kind and "not on --backend kind: it needs host-bandwidth" in on_kind, on_kind[-1500:]
    assert "passed" not in on_kind and "failed" not in on_kind, on_kind[-1500:]


# ---- pod-to-pod bandwidth: what iperf3 -J printed (captured from the locally built iperf3 image) ----------

DATA = Path(__file__).with_name("data")


def test_iperf3_json_gives_what_the_receiver_got_and_the_retransmits():
    figures = parse_iperf3((DATA / "iperf3-client.json").read_text())
    assert round(figures.mean_gbit_per_s, 3) == 19.540 and figures.retransmits == 14


def test_one_slow_second_does_not_decide_the_sustained_rate_but_a_slow_link_does():
    """A stall of one second drags the mean, not the median interval (docs/scenarios.md); a link slow in every
    second (the kind-slow-pod-network twin) stays slow."""
    run = json.loads((DATA / "iperf3-client.json").read_text())
    interval = run["intervals"][0]

    def with_rates(*gbits: float) -> str:
        intervals = [{**interval, "sum": {**interval["sum"], "bits_per_second": g * 1e9}} for g in gbits]
        total = {**run["end"]["sum_received"], "bits_per_second": sum(gbits) / len(gbits) * 1e9}
        return json.dumps({**run, "intervals": intervals, "end": {**run["end"], "sum_received": total}})

    stalled = parse_iperf3(with_rates(10.0, 0.4, 9.5, 10.2, 9.8))
    assert stalled.mean_gbit_per_s < 8 and stalled.sustained_gbit_per_s == 9.8
    throttled = parse_iperf3(with_rates(2.1, 1.0, 1.0, 1.0, 1.0))
    assert throttled.sustained_gbit_per_s == 1.0


@pytest.mark.parametrize("output, says", [
    ((DATA / "iperf3-refused.json").read_text(), "iperf3: unable to connect to server: Connection refused"),
    ("exec /usr/bin/iperf3: no such file", "iperf3 printed no JSON"),
    ('{"start": {}, "end": {}}', "no received total"),
])
def test_an_iperf3_run_without_a_result_is_an_error_that_says_why(output, says):
    with pytest.raises(PodBandwidthError, match=re.escape(says)):
        parse_iperf3(output)


def test_a_node_that_is_not_ready_is_reported_with_the_kubelets_reason():
    from harness.backends.kind.health import not_ready_reason

    ready = {"status": {"conditions": [{"type": "MemoryPressure", "status": "False"},
                                       {"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
    no_cni = {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                                         "message": "container runtime network not ready: cni plugin not initialized"}]}}
    assert not_ready_reason(ready) is None
    assert not_ready_reason(no_cni) == "KubeletNotReady: container runtime network not ready: cni plugin not initialized"
    assert not_ready_reason({"status": {}}) == "no Ready condition yet"
    assert not_ready_reason(None) == "not registered"


class KindNodes:
    """What addresses() asks of a kind target: its run directory, cluster name, nodes and their addresses now."""

    def __init__(self, run_dir, kind_name: str, now: dict[str, str]) -> None:
        self.run_dir, self.kind_name, self.now = run_dir, kind_name, now

    def hosts(self) -> list[str]:
        return list(self.now)

    def address(self, node: str) -> str | None:
        return self.now.get(node)


def test_node_addresses_of_a_previous_cluster_in_the_same_run_directory_are_not_taken_for_this_ones(tmp_path):
    """`quorum down` then `up` in the same run directory (`./run.sh scenarios --backend kind` twice): the power loss
    must start the nodes in the order of this cluster's addresses, not the first one's."""
    from harness.backends.kind import power

    first = KindNodes(tmp_path, "quorum-aaaaaa", {"control-plane": "10.213.51.7", "control-plane2": "10.213.51.5"})
    (tmp_path / "node-addresses.json").write_text('{"control-plane": "10.213')  # cut short: no record, no traceback
    assert power.addresses(first) == first.now
    second = KindNodes(tmp_path, "quorum-bbbbbb", {"control-plane": "10.213.51.3", "control-plane2": "10.213.51.6"})
    assert power.addresses(second) == second.now
    second.now = {"control-plane": "10.213.51.4", "control-plane2": "10.213.51.5"}  # down: the first-seen ones stay
    assert power.addresses(second) == {"control-plane": "10.213.51.3", "control-plane2": "10.213.51.6"}
