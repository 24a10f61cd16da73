"""An upgrade, then a reboot (`--backend kind --topology clusters/kind-self-hosted.yaml`): the checkpointer's classic
bug is a checkpoint of the old apiserver left on a node, which the next power loss starts again. A DaemonSet's update
replaces each pod by one of another name, so the old pod's checkpoint must be collected once its successor is Ready
(docs/checkpointer.md). Observed through the API only: the mirror pods of the checkpoints the kubelets run."""

import pytest

from harness.checkers.recovery import never_observed
from harness.clients import checkpoints, rollout
from harness.faults import NodeRestart, Rollout
from harness.faults.rollout import RESTORED_S
from harness.scenario import explain_all, judge, power_loss, wait_recorded
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole

pytestmark = [pytest.mark.requires(Capability.SELF_HOSTED, Capability.NODE_POWER), pytest.mark.destructive]

# an inert change of flags standing for an upgrade (the events' time to live, 1 h by default)
UPGRADE = {"--event-ttl": "59m"}


@pytest.mark.measures("power_loss_recovery_s")
def test_an_apiserver_upgraded_then_powered_off_comes_back_as_the_new_version_never_a_stale_checkpoint(
        cluster, history, nemesis):
    """Roll a change out to the apiserver's DaemonSet and, as soon as every node runs the new pod and the old ones
    are gone from the API, kill every control-plane node and start them again. The API comes back from the
    checkpoints (checkpoint_api_ready_s), every node then runs the new version's DaemonSet pod again
    (checkpoint_hand_back_s), the whole cluster is healthy within the power-loss objective, and at no time from the
    power loss on does a kubelet run a checkpoint of the old version."""
    nodes = len(cluster.hosts(HostRole.CONTROLLER))
    upgrade = Rollout(add=UPGRADE)

    def current() -> rollout.Pods:
        return rollout.pods(cluster.api, "kube-apiserver") or rollout.Pods([])

    recorded: list[dict] = []

    def look_for_stale() -> None:
        """Record each new sight of a stale checkpoint running (node -> the old parent it stands for)."""
        old = checkpoints.stale(checkpoints.namespace_pods(cluster.api) or [], "kube-apiserver", upgrade.command)
        if old and old not in recorded:
            recorded.append(old)
            history.event("checkpointer.stale", nodes=old)

    def handed_back() -> bool:
        look_for_stale()
        seen = checkpoints.view(cluster.api)
        return seen is not None and seen.taken_over(nodes, before) and current().running(upgrade.command)

    with nemesis.fault(upgrade):
        # each node's new pod started and Ready, the old one stopped within its grace period and gone from the API
        done = wait_recorded(history, "rollout.done", lambda: current().running(upgrade.command), timeout_s=RESTORED_S)
        assert done is not None, f"the upgrade was not rolled out: {current()}"
        # read before the power loss: the API shows these statuses until the kubelets report again
        before = checkpoints.view(cluster.api)
        assert before is not None, "the API stopped answering after the upgrade, before the power loss"
        with nemesis.fault(NodeRestart()):
            pass
        recovery = power_loss.recovered(cluster, history, handed_back=handed_back,
                                        what="every node's new DaemonSet apiserver Ready and no checkpoint of it running")
        look_for_stale()  # once more at the end, whatever happened above
    verdicts = judge(
        history, *recovery,
        never_observed(history, event="checkpointer.stale", what="a checkpoint of the apiserver's old version running"),
        figures={"upgrade": UPGRADE, "checkpoints_after": str(checkpoints.view(cluster.api))},
        measures=[power_loss.recovery_measure(recovery[-1])],
    )
    assert all(verdicts), explain_all(verdicts)
