"""Checkpointer recovery (a self-hosted control plane: `--backend kind --topology clusters/kind-self-hosted.yaml`).
kube-apiserver is a DaemonSet's pod, which only the API can hand to a kubelet; when every control-plane node loses
power at once, the pod checkpointer's copies on each node's disk must bring the API back, then hand over to the
DaemonSet's pods again (docs/checkpointer.md). Everything is observed through the API, so the suite judges any
self-hosted cluster with a bootkube-style checkpointer; the kill of the checkpointer reaches it through the node's
container runtime (Capability.PODS), since no API is there to name it."""

import pytest

from harness.checkers.recovery import object_kept
from harness.clients import checkpoints
from harness.clients.marker import read_marker, write_marker
from harness.faults import ContainerKill, NodeRestart
from harness.scenario import explain_all, judge, power_loss
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole

pytestmark = [pytest.mark.requires(Capability.SELF_HOSTED, Capability.NODE_POWER), pytest.mark.destructive]


def _taken_over(cluster, nodes: int, since: checkpoints.Checkpointed) -> bool:
    seen = checkpoints.view(cluster.api)
    return seen is not None and seen.taken_over(nodes, since)


def _recovered(cluster, history, nodes: int, before: checkpoints.Checkpointed) -> list:
    """`before`: the view read before the power loss, whose statuses the API still shows until the kubelets report."""
    return power_loss.recovered(cluster, history, handed_back=lambda: _taken_over(cluster, nodes, before),
                                what="every node's DaemonSet apiserver Ready and no checkpoint of it running")


@pytest.mark.measures("power_loss_recovery_s")
def test_every_control_plane_node_loses_power_and_the_api_comes_back_from_its_checkpoints(
        cluster, history, nemesis):
    """Kill every control-plane node at once and start them again. Nothing but the nodes' disks can start the
    apiserver: the checkpointer's own checkpoint starts, activates the apiserver's checkpoint and the API answers
    (bound: checkpoint_api_ready_s); then every node runs the DaemonSet's pod again and no checkpoint is left
    (checkpoint_hand_back_s); the whole cluster is healthy within the power-loss objective, and what was written
    before is still there."""
    nodes = len(cluster.hosts(HostRole.CONTROLLER))
    before = checkpoints.view(cluster.api)
    assert before is not None and before.taken_over(nodes), f"before the fault: {before}"
    marker = write_marker(cluster.api)
    with nemesis.fault(NodeRestart()):
        pass  # the nodes were killed and started again; heal only makes sure they all run
    recovery = _recovered(cluster, history, nodes, before)
    verdicts = judge(
        history, *recovery,
        object_kept(history, what="a ConfigMap written before the power loss", written=marker, read=read_marker(cluster.api)),
        figures={"checkpoints_after": str(checkpoints.view(cluster.api))},
        measures=[power_loss.recovery_measure(recovery[-1])],
    )
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.requires(Capability.PODS)
@pytest.mark.measures("power_loss_recovery_s")
def test_the_checkpointer_killed_while_the_api_is_down_still_brings_it_back(cluster, history, nemesis):
    """The same power loss; then on every control-plane node the checkpointer is SIGKILLed right after it started
    the apiserver's checkpoint, before that apiserver answers. The kubelet restarts it from its own checkpoint, and
    with nothing but its files it must keep the apiserver's checkpoint active while the API is away, then hand back
    to the DaemonSet's pods: the same bounds as the power loss alone, timed from power-on (the kill comes seconds
    after it, docs/checkpointer.md). A kill after the API answered would test nothing: every apiserver is asked directly as soon as the kill
    is done, and an answer fails the run as inconclusive."""
    nodes = len(cluster.hosts(HostRole.CONTROLLER))
    pods = checkpoints.namespace_pods(cluster.api)
    containers = checkpoints.checkpointer_containers(pods or [])
    before = checkpoints.view(cluster.api)
    assert before is not None and before.taken_over(nodes) and len(containers) == 1, (
        f"before the fault: {before}; checkpointer containers {containers}")
    with nemesis.fault(NodeRestart()):
        pass
    with nemesis.fault(ContainerKill(container=containers.pop(), after="kube-apiserver")) as kill:
        pass
    # each apiserver asked directly (the load balancer's checks lag): one that answers makes the run inconclusive
    answering = [host for host in cluster.hosts(HostRole.CONTROLLER) if cluster.apiserver(host).ready(timeout=1.0)]
    assert not answering, (f"the apiserver on {answering} answered as soon as the checkpointer was killed: the kill "
                           "came too late to test a checkpointer killed while the API is down")
    recovery = _recovered(cluster, history, nodes, before)
    verdicts = judge(history, *recovery,
                     figures={"killed": str(kill.captured.get("killed")),
                              "checkpoints_after": str(checkpoints.view(cluster.api))},
                     measures=[power_loss.recovery_measure(recovery[-1])])
    assert all(verdicts), explain_all(verdicts)
