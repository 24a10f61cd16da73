"""The scheduler's work on the hollow nodes: a new kube-scheduler leader binds pods, not only holds the lease."""

import time

import pytest

from harness.checkers import failover_time
from harness.checkers.work import BINDING_PROBE, work_resumed
from harness.faults import Kill
from harness.monitors.binding import PROBE_PERIOD_S
from harness.objectives.catalog import configured_bound
from harness.objectives.measurement import from_verdict
from harness.scenario import explain_all, judge
from harness.target.capabilities import Capability

pytestmark = [pytest.mark.hollow_nodes, pytest.mark.requires(Capability.HOLLOW_NODES)]


@pytest.mark.destructive
@pytest.mark.measures("lease_failover_s", "bind_after_failover_s")
def test_the_new_scheduler_leader_binds_pods_after_the_leader_is_killed(
        cluster, nemesis, leases, binding_monitor, history):
    """SIGKILL the kube-scheduler holding the lease while pods for the default scheduler are asked for one after
    another on the hollow nodes (harness/monitors/binding.py). The lease passes to another identity within the
    failover bound, and the first pod asked for after the kill is bound within the failover bound plus the new
    leader's first binding: the new leader schedules, not only holds the lease (a scheduler whose profile serves
    another name, or whose bindings are refused, leads and binds nothing)."""
    lease = "kube-scheduler"
    failover_bound = configured_bound("lease_failover_s", cluster)
    bound = configured_bound("bind_after_failover_s", cluster)
    leader = leases.holder(lease)
    old = leases.identity(lease)
    # the leader binding first (the checker counts it); a cluster that binds nothing is judged after the kill
    binding_monitor.wait_for_work_after(0.0, timeout_s=5 * PROBE_PERIOD_S)
    with nemesis.fault(Kill(component=f"{lease}@{leader}")) as kill:
        leases.wait_for_new_holder(lease, old, timeout=failover_bound + 5)
        # the pods asked for after the kill is in place: only a new leader can bind them
        binding_monitor.wait_for_work_after(history.in_place_at(kill.id) or time.monotonic(), timeout_s=bound + 5)
    binding_monitor.stop()  # a probe still waiting is recorded as such: how long its pod waited is evidence too
    failover = failover_time(history, subject=lease, max_s=failover_bound)
    resumed = work_resumed(history, max_s=bound, probe=BINDING_PROBE)
    verdicts = judge(history, failover, resumed, figures={"bound_s": bound, "failover_bound_s": failover_bound},
                     measures=[from_verdict("lease_failover_s", failover, "failover_s", bound=failover_bound),
                               from_verdict("bind_after_failover_s", resumed, "bind_after_failover_s", bound=bound)])
    assert all(verdicts), explain_all(verdicts)
