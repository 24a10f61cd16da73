"""Static-pod recovery: the control plane is kubeadm's static pods, run by each control-plane node's kubelet from
its manifests directory (`--backend kind`, or `--target` with an inventory whose kube-apiserver runs as a static
pod). Whatever breaks it, the kubelet and what is on disk must bring it back: after a killed static pod, after a
corrupted manifest is restored, after a power loss of every control-plane node at once (where Quorum can power
them: kind). While an apiserver is kept down, the load balancer must route new connections around it once its
health check had time to notice (the prober opens a new connection per request, like kubectl): the time the
cluster's configuration promises for that, or where an inventory does not state its balancer's checks, the
`lb_detection_hung_s` objective."""

import time

import pytest

from harness.checkers import availability
from harness.checkers.recovery import object_kept, recovered_within
from harness.clients.marker import read_marker, write_marker, write_marker_within
from harness.faults import Kill, ModifyFlags, NodeRestart, Partition
from harness.history import now
from harness.objectives.measurement import from_verdict
from harness.scenario import allowed_s, explain_all, judge, wait_recorded
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole
from harness.thresholds import (APISERVER_ETCD_CLIENT_DETECTION_S, AVAILABILITY_PCT, KUBELET_MANIFEST_PICKUP_S, WRITE_DURING_PARTITION_S, kind_manifest_restore_s,
                                kind_partition_recovery_s, kind_power_loss_recovery_s, kind_whole_cluster_after_s,
                                static_pod_restart_budget_s)
from harness.topology import Component

pytestmark = [pytest.mark.requires(Capability.STATIC_PODS), pytest.mark.destructive]

HEALTHY = "API ready through the load balancer, every node and static pod Ready, both leases held"
# An availability window judged against 99.5 % must hold enough probes for one stray timeout not to decide it
# (about 500 at the prober's rate, as in the load suite).
STEADY_S = 30.0


def _healthy(cluster) -> bool:
    return not cluster.health.problems()


def _apiserver_ready(cluster, node: str) -> bool:
    return cluster.health.component_healthy("kube-apiserver", node)


def _lb_noticed_s(cluster, objectives) -> float:
    """How long after an apiserver went away the load balancer may still send it new connections: its checks
    each hanging for their timeout (an apiserver cut from etcd answers none), as the configuration promises (where
    it states none, the objective)."""
    return allowed_s("lb_detection_hung_s", cluster, objectives)


# The power loss comes last: on a broken twin it leaves a cluster that only a rebuild repairs.


@pytest.mark.measures("time_to_healthy_s")
def test_a_killed_apiserver_static_pod_is_restarted_by_the_kubelet(cluster, history, nemesis, fresh_api_prober):
    """SIGKILL kube-apiserver in one control-plane node: the kubelet starts it again, and its own /readyz
    answers within the kubelet's relist, its first crash back-off and the apiserver's start-up. The API's
    availability through the LB over the run is reported (the outage can be shorter than the LB's detection
    time, so it is not judged here; the manifest scenario judges the routing)."""
    node = cluster.hosts(HostRole.CONTROLLER)[-1]
    with nemesis.fault(Kill(component=f"kube-apiserver@{node}")):
        pass  # the process is gone; bringing it back is the kubelet's job
    bound = static_pod_restart_budget_s()
    wait_recorded(history, "kind.apiserver-ready", lambda: _apiserver_ready(cluster, node), timeout_s=bound + 5.0,
                  after=lambda: not _apiserver_ready(cluster, node), node=node)
    whole = availability(history)
    back = recovered_within(history, event="kind.apiserver-ready", what=f"kube-apiserver on {node} ready again",
                            max_s=bound, since="start")
    verdicts = judge(
        history, back,
        figures={"availability_through_the_lb_pct": whole.figures.get("availability_pct")},
        measures=[from_verdict("time_to_healthy_s", back, "recovered_after_s", subject="kube-apiserver", bound=bound,
                               bound_source="the kubelet's relist, crash back-off and the start-up allowance")],
    )
    assert all(verdicts), explain_all(verdicts)


def _one_apiserver_away(cluster, history, nemesis, fault, node: str, *, down_within_s: float, back_within,
                        others_settle_s: float = 0.0, during=lambda: None):
    """Inject `fault`, which takes kube-apiserver on `node` away; once the LB had time to notice, call during();
    keep it away until the steady window (from the LB's detection time, and from others_settle_s after the
    fault's start: what the other apiservers need to stop depending on `node`) has passed, heal. The verdicts:
    availability through the LB in the steady window, that apiserver back within back_within(how long the fault
    lasted) of the heal, and the whole cluster within the bound that follows."""
    with nemesis.fault(fault):
        cut = history.fault_windows()[-1][0]
        down = wait_recorded(history, "kind.apiserver-down", lambda: not _apiserver_ready(cluster, node),
                             timeout_s=down_within_s, node=node)
        assert down is not None, f"{fault.describe()} did not make kube-apiserver on {node} unready"
        noticed = down + _lb_noticed_s(cluster, history.objectives)
        time.sleep(max(0.0, noticed - now()))
        result = during()
        start = max(noticed, cut + others_settle_s)
        steady = (start, start + STEADY_S)
        time.sleep(max(0.0, steady[1] - now()))
    start, end, _ = history.fault_windows()[-1]
    back_within_s = back_within(end - start)
    whole = kind_whole_cluster_after_s(back_within_s)
    wait_recorded(history, "kind.apiserver-ready", lambda: _apiserver_ready(cluster, node), timeout_s=back_within_s + 5.0,
                  node=node)
    wait_recorded(history, "kind.healthy", lambda: _healthy(cluster), timeout_s=whole + 5.0)
    return [availability(history, threshold_pct=AVAILABILITY_PCT, window=steady),
            recovered_within(history, event="kind.apiserver-ready", what=f"kube-apiserver on {node} ready again",
                             max_s=back_within_s, since="end"),
            recovered_within(history, event="kind.healthy", what=HEALTHY, max_s=whole, since="end")], result


@pytest.mark.measures("availability_pct")
def test_a_corrupted_apiserver_manifest_takes_down_only_its_apiserver_and_restoring_it_brings_it_back(
        cluster, history, nemesis, fresh_api_prober):
    """Append an unknown flag to kube-apiserver's manifest on one node (temporary file + rename): the kubelet
    replaces the pod with one that cannot start. New connections through the LB stay >= 99.5 % available from
    the LB's detection time on; the restored manifest brings the apiserver back, then the whole cluster (its
    node may have gone NotReady meanwhile: its kubelet talks to that apiserver)."""
    node = cluster.hosts(HostRole.CONTROLLER)[0]
    corrupted = ModifyFlags(component=f"kube-apiserver@{node}", add={"--quorum-no-such-flag": "corrupted"})
    checks, _ = _one_apiserver_away(cluster, history, nemesis, corrupted, node,
                                    down_within_s=KUBELET_MANIFEST_PICKUP_S + 10.0,
                                    back_within=lambda _: kind_manifest_restore_s())
    verdicts = judge(history, *checks, measures=[from_verdict("availability_pct", checks[0], "availability_pct")])
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.measures("availability_pct")
def test_a_control_plane_node_partitioned_from_its_peers_is_routed_around_and_rejoins(
        cluster, history, nemesis, fresh_api_prober, objectives):
    """iptables in one control-plane node drop everything from and to the other nodes: its etcd member is alone
    in the minority, so its apiserver fails its etcd check while it still answers. Every apiserver lists every
    member (as in Typhoon), so the others' etcd clients send part of their requests to the cut-off member, where
    they hang until the clients' keepalive drops it (APISERVER_ETCD_CLIENT_DETECTION_S after the cut). From the
    later of that and the LB's detection time, new connections through the LB stay >= 99.5 % available; the
    majority keeps accepting writes (a client that retries has its write accepted within
    WRITE_DURING_PARTITION_S: an idle connection to the cut-off member is found dead only when used); once the
    partition is healed (past kubeadm's liveness threshold the kubelet may have restarted that apiserver, whose
    restart budget then counts) its apiserver and then the whole cluster are healthy again within the bounds."""
    node = cluster.hosts(HostRole.CONTROLLER)[-1]
    others = [host for host in cluster.hosts() if host != node]
    earlier = cluster.restarts(Component.APISERVER, node)  # a restart by the liveness probe waits its back-off
    checks, marker = _one_apiserver_away(
        cluster, history, nemesis, Partition(side_a=[node], side_b=others), node,
        down_within_s=_lb_noticed_s(cluster, objectives), back_within=lambda lasted: kind_partition_recovery_s(lasted, earlier),
        others_settle_s=APISERVER_ETCD_CLIENT_DETECTION_S,
        during=lambda: write_marker_within(cluster.api, WRITE_DURING_PARTITION_S))  # through the LB, new connections
    verdicts = judge(
        history, *checks,
        object_kept(history, what="a ConfigMap written during the partition", written=marker, read=read_marker(cluster.api)),
        measures=[from_verdict("availability_pct", checks[0], "availability_pct")],
    )
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.measures("power_loss_recovery_s")
@pytest.mark.requires(Capability.NODE_POWER)
def test_every_control_plane_node_loses_power_at_once_and_the_control_plane_comes_back_from_disk(
        cluster, history, nemesis, api_prober):
    """Kill every control-plane node container at once and start them again: the kubelet starts etcd and
    the control plane from the manifests on disk, etcd's data holds what was written before, and the whole
    cluster is healthy again within the bound (a node's boot, etcd's quorum, the apiserver's start-up)."""
    marker = write_marker(cluster.api)
    with nemesis.fault(NodeRestart()):
        pass  # the nodes were killed and started again; heal only makes sure they all run
    bound = kind_power_loss_recovery_s()
    wait_recorded(history, "kind.healthy", lambda: _healthy(cluster), timeout_s=bound + 5.0)
    recovered = recovered_within(history, event="kind.healthy", what=HEALTHY, max_s=bound, since="end")
    verdicts = judge(
        history, recovered,
        object_kept(history, what="a ConfigMap written before the power loss", written=marker, read=read_marker(cluster.api)),
        measures=[from_verdict("power_loss_recovery_s", recovered, "recovered_after_s", bound=bound,
                               bound_source="a node's boot + etcd's and the apiserver's start-up + the kubelet's "
                                            "status period + one LB check")],
    )
    assert all(verdicts), explain_all(verdicts)
