"""API load on hollow nodes (1000 on clusters/ha3-1000.yaml), judged against the Kubernetes SLOs:
p99 latency per (verb, resource, scope), an error budget of 0.5 % (ClusterLoader2's 99.5 % availability), and node
heartbeats (no hollow node goes NotReady). The steady load judges latency inside the apiservers over its window, as
the SLI is defined (docs/load.md). Faults happen under the load; the SLOs are then judged at the client over the rest
of the run, in windows (5 minutes nightly, the profile's window in ci): two scrapes cannot leave a fault's window out.
Node heartbeats are watched until the node lifecycle controller's detection time (grace period + monitor period,
55 s) has passed since the fault ended. The opposite mistake is judged too: a node whose heartbeats do stop must be
declared NotReady in time."""

import time

import pytest
import requests

from harness.checkers import availability, lb_detection
from harness.checkers.eviction import pod_evicted
from harness.checkers.node_death import declared_at, node_declared_not_ready
from harness.checkers.server_slo import server_latency_slo, server_measures
from harness.checkers.slo import (error_rate, heartbeat_health, heartbeat_measures, latency_slo, load_measures,
                                  pods_kept)
from harness.checkers.verdict import Status
from harness.faults import Kill, Partition, StopNodeHeartbeats
from harness.load.hollow import NAMESPACE, NODES_PATH
from harness.metrics import etcd_window
from harness.objectives.catalog import configured_bound
from harness.objectives.measurement import from_verdict
from harness.scenario import allowed_s, explain_all, judge, wait_healthy, wait_lb_marks_down
from harness.thresholds import (APISERVER_ETCD_CLIENT_DETECTION_S, AVAILABILITY_PCT, EVICTION_ALLOWANCE_S,
                                EVICTION_TOLERATION_S, NODE_MONITOR_PERIOD_S, node_failure_detection_s)
from harness.target.capabilities import Capability
from harness.topology import Component
from harness.wait import until

# on --load-topology (clusters/ha3-1000.yaml) unless the session's --topology has hollow nodes itself; on a target
# without hollow nodes (--target) the steady load runs with TARGET_MIX, and the faults under load need both
pytestmark = pytest.mark.hollow_nodes
UNDER_FAULTS = pytest.mark.requires(Capability.HOLLOW_NODES, Capability.LB_ADMIN)

SETTLE_S = 15.0  # after a fault healed: the LB's rise checks and the clients' reconnects, excluded from the SLOs
# An availability window judged against 99.5 % must hold enough probes for one stray timeout not to decide it:
# at the prober's ~17 requests/s, 30 s is ~500 requests, so the budget is two failed probes (see thresholds).
STEADY_MIN_S = 30.0
# a node given back to its kwok controller is Ready at the controller's next status update (every few seconds; kwok
# updates a node it takes over at once), and its NotReady taint is lifted at the node lifecycle controller's next pass
BACK_READY_S = 60.0
DECLARED_MARGIN_S = 5.0  # waited past the bound, so that a late declaration is seen and judged late, not missed


def _hollow_count(cluster) -> int:
    return len(cluster.hollow_nodes())


def _watch_heartbeats_after_the_fault(cluster, history) -> None:
    """Keep the node monitor running until a broken heartbeat would have shown since the fault ended: a
    fault that restarts the node lifecycle controller gives every node its grace period afresh. Stops early
    once a node was seen NotReady: the node-heartbeats verdict is FAIL whatever follows (a broken twin's run
    is shorter, a healthy cluster's is not)."""
    ends = [end for _, end, _ in history.fault_windows() if end is not None]
    if not ends:
        return
    deadline = max(ends) + node_failure_detection_s()
    if until(lambda: heartbeat_health(history, expected=_hollow_count(cluster)).status is Status.FAIL,
             max(0.0, deadline - time.monotonic()), 1.0).held:
        history.event("figures", heartbeat_watch_stopped_early_s=round(max(0.0, deadline - time.monotonic()), 1))


def _hollow_pod_uids(cluster) -> set[str]:
    response = cluster.api.request("GET", f"/api/v1/namespaces/{NAMESPACE}/pods", timeout=30.0)
    response.raise_for_status()
    return {p["metadata"]["uid"] for p in response.json()["items"]}


@pytest.mark.measures("api_p99_s", "nodes_not_ready")
def test_steady_load_meets_the_slos(cluster, history, node_readiness, api_load, profile):
    """The profile's API load for its whole duration, no faults: every call kind's p99 inside the apiservers within
    its SLO over the load's window (the SLI's own definition; the client's windowed figures beside it), errors within
    budget, every hollow node Ready in every sample (where the cluster has hollow nodes)."""
    summary = api_load.wait()
    hollow = _hollow_count(cluster)
    heartbeats = heartbeat_health(history, expected=hollow) if hollow else None
    client = latency_slo(history, window_s=profile.slo_window_s)  # shown, not judged: it includes the generator
    verdicts = judge(
        history,
        server_latency_slo(history),
        error_rate(history),
        *([heartbeats] if heartbeats is not None else []),  # a failed Verdict is falsy: test for None
        figures={"achieved_rps": round(summary.rps, 1), "requests": summary.requests, "hollow_nodes": hollow,
                 "client_side_latency": client.explanation, **etcd_window.summary(api_load.etcd)},
        measures=[*server_measures(history), *heartbeat_measures(heartbeats)],
    )
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.destructive
@UNDER_FAULTS
@pytest.mark.measures("availability_pct", "api_p99_s", "nodes_not_ready")
def test_killing_one_apiserver_under_load(cluster, history, nemesis, api_prober, node_readiness, api_load, profile):
    """SIGKILL kube-apiserver@c1 a quarter into the load. API availability through the LB stays
    >= 99.5 %; outside the fault window (and SETTLE_S after it) the SLOs hold; no node goes NotReady."""
    target = "kube-apiserver@c1"
    time.sleep(profile.load_s / 4)
    with nemesis.fault(Kill(component=target)) as fault:
        time.sleep(0.5)
        healthy = wait_healthy(cluster, target, cluster.restart_budget_s(Component.APISERVER))
    window = [(w[0], (w[1] or time.monotonic()) + SETTLE_S) for w in history.fault_windows()]
    api_load.wait()
    _watch_heartbeats_after_the_fault(cluster, history)
    api, heartbeats = availability(history, threshold_pct=AVAILABILITY_PCT), heartbeat_health(history,
                                                                                            expected=_hollow_count(cluster))
    verdicts = judge(
        history,
        api,
        latency_slo(history, window_s=profile.slo_window_s, exclude=window),
        error_rate(history, exclude=window),
        heartbeats,
        figures={"fault": fault.name, "healthy_after_s": healthy},
        measures=[*load_measures(history, heartbeats, window_s=profile.slo_window_s, exclude=window),
                  from_verdict("availability_pct", api, "availability_pct")],
    )
    assert healthy is not None, f"{target} did not come back"
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.destructive
@UNDER_FAULTS
@pytest.mark.measures("lb_detection_s", "availability_pct", "api_p99_s", "nodes_not_ready")
def test_partitioning_one_etcd_member_under_load(cluster, history, nemesis, api_prober, node_readiness, api_load,
                                                 profile, objectives):
    """Cut host c3 (an etcd member and its apiserver) off from c1 and c2. The apiserver on c3 loses etcd
    and fails /readyz; the LB marks it DOWN within its worst-case detection time (read from HAProxy's
    admin socket, bound from ANCHORS and the apiserver's ready check). The other apiservers' etcd clients
    keep sending part of their requests to c3's member until their gRPC keepalive drops it (40 s, fixed
    in kube-apiserver). From the later of the two the API through the LB is >= 99.5 % available for the
    next STEADY_MIN_S (an eighth of the load nightly) of the partition; the whole-run figure, which
    includes both detections, is reported. The SLOs hold outside the fault window; no node goes NotReady."""
    # a cut from etcd fails /readyz the way a dead etcd does
    lb_bound = allowed_s("lb_detection_s", cluster, objectives)
    time.sleep(profile.load_s / 4)
    with nemesis.fault(Partition(side_a=["c3"], side_b=["c1", "c2"])):
        cut = history.fault_windows()[-1][0]
        marked_down = wait_lb_marks_down(cluster, history, "c3", timeout_s=lb_bound + 5.0)
        start = max(marked_down or time.monotonic(), cut + APISERVER_ETCD_CLIENT_DETECTION_S)
        steady = (start, start + max(profile.load_s / 8, STEADY_MIN_S))
        time.sleep(max(0.0, steady[1] - time.monotonic()))
    window = [(w[0], (w[1] or time.monotonic()) + SETTLE_S) for w in history.fault_windows()]
    api_load.wait()
    _watch_heartbeats_after_the_fault(cluster, history)
    whole = availability(history)
    detection, api = lb_detection(history, server="c3", max_s=lb_bound), availability(
        history, threshold_pct=AVAILABILITY_PCT, window=steady)
    heartbeats = heartbeat_health(history, expected=_hollow_count(cluster))
    verdicts = judge(
        history,
        detection,
        api,
        latency_slo(history, window_s=profile.slo_window_s, exclude=window),
        error_rate(history, exclude=window),
        heartbeats,
        figures={"availability_whole_run_pct": whole.figures.get("availability_pct"),
                 "judged_from_s_after_the_cut": round(start - cut, 2)},
        measures=[*load_measures(history, heartbeats, window_s=profile.slo_window_s, exclude=window),
                  from_verdict("availability_pct", api, "availability_pct"),
                  from_verdict("lb_detection_s", detection, "detection_s",
                               bound=configured_bound("lb_detection_s", cluster),
                               bound_source="the LB's checks against an apiserver cut from etcd")],
    )
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.destructive
@UNDER_FAULTS
@pytest.mark.measures("api_p99_s", "nodes_not_ready")
def test_restarting_the_controller_manager_leader_under_load(cluster, history, nemesis, node_readiness, api_load,
                                                              profile):
    """SIGKILL the kube-controller-manager that holds the lease; another takes over. The new leader's
    node lifecycle controller must not mistake the hollow nodes for dead: no node goes NotReady and
    none of the hollow pods is evicted; the SLOs hold over the whole run."""
    before = _hollow_pod_uids(cluster)
    leader = cluster.health.lease_holders().get("kube-controller-manager")
    assert leader, "no kube-controller-manager holds the lease before the fault"
    time.sleep(profile.load_s / 4)
    with nemesis.fault(Kill(component=f"kube-controller-manager@{leader}")):
        until(lambda: cluster.health.lease_holders().get("kube-controller-manager") not in (None, leader),
              configured_bound("lease_failover_s", cluster), 0.5)
    api_load.wait()
    _watch_heartbeats_after_the_fault(cluster, history)  # also long enough for a late eviction to show
    after = _hollow_pod_uids(cluster)
    heartbeats = heartbeat_health(history, expected=_hollow_count(cluster))
    verdicts = judge(
        history,
        pods_kept(history, sorted(before), sorted(after)),
        latency_slo(history, window_s=profile.slo_window_s),
        error_rate(history),
        heartbeats,
        figures={"old_leader": leader, "new_leader": cluster.health.lease_holders().get("kube-controller-manager")},
        measures=load_measures(history, heartbeats, window_s=profile.slo_window_s),
    )
    assert all(verdicts), explain_all(verdicts)


def _node_ready(cluster, node: str) -> bool:
    try:
        response = cluster.api.request("GET", f"{NODES_PATH}/{node}", timeout=10.0)
        response.raise_for_status()
    except requests.RequestException:
        return False  # asked again at the next look
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in response.json().get("status", {}).get("conditions", []))


@pytest.mark.destructive
@pytest.mark.requires(Capability.HOLLOW_NODES)
@pytest.mark.measures("node_not_ready_s")
def test_a_node_whose_heartbeats_stop_is_declared_not_ready_within_its_grace_period(cluster, history, nemesis,
                                                                                      node_readiness, eviction_monitor,
                                                                                      objectives):
    """One hollow node's heartbeats stop, as when its kubelet dies: its kwok controller lets go of it, so nothing
    renews its Lease (harness/faults/heartbeats.py). The node lifecycle controller declares it NotReady within the
    node_not_ready_s objective (its grace and monitor periods: a dead node's pods are evicted only once it is seen
    dead), and within what the controller-manager's own flags promise; the pod of Quorum's own on it, tolerating the
    dead node's NoExecute taint for EVICTION_TOLERATION_S, is evicted when that runs out (the taint-eviction
    controller; harness/monitors/eviction.py); once its heartbeats return the node is Ready again, for the suite's next
    scenario."""
    bound = allowed_s("node_not_ready_s", cluster, objectives)
    node = eviction_monitor.node
    with nemesis.fault(StopNodeHeartbeats(node=node)) as fault:
        clock = history.in_place_at(fault.id) or time.monotonic()
        until(lambda: declared_at(history, node, clock) is not None, bound + DECLARED_MARGIN_S, 1.0)
        # the node stays dead until its pod's toleration ran out and the pod was evicted, or was late for it
        until(lambda: eviction_monitor.evicted,
              EVICTION_TOLERATION_S + EVICTION_ALLOWANCE_S + 2 * NODE_MONITOR_PERIOD_S, 1.0)
    eviction_monitor.stop()
    back = until(lambda: _node_ready(cluster, node), BACK_READY_S, 1.0)
    declared = node_declared_not_ready(history, node=node, max_s=bound)
    evicted = pod_evicted(history, toleration_s=EVICTION_TOLERATION_S, max_s=EVICTION_ALLOWANCE_S)
    verdicts = judge(history, declared, evicted, figures={"node": node, "bound_s": bound, "ready_again_after_heal_s":
                                                          round(back.after_s, 1) if back.held else None},
                     measures=[from_verdict("node_not_ready_s", declared, "node_not_ready_s",
                                            bound=configured_bound("node_not_ready_s", cluster))])
    assert back.held, f"{node} was not Ready {BACK_READY_S:.0f} s after its heartbeats returned"
    assert all(verdicts), explain_all(verdicts)

