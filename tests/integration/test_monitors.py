"""The monitors on a real ha3: they record what happens, survive faults, and their records judge correctly."""

import time

from harness.checkers import availability, durability, monotonicity
from harness.faults import Nemesis, Stop
from harness.history import History
from harness.monitors import ApiProber, EtcdWriter, KubeWriter, LeaderWatcher


def test_api_prober_records_every_request_at_about_the_requested_rate(ha3):
    history = History()
    with ApiProber(ha3, history, rate=20, direct=True):
        time.sleep(3)
    ops = history.ops_of("api.readyz", target="lb")
    # 20/s for 3 s: never more (the rate is a limit); fewer when the machine is busy, since each request waits for
    # its answer (39 in CI on 2026-11-26, beside the other lane's cluster build), but it keeps sending
    assert 20 <= len(ops) <= 64, len(ops)
    assert availability(history, threshold_pct=100).passed
    assert {o.target for o in history.ops_of("api.readyz")} == {"lb", "c1", "c2", "c3"}


def test_monitors_are_bounded_in_operations(ha3):
    history = History()
    prober = ApiProber(ha3, history, rate=50, max_ops=10)
    with prober:
        time.sleep(1.0)
    assert len(history.ops_of("api.readyz")) == 10


def test_etcd_writer_keeps_writing_through_a_leader_outage_and_loses_nothing(ha3):
    # Stop, not Kill: a killed leader is restarted by its supervisor within a second and may win the next
    # election again (its log is the most complete), so only a held-down leader guarantees a new holder
    history = History()
    writer = EtcdWriter(ha3, history, rate=30)
    watcher = LeaderWatcher(ha3, history).start()
    assert watcher.current.get("etcd"), "start() returns once the etcd leader is known, so a fault right after has a before"
    nemesis = Nemesis(ha3, history)
    with writer:
        leader = watcher.holder("etcd")
        time.sleep(1)
        with nemesis.fault(Stop(component=f"etcd@{leader}")):
            time.sleep(3)
        time.sleep(2)
    watcher.stop()
    puts = history.ops_of("etcd.put")
    fault_start = history.fault_windows()[0][0]
    assert any(o.ok for o in puts if o.invoke > fault_start + 2.5), "the writer must reconnect and go on"
    assert durability(history, system="etcd").passed, durability(history, system="etcd").explain()
    assert monotonicity(history, f="etcd.put").passed
    assert any(e.get("holder") not in (None, leader) for e in history.events_of("leader", subject="etcd"))


def test_kube_writer_reads_back_what_it_wrote_and_cleans_up(ha3):
    history = History()
    writer = KubeWriter(ha3, history, rate=5)
    with writer:
        time.sleep(3)
    verdict = durability(history, system="kube")
    assert verdict.passed and verdict.figures["acknowledged"] >= 10, verdict.explain()
    assert monotonicity(history, f="kube.create", field="resource_version").passed
    left = ha3.kubectl("get", "configmaps", "-l", f"quorum.io/writer={writer.tag}", "-o", "name")
    assert left.strip() == ""


def test_leader_watcher_sees_every_subject(ha3):
    history = History()
    with LeaderWatcher(ha3, history) as watcher:
        holders = {s: watcher.holder(s) for s in ("kube-controller-manager", "kube-scheduler", "etcd")}
    controllers = {h.name for h in ha3.topology.controllers}
    assert set(holders.values()) <= controllers
    assert {e.get("subject") for e in history.events_of("leader")} == set(holders)
