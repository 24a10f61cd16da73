"""A measure's configured bound is one function of the configuration the target states (harness/objectives/bounds.py);
its default objective is the same function at the upstream defaults."""

import pytest

from harness.objectives.bounds import UPSTREAM, leader_failover_bound_s
from harness.objectives.catalog import MEASURES, configured_bound
from harness.objectives.measurement import Measurement
from harness.objectives.policy import Objectives
from harness.errors import Unsupported
from harness.scenario import allowed_s
from harness.topology import HealthCheck, LeaderElection
from tests.unit.conftest import fake_target

BOUNDED = [name for name, spec in MEASURES.items() if spec.bound is not None]


def test_the_measures_whose_bound_is_the_configurations_are_the_timing_ones():
    assert set(BOUNDED) == {"lease_failover_s", "lease_give_up_s", "lb_detection_s", "lb_detection_hung_s",
                            "etcd_leader_change_s", "etcd_write_stall_s", "snapshot_restore_s",
                            "reconcile_after_failover_s", "bind_after_failover_s", "node_not_ready_s"}


@pytest.mark.parametrize("name", BOUNDED)
def test_a_cluster_with_the_upstream_defaults_is_promised_exactly_the_default_objective(name, tmp_path):
    """ha3 is configured with every upstream default: what it promises is the default objective, no more."""
    promised = configured_bound(name, fake_target(tmp_path))
    assert round(promised, 1) == MEASURES[name].default == round(MEASURES[name].bound.of(UPSTREAM), 1)


def test_a_cluster_configured_slower_is_promised_more_than_the_objective(tmp_path):
    slow = fake_target(tmp_path, "clusters/defects/slow-leases.yaml")
    election = slow.leader_election()
    assert election != LeaderElection()
    assert configured_bound("lease_failover_s", slow) == leader_failover_bound_s(election) > \
        MEASURES["lease_failover_s"].default


def test_a_grace_period_the_topology_raises_is_promised_and_the_objective_stays_upstream_s(tmp_path):
    """The node-monitor-grace-long twin's 2m flag is its promise (2 x 60 + 2 x 5 + 5 + 0.5 s); the objective is the
    50 s default's."""
    long_grace = fake_target(tmp_path, "clusters/defects/node-monitor-grace-long.yaml")
    assert long_grace.node_monitoring().grace_s == 120.0
    assert configured_bound("node_not_ready_s", long_grace) == 135.5 > MEASURES["node_not_ready_s"].default == 65.5


class UncheckedBalancer:
    """A configuration whose load balancer checks nothing: it promises no detection."""

    def leader_election(self) -> LeaderElection:
        return LeaderElection()

    def etcd_settings(self):
        return UPSTREAM.etcd_settings()

    def load_balancer_check(self) -> HealthCheck | None:
        return None


def test_a_load_balancer_that_checks_nothing_promises_no_detection_and_the_objective_decides():
    unchecked = UncheckedBalancer()
    assert configured_bound("lb_detection_s", unchecked) is None
    assert configured_bound("lb_detection_hung_s", unchecked) is None
    assert allowed_s("lb_detection_s", unchecked, Objectives()) == MEASURES["lb_detection_s"].default
    assert allowed_s("lb_detection_s", unchecked, Objectives(lb_detection_s=6.0)) == 6.0  # the session's policy
    # the snapshot restore still has its other terms, without the LB's rise checks
    assert configured_bound("snapshot_restore_s", unchecked) == pytest.approx(
        MEASURES["snapshot_restore_s"].default - HealthCheck().interval_s * HealthCheck().rise, abs=0.05)


def test_a_measurement_with_its_measures_bound_says_how_the_bound_derives_unless_the_scenario_does():
    recorded = Measurement("etcd_leader_change_s", 1.2, bound=3.5)
    assert recorded.bound_source == MEASURES["etcd_leader_change_s"].bound.source
    assert Measurement("lb_detection_s", 3.0, bound=14.5, bound_source="a cut from etcd").bound_source == \
        "a cut from etcd"
    assert Measurement("etcd_leader_change_s", 1.2).bound_source == ""  # no bound, nothing to explain


class UnstatedBalancer(UncheckedBalancer):
    """Someone else's load balancer whose inventory does not say how it checks (the remote target's refusal)."""

    def load_balancer_check(self) -> HealthCheck | None:
        raise Unsupported("the inventory does not say how the load balancer checks the apiservers", "state it")


def test_a_load_balancer_whose_checks_nobody_stated_is_waited_for_by_the_objective():
    assert allowed_s("lb_detection_hung_s", UnstatedBalancer(), Objectives()) == MEASURES["lb_detection_hung_s"].default


def test_kinds_balancer_promises_the_detection_the_static_pod_suite_waited_for():
    """kind's Envoy check (2 s, 3 s, fall 2) as the kind target states it: the hung detection bound is the wait the
    static-pod suite used before it asked the target (KIND_LB_DETECTION_S)."""
    from harness.thresholds import KIND_LB_DETECTION_S, KIND_LB_FALL, KIND_LB_INTERVAL_S, KIND_LB_TIMEOUT_S

    class KindBalancer(UncheckedBalancer):
        def load_balancer_check(self) -> HealthCheck:
            return HealthCheck(path="/readyz", interval_s=KIND_LB_INTERVAL_S, timeout_s=KIND_LB_TIMEOUT_S,
                               fall=KIND_LB_FALL, rise=1)

    # the configuration's promise decides the wait, whatever the objective
    assert allowed_s("lb_detection_hung_s", KindBalancer(), Objectives(lb_detection_hung_s=99.0)) == \
        pytest.approx(KIND_LB_DETECTION_S)
