"""Capacity (issue #58): how much load the control plane carries before it breaks, against the production load the
policy declares (`expected_load:`, default seed 003's 1000 nodes and the load suite's users at the nightly rate).

The users' mix is offered at rising rates, a step at a time (harness/capacity/stepping.py), until a step shows the
cluster's limit: an SLO broken inside the apiservers, priority and fairness rejecting requests, errors over the
availability objective's budget, the nodes' Lease renewals falling behind, or the offered rate not answered while
the generator and its machine had room. The users' rate the step before it carried beside the expected nodes'
heartbeats, divided by the expected users' rate, is the headroom (harness/checkers/capacity.py). It is judged twice:
with every apiserver serving, and with the busiest one stopped, which is what a failure in production leaves. When
the generator or its machine runs out of room first, the search found only a lower bound: it may pass, never
fail."""

import pytest

from harness.capacity.expected import mix_for
from harness.capacity.knee import KneeLimits
from harness.capacity.stepping import Climb, climb
from harness.checkers.capacity import capacity_headroom, headroom_figure
from harness.clients.haproxy_admin import is_down
from harness.faults import Stop
from harness.load.generator import spec_for
from harness.objectives.measurement import Measurement
from harness.objectives.policy import Objectives
from harness.scenario import allowed_s, explain_all, judge
from harness.scenario.skips import lacks
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole
from harness.thresholds import CAPACITY_SHORTFALL_PCT, GENERATOR_BUSY_PCT, GENERATOR_MACHINE_BUSY_PCT
from harness.wait import until

pytestmark = [pytest.mark.hollow_nodes, pytest.mark.requires(Capability.HOLLOW_NODES, Capability.HOLD,
                                                             Capability.LB_ADMIN)]

# the users' offered rate at each step, as multiples of the expected users' rate: from half of it up to eight times,
# so a cluster with the default objective's headroom (1x) shows it by the third step and the search goes on to find
# where it ends; the climb stops at the first limit
STEPS_X = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)


def knee_limits(objectives: Objectives) -> KneeLimits:
    """The knee's rules from the session's objectives: each SLO class's api_p99_s, the availability objective's
    error budget; the generator's, its machine's and the shortfall's from harness/thresholds.py."""
    return KneeLimits(slo_s=dict(objectives.api_p99_s), failed_pct=round(100.0 - objectives.availability_pct, 3),
                      shortfall_pct=CAPACITY_SHORTFALL_PCT, generator_busy_pct=GENERATOR_BUSY_PCT,
                      machine_busy_pct=GENERATOR_MACHINE_BUSY_PCT)


def _headroom(history, expected, limits: KneeLimits, up: int):
    return capacity_headroom(history, expected_user_rps=expected.user_rps,
                             expected_background_rps=expected.background_rps(),
                             objective_x=history.objectives.capacity_headroom_x,
                             slo_s=limits.slo_s, failed_pct=limits.failed_pct, shortfall_pct=limits.shortfall_pct,
                             generator_busy_pct=limits.generator_busy_pct, machine_busy_pct=limits.machine_busy_pct,
                             apiservers_up=up)


@pytest.mark.destructive
@pytest.mark.measures("capacity_headroom_x")
def test_the_control_plane_carries_the_expected_load_with_headroom_also_with_its_busiest_apiserver_down(
        cluster, history, nemesis, profile, quorum_settings, request, objectives, expected_load):
    """The users' mix of the policy's expected load at rising rates, every apiserver serving: the users' rate carried
    at the knee, beside the nodes' heartbeats, is at least capacity_headroom_x times the expected users' rate. Then the apiserver that served the most is
    stopped (its load balancer marks it down) and the climb runs again: the same objective with one apiserver fewer.
    Each step's figures (offered and answered rates, p99 by class, rejections, seats in use per priority level, the
    generator's CPU) are in the History; the verdicts name the knee and what was busiest there."""
    controllers = cluster.hosts(HostRole.CONTROLLER)
    if len(controllers) < 2:
        lacks("two-apiservers", "one apiserver: with it stopped nothing serves, so the N-1 case has no cluster to judge")
    expected, limits = expected_load, knee_limits(objectives)
    users_rps = sum(expected.user_rps.values())
    plan = Climb(tuple(users_rps * x for x in STEPS_X), profile.capacity_step_s, limits)
    base = spec_for(cluster, users=profile.load_users, rate_per_s=users_rps, duration_s=profile.capacity_step_s,
                    mix=mix_for(expected.user_rps))
    work = quorum_settings.history_dir / "capacity" / request.node.name
    every_up = climb(cluster, history, base, plan, work, len(controllers))
    served: dict[str, float] = {}
    for run in every_up:
        for host, count in run.served_by_host.items():
            served[host] = served.get(host, 0.0) + count
    busiest = max(served, key=served.get) if served else controllers[0]
    with nemesis.fault(Stop(component=f"kube-apiserver@{busiest}")):
        out = until(lambda: is_down(cluster.health.lb_server_states().get(busiest, "")),
                    allowed_s("lb_detection_s", cluster, objectives), 0.5)
        one_down = climb(cluster, history, base, plan, work, len(controllers) - 1) if out.held else []
    all_up, n_minus_one = _headroom(history, expected, limits, len(controllers)), \
        _headroom(history, expected, limits, len(controllers) - 1)
    figure = headroom_figure([all_up, n_minus_one])
    verdicts = judge(
        history, all_up, n_minus_one,
        figures={"expected_rps": expected.rps(), "expected_nodes": expected.nodes, "hollow_nodes":
                 len(cluster.hollow_nodes()), "steps_x": list(STEPS_X), "step_s": profile.capacity_step_s,
                 "stopped": f"kube-apiserver@{busiest}", "served_by_host": {h: round(c) for h, c in served.items()},
                 "steps_every_up": len(every_up), "steps_one_down": len(one_down)},
        measures=[Measurement("capacity_headroom_x", figure)])
    assert out.held, f"the load balancer did not mark kube-apiserver@{busiest} down once it was stopped"
    assert all(verdicts), explain_all(verdicts)
