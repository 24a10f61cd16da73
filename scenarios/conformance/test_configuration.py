"""Configuration against the objectives: a cluster whose own settings promise less than the policy needs is named
here, before any fault runs. Each check derives the bound the running configuration promises (the same bound the
destructive scenarios judge by, harness/objectives/bounds.py) and holds it against the objective the user needs
(`pytest --policy gate.yaml`, or the defaults: docs/gate.md). A cluster configured to be slow passes its own
settings and fails here, for the setting that is too slow."""

import pytest

from harness.components.leader_elected import LEADER_ELECTION_DEFAULTS
from harness.components.flags import go_duration_s
from harness.objectives.bounds import (WRITER_TIMEOUT_S, etcd_leader_change_bound_s, lb_detection_bound_s,
                                       leader_failover_bound_s, leader_give_up_bound_s)
from harness.target.protocol import Unsupported
from harness.topology import Component, EtcdSettings, LeaderElection
from harness.scenario.skips import lacks

pytestmark = pytest.mark.conformance



def _promises(bound: float, objective: float) -> bool:
    return round(bound, 3) <= objective


@pytest.mark.parametrize("component", [Component.ETCD, Component.APISERVER, Component.CONTROLLER_MANAGER,
                                       Component.SCHEDULER], ids=lambda c: c.value)
def test_the_restart_back_off_promises_the_time_to_healthy_objective(cluster, component, objectives):
    """A killed component is back within its restart back-off and start-up allowance (the cluster's self-healing:
    a supervisor's policy, a kubelet's crash back-off); that must fit the time_to_healthy_s objective."""
    try:
        promised = cluster.restart_budget_s(component)
    except Unsupported as unknown:  # e.g. a remote target whose inventory names no keeper Quorum can read
        lacks("restart-promise", f"{unknown.problem} (fix: {unknown.fix})")
    objective = objectives.for_measure("time_to_healthy_s", component.value)
    assert _promises(promised, objective), (
        f"{component.value}: its restart back-off and start-up allowance promise {promised:.1f} s back to healthy, "
        f"over the time_to_healthy_s objective of {objective:g} s")


@pytest.mark.parametrize("component", [Component.CONTROLLER_MANAGER, Component.SCHEDULER], ids=lambda c: c.value)
def test_the_lease_timings_promise_the_failover_and_give_up_objectives(cluster, component, objectives):
    """The running lease timings bound how soon a standby takes a dead leader's lease (lease + jittered retries)
    and how soon a frozen leader gives up (renew deadline + a retry): both must fit their objectives."""
    for host, flags in cluster.live_flags(component).items():
        running = LEADER_ELECTION_DEFAULTS | flags
        assert running["--leader-elect"] == "true", (
            f"{component.value}@{host} runs without leader election: no standby takes over, so the "
            f"lease_failover_s objective cannot be met")
        election = LeaderElection(lease_duration_s=go_duration_s(running["--leader-elect-lease-duration"]),
                                  renew_deadline_s=go_duration_s(running["--leader-elect-renew-deadline"]),
                                  retry_period_s=go_duration_s(running["--leader-elect-retry-period"]))
        failover, give_up = leader_failover_bound_s(election), leader_give_up_bound_s(election)
        assert _promises(failover, objectives.lease_failover_s), (
            f"{component.value}@{host}: its lease timings promise a failover within {failover:.1f} s, over the "
            f"lease_failover_s objective of {objectives.lease_failover_s:g} s")
        assert _promises(give_up, objectives.lease_give_up_s), (
            f"{component.value}@{host}: its renew deadline lets a frozen leader lead for {give_up:.1f} s after it "
            f"wakes, over the lease_give_up_s objective of {objectives.lease_give_up_s:g} s")


def test_the_load_balancers_checks_promise_the_detection_objectives(cluster, objectives):
    """The LB's check interval, fall count and timeout bound how soon a dead, unready or hung apiserver leaves
    rotation: both bounds must fit the lb_detection_s and lb_detection_hung_s objectives."""
    try:
        check = cluster.load_balancer_check()
    except Unsupported as unknown:  # someone else's load balancer, its checks not described
        lacks("load-balancer-checks", f"{unknown.problem} (fix: {unknown.fix})")
    assert check is not None, ("the load balancer has no health check of the apiservers: a dead one is never taken "
                               "out, so the lb_detection_s objective cannot be met")
    dead, hung = lb_detection_bound_s(check), lb_detection_bound_s(check, hang_s=check.timeout_s)
    assert _promises(dead, objectives.lb_detection_s), (
        f"checks every {check.interval_s:g} s, down after {check.fall}: a dead or unready apiserver leaves rotation "
        f"within {dead:.1f} s, over the lb_detection_s objective of {objectives.lb_detection_s:g} s")
    assert _promises(hung, objectives.lb_detection_hung_s), (
        f"checks every {check.interval_s:g} s with a {check.timeout_s:g} s timeout, down after {check.fall}: a hung "
        f"apiserver leaves rotation within {hung:.1f} s, over the lb_detection_hung_s objective of "
        f"{objectives.lb_detection_hung_s:g} s")


def test_the_etcd_timings_promise_the_leader_change_and_write_stall_objectives(cluster, objectives):
    """The running members' election timeout bounds how soon a dead leader is replaced, and so how long writes
    stall: both must fit their objectives."""
    for host, flags in cluster.live_flags(Component.ETCD).items():
        election_ms = int(flags.get("--election-timeout", EtcdSettings().election_timeout_ms))
        heartbeat_ms = int(flags.get("--heartbeat-interval", EtcdSettings().heartbeat_ms))
        change = etcd_leader_change_bound_s(EtcdSettings(heartbeat_ms=heartbeat_ms, election_timeout_ms=election_ms))
        assert _promises(change, objectives.etcd_leader_change_s), (
            f"etcd@{host}: its election timeout of {election_ms} ms promises a new leader within {change:.1f} s, over "
            f"the etcd_leader_change_s objective of {objectives.etcd_leader_change_s:g} s")
        stall = change + WRITER_TIMEOUT_S
        assert _promises(stall, objectives.etcd_write_stall_s), (
            f"etcd@{host}: writes may stall {stall:.1f} s when its leader dies, over the etcd_write_stall_s "
            f"objective of {objectives.etcd_write_stall_s:g} s")
