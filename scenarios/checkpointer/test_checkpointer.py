"""Checkpointer recovery (a self-hosted control plane: `--backend kind --topology clusters/kind-self-hosted.yaml`).
kube-apiserver is a DaemonSet's pod, which only the API can hand to a kubelet; when every control-plane node loses
power at once, the pod checkpointer's copies on each node's disk must bring the API back, then hand over to the
DaemonSet's pods again (docs/checkpointer.md). Everything is observed through the API, so the suite judges any
self-hosted cluster with a bootkube-style checkpointer."""

import pytest

from harness.checkers.recovery import object_kept, recovered_within
from harness.clients import checkpoints
from harness.clients.marker import read_marker, write_marker
from harness.faults import NodeRestart
from harness.objectives.measurement import from_verdict
from harness.scenario import explain_all, judge, wait_recorded
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole
from harness.thresholds import checkpoint_api_ready_s, checkpoint_hand_back_s, kind_power_loss_recovery_s

pytestmark = [pytest.mark.requires(Capability.SELF_HOSTED, Capability.NODE_POWER), pytest.mark.destructive]


def _taken_over(cluster, nodes: int) -> bool:
    seen = checkpoints.view(cluster.api)
    return seen is not None and seen.taken_over(nodes)


def test_every_control_plane_node_loses_power_and_the_api_comes_back_from_its_checkpoints(
        cluster, history, nemesis):
    """Kill every control-plane node at once and start them again. Nothing but the nodes' disks can start the
    apiserver: the checkpointer's own checkpoint starts, activates the apiserver's checkpoint and the API answers
    (bound: checkpoint_api_ready_s); then every node runs the DaemonSet's pod again and no checkpoint is left
    (checkpoint_hand_back_s); the whole cluster is healthy within the power-loss objective, and what was written
    before is still there."""
    nodes = len(cluster.hosts(HostRole.CONTROLLER))
    assert _taken_over(cluster, nodes), f"before the fault: {checkpoints.view(cluster.api)}"
    marker = write_marker(cluster.api)
    with nemesis.fault(NodeRestart()):
        pass  # the nodes were killed and started again; heal only makes sure they all run
    api_bound, hand_back_bound = checkpoint_api_ready_s(), checkpoint_hand_back_s()
    api_back = wait_recorded(history, "checkpointer.api-ready", cluster.api.ready, timeout_s=api_bound + 5.0)
    checks = [recovered_within(history, event="checkpointer.api-ready", what="the API answering through the LB",
                               max_s=api_bound, since="end")]
    if api_back is not None:  # with no API there is nothing to hand back to (the verdicts below say so)
        wait_recorded(history, "checkpointer.handed-back", lambda: _taken_over(cluster, nodes),
                      timeout_s=api_back - history.fault_windows()[-1][1] + hand_back_bound + 5.0)
        wait_recorded(history, "checkpointer.healthy", lambda: not cluster.problems(),
                      timeout_s=kind_power_loss_recovery_s() + 5.0)
    handed_back = recovered_within(history, event="checkpointer.handed-back",
                                   what="every node's DaemonSet apiserver Ready and no checkpoint of it running",
                                   max_s=api_bound + hand_back_bound, since="end")
    healthy = recovered_within(history, event="checkpointer.healthy", what="the whole cluster healthy",
                               max_s=api_bound + hand_back_bound, since="end")
    verdicts = judge(
        history, *checks, handed_back, healthy,
        object_kept(what="a ConfigMap written before the power loss", written=marker, read=read_marker(cluster.api)),
        figures={"checkpoints_after": str(checkpoints.view(cluster.api))},
        measures=[from_verdict("power_loss_recovery_s", healthy, "recovered_after_s",
                               bound=api_bound + hand_back_bound,
                               bound_source="the API back from its checkpoints (a node's boot, etcd's or the "
                                            "checkpointer's start, one pass, the kubelet's manifest pick-up, the "
                                            "apiserver's start-up, one LB check), then handed back to the DaemonSet "
                                            "(the kubelet's rejoin timers, one pass, the manifest pick-up)")],
    )
    assert all(verdicts), explain_all(verdicts)
