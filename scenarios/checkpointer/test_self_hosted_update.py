"""Updating a self-hosted apiserver (`--backend kind --topology clusters/kind-self-hosted.yaml`): a change of flags is
rolled out by the apiserver's DaemonSet, as an upgrade is. With two apiservers per node during the update (the new
pod starts beside the old one and shares its port: maxSurge 1, maxUnavailable 0) and a PodDisruptionBudget, a bad
flag leaves the old apiserver serving and `kubectl rollout undo` restores the DaemonSet; with one apiserver per node
the update itself stops the API (docs/checkpointer.md, from Lokomotive's pull request #72). Observed through the API
and the load balancer only."""

import time

import pytest

from harness.checkers import availability
from harness.checkers.recovery import recovered_within
from harness.clients import rollout
from harness.faults import Rollout
from harness.objectives.measurement import from_verdict
from harness.scenario import explain_all, judge, wait_recorded
from harness.target.capabilities import Capability
from harness.thresholds import AVAILABILITY_PCT, rollout_undo_s

pytestmark = [pytest.mark.requires(Capability.SELF_HOSTED), pytest.mark.destructive]

FAILURE_SEEN_S = 60.0  # how long to wait for the new pod's first crash (the pod's start, the apiserver's exit)
# the API is judged this long after the new pod was seen failing: a few hundred probes, and the LB's checks of a
# node whose new apiserver keeps exiting
OBSERVE_S = 20.0


def test_a_bad_flag_rolled_out_to_the_apiservers_leaves_the_api_up_and_rollout_undo_restores_them(
        cluster, history, nemesis, fresh_api_prober):
    """Roll an unknown flag out to the apiserver's DaemonSet: the new pod exits at start, the old one keeps serving,
    so new connections through the LB stay >= 99.5 % available from the change until after `kubectl rollout undo`;
    the undo brings every pod back on the previous revision and Ready within rollout_undo_s (the bad pods' grace
    period)."""
    bad = Rollout(add={"--quorum-no-such-flag": "rolled-out"})
    with nemesis.fault(bad):
        before = bad.captured["command"]
        wait_recorded(history, "rollout.failing", lambda: bool((rollout.pods(cluster.api, "kube-apiserver")
                                                                 or rollout.Pods([])).failing(before)),
                      timeout_s=FAILURE_SEEN_S)
        time.sleep(OBSERVE_S)
        undone = rollout.kubectl_rollout_undo(str(cluster.admin_kubeconfig), bad.daemonset, bad.captured["revision"])
        history.event("rollout.undo", problem=undone)
        workload = rollout.daemonset(cluster.api, bad.daemonset) or {}
        grace = (workload.get("spec", {}).get("template", {}).get("spec", {}).get("terminationGracePeriodSeconds", 30))
        bound = rollout_undo_s(grace)
        restored = wait_recorded(history, "rollout.restored", lambda: (rollout.pods(cluster.api, "kube-apiserver")
                                                                       or rollout.Pods([])).running(before),
                                 timeout_s=bound + 5.0) if undone is None else None
        window = (history.fault_windows()[-1][0], restored or time.monotonic())
    api = availability(history, threshold_pct=AVAILABILITY_PCT, window=window, new_connections=True)
    undo = recovered_within(history, event="rollout.restored", what="every apiserver pod on the revision before and "
                            "Ready", max_s=bound, since="rollout.undo")
    verdicts = judge(history, api, undo, figures={"kubectl_rollout_undo": undone or "ok"},
                     measures=[from_verdict("availability_pct", api, "availability_pct")])
    assert all(verdicts), explain_all(verdicts)
