"""ContainerKill waits for the moment it names (its container running, beside another if `after` says so), kills
exactly what the runtime then runs on each host, and refuses a name that could reach a command line unchecked. The
runtime module reads containerd's own listing (`ctr`), so its parsing is tested on that output."""

import pytest

from harness.backends.fake.target import FakeTarget
from harness.components import runtime
from harness.errors import FaultError
from harness.faults import ContainerKill, Nemesis
from harness.history import History
from harness.target.capabilities import Capability
from tests.unit.conftest import fake_target

APISERVER_ID, CHECKPOINTER_ID = "a" * 64, "c" * 64


class Node(FakeTarget):
    """c1 runs the checkpointer at once and the apiserver from its `apiserver_after`-th listing on; c3 runs both at
    once; a killed container is gone from the next listing."""

    listings = 0
    apiserver_after = 3
    killed: list[tuple[str, str]] = []

    CAPABILITIES = FakeTarget.CAPABILITIES | {Capability.PODS}

    def pod_containers(self, host, namespace, container):
        running = {"checkpointer": CHECKPOINTER_ID, "kube-apiserver": APISERVER_ID}
        if host not in ("c1", "c3") or namespace != "kube-system" or container not in running:
            return []
        if container == "kube-apiserver" and host == "c1":
            type(self).listings += 1
            if type(self).listings < self.apiserver_after:
                return []
        found = running[container]
        return [] if (host, found) in self.killed else [found]

    def kill_pod_container(self, host, container_id):
        self.killed.append((host, container_id))


@pytest.fixture
def node(tmp_path):
    Node.listings, Node.killed = 0, []
    return fake_target(tmp_path, cls=Node)


def test_the_kill_waits_until_the_container_named_after_runs_too_and_kills_only_the_named_one(node):
    fault = Nemesis(node, History()).inject(
        ContainerKill(container="checkpointer", after="kube-apiserver", hosts=["c1"], wait_s=10))
    assert Node.listings >= Node.apiserver_after  # it waited for the apiserver
    assert Node.killed == [("c1", CHECKPOINTER_ID)] and fault.captured["killed"] == {"c1": [CHECKPOINTER_ID]}


def test_each_host_is_killed_as_soon_as_its_own_moment_comes_not_after_the_hosts_before_it(node):
    fault = Nemesis(node, History()).inject(
        ContainerKill(container="checkpointer", after="kube-apiserver", hosts=["c1", "c3"], wait_s=10))
    assert Node.killed == [("c3", CHECKPOINTER_ID), ("c1", CHECKPOINTER_ID)]
    assert fault.captured["killed"] == {"c3": [CHECKPOINTER_ID], "c1": [CHECKPOINTER_ID]}


def test_a_container_that_never_runs_is_a_fault_error_after_the_wait_and_nothing_is_killed(node):
    with pytest.raises(FaultError, match="was not running on c2 within 1s, so it was not killed there"):
        Nemesis(node, History()).inject(ContainerKill(container="checkpointer", hosts=["c2"], wait_s=1))
    assert Node.killed == []


@pytest.mark.parametrize("fault, named", [
    (ContainerKill(container="checkpointer; reboot"), "container 'checkpointer; reboot' is not a Kubernetes name"),
    (ContainerKill(container="checkpointer", namespace="Kube_System"), "namespace 'Kube_System'"),
    (ContainerKill(container="checkpointer", after=""), "after ''"),
    (ContainerKill(container="checkpointer", wait_s=0), "wait_s 0 is out of range"),
], ids=["container", "namespace", "after", "wait"])
def test_a_bad_parameter_is_refused_before_anything_acts(node, fault, named):
    with pytest.raises(FaultError) as refused:
        Nemesis(node).inject(fault)
    assert named in refused.value.problem
    assert Node.killed == [] and not (node.run_dir / "faults.jsonl").exists()


def test_a_target_without_pods_makes_the_fault_unavailable(tmp_path):
    assert "pods" in ContainerKill(container="checkpointer").unavailable(fake_target(tmp_path))


class Ctr:
    """A node's `ctr` answering as containerd 1.6 does: the filtered container ids, then every task's state."""

    def __init__(self) -> None:
        self.argvs: list[list[str]] = []

    def exec(self, host, argv, *, check=True, timeout=60.0):
        self.argvs.append(argv)
        if argv[:2] == ["sh", "-c"]:
            return (f"{APISERVER_ID}\n{CHECKPOINTER_ID}\n{runtime.SEPARATOR}\n"
                    f"TASK    PID     STATUS\n{APISERVER_ID}    812    STOPPED\n{CHECKPOINTER_ID}    901    RUNNING\n"
                    f"{'e' * 64}    77    RUNNING\n")
        return ""


def test_running_lists_the_named_containers_whose_task_runs():
    ctr = Ctr()
    assert runtime.running(ctr, "c1", "kube-system", "checkpointer") == [CHECKPOINTER_ID]
    assert ("containers list --quiet 'labels.\"io.kubernetes.container.name\"==checkpointer,"
            "labels.\"io.kubernetes.pod.namespace\"==kube-system' && echo --quorum-tasks-- && ") in ctr.argvs[0][2]


def test_running_and_kill_refuse_what_is_not_a_name_or_an_id():
    with pytest.raises(ValueError, match="not a Kubernetes name"):
        runtime.running(Ctr(), "c1", "kube-system", 'x",labels.y==z')
    with pytest.raises(ValueError, match="not a container id"):
        runtime.kill(Ctr(), "c1", "--all")
