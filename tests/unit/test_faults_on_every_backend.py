"""The faults that name what to break the same way on every backend (harness/faults/anywhere.py) pick the kind
implementation on kind, and those implementations act inside the right node and undo exactly what they did;
the pieces of the scenarios that use them on kind (the exit watcher, the held member's return bound)."""

import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.errors import FaultError
from harness.faults import (IsolateEtcdLeader, KindEtcdLeaderPartition, Pause, StaticPodPause, isolate_etcd_leader,
                            pause_component)
from harness.faults.base import Nemesis
from harness.history import History
from harness.scenario import exits_within
from harness.thresholds import held_member_return_s, kind_held_member_return_s, restart_budget_s
from harness.topology import Component, load_topology

ROOT = Path(__file__).resolve().parents[2]


class Node:
    """The processes of kind nodes as `pgrep -o -x` and `kill` see them, and the commands run in them."""

    def __init__(self, pids: dict[tuple[str, str], int]) -> None:
        self.pids = dict(pids)  # (node, 15-character process name) -> pid
        self.commands: list[tuple[str, list[str]]] = []

    def exec(self, node: str, argv: list[str], *, check: bool = True) -> str:
        self.commands.append((node, argv))
        if argv[:3] == ["pgrep", "-o", "-x"]:
            pid = self.pids.get((node, argv[3]))
            return f"{pid}\n" if pid else ""
        if argv[0] == "iptables-save":
            return ""
        return ""


def kind_cluster(tmp_path: Path, node: Node, leader: str | None = "control-plane2"):
    addresses = {"control-plane": "10.213.51.2", "control-plane2": "10.213.51.3", "control-plane3": "10.213.51.4"}
    cluster = SimpleNamespace(state=SimpleNamespace(backend="kind"), run_dir=tmp_path, name="k",
                              topology=SimpleNamespace(disposable=True), nodes=lambda role=None: list(addresses),
                              address=addresses.get, exec=node.exec, etcd=SimpleNamespace(leader=lambda: leader))
    cluster.static_pod_pid = lambda n, component: int(p) if (p := node.exec(
        n, ["pgrep", "-o", "-x", component[:15]]).strip()) else None
    return cluster


def test_on_kind_the_pause_and_the_leader_isolation_are_the_kind_faults_elsewhere_the_process_ones(tmp_path):
    kind = kind_cluster(tmp_path, Node({}))
    process = SimpleNamespace(state=SimpleNamespace(backend="process"))
    assert isinstance(pause_component(kind, "kube-scheduler", "control-plane"), StaticPodPause)
    paused = pause_component(process, "kube-scheduler", "c1")
    assert isinstance(paused, Pause) and paused.component == "kube-scheduler@c1"
    assert isinstance(isolate_etcd_leader(kind), KindEtcdLeaderPartition)
    assert isinstance(isolate_etcd_leader(process), IsolateEtcdLeader)


def test_a_paused_static_pod_is_stopped_by_its_pid_in_its_node_and_heal_continues_exactly_that_pid(tmp_path):
    node = Node({("control-plane", "kube-controller"): 4242})
    cluster = kind_cluster(tmp_path, node)
    nemesis = Nemesis(cluster, History())
    fault = nemesis.inject(StaticPodPause(node="control-plane", component="kube-controller-manager"))
    assert fault.captured["pid"] == 4242
    assert ("control-plane", ["kill", "-STOP", "4242"]) in node.commands
    node.pids[("control-plane", "kube-controller")] = 5000  # restarted meanwhile: heal must not touch the new one
    nemesis.heal(fault)
    assert node.commands[-1] == ("control-plane", ["kill", "-CONT", "4242"])


def test_a_static_pod_that_is_not_running_cannot_be_paused_and_nothing_is_journaled(tmp_path):
    cluster = kind_cluster(tmp_path, Node({}))
    with pytest.raises(FaultError, match="kube-scheduler is not running in kind node control-plane"):
        Nemesis(cluster).inject(StaticPodPause(node="control-plane", component="kube-scheduler"))
    assert not (tmp_path / "faults.jsonl").exists()


def test_the_etcd_leaders_node_is_cut_from_every_other_node_and_the_journal_names_it(tmp_path):
    node = Node({})
    cluster = kind_cluster(tmp_path, node, leader="control-plane2")
    fault = Nemesis(cluster).inject(KindEtcdLeaderPartition())
    assert fault.node == "control-plane2" and fault.captured["leader"] == "control-plane2"
    dropped = {(n, argv[3], argv[5]) for n, argv in node.commands if argv[:3] == ["iptables", "-w", "-I"]}
    assert dropped == {("control-plane2", "INPUT", "10.213.51.2"), ("control-plane2", "OUTPUT", "10.213.51.2"),
                       ("control-plane2", "INPUT", "10.213.51.4"), ("control-plane2", "OUTPUT", "10.213.51.4")}
    assert '"node": "control-plane2"' in (tmp_path / "faults.jsonl").read_text()


def test_without_an_agreed_etcd_leader_there_is_nobody_to_isolate(tmp_path):
    with pytest.raises(FaultError, match="no etcd leader agreed on"):
        Nemesis(kind_cluster(tmp_path, Node({}), leader=None)).inject(KindEtcdLeaderPartition())
    assert not (tmp_path / "faults.jsonl").exists()


def test_on_kind_the_exit_of_the_watched_pid_is_recorded_and_a_process_that_lives_on_is_not(tmp_path):
    cluster = kind_cluster(tmp_path, Node({}))
    answers = iter([77, 77, 78])  # the third poll finds the kubelet's new process

    cluster.static_pod_pid = lambda node, component: next(answers, 78)
    history, since = History(), time.monotonic()
    exits = exits_within(cluster, history, "kube-scheduler@control-plane", 77, since, 2.0)
    assert len(exits) == 1 and 0.3 < exits[0] < 2.0, exits
    assert history.events_of("component.exit", component="kube-scheduler@control-plane")[0].get("pid") == 77
    cluster.static_pod_pid = lambda node, component: 78
    assert exits_within(cluster, History(), "kube-scheduler@control-plane", 78, time.monotonic(), 0.5) == []


def test_a_held_member_returns_within_the_kubelets_path_on_kind_and_the_supervisors_elsewhere():
    # pickup (file check 20 s + relist 1 s) + the mirror pod's create timing out (34 s) + back-off 10 s + start-up 15 s
    assert kind_held_member_return_s() == 21.0 + 34.0 + 10.0 + 15.0
    assert held_member_return_s(SimpleNamespace(state=SimpleNamespace(backend="kind"))) == kind_held_member_return_s()
    ha3 = load_topology(ROOT / "clusters" / "ha3.yaml")
    process = SimpleNamespace(state=SimpleNamespace(backend="process"), topology=ha3)
    assert held_member_return_s(process) == restart_budget_s(ha3, Component.ETCD) == 1.0 + 15.0
