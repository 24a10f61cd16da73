"""LeaderWatcher.start() returns only once the record says who leads etcd, so a fault injected right after it
always has a "before" to time a failover from (CI on docker once judged "no leader" from slow first answers)."""

import itertools
import threading
import time
from dataclasses import dataclass

import pytest

from harness.backends.fake.health import ModelHealth
from harness.backends.fake.target import FakeTarget
from harness.clients.etcdapi import MemberStatus
from harness.history import History, now
from harness.monitors.leases import LeaderWatcher, RenewalSeen, mid_sleep
from harness.target.health import LEASES
from tests.unit.conftest import fake_target

URLS = ["https://10.0.0.1:2379", "https://10.0.0.2:2379", "https://10.0.0.3:2379"]
MEMBER_IDS = {url: i + 1 for i, url in enumerate(URLS)}


@dataclass
class LeaseList:
    prefix: str  # the holders' host part
    status_code: int = 200
    renewed: str = "2026-11-27T08:00:00.000000Z"

    def json(self) -> dict:
        return {"items": [{"metadata": {"name": name},
                           "spec": {"holderIdentity": f"{self.prefix}_{name}", "renewTime": self.renewed}}
                          for name in LEASES]}


@dataclass
class Apiserver:
    holder_host: str = "c1"
    renewed: str = "2026-11-27T08:00:00.000000Z"  # the holders' last renewTime

    def get(self, path: str, timeout: float) -> LeaseList:
        return LeaseList(self.holder_host, renewed=self.renewed)


class SlowToAgreeEtcd:
    """Members answer nothing for their first `silent` polls (a member's slow first answer, an election in
    progress), then all report member 2 as leader; the member list fails the first time it is asked."""

    def __init__(self, silent: int) -> None:
        self.polls = {url: itertools.count() for url in URLS}
        self.silent = silent
        self.member_lists = itertools.count()

    def status(self, url: str, timeout: float) -> MemberStatus | None:
        if next(self.polls[url]) < self.silent:
            return None
        return MemberStatus(url, MEMBER_IDS[url], 2, 100, 3)

    def members(self, timeout: float) -> dict[int, str]:
        if next(self.member_lists) < 2:  # start()'s own call and the first judgement's
            return {}
        return {i: f"c{i}" for i in MEMBER_IDS.values()}


def scripted(tmp_path, etcd: SlowToAgreeEtcd, api: Apiserver = Apiserver(), prefix: str = "") -> FakeTarget:
    """A fake target whose etcd and API answer as scripted; lease holders are named by their host's short name."""
    cls = type("Scripted", (FakeTarget,), {
        "etcd": etcd, "api": api, "etcd_urls": URLS, "lease_clients": lambda self: [api],
        "HEALTH": type("ScriptedHealth", (ModelHealth,), {
            "lease_host": lambda self, identity: identity.split("_", 1)[0].removeprefix(prefix)})})
    return fake_target(tmp_path, cls=cls)


def test_start_waits_for_a_named_etcd_leader(tmp_path):
    history = History()
    watcher = LeaderWatcher(scripted(tmp_path, SlowToAgreeEtcd(silent=5)), history, period=0.02).start()
    try:
        assert watcher.current["etcd"] == "c2"
        holders = [e.get("holder") for e in history.events_of("leader", subject="etcd")]
        assert holders[-1] == "c2"
        assert all(watcher.current[name] == f"c1_{name}" for name in LEASES)
    finally:
        watcher.stop()


class SlowToRecordHistory(History):
    """A History that takes its time to record an event, as a busy machine's scheduler can make it."""

    def event(self, type: str, t: float | None = None, **attrs):
        time.sleep(0.2)
        return super().event(type, t, **attrs)


def test_start_returns_only_once_the_leader_it_saw_is_in_the_record(tmp_path):
    history = SlowToRecordHistory()
    watcher = LeaderWatcher(scripted(tmp_path, SlowToAgreeEtcd(silent=5)), history, period=0.02).start()
    try:
        holders = [e.get("holder") for e in history.events_of("leader", subject="etcd")]
        assert holders and holders[-1] == watcher.current["etcd"] == "c2", holders
    finally:
        watcher.stop()


def _judged_watcher(tmp_path) -> tuple[LeaderWatcher, History]:
    """A watcher that knows the member names and has not started its threads: answers are fed by hand."""
    history = History()
    watcher = LeaderWatcher(scripted(tmp_path, SlowToAgreeEtcd(silent=0)), history)
    watcher._names = {i: f"c{i}" for i in MEMBER_IDS.values()}
    return watcher, history


def test_no_etcd_verdict_is_recorded_before_every_member_answered_once(tmp_path):
    watcher, history = _judged_watcher(tmp_path)
    watcher._member_answered(URLS[0], 2, t=1.0)
    watcher._member_answered(URLS[1], 0, t=1.0)
    assert history.events_of("leader", subject="etcd") == [], "one answer of three is no verdict on the leader"
    watcher._member_answered(URLS[2], 2, t=1.1)
    assert [e.get("holder") for e in history.events_of("leader", subject="etcd")] == ["c2"]


def test_a_later_judgement_stamped_earlier_stays_last_in_the_record(tmp_path):
    """Member threads overlap: a member whose poll began earlier can be judged after another member's poll that
    ended in "no majority". The record must end with the later judgement (CI on docker: the last etcd event
    before the fault, by time, was a stale "no leader" and the failover had no holder before it)."""
    watcher, history = _judged_watcher(tmp_path)
    watcher._member_answered(URLS[0], 2, t=1.0)
    watcher._member_answered(URLS[1], 0, t=1.0)
    watcher._member_answered(URLS[2], 0, t=1.2)  # judged: one of three names a leader -> no leader
    watcher._member_answered(URLS[1], 2, t=1.15)  # judged after, its poll's midpoint earlier -> c2 leads
    events = history.events_of("leader", subject="etcd")
    assert [e.get("holder") for e in events] == [None, "c2"]
    assert events[-1].t >= 1.2


def test_members_that_do_not_answer_keep_their_view_until_it_is_stale(tmp_path):
    """Two slow status calls on a busy machine are not a lost leader (official CI, etcd-slow-election: a "no leader"
    recorded just before the kill left the failover without a holder before it). Once their last answers are
    older than the freshness window, the majority is gone and "no leader" is recorded."""
    watcher, history = _judged_watcher(tmp_path)
    for url in URLS:
        watcher._member_answered(url, 2, t=1.0)
    watcher._member_answered(URLS[1], None, t=1.3)
    watcher._member_answered(URLS[2], None, t=1.35)
    assert [e.get("holder") for e in history.events_of("leader", subject="etcd")] == ["c2"]
    watcher._member_answered(URLS[0], 2, t=2.2)  # the others' answers from t=1.0 are stale now
    assert [e.get("holder") for e in history.events_of("leader", subject="etcd")] == ["c2", None]
    watcher._member_answered(URLS[1], 0, t=2.3)  # an answer without a leader still counts at once
    watcher._member_answered(URLS[2], 3, t=2.3)
    assert [e.get("holder") for e in history.events_of("leader", subject="etcd")] == ["c2", None]


def test_leases_come_from_where_the_target_says_and_holders_are_named_by_its_hosts(tmp_path):
    """kind's way: the leases through its load balancer only, holders named by the nodes' short names."""
    history = History()
    target = scripted(tmp_path, SlowToAgreeEtcd(silent=0), Apiserver(holder_host="qk-1-control-plane2"), prefix="qk-1-")
    watcher = LeaderWatcher(target, history, period=0.02).start()
    try:
        assert watcher.holder("etcd") == "c2"
        assert watcher.holder("kube-scheduler") == "control-plane2"
        assert watcher.identity("kube-scheduler") == "qk-1-control-plane2_kube-scheduler"
        leases = [e for e in history.events_of("leader") if e.get("subject") != "etcd"]
        assert {e.get("host") for e in leases} == {"control-plane2"}
    finally:
        watcher.stop()


def test_wait_for_renewal_returns_once_the_renew_time_changes_and_not_before(tmp_path):
    """A holder that never renews is reported, not waited for forever; a renewal is placed between the LIST that did
    not show it and the end of the one that did."""
    api = Apiserver()
    watcher = LeaderWatcher(scripted(tmp_path, SlowToAgreeEtcd(silent=0), api=api), History(), period=0.02).start()
    try:
        assert watcher.wait_for_renewal("kube-scheduler", timeout=0.3) is None  # the same renewTime every LIST
        written = now()
        api.renewed = "2026-11-27T08:00:02.000000Z"
        seen = watcher.wait_for_renewal("kube-scheduler", timeout=2.0)
        assert seen is not None and seen.renew_time == api.renewed
        assert seen.after <= written <= seen.before
    finally:
        watcher.stop()


def test_the_paused_leader_scenario_waits_until_the_middle_of_the_holders_sleep(tmp_path):
    """The scenario pauses the holder between two renewals, not inside one (CI 2026-11-27 and 2026-12-03: paused
    inside a renewal, slow-leases' leader gave up 0.02-0.03 s after waking, and its give-up verdict passed)."""
    api = Apiserver()
    watcher = LeaderWatcher(scripted(tmp_path, SlowToAgreeEtcd(silent=0), api=api), History(), period=0.02).start()
    retry = 0.4
    try:
        assert not watcher.wait_for_renew_sleep("kube-scheduler", retry, timeout=0.3)  # no renewal to place
        threading.Timer(0.1, setattr, (api, "renewed", "2026-11-27T08:00:02.000000Z")).start()
        started = now()
        assert watcher.wait_for_renew_sleep("kube-scheduler", retry, timeout=2.0)
        # at least a quarter of the retry period after the write, which came after `started`
        assert now() - started >= 0.1 + retry / 4
    finally:
        watcher.stop()


def test_the_middle_of_the_sleep_is_furthest_from_both_renewals_or_none_when_the_renewal_is_placed_too_loosely():
    seen = RenewalSeen("t", after=10.0, before=10.2)
    assert mid_sleep(seen, 2.0) == pytest.approx(11.1)  # 0.9 s after the latest write, 0.9 s before the next
    assert mid_sleep(RenewalSeen("t", after=10.0, before=11.0), 2.0) == pytest.approx(11.5)  # spread = retry / 2
    assert mid_sleep(RenewalSeen("t", after=10.0, before=11.01), 2.0) is None
    assert mid_sleep(RenewalSeen("t", after=0.0, before=10.0), 2.0) is None  # the first LIST: no "after"
