"""Control-plane scale under fire (seed 003's scale up and down; issue #24): the topology's spare hosts joined as
controllers (two at most), then as many controllers retired, the etcd leader's host and the lease holders' first,
while clients read through the load balancer and write through the API and to etcd. Needs a topology with a spare
host (clusters/ha3-scale.yaml has two: a 3-controller cluster to 5 and back, etcd's quorum 2, then 3, then 2 again);
the nemesis puts the cluster back in its built shape afterwards."""

import time

import pytest

from harness.checkers import availability, durability
from harness.checkers.membership import SHAPE, membership_agreed
from harness.faults.scale import JoinControllers, RetireControllers
from harness.objectives.measurement import from_verdict
from harness.scenario import explain_all, judge
from harness.scenario.helpers import twin_defect
from harness.scenario.rollout import settle
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole
from harness.thresholds import AVAILABILITY_PCT
from harness.scenario.skips import lacks

pytestmark = pytest.mark.requires(Capability.SCALE)
GROW_AT_MOST = 2  # spares joined at once: beyond two, a 3-controller cluster's quorum math says nothing new


def leaving_first(cluster, count: int) -> list[str]:
    """The controllers to retire: the etcd leader's host, then the lease holders' hosts, then others, `count` of
    them."""
    controllers = cluster.hosts(HostRole.CONTROLLER)
    first = [cluster.etcd.leader(), *cluster.health.lease_holders().values(), *controllers]
    return list(dict.fromkeys(h for h in first if h in controllers))[:count]


@pytest.mark.destructive
@pytest.mark.measures("availability_pct", "lost_writes")
def test_spare_hosts_join_then_as_many_controllers_leave_the_leaders_first_without_an_outage(
        cluster, nemesis, rolling_change_prober, etcd_writer, kube_writer, history, objectives):
    """Join the spare hosts, two at most (each etcd member a learner until etcd accepts its promotion, its apiserver
    in the load balancer's rotation only once it is ready), then retire as many controllers, the etcd leader's host
    and the lease holders' first (each out of rotation, stopped, no apiserver using its member, the member removed). Reads through
    the LB stay >= 99.5 % available; no acknowledged write is lost; after every step the load balancer sends clients
    only to hosts with an etcd voter, the voters and lease holders are controllers, every voter answers, and once a
    step settles, voters, rotation and controllers are the same hosts and every lease is held."""
    spares = cluster.spare_hosts()[:GROW_AT_MOST]
    if not spares:
        lacks("spare-host", "roles: [spare]: this topology has none; use clusters/ha3-scale.yaml")
    started = time.monotonic()
    join = nemesis.inject(JoinControllers(hosts=spares, voter_first=twin_defect(cluster, "scale_voter_first")))
    joined_s = time.monotonic() - started
    leaving = leaving_first(cluster, len(spares))
    steps = [join]
    if "stopped" not in join.captured:  # a scale stops at a step that leaves the memberships out of line
        steps.append(nemesis.inject(RetireControllers(hosts=leaving,
                                                      member_first=twin_defect(cluster, "scale_member_first"))))
    retired_s = time.monotonic() - started - joined_s
    settle(cluster, rolling_change_prober, objectives)
    etcd_writer.stop()
    kube_writer.stop()
    api, writes = availability(history, f="api.get", threshold_pct=AVAILABILITY_PCT), durability(history, system="kube")
    for shape in (shape for step in steps for shape in step.captured["shapes"]):
        history.event(SHAPE, **{k: v for k, v in shape.items() if k != "at"})
    verdicts = judge(
        history, api, durability(history, system="etcd"), writes, membership_agreed(history),
        figures={"joined": spares, "retired": leaving, "join_s": round(joined_s, 1),
                 "retire_s": round(retired_s, 1), "controllers_after": cluster.hosts(HostRole.CONTROLLER),
                 "stopped": [step.captured["stopped"] for step in steps if "stopped" in step.captured]},
        measures=[from_verdict("availability_pct", api, "availability_pct"),
                  from_verdict("lost_writes", writes, "lost")])
    assert all(verdicts), explain_all(verdicts)
