"""Self-healing: every control-plane component that is killed comes back, and the API stays up meanwhile."""

import time

import pytest

from harness.checkers import availability, durability, restart_accounting
from harness.checkers.work import reconcile_bounds, slowest_reconcile_s, work_could_resume, work_kept
from harness.faults import Kill
from harness.objectives.measurement import Measurement, from_verdict
from harness.monitors.work import PROBE_PERIOD_S
from harness.scenario import allowed_s, explain_all, least_backed_off_host, judge, wait_healthy
from harness.scenario.helpers import wait_back_off_reset
from harness.target.capabilities import Capability
from harness.thresholds import AVAILABILITY_PCT, NAMESPACE_DELETION_GRACE_S
from harness.topology import Component
from harness.scenario.skips import lacks

# the API is judged over this long after the kill: long enough that the LB has marked the killed
# apiserver down and up again (fall + rise checks) and for a few hundred requests at 20/s
OBSERVE_S = 30.0


@pytest.mark.destructive
@pytest.mark.requires(Capability.WORK_PROBES)
@pytest.mark.parametrize("component", [Component.ETCD, Component.APISERVER, Component.CONTROLLER_MANAGER,
                                       Component.SCHEDULER, Component.HAPROXY], ids=lambda c: c.value)
@pytest.mark.measures("time_to_healthy_s", "availability_pct", "lost_writes", "reconcile_s")
def test_a_killed_component_comes_back(request, cluster, nemesis, api_prober, etcd_writer, objectives, history, profile,
                                       component):
    """SIGKILL one control-plane component on one host. The cluster's self-healing (Quorum's supervisor, or a
    kubelet for a static pod) starts it again, and it is healthy within what its configuration promises (the
    restart back-off, doubling for repeated kills, + its start-up allowance) and within the time_to_healthy_s
    objective; API availability through the load balancer stays >= 99.5 % over the next 30 s; no acknowledged
    etcd write is lost; and the controllers keep doing a user's work (harness/monitors/work.py's probes): once the
    component is healthy again, or the controller-manager's lease has a new holder if the kill moved it, every
    Deployment, collection and namespace deletion asked for is done within the reconcile_s objective (a
    controller-manager healthy and leading whose informers never came back from its apiserver's death,
    kubernetes#125530's class, fails here)."""
    if component is Component.HAPROXY:
        lacks("load-balancer-pair", "the load balancer is a single HAProxy (or not Quorum's to kill): killing it is "
                                    "an outage by design, not a redundancy test")
    reconcile_bound = allowed_s("reconcile_s", cluster, objectives)
    host = least_backed_off_host(cluster, component)
    target = f"{component.value}@{host}"
    recovered, budgets, healthy_at = [], [], []
    earlier = cluster.restarts(component, host)  # a crash back-off counts the restarts the cluster already made
    back_off_wait_s = wait_back_off_reset(cluster, target)
    # the lease watcher and the work probes start once the back-off has reset: minutes of probes into an idle
    # cluster would judge nothing and load the machine the other lanes share
    request.getfixturevalue("leases")
    work_monitor = request.getfixturevalue("work_monitor")
    for kill in range(1, profile.repeats + 1):
        started = time.monotonic()
        budgets.append(cluster.restart_budget_s(component, kill=kill, earlier_restarts=earlier))
        with nemesis.fault(Kill(component=target)):
            killed = time.monotonic()
            time.sleep(0.5)  # let the cluster's self-healing see the exit before judging health
            waited = time.monotonic() - killed
            healthy = wait_healthy(cluster, target, budgets[-1] - waited)
            recovered.append(None if healthy is None else round(waited + healthy, 2))
            healthy_at.append(None if healthy is None else killed + waited + healthy)
            time.sleep(max(0.0, OBSERVE_S - (time.monotonic() - started)))
    etcd_writer.stop()
    work_bounds = reconcile_bounds(reconcile_bound, NAMESPACE_DELETION_GRACE_S)
    if None not in healthy_at:  # each probe asked for once the work could resume, done: the work's return
        resumed = work_could_resume(history, healthy_at)[-1]
        # a worker asks at most every 2 x the period: one ask, and the slowest probe's bound for it to be done
        work_monitor.wait_for_each_after(resumed, timeout_s=2 * PROBE_PERIOD_S + max(work_bounds.values()))
    work_monitor.stop()  # a probe still waiting is recorded as such: how long it waited is evidence too
    accounting = []
    if Capability.SUPERVISOR in cluster.capabilities():  # the supervisor records its restarts in the History
        policy = cluster.topology.restart_policy(component)
        accounting.append(restart_accounting(history, component=target, max_backoff_s=policy.max_backoff_s
                                             if profile.repeats > 1 else policy.backoff_s))
    api, writes = availability(history, threshold_pct=AVAILABILITY_PCT), durability(history, system="etcd")
    work = work_kept(history, max_s=work_bounds, undone_at=healthy_at)
    verdicts = judge(
        history, *accounting, api, writes, work,
        figures={"component": target, "healthy_after_s": recovered, "budget_s": budgets,
                 "back_off_wait_s": round(back_off_wait_s, 1)},
        measures=[Measurement("time_to_healthy_s", recovered[0], component.value, budgets[0],
                              "the cluster's restart back-off + the start-up allowance"),
                  from_verdict("availability_pct", api, "availability_pct"),
                  from_verdict("lost_writes", writes, "lost"),
                  Measurement("reconcile_s", slowest_reconcile_s(work, NAMESPACE_DELETION_GRACE_S))],
    )
    assert all(r is not None for r in recovered), f"{target} was not healthy within {budgets}s: {recovered}"
    assert all(verdicts), explain_all(verdicts)
