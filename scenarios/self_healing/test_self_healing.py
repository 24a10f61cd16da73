"""Self-healing: every control-plane component that is killed comes back, and the API stays up meanwhile."""

import time

import pytest

from harness.checkers import availability, durability, restart_accounting
from harness.faults import Kill
from harness.scenario import explain_all, first_host_running, judge, wait_healthy
from harness.thresholds import AVAILABILITY_PCT, restart_budget_s
from harness.topology import Component

# the API is judged over this long after the kill: long enough that the LB has marked the killed
# apiserver down and up again (fall + rise checks) and for a few hundred requests at 20/s
OBSERVE_S = 30.0


@pytest.mark.destructive
@pytest.mark.parametrize("component", [Component.ETCD, Component.APISERVER, Component.CONTROLLER_MANAGER,
                                       Component.SCHEDULER, Component.HAPROXY], ids=lambda c: c.value)
def test_a_killed_component_comes_back(cluster, nemesis, api_prober, etcd_writer, history, profile, component):
    """SIGKILL one control-plane component on one host. The supervisor (the cluster's self-healing)
    starts it again within its restart backoff, and it is healthy within backoff + start-up allowance;
    API availability through the load balancer stays >= 99.5 % over the next 30 s; no acknowledged etcd
    write is lost."""
    if component is Component.HAPROXY and cluster.topology.load_balancer_host is not None:
        pytest.skip("the load balancer is a single HAProxy here: killing it is an outage by design, not a "
                    "redundancy test")
    target = f"{component.value}@{first_host_running(cluster, component)}"
    policy = cluster.topology.restart_policy(component)
    budget = restart_budget_s(cluster.topology, component)
    recovered = []
    for _ in range(profile.repeats):
        started = time.monotonic()
        with nemesis.fault(Kill(component=target)):
            time.sleep(0.5)  # let the keeper see the exit before judging health
            recovered.append(wait_healthy(cluster, target, budget))
            time.sleep(max(0.0, OBSERVE_S - (time.monotonic() - started)))
    etcd_writer.stop()
    verdicts = judge(
        history,
        restart_accounting(history, component=target, max_backoff_s=policy.max_backoff_s if profile.repeats > 1
                           else policy.backoff_s),
        availability(history, threshold_pct=AVAILABILITY_PCT),
        durability(history, system="etcd"),
        figures={"component": target, "healthy_after_s": recovered, "budget_s": budget},
    )
    assert all(r is not None for r in recovered), f"{target} was not healthy within {budget:.0f}s: {recovered}"
    assert all(verdicts), explain_all(verdicts)
