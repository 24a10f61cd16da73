"""Control-plane scale as faults the nemesis heals (issue #24): spare hosts joined as controllers, controllers retired
to spares, in the order that keeps the API answering and etcd's quorum whole (docs/lifecycle.md, "Control-plane
scale"). Like an upgrade, a scale stays applied until healed; healing a join retires the hosts again and healing a
retirement joins them again, so a cluster ends in the shape it was built in.

A join: the host's components configured (none started); its etcd member added as a learner, started, promoted once
etcd accepts it (etcd refuses to promote a learner that is not in sync with the leader); its apiserver started, then
put in the load balancer's rotation; its controller-manager and scheduler started; then every other apiserver given
the new member list, one at a time, each ready and UP behind the load balancer before the next.

A retirement: the hosts marked leaving (no apiserver configured to use their members); out of the load balancer's
rotation; their controller-manager, scheduler and apiserver stopped (the leases move to the others); every remaining
apiserver given the member list without them, one at a time; etcd's leadership moved off a leaving member; then each
member removed, and the hosts made spares again. So no apiserver uses a member once it is removed. The shape
(controllers, etcd voters and learners, the load balancer's rotation, the lease holders) is observed after every
step into `captured["shapes"]` for harness/checkers/membership.py."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import cast

import requests

from harness.checkers.membership import disagreements
from harness.clients.haproxy_admin import is_down
from harness.errors import FaultError
from harness.faults.base import Fault, wait_for
from harness.faults.etcd import change_membership, member_list, peer_url, stop_member, wipe_member
from harness.objectives.bounds import leader_failover_bound_s
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole, Target
from harness.target.scale import Scalable
from harness.thresholds import STARTUP_ALLOWANCE_S
from harness.topology import Component

APISERVER, ETCD = Component.APISERVER, Component.ETCD
FOLLOWERS = (Component.CONTROLLER_MANAGER, Component.SCHEDULER)
LEARNER_PROMOTION_S = 60.0  # a new member's catch-up on a small store takes seconds (docs/lifecycle.md)
LEADER_TRANSFER_S = 10.0


def observe(target: Target, when: str, *, settled: bool = False) -> dict:
    """The cluster's shape now, as the membership checker reads it."""
    members = member_list(target, "")
    by_peer = {peer_url(target, h): h for h in target.hosts(HostRole.ETCD)}

    def named(member: dict) -> str:
        return member.get("name") or next((by_peer[u] for u in member.get("peerURLs", []) if u in by_peer), "?")

    states = target.health.lb_server_states()
    voters = sorted(named(m) for m in members if not m.get("isLearner"))
    return {"when": when, "settled": settled, "at": time.monotonic(),
            "controllers": sorted(target.hosts(HostRole.CONTROLLER)), "voters": voters,
            "silent_voters": [h for h in voters if h == "?" or not _answers(target, h)],
            "learners": sorted(named(m) for m in members if m.get("isLearner")),
            "rotation": sorted(server for server, state in states.items() if not is_down(state)),
            "holders": target.health.lease_holders()}


def _answers(target: Target, host: str) -> bool:
    """etcd's status from the host's member, asked twice (a busy machine may be slow once)."""
    return any(target.etcd.status(target.etcd_url(host), timeout=2.0) is not None for _ in range(2))


class Disagreement(Exception):
    """A step left the memberships out of line: the scale stops there (its heal puts the cluster back)."""


def _check(target: Target, shapes: list[dict], stop: bool, when: str, *, settled: bool = False) -> None:
    """Observe the shape; with `stop`, a disagreement ends the scale (a heal goes on to put the cluster back)."""
    shapes.append(observe(target, when, settled=settled))
    found = disagreements(shapes[-1])
    if found and stop:
        raise Disagreement(f"after '{when}': {'; '.join(found)}")


def _member_of(target: Target, host: str) -> dict | None:
    peer = peer_url(target, host)
    return next((m for m in member_list(target, host) if peer in m.get("peerURLs", [])), None)


def _started(target: Target, component: Component, host: str) -> None:
    target.release(component, host)
    bound = STARTUP_ALLOWANCE_S[component]
    wait_for(lambda: target.health.component_healthy(component, host), bound, what=f"{component.value}@{host} healthy")


def _in_rotation(target: Target, host: str) -> None:
    check = target.load_balancer_check()
    if check is None:  # a load balancer without health checks marks nothing UP: it sends clients at once
        return
    bound = check.rise * check.interval_s + check.timeout_s + 5.0  # its rise checks, the last one's timeout, a margin
    wait_for(lambda: target.health.lb_server_states().get(host) == "UP", bound,
             what=f"the load balancer to mark {host} UP")


def _reconfigure_apiservers(target: Target, hosts: list[str]) -> None:
    """Each apiserver on `hosts` given the member list the cluster's shape configures, one at a time, gated."""
    scalable = cast(Scalable, target)
    for host in hosts:
        if scalable.reconfigure(APISERVER, host):
            wait_for(lambda: target.health.component_healthy(APISERVER, host), STARTUP_ALLOWANCE_S[APISERVER],
                     what=f"kube-apiserver@{host} healthy with its new etcd members")
            _in_rotation(target, host)


def _join_member(target: Target, host: str, shapes: list[dict], stop: bool, voter_first: bool) -> None:
    """The host's member added (a learner; with the defect `voter_first`, a voter at once), observed before it runs,
    started, promoted once it caught up."""
    peer = peer_url(target, host)
    if _member_of(target, host) is None:
        change_membership(target, host, "/v3/cluster/member/add", {"peerURLs": [peer], "isLearner": not voter_first},
                          applied=lambda: _member_of(target, host) is not None)
        _check(target, shapes, stop, f"{host}: etcd member added")
    target.release(ETCD, host)
    deadline = time.monotonic() + LEARNER_PROMOTION_S
    while (member := _member_of(target, host)) is not None and member.get("isLearner"):
        try:  # refused ("can only promote a learner member which is in sync with leader") until it caught up
            change_membership(target, host, "/v3/cluster/member/promote", {"ID": member["ID"]},
                              applied=lambda: not (_member_of(target, host) or {}).get("isLearner"))
        except FaultError:
            if time.monotonic() > deadline:
                raise FaultError(f"etcd did not promote {host}'s learner within {LEARNER_PROMOTION_S:g} s",
                                 f"read its log: quorum logs etcd@{host}") from None
            time.sleep(0.5)
    wait_for(lambda: target.health.component_healthy(ETCD, host), STARTUP_ALLOWANCE_S[ETCD],
             what=f"etcd@{host} healthy")


def _move_leadership(target: Target, leaving: list[str]) -> None:
    """etcd's leadership handed to a staying member if a leaving one holds it (a removed leader would cost an
    election)."""
    leader = target.etcd.leader()
    if leader not in leaving:
        return
    staying = next(h for h in target.hosts(HostRole.ETCD) if h not in leaving)
    member = _member_of(target, staying)
    if member is None:
        raise FaultError(f"etcd lists no member for {staying}")
    try:
        target.etcd.post(target.etcd_url(leader), "/v3/maintenance/transfer-leadership", {"targetID": member["ID"]},
                         timeout=LEADER_TRANSFER_S)
    except requests.RequestException as error:
        raise FaultError(f"etcd did not hand its leadership from {leader} to {staying}: {error}") from None
    wait_for(lambda: target.etcd.leader() not in (leader, None), LEADER_TRANSFER_S, what="a new etcd leader")


def _remove_member(target: Target, host: str) -> None:
    member = _member_of(target, host)
    if member is not None:
        change_membership(target, host, "/v3/cluster/member/remove", {"ID": member["ID"]},
                          applied=lambda: _member_of(target, host) is None)
    stop_member(target, host)
    wipe_member(target, host)  # a removed member's data would refuse to join again


def _leases_moved(target: Target, leaving: list[str]) -> None:
    """No lease still names a leaving host: its holder was stopped, a staying one takes over within a failover."""
    bound = leader_failover_bound_s(target.leader_election())
    wait_for(lambda: not set(target.health.lease_holders().values()) & set(leaving), bound,
             what=f"the leases held on {', '.join(leaving)} to move to a staying controller")


def join(target: Target, hosts: list[str], shapes: list[dict], *, voter_first: bool = False, stop: bool = True
         ) -> None:
    scalable = cast(Scalable, target)
    before = [h for h in target.hosts(HostRole.CONTROLLER) if h not in hosts]
    for host in hosts:
        # a spare, or a controller whose member a stopped retirement removed: its etcd joins the running cluster
        if host in scalable.spare_hosts() or _member_of(target, host) is None:
            scalable.join_host(host)
        _join_member(target, host, shapes, stop, voter_first)
        _check(target, shapes, stop, f"{host}: etcd member promoted")
        _started(target, APISERVER, host)
        cast(Scalable, target).lb_rotation(host, True)
        _in_rotation(target, host)
        for component in FOLLOWERS:
            _started(target, component, host)
        _check(target, shapes, stop, f"{host}: apiserver in rotation, controllers started")
    _reconfigure_apiservers(target, before)
    _check(target, shapes, stop, f"joined {', '.join(hosts)}", settled=True)


def retire(target: Target, hosts: list[str], shapes: list[dict], *, member_first: bool = False,
           stop: bool = True) -> None:
    scalable = cast(Scalable, target)
    if member_first:  # the defect: the members go while their apiservers still serve (clusters/defects/)
        _move_leadership(target, hosts)
        for host in hosts:
            _remove_member(target, host)
            _check(target, shapes, stop, f"{host}: etcd member removed")
    for host in hosts:
        scalable.drain_host(host)
        scalable.lb_rotation(host, False)
        _check(target, shapes, stop, f"{host}: out of rotation")
        for component in (*FOLLOWERS, APISERVER):
            target.hold(component, host, "SIGTERM")
    _leases_moved(target, hosts)
    _check(target, shapes, stop, f"{', '.join(hosts)}: controllers and apiservers stopped, leases moved")
    _reconfigure_apiservers(target, [h for h in target.hosts(HostRole.CONTROLLER) if h not in hosts])
    _check(target, shapes, stop, "apiservers reconfigured without the leaving members")
    _move_leadership(target, hosts)
    for host in hosts:
        _remove_member(target, host)
        scalable.retire_host(host)
        _check(target, shapes, stop, f"{host}: etcd member removed, a spare again", settled=host == hosts[-1])


@dataclass
class JoinControllers(Fault):
    """Join spare hosts to the control plane; heal retires them again. voter_first: the defect of adding each etcd
    member as a voter before it runs and caught up."""

    name = "join-controllers"
    requires = (Capability.SCALE, Capability.HOLD, Capability.LB_ADMIN, Capability.ETCD_DATA)
    hosts: list[str] = field(default_factory=list)
    voter_first: bool = False

    def plan(self, target: Target) -> None:
        spares = cast(Scalable, target).spare_hosts()
        missing = [h for h in self.hosts if h not in spares]
        if not self.hosts or missing:
            raise FaultError(f"{missing or 'no host'} named to join; the spare hosts are {spares or 'none'}",
                             "give hosts with roles: [spare] (clusters/ha3-scale.yaml has two)")
        self.captured["shapes"] = []

    def act(self, target: Target) -> None:
        try:
            join(target, self.hosts, self.captured.setdefault("shapes", []), voter_first=self.voter_first)
        except Disagreement as stop:
            self.captured["stopped"] = str(stop)

    def undo(self, target: Target) -> None:
        joined = [h for h in self.hosts if h in target.hosts(HostRole.CONTROLLER)]
        if joined:
            retire(target, joined, self.captured.setdefault("undone", []), stop=False)


@dataclass
class RetireControllers(Fault):
    """Retire controllers to spares; heal joins them again. member_first: the defect of removing each etcd member
    before its apiserver stops using it."""

    name = "retire-controllers"
    requires = (Capability.SCALE, Capability.HOLD, Capability.LB_ADMIN, Capability.ETCD_DATA)
    hosts: list[str] = field(default_factory=list)
    member_first: bool = False

    def plan(self, target: Target) -> None:
        controllers = target.hosts(HostRole.CONTROLLER)
        staying = [h for h in controllers if h not in self.hosts]
        unknown = [h for h in self.hosts if h not in controllers]
        if not self.hosts or unknown:
            raise FaultError(f"{unknown or 'no host'} named to retire; the controllers are {controllers}",
                             "name controllers of this cluster")
        if len(staying) < len(self.hosts):  # the members that stay must outvote the ones that go, one at a time
            raise FaultError(f"retiring {self.hosts} leaves {staying}: fewer than go, so a removal could cost etcd "
                             "its quorum", "retire fewer controllers at once, or join spares first")
        self.captured["shapes"] = []

    def act(self, target: Target) -> None:
        try:
            retire(target, self.hosts, self.captured.setdefault("shapes", []), member_first=self.member_first)
        except Disagreement as stop:
            self.captured["stopped"] = str(stop)

    def undo(self, target: Target) -> None:
        scalable = cast(Scalable, target)
        back = [h for h in self.hosts if h in scalable.spare_hosts() or target.held(ETCD, h)
                or any(target.held(c, h) for c in (*FOLLOWERS, APISERVER))]
        if back:
            join(target, back, self.captured.setdefault("undone", []), stop=False)
