"""The scheduler's work on the hollow nodes: a new kube-scheduler leader binds pods, not only holds the lease."""

import pytest

from harness.monitors.binding import PROBE_PERIOD_S
from harness.scenario import explain_all
from harness.scenario.work_after_failover import kill_the_leader_while_work_is_asked_for
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
    verdicts = kill_the_leader_while_work_is_asked_for(cluster, nemesis, leases, binding_monitor, history,
                                                       lease="kube-scheduler", probe_period_s=PROBE_PERIOD_S)
    assert all(verdicts), explain_all(verdicts)
