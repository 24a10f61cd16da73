"""Every fault is written once against the target protocol: on the fake target each is injected, journaled, and
healed from its journal record by a fresh target (what `quorum heal` does after a killed run), leaving the cluster
as it was; a fault the target cannot do is refused with the missing capability before anything is journaled."""

import time

import pytest

from harness.backends.fake.target import FakeTarget
from harness.errors import FaultError
from harness.faults import base, network
from harness.faults.base import REGISTRY, Nemesis
from harness.faults.journal import Journal
from harness.faults.sweep import heal_leftovers
from harness.faults.component import Kill, ModifyFlags, Pause, Stop
from harness.faults.etcd import LoseQuorumForGood, RemoveMember
from harness.faults.etcd_upgrade import EtcdUpgrade
from harness.faults.lease import IsolateLeaseHolder
from harness.faults.network import Bandwidth, IsolateEtcdLeader, Latency, PacketLoss, Partition
from harness.faults.node import NodeDisconnect, NodeKill, NodePause, NodeRestart
from harness.faults.upgrade import Upgrade
from harness.history import History
from harness.scenario import exits_within, least_backed_off_host, wait_all_healthy
from harness.target.capabilities import Capability
from harness.target.protocol import Target
from harness.thresholds import crash_loop_return_s, restart_budget_s
from harness.topology import Component, load_topology
from tests.unit.conftest import ROOT, fake_target

# one of each fault Quorum ships, with parameters for ha3 (lb, c1, c2, c3)
SAMPLES = [Kill(component="kube-scheduler@c2"), Pause(component="kube-controller-manager@c1"),
           Stop(component="etcd@c3", signal="SIGKILL"), ModifyFlags(component="kube-apiserver@c1", add={"--x": "1"}),
           Partition(side_a=["c1"], side_b=["c2", "c3"]), IsolateEtcdLeader(), PacketLoss(host="c2"),
           Bandwidth(host="c3", rate_mbit=10), Latency(host="c1"), RemoveMember(host="c2"), LoseQuorumForGood(),
           NodeKill(host="c3"), NodePause(host="c2"), NodeRestart(), NodeDisconnect(host="c1"),
           IsolateLeaseHolder(lease="kube-scheduler"), Upgrade(component="kube-apiserver@c2", to="v1.35.4"),
           EtcdUpgrade(component="etcd@c2", to="v3.6.16")]


# faults that act through what the fake's model does not serve, the Kubernetes API (target.api) or a node's container
# runtime (Capability.PODS): their own unit tests (tests/unit/test_rollout_fault.py, test_container_kill.py) and a real
# self-hosted kind cluster (test_kind_self_hosted.py) prove them; stop-node-heartbeats relabels a hollow node
# (tests/unit/test_heartbeats_fault.py, and the load suite's dead node on ha3-1000)
THROUGH_THE_API = {"rollout", "container-kill", "stop-node-heartbeats"}
# faults that act on a host's files (a certificate and its key), whose contents the fake does not model: their heal
# from the journal after SIGKILL is proven on ha3 (test_faults.py::test_a_rotation_killed_mid_way_is_put_back_...),
# the certificates they issue here (tests/unit/test_cert_rotation.py)
ON_HOST_FILES = {"rotate-certificate"}
# faults that change the cluster's shape (Capability.SCALE), which the fake does not model: the scale suite, its twin
# and a join's heal from the journal after SIGKILL are proven on ha3-scale (tests/integration/test_scale.py)
RESHAPING = {"join-controllers", "retire-controllers"}


def test_the_samples_cover_every_fault_quorum_ships():
    shipped = {name for name, cls in REGISTRY.items() if cls.__module__.startswith("harness.faults.")}
    assert {fault.name for fault in SAMPLES} == shipped - THROUGH_THE_API - ON_HOST_FILES - RESHAPING


@pytest.mark.parametrize("fault", SAMPLES, ids=lambda f: f.name)
def test_a_fault_is_healed_from_its_journal_by_a_fresh_target(fake, monkeypatch, fault):
    monkeypatch.setattr(network, "netem_missing", lambda: None)  # this kernel has no netem; the fake needs none
    before = fake.model()
    Nemesis(fake, History()).inject(fault)
    assert fake.health.problems() or fault.name in ("kill", "node-restart"), f"{fault.describe()} changed nothing"
    # the harness dies here: a new process opens the run directory and heals what the journal says is active
    fresh = FakeTarget(fake.run_dir)
    report = heal_leftovers(fresh)
    assert report.healed == [fault.describe()] and report.failed == []
    assert fresh.health.problems() == []
    assert Journal(fake.run_dir).active() == []
    after = fresh.model()
    assert after["etcd_members"].keys() == before["etcd_members"].keys()
    assert {k: (c["held"], c["override"]) for k, c in after["components"].items()} == \
        {k: (c["held"], c["override"]) for k, c in before["components"].items()}


def test_a_paused_process_is_continued_by_its_pid_and_a_successor_is_left_alone(fake):
    nemesis = Nemesis(fake, History())
    fault = nemesis.inject(Pause(component="kube-scheduler@c1"))
    paused = fault.captured["pid"]
    assert fake.process_state("c1", paused) == "T"
    nemesis.heal(fault)
    assert ["signal", "kube-scheduler@c1", "SIGCONT", paused] in fake.calls()
    assert fake.process_state("c1", paused) == "R"
    fault = nemesis.inject(Pause(component="kube-scheduler@c1"))
    with fake.changing() as model:  # replaced meanwhile by the cluster (a liveness probe, a supervisor)
        model["components"]["kube-scheduler@c1"] |= {"pid": 9999, "state": "R"}
    nemesis.heal(fault)
    assert not [c for c in fake.calls() if c[:3] == ["signal", "kube-scheduler@c1", "SIGCONT"] and c[3] == 9999]
    assert fake.pid("kube-scheduler", "c1") == 9999


class NoPower(FakeTarget):
    POWER = None  # a target without the part lacks what it gives


def test_a_fault_the_target_cannot_do_is_refused_with_the_capability_and_nothing_is_journaled(tmp_path):
    target = fake_target(tmp_path, cls=NoPower)
    with pytest.raises(FaultError) as refused:
        Nemesis(target).inject(NodeKill(host="c1"))
    assert "it needs node-power (power a whole host off and on" in refused.value.problem
    assert "which the fake backend does not offer" in refused.value.problem
    assert not (target.run_dir / "faults.jsonl").exists()


@pytest.mark.parametrize("fault, named", [
    (Kill(component="kube-scheduler@c9"), "c9 runs no kube-scheduler; it runs on c1, c2, c3"),
    (Kill(component="kube-scheduler"), "names no host"),
    (Stop(component="haproxy@c1"), "c1 runs no haproxy; it runs on lb"),
    (NodeRestart(hosts=["c7"]), "no hosts ['c7']"),
    (PacketLoss(host="c2", probability=1.5), "probability 1.5 must be in (0, 1]"),
    (ModifyFlags(component="kube-apiserver@c1", add={"x y": "1"}), "'x y' is not a flag"),
    (Upgrade(component="kube-scheduler@c1", to="v1.35.4"), "rule controller-not-newer-than-apiserver"),
    (Upgrade(component="kube-apiserver@c1", to="v1.36.3"), "rule no-skipped-minor"),
    (Upgrade(component="kube-apiserver@c1", to="v1.35.4", replace={"--no-such-flag": "1"}), "takes no --no-such-flag"),
    (Upgrade(component="etcd@c1", to="v1.35.4"), "etcd is not a component an upgrade changes"),
], ids=["host", "no-host", "component", "restart", "probability", "flag", "skew", "skipped-minor", "new-flag", "etcd"])
def test_a_fault_naming_what_the_target_lacks_is_refused_with_the_choices(fake, fault, named):
    with pytest.raises(FaultError) as refused:
        Nemesis(fake).inject(fault)
    assert named in refused.value.problem
    assert not (fake.run_dir / "faults.jsonl").exists()
    assert fake.health.problems() == []


def test_a_restart_of_an_empty_list_of_hosts_is_refused_not_read_as_every_host(fake):
    with pytest.raises(FaultError, match="empty list of hosts"):
        Nemesis(fake).inject(NodeRestart(hosts=[]))


def test_the_etcd_leaders_host_is_cut_from_the_other_members_and_the_journal_names_it(fake):
    with fake.changing() as model:
        model["etcd_leader"] = "c2"
    fault = Nemesis(fake).inject(IsolateEtcdLeader())
    assert fault.captured == {"leader": "c2", "others": ["c1", "c3"]}
    rules = fake.model()["hosts"]
    assert {(r["chain"], r["peer"]) for r in rules["c2"]["rules"]} == {
        ("OUTPUT", "10.213.3.11"), ("INPUT", "10.213.3.11"), ("OUTPUT", "10.213.3.13"), ("INPUT", "10.213.3.13")}
    assert not rules["lb"]["rules"], "the load balancer is not an etcd member: nothing to cut there"
    assert '"leader": "c2"' in (fake.run_dir / "faults.jsonl").read_text()


def test_a_partitions_rules_go_on_its_smaller_side_and_a_one_way_cut_drops_only_one_direction(fake):
    Nemesis(fake).inject(Partition(side_a=["c1", "c2"], side_b=["c3"], symmetric=False))
    hosts = fake.model()["hosts"]
    assert not hosts["c1"]["rules"] and not hosts["c2"]["rules"]
    assert {(r["chain"], r["peer"]) for r in hosts["c3"]["rules"]} == {("INPUT", "10.213.3.11"), ("INPUT", "10.213.3.12")}


def test_without_an_agreed_etcd_leader_there_is_nobody_to_isolate(fake):
    with fake.changing() as model:
        model["etcd_leader"] = None
    with pytest.raises(FaultError, match="no etcd leader agreed on"):
        Nemesis(fake).inject(IsolateEtcdLeader())
    assert not (fake.run_dir / "faults.jsonl").exists()


def test_without_a_supervisor_the_exit_of_the_watched_pid_is_recorded_and_a_process_that_lives_on_is_not(fake):
    pid = fake.pid("kube-scheduler", "c1")
    history, since = History(), time.monotonic()
    fake.signal("kube-scheduler", "c1", "SIGKILL")  # the cluster starts a new process
    exits = exits_within(fake, history, "kube-scheduler@c1", pid, since, 0.5)
    assert len(exits) == 1 and 0 <= exits[0] < 0.5, exits
    assert history.events_of("component.exit", component="kube-scheduler@c1")[0].get("pid") == pid
    assert exits_within(fake, History(), "kube-scheduler@c1", fake.pid("kube-scheduler", "c1"), time.monotonic(), 0.3) == []


def _opened(tmp_path, backend: str, topology: str) -> Target:
    """A target of `backend` over a run directory holding only its state and topology (nothing runs)."""
    from harness.backends import registry
    from harness.run.state import RunState

    run_dir = tmp_path / backend
    run_dir.mkdir()
    (run_dir / "topology.yaml").write_text((ROOT / topology).read_text())
    RunState(run_id="abc123", name="t", backend=backend, run_dir=str(run_dir)).save()
    return registry.open_target(run_dir)


def test_a_held_member_returns_within_what_each_clusters_self_healing_promises(tmp_path, monkeypatch):
    # kind holds etcd by a crash loop: the kubelet's next start waits the back-off the restarts before the hold (2,
    # the first line of the node's count) and the loop's kills (2 lines) brought it to: 10 s doubled twice
    kind = _opened(tmp_path, "kind", "clusters/kind.yaml")
    monkeypatch.setattr(kind, "exec", lambda host, argv, **_: "2\n\n\n" if argv[-1].endswith("crashes-etcd") else "")
    assert kind.held_return_s("etcd", "control-plane") == 1.0 + 40.0 + 15.0 == crash_loop_return_s(Component.ETCD, 2, 2)
    assert crash_loop_return_s(Component.ETCD, None, 1) == 1.0 + 300.0 + 15.0  # restarts unknown: the cap
    # every other static pod by taking its manifest away: pickup (file check 20 s + relist 1 s) + back-off 10 s + start
    assert kind.held_return_s("kube-scheduler", "control-plane") == 21.0 + 10.0 + 20.0
    ha3 = load_topology(ROOT / "clusters" / "ha3.yaml")
    process = _opened(tmp_path, "process", "clusters/ha3.yaml")
    assert process.held_return_s("etcd", "c1") == restart_budget_s(ha3, Component.ETCD) == 1.0 + 15.0
    # the supervisor's back-off doubles for a component killed again soon (1, 2, 4 s, capped at max_backoff_s 10 s)
    assert [process.restart_budget_s("kube-scheduler", kill=k) for k in (1, 2, 3, 9)] == [21.0, 22.0, 24.0, 30.0]


def test_wait_for_says_what_it_waited_for():
    with pytest.raises(FaultError, match="timed out after 0s waiting for the moon"):
        base.wait_for(lambda: False, 0.05, what="the moon")


def test_the_lease_holders_host_is_cut_from_every_other_host_and_the_journal_names_it(fake):
    with fake.changing() as model:
        model["leases"]["kube-scheduler"] = "c3_fake"
    fault = Nemesis(fake).inject(IsolateLeaseHolder(lease="kube-scheduler"))
    assert fault.captured == {"holder": "c3", "others": ["lb", "c1", "c2", "n1"]}
    hosts = fake.model()["hosts"]
    assert {(r["chain"], r["peer"]) for r in hosts["c3"]["rules"]} == {
        (chain, fake.address(host)) for chain in ("INPUT", "OUTPUT") for host in ("lb", "c1", "c2", "n1")}
    assert not any(hosts[host]["rules"] for host in ("lb", "c1", "c2", "n1")), "one side's rules cut both directions"
    assert '"holder": "c3"' in (fake.run_dir / "faults.jsonl").read_text()
    with pytest.raises(FaultError, match="no leader lease 'kube-proxy'"):
        Nemesis(fake).inject(IsolateLeaseHolder(lease="kube-proxy"))


def test_components_watched_together_each_get_their_own_bound():
    # a member back at 0.3 s with a 1.5 s bound is back, though another one takes 2 s of its 4 s
    start = time.monotonic()

    class Healing:
        back_at = {"a": 2.0, "b": 0.3, "c": None}

        def component_healthy(self, component, host):
            at = self.back_at[host]
            return at is not None and time.monotonic() - start >= at

    class Cluster:
        health_poll_s = 0.05
        health = Healing()

    found = wait_all_healthy(Cluster(), {"etcd@a": 4.0, "etcd@b": 1.5, "etcd@c": 0.5}, since=start)
    assert found["etcd@c"] is None
    assert 2.0 <= found["etcd@a"] < 4.0 and 0.3 <= found["etcd@b"] < 1.5, found


def test_a_component_is_killed_where_its_back_off_resets_soonest_then_where_it_restarted_least(fake, monkeypatch):
    # an earlier scenario's kills raise that host's crash back-off: self-healing is measured elsewhere
    hosts = fake.component_hosts(Component.SCHEDULER)
    assert least_backed_off_host(fake, Component.SCHEDULER) == hosts[0]  # a tie: the first, as before
    fake.signal(Component.SCHEDULER, hosts[0], "SIGKILL")
    assert fake.restarts(Component.SCHEDULER, hosts[0]) == 1
    assert least_backed_off_host(fake, Component.SCHEDULER) == hosts[1]
    # a host restarted more often, but long enough ago that its back-off reset, beats one restarted just now
    resets = {hosts[0]: 0.0, hosts[1]: 300.0, hosts[2]: 20.0}
    monkeypatch.setattr(fake, "back_off_reset_in_s", lambda component, host: resets[host])
    assert least_backed_off_host(fake, Component.SCHEDULER) == hosts[0]
    resets[hosts[0]] = 400.0
    assert least_backed_off_host(fake, Component.SCHEDULER) == hosts[2]


