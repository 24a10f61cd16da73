"""Pod startup on the hollow nodes (clusters/ha3-1000.yaml): stateless pods created at a steady rate, each watched
until Running, judged against SIG Scalability's pod startup latency SLO (p99 <= 5 s from creation to Running as a
watch reports it, image pulls excluded: kwok plays the containers). Scheduling throughput is reported beside it."""

import pytest

from harness.checkers.pod_startup import pod_startup_slo
from harness.clients.pod_startup import start_pods
from harness.load.hollow import ensure_namespace
from harness.load.spec import LOAD_NAMESPACE
from harness.objectives.measurement import from_verdict
from harness.scenario import explain_all, judge
from harness.target.capabilities import Capability

pytestmark = [pytest.mark.hollow_nodes, pytest.mark.requires(Capability.HOLLOW_NODES)]

PODS = 100
RATE_PER_S = 10.0  # creations a second: half the 20 objects/s of churn the SLOs take as their prerequisite
WAIT_S = 60.0  # after the last creation, for the slowest pod to be seen Running


@pytest.mark.measures("pod_startup_s")
def test_stateless_pods_start_within_the_slo(cluster, history):
    """Create 100 pods on the hollow nodes at 10 a second and watch each until Running: p99 startup within 5 s, every
    pod Running within a minute of the last creation; the pods are deleted afterwards."""
    ensure_namespace(cluster.api, LOAD_NAMESPACE)
    start_pods(cluster.api, history, LOAD_NAMESPACE, count=PODS, rate_per_s=RATE_PER_S, timeout_s=WAIT_S)
    verdict = pod_startup_slo(history)
    verdicts = judge(history, verdict, figures={"pods": PODS, "rate_per_s": RATE_PER_S},
                     measures=[from_verdict("pod_startup_s", verdict, "p99_s")])
    assert all(verdicts), explain_all(verdicts)
