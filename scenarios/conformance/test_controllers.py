"""The controllers do their work: a controller-manager that answers /healthz and holds its lease may still reconcile
nothing (a controller switched off, an informer stuck), and a scheduler that leads may bind nothing (a profile serving
another name). What a user asks of them is asked here, in namespaces of Quorum's own, and judged by the work done
(harness/monitors/work.py's and binding.py's probes, harness/checkers/work.py) against the objectives reconcile_s and
bind_s (docs/gate.md)."""

import pytest

from harness.checkers.work import BINDING_PROBE, ENDPOINTS_PROBE, reconcile_bounds, slowest_reconcile_s, work_done
from harness.monitors import endpoints
from harness.monitors.binding import PROBE_PERIOD_S
from harness.monitors.work import WORK_CHECK_PERIOD_S
from harness.objectives.measurement import Measurement, from_verdict
from harness.scenario import allowed_s, explain_all, judge
from harness.target.capabilities import Capability
from harness.thresholds import NAMESPACE_DELETION_GRACE_S

pytestmark = [pytest.mark.conformance, pytest.mark.requires(Capability.WORK_PROBES)]

SAMPLES = 3  # of each probe: the slowest of three is judged, never a single sample


@pytest.mark.measures("reconcile_s")
def test_the_controller_manager_does_the_work_a_user_asks_of_it(cluster, objectives, work_check_monitor, history):
    """Deployments asked for one after another get their ReplicaSet and pods (the deployment and replicaset
    controllers), each one deleted has them collected (the garbage collector), and namespaces deleted are finalized
    (the namespace controller): at least SAMPLES of each done, the slowest within the reconcile_s objective, a
    namespace within NAMESPACE_DELETION_GRACE_S more (harness/thresholds.py). The pods name a scheduler nobody runs, so
    nothing runs anywhere; every object is in a namespace of Quorum's own, deleted at the end."""
    bound = allowed_s("reconcile_s", cluster, objectives)
    bounds_s = reconcile_bounds(bound, NAMESPACE_DELETION_GRACE_S)
    # a worker asks for one probe at a time, at most one per 2 x the period: SAMPLES rounds, each within the
    # allowance, and one allowance more for the last to end
    slowest = max(bounds_s.values())
    work_check_monitor.wait_for_samples(SAMPLES, timeout_s=SAMPLES * (slowest + 2 * WORK_CHECK_PERIOD_S) + slowest,
                                        late_after_s=bounds_s)
    work_check_monitor.stop()  # a probe still waiting is recorded as such: how long it waited is evidence too
    done = work_done(history, max_s=bounds_s, samples=SAMPLES)
    reconcile = Measurement("reconcile_s", slowest_reconcile_s(done, NAMESPACE_DELETION_GRACE_S))
    verdicts = judge(history, done, measures=[reconcile])
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.requires(Capability.HOLLOW_NODES)
@pytest.mark.measures("bind_s")
def test_the_scheduler_binds_the_pods_a_user_asks_for(cluster, objectives, binding_monitor, history):
    """Pods for the default scheduler asked for one after another on the cluster's hollow nodes (their label and
    taint, nothing of anyone else's) are bound to a node: at least SAMPLES, the slowest within the bind_s objective,
    the pod startup SLO a binding is part of. Only the scheduler binds a pod that names no node, so the figure is the
    scheduler's alone. A cluster without hollow nodes lacks them and is skipped, naming that."""
    bound = allowed_s("bind_s", cluster, objectives)
    # two workers, each asking for one pod at a time at most every 2 x the period: SAMPLES rounds within the bound,
    # and one bound more for the last to end
    binding_monitor.wait_for_samples(SAMPLES, timeout_s=SAMPLES * (bound + 2 * PROBE_PERIOD_S) + bound,
                                     late_after_s={BINDING_PROBE: bound})
    binding_monitor.stop()
    done = work_done(history, max_s={BINDING_PROBE: bound}, samples=SAMPLES)
    verdicts = judge(history, done, measures=[from_verdict("bind_s", done, "binding_slowest_s")])
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.requires(Capability.HOLLOW_NODES)
def test_services_list_their_ready_pods_in_their_endpoint_slices(cluster, objectives, endpoints_monitor, history):
    """A pod for the default scheduler on the cluster's hollow nodes, and a Service selecting it, asked for one after
    another (harness/monitors/endpoints.py): the Service's EndpointSlice lists the pod as ready (the endpointslice
    controller), at least SAMPLES times, the slowest within the bind_s and reconcile_s objectives together: the pod is
    bound first, and the controller's work follows its readiness. A cluster without hollow nodes lacks them."""
    bound = allowed_s("bind_s", cluster, objectives) + allowed_s("reconcile_s", cluster, objectives)
    # one worker, one probe at a time at most every period: SAMPLES rounds within the bound, and one bound more
    endpoints_monitor.wait_for_samples(SAMPLES, timeout_s=SAMPLES * (bound + endpoints.PROBE_PERIOD_S) + bound,
                                       late_after_s={ENDPOINTS_PROBE: bound})
    endpoints_monitor.stop()
    verdicts = judge(history, work_done(history, max_s={ENDPOINTS_PROBE: bound}, samples=SAMPLES))
    assert all(verdicts), explain_all(verdicts)
