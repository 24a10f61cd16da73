"""Every property a scenario measures, under a stable name that says what was measured, with where it is
measured. The objective for each (its default and where the default comes from) is in policy.py; docs/gate.md
lists both; tests/unit/test_objectives.py keeps the three in step."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class MeasureSpec:
    name: str
    unit: str  # s, %, count
    what: str
    higher_is_better: bool
    scenarios: tuple[str, ...]  # node-id patterns (fnmatch) of the scenarios that must record it when they run
    subjects: tuple[str, ...] = ()  # a measure kept per subject (a component, an SLO class)


def _spec(name, unit, what, scenarios, higher_is_better=False, subjects=()) -> MeasureSpec:
    return MeasureSpec(name, unit, what, higher_is_better, tuple(scenarios), tuple(subjects))


SELF_HEALING = "scenarios/self_healing/test_self_healing.py::test_a_killed_component_comes_back"
LEADERS = "scenarios/leader_election/test_leader_election.py"
ETCD = "scenarios/etcd/test_etcd_quorum.py"
FLAGS = "scenarios/apiserver_flags/test_flag_corruption.py"
LOAD = "scenarios/load/test_load.py"
CHECKPOINTER = "scenarios/checkpointer/test_checkpointer.py"
STATIC = "scenarios/static_pods/test_static_pods.py"
LIFECYCLE = "scenarios/lifecycle/test_upgrade.py"
ETCD_UPGRADE = "scenarios/lifecycle/test_etcd_upgrade.py::test_a_member_by_member_*"
ROTATION = "scenarios/lifecycle/test_cert_rotation.py::*"
SCALE = "scenarios/lifecycle/test_scale.py::*"
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
SLO_CLASSES = ("mutating", "get", "list_namespace", "list_cluster")

MEASURES = {spec.name: spec for spec in (
    _spec("time_to_healthy_s", "s", "a killed control-plane component healthy again (its first kill)",
          [f"{SELF_HEALING}*",
           f"{STATIC}::test_a_killed_apiserver_static_pod_is_restarted_by_the_kubelet"], subjects=COMPONENTS),
    _spec("lease_failover_s", "s", "a killed or frozen leader's lease held by another identity",
          [f"{LEADERS}::test_a_standby_takes_over_when_the_leader_is_killed*",
           f"{LEADERS}::test_a_leader_paused_past_its_renew_deadline_does_not_lead_after_it_resumes*",
           f"{LIFECYCLE}::test_a_rolling_upgrade_*"]),
    _spec("lease_give_up_s", "s", "a leader woken past its renew deadline gives its leadership up",
          [f"{LEADERS}::test_a_leader_paused_past_its_renew_deadline_does_not_lead_after_it_resumes*"]),
    _spec("lb_detection_s", "s", "the load balancer takes a dead or unready apiserver out of rotation",
          [f"{FLAGS}::test_one_apiserver_with_a_bad_flag_is_routed_around*",
           f"{FLAGS}::test_a_rolling_bad_change_stops_at_the_first_apiserver_and_rolls_it_back",
           f"{LOAD}::test_partitioning_one_etcd_member_under_load"]),
    _spec("lb_detection_hung_s", "s", "the load balancer takes a hung apiserver (accepts, never answers) out",
          [f"{FLAGS}::test_a_hung_apiserver_is_taken_out_of_rotation"]),
    _spec("etcd_leader_change_s", "s", "a dead or cut-off etcd leader replaced by a new one",
          [f"{ETCD}::test_writes_continue_when_the_leader_of_three_dies",
           f"{ETCD}::test_a_partitioned_leader_is_replaced_and_its_side_accepts_no_writes"]),
    _spec("etcd_write_stall_s", "s", "the longest stretch without an acknowledged etcd write around a fault",
          [f"{ETCD}::test_writes_continue_when_the_leader_of_three_dies",
           f"{ETCD}::test_without_quorum_writes_and_linearizable_reads_stop_and_nothing_is_lost",
           f"{ETCD}::test_a_removed_member_rejoins_with_a_fresh_data_directory"]),
    _spec("availability_pct", "%", "requests through the load balancer that succeeded, in the judged window",
          [f"{SELF_HEALING}*", f"{FLAGS}::*",
           "scenarios/bandwidth/test_bandwidth.py::test_the_api_stays_available_when_a_controller_link_is_slow",
           f"{STATIC}::test_a_corrupted*", f"{STATIC}::test_a_control_plane_node_partitioned*",
           f"{LOAD}::test_killing_one_apiserver_under_load", f"{LOAD}::test_partitioning_one_etcd_member_under_load",
           f"{LIFECYCLE}::test_a_rolling_upgrade_*", f"{LIFECYCLE}::test_an_upgrade_*", ETCD_UPGRADE, ROTATION,
           SCALE], higher_is_better=True),
    _spec("lost_writes", "count", "acknowledged writes missing at the end",
          [f"{SELF_HEALING}*", f"{ETCD}::test_writes_*", f"{ETCD}::test_without_*",
           f"{ETCD}::test_a_partitioned_*", f"{ETCD}::test_a_removed_*", f"{ETCD}::test_disaster_*",
           f"{LIFECYCLE}::test_a_rolling_upgrade_*", f"{LIFECYCLE}::test_an_upgrade_*", ETCD_UPGRADE, ROTATION, SCALE]),
    _spec("api_p99_s", "s", "an API call class's worst p99 under load (in the apiservers; at the client under a fault)",
          [f"{LOAD}::*"], subjects=SLO_CLASSES),
    _spec("pod_startup_s", "s", "the p99 of pods' creation to Running as a watch reports it, on hollow nodes",
          ["scenarios/load/test_pod_startup.py::*"]),
    _spec("nodes_not_ready", "count", "hollow nodes seen NotReady under load (false heartbeat failures)",
          [f"{LOAD}::*"]),
    _spec("power_loss_recovery_s", "s", "every control-plane node powered off at once until all is healthy",
          [f"{STATIC}::test_every_control_plane_node_loses_power_at_once*",
           f"{CHECKPOINTER}::test_every_control_plane_node_loses_power_and_the_api_comes_back_from_its_checkpoints",
           f"{CHECKPOINTER}::test_the_checkpointer_killed_while_the_api_is_down_still_brings_it_back",
           "scenarios/checkpointer/test_upgrade_then_power_loss.py::*"]),
    _spec("checkpoint_refresh_s", "s", "a checkpointed pod's changed secret until the node's copy holds it",
          ["scenarios/checkpointer/test_secret_refresh.py::*"]),
    _spec("snapshot_restore_s", "s", "quorum lost for good until the cluster serves again from a snapshot",
          [f"{ETCD}::test_disaster_recovery_from_a_snapshot_when_quorum_is_lost_for_good"]),
    _spec("certificate_days_left", "days", "the fewest days any apiserver or etcd listener's certificate has left",
          ["scenarios/conformance/test_certificates.py::*"], higher_is_better=True),
)}


# the values each unit can take: a duration or a count is never negative, a share never over 100 %, and a
# certificate's days left may be negative (it expired that long ago)
RANGES = {"s": (0.0, math.inf), "count": (0.0, math.inf), "%": (0.0, 100.0), "days": (-math.inf, math.inf)}


def out_of_range(name: str, value: float) -> str | None:
    """Why `value` cannot be a figure of the measure `name` (None: it can)."""
    low, high = RANGES[spec(name).unit]
    if not low <= value <= high:
        return f"{value:g} is outside what {name} can be ({low:g} to {high:g} {spec(name).unit})"
    if spec(name).unit == "count" and value != int(value):
        return f"{value:g} is not a whole count"
    return None


def spec(name: str) -> MeasureSpec:
    if name not in MEASURES:
        raise KeyError(f"no measure {name!r}; measures: {', '.join(MEASURES)}")
    return MEASURES[name]
