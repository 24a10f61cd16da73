"""The controllers do their work: a controller-manager that answers /healthz and holds its lease may still reconcile
nothing (a controller switched off, an informer stuck). What a user asks of it is asked here, in namespaces of
Quorum's own, and judged by the work done (harness/monitors/work.py's probes, harness/checkers/work.py)."""

import pytest

from harness.checkers.work import COLLECT_PROBE, NAMESPACE_PROBE, REPLICAS_PROBE, work_done
from harness.monitors.work import WORK_CHECK_PERIOD_S
from harness.scenario import explain_all, judge
from harness.target.capabilities import Capability
from harness.thresholds import CONTROLLER_WORK_S, NAMESPACE_DELETION_GRACE_S

pytestmark = [pytest.mark.conformance, pytest.mark.requires(Capability.WORK_PROBES)]

SAMPLES = 3  # of each probe: the slowest of three is judged, never a single sample
# each probe's bound: the controllers' work, and a namespace also the namespace controller's deliberate wait
BOUNDS_S = {REPLICAS_PROBE: CONTROLLER_WORK_S, COLLECT_PROBE: CONTROLLER_WORK_S,
            NAMESPACE_PROBE: NAMESPACE_DELETION_GRACE_S + CONTROLLER_WORK_S}


def test_the_controller_manager_does_the_work_a_user_asks_of_it(work_check_monitor, history):
    """Deployments asked for one after another get their ReplicaSet and pods (the deployment and replicaset
    controllers), each one deleted has them collected (the garbage collector), and namespaces deleted are finalized
    (the namespace controller): at least SAMPLES of each done, the slowest within CONTROLLER_WORK_S, a namespace
    within NAMESPACE_DELETION_GRACE_S more (harness/thresholds.py). The pods name a scheduler nobody runs, so nothing runs anywhere; every object is in a
    namespace of Quorum's own, deleted at the end."""
    # a worker asks for one probe at a time, at most one per 2 x the period: SAMPLES rounds, each within the
    # allowance, and one allowance more for the last to end
    slowest = max(BOUNDS_S.values())
    work_check_monitor.wait_for_samples(SAMPLES, timeout_s=SAMPLES * (slowest + 2 * WORK_CHECK_PERIOD_S) + slowest)
    work_check_monitor.stop()  # a probe still waiting is recorded as such: how long it waited is evidence too
    verdicts = judge(history, work_done(history, max_s=BOUNDS_S, samples=SAMPLES))
    assert all(verdicts), explain_all(verdicts)
