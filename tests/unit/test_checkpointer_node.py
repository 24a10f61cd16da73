"""What the checkpointer reads on a node (harness/checkpointer/node.py), its DaemonSet on kind
(harness/backends/kind/checkpointer.py) and which kind topologies have one."""

import pytest

from harness.backends.kind.checkpointer import daemonset, defect_args
from harness.backends.kind.topology import KindTopology
from harness.backends.registry import get
from harness.checkpointer import manifest
from harness.checkpointer.__main__ import _own_name
from harness.checkpointer.node import NodeError, local_pods, read_kubeconfig
from harness.errors import TopologyError
from harness.target.capabilities import Capability
from harness.topology import validated

KUBELET_CONF = """apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTi...
    server: https://quorum-a1-control-plane:6443
  name: default-cluster
users:
- name: default-auth
  user:
    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem
    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem
"""


def test_the_kubelets_kubeconfig_gives_the_server_and_its_rotating_client_certificate(tmp_path):
    (tmp_path / "kubelet.conf").write_text(KUBELET_CONF)
    config = read_kubeconfig(tmp_path / "kubelet.conf", tmp_path / "ca.crt")
    assert config.server == "https://quorum-a1-control-plane:6443"
    assert str(config.client_certificate) == str(config.client_key) == "/var/lib/kubelet/pki/kubelet-client-current.pem"


def test_a_kubeconfig_without_a_client_certificate_file_is_refused_by_name(tmp_path):
    (tmp_path / "token.conf").write_text(KUBELET_CONF.replace("client-certificate:", "token:"))
    with pytest.raises(NodeError, match="client certificate"):
        read_kubeconfig(tmp_path / "token.conf", tmp_path / "ca.crt")
    with pytest.raises(NodeError, match="cannot read"):
        read_kubeconfig(tmp_path / "missing.conf", tmp_path / "ca.crt")


def sandbox(name: str, state: str, created: int, annotations: dict | None = None) -> dict:
    return {"metadata": {"name": name, "namespace": "kube-system"}, "state": state, "createdAt": str(created),
            "annotations": annotations or {}}


def test_a_pod_runs_when_its_newest_sandbox_is_ready_and_the_node_knows_its_annotations():
    parent = {manifest.CHECKPOINT: "true"}
    pods, running = local_pods([
        sandbox("kube-apiserver-6r288", "SANDBOX_READY", 1, parent),  # before the reboot
        sandbox("kube-apiserver-6r288", "SANDBOX_NOTREADY", 2, parent),  # after it: not started again yet
        sandbox("kube-apiserver-6r288-node", "SANDBOX_READY", 3, {manifest.CHECKPOINT_OF: "kube-apiserver-6r288"}),
    ])
    assert running == {"kube-system/kube-apiserver-6r288-node"}
    assert {manifest.full_name(p) for p in pods if manifest.is_parent(p)} == {"kube-system/kube-apiserver-6r288"}


def test_the_daemonsets_pod_checkpoints_to_a_static_pod_that_needs_no_api_object():
    pod = daemonset("quorum.local/checkpointer:abc")["spec"]["template"]
    pod = {**pod, "metadata": {**pod["metadata"], "name": "quorum-checkpointer-x7k2p", "namespace": "kube-system"}}
    checkpoint, secrets, config_maps = manifest.sanitized(pod)
    assert (secrets, config_maps) == ([], [])
    assert checkpoint["metadata"]["annotations"] == {manifest.CHECKPOINT_OF: "quorum-checkpointer-x7k2p"}
    assert all("hostPath" in volume for volume in checkpoint["spec"]["volumes"])
    assert checkpoint["spec"]["containers"][0]["imagePullPolicy"] == "Never"
    # while the API is away the kubelet does not know its node's labels: a selector would refuse the checkpoint
    assert "nodeSelector" not in checkpoint["spec"] and "nodeSelector" in pod["spec"]


def test_the_checkpointer_knows_itself_as_its_parent_also_when_it_runs_as_its_checkpoint(monkeypatch):
    monkeypatch.setenv("NODE_NAME", "quorum-a1-control-plane")
    monkeypatch.setenv("POD_NAMESPACE", "kube-system")
    monkeypatch.setenv("POD_NAME", "quorum-checkpointer-x7k2p")
    monkeypatch.setenv("CHECKPOINT_OF", "")
    assert _own_name() == ("quorum-a1-control-plane", "kube-system/quorum-checkpointer-x7k2p")
    monkeypatch.setenv("POD_NAME", "quorum-checkpointer-x7k2p-quorum-a1-control-plane")
    monkeypatch.setenv("CHECKPOINT_OF", "quorum-checkpointer-x7k2p")
    assert _own_name()[1] == "kube-system/quorum-checkpointer-x7k2p"
    monkeypatch.setenv("NODE_NAME", "")
    with pytest.raises(NodeError, match="downward API"):
        _own_name()


def kind(**fields) -> KindTopology:
    return validated(KindTopology, {"name": "t", "backend": "kind", "disposable": True,
                                    "network": {"subnet": "10.213.99.0/24"}, **fields}, "t.yaml", "clusters/kind.yaml")


def test_a_self_hosted_kind_cluster_has_a_checkpointer_unless_its_twin_leaves_it_out():
    assert kind(kind={"self_hosted": True}).checkpointer
    assert not kind(kind={"self_hosted": True}, defects={"no_checkpointer": True}).checkpointer
    assert not kind().checkpointer
    with pytest.raises(TopologyError, match="kind.self_hosted is false"):
        kind(defects={"no_checkpointer": True})
    with pytest.raises(TopologyError, match="has none"):
        kind(kind={"self_hosted": True}, defects={"no_checkpointer": True, "checkpointer_never_collects": True})
    with pytest.raises(TopologyError, match="checkpointer_presence_lock .* has none"):
        kind(defects={"checkpointer_presence_lock": True})
    twin = kind(kind={"self_hosted": True}, defects={"checkpointer_presence_lock": True})
    assert defect_args(twin.defects) == ["--presence-lock"] and defect_args(kind().defects) == []
    assert daemonset("img", ["--never-collect"])["spec"]["template"]["spec"]["containers"][0]["args"] == ["--never-collect"]


def test_the_checkpointer_suite_skips_on_a_static_pod_cluster_and_the_static_pod_suite_on_a_self_hosted_one():
    backend = get("kind")
    assert "kind.self_hosted: true" in backend.lacks(Capability.SELF_HOSTED, topology=kind())
    assert backend.lacks(Capability.SELF_HOSTED, topology=kind(kind={"self_hosted": True})) is None
    assert "self-hosted" in backend.lacks(Capability.STATIC_PODS, topology=kind(kind={"self_hosted": True}))
    assert backend.lacks(Capability.STATIC_PODS, topology=kind()) is None


class FakeApi:
    def __init__(self, pods: list[dict] | None) -> None:
        self.pods = pods

    def get(self, path: str, timeout: float = 2.0):
        import requests

        if self.pods is None:
            raise requests.ConnectionError("refused")
        response = requests.Response()
        response.status_code, response._content = 200, __import__("json").dumps({"items": self.pods}).encode()
        return response


def pod(name: str, node: str, ready: bool, labels: dict | None = None, annotations: dict | None = None) -> dict:
    return {"metadata": {"name": name, "labels": labels or {}, "annotations": annotations or {}},
            "spec": {"nodeName": node}, "status": {"conditions": [{"type": "Ready", "status": str(ready)}]}}


def test_the_api_view_hands_back_only_when_every_parent_is_ready_and_no_checkpoint_of_one_runs():
    from harness.clients import checkpoints

    parent = pod("kube-apiserver-6r288", "n1", True, labels={"k8s-app": "kube-apiserver"})
    checkpoint = pod("kube-apiserver-6r288-n1", "n1", True,
                     annotations={manifest.CHECKPOINT_OF: "kube-apiserver-6r288"})
    own = pod("quorum-checkpointer-x-n1", "n1", True, annotations={manifest.CHECKPOINT_OF: "quorum-checkpointer-x"})
    assert checkpoints.view(FakeApi([parent, checkpoint, own])).checkpoints == {"n1"}
    assert not checkpoints.view(FakeApi([parent, checkpoint])).taken_over(1)
    assert checkpoints.view(FakeApi([parent, own])).taken_over(1)  # the checkpointer's own checkpoint always runs
    assert not checkpoints.view(FakeApi([parent, own])).taken_over(2)  # a node without its parent
    assert not checkpoints.view(FakeApi([{**parent, "status": {}}, own])).taken_over(1)
    assert checkpoints.view(FakeApi(None)) is None


def test_after_a_power_loss_only_parents_with_new_containers_count_as_handed_back():
    """The API's first answers after a power loss still show the statuses from before it (Ready, no checkpoint's
    mirror pod yet): read against the view from before, that is not a hand-back (ci of 2026-11-28: a twin passed)."""
    from harness.clients import checkpoints

    def parent(*ids: str) -> dict:
        pod_ = pod("kube-apiserver-6r288", "n1", True, labels={"k8s-app": "kube-apiserver"})
        pod_["status"]["containerStatuses"] = [{"name": "kube-apiserver", "containerID": f"containerd://{i}"}
                                               for i in ids]
        return pod_

    before = checkpoints.view(FakeApi([parent("aaa")]))
    assert before.taken_over(1) and not checkpoints.view(FakeApi([parent("aaa")])).taken_over(1, before)
    assert checkpoints.view(FakeApi([parent("bbb")])).taken_over(1, before)
    assert not checkpoints.view(FakeApi([parent()])).taken_over(1, before)  # no container reported yet
    assert not checkpoints.view(FakeApi([parent("bbb", "aaa")])).taken_over(1, before)  # one of them is old


def test_a_stale_checkpoint_is_one_of_the_component_whose_command_is_not_the_current_one():
    from harness.clients import checkpoints

    def running(name: str, of: str, command: list[str]) -> dict:
        mirror = pod(name, "n1", True, annotations={manifest.CHECKPOINT_OF: of})
        return {**mirror, "spec": {"nodeName": "n1", "containers": [{"command": command}]}}

    new, old = ["kube-apiserver", "--event-ttl=59m"], ["kube-apiserver"]
    pods = [running("kube-apiserver-new-n1", "kube-apiserver-new", new),
            running("quorum-checkpointer-x-n1", "quorum-checkpointer-x", ["python3"])]
    assert checkpoints.stale(pods, "kube-apiserver", new) == {}
    pods.append(running("kube-apiserver-old-n1", "kube-apiserver-old", old))
    assert checkpoints.stale(pods, "kube-apiserver", new) == {"n1": "kube-apiserver-old"}


class TwoCheckpointers:
    """Two real checkpointer processes on one node's lock file (the API away, a crictl that lists no pods), as the
    DaemonSet's pod and its checkpoint run."""

    def __init__(self, tmp_path, *extra: str) -> None:
        import os
        import sys

        (tmp_path / "kubelet.conf").write_text(KUBELET_CONF.replace("https://quorum-a1-control-plane:6443",
                                                                    "https://127.0.0.1:9"))
        crictl = tmp_path / "crictl"
        crictl.write_text("#!/bin/sh\necho '{\"items\": []}'\n")
        crictl.chmod(0o755)
        self.tmp_path = tmp_path
        self.env = {**os.environ, "NODE_NAME": "n1", "POD_NAMESPACE": "kube-system", "POD_NAME": "quorum-checkpointer-x"}
        self.argv = [sys.executable, "-m", "harness.checkpointer", "--kubeconfig", str(tmp_path / "kubelet.conf"),
                     "--crictl", str(crictl), "--lock-file", str(tmp_path / "lock"), "--interval", "0.2",
                     "--root", str(tmp_path / "node"), *extra]
        self.processes = []

    def start(self, log: str):
        import subprocess

        process = subprocess.Popen(self.argv, env=self.env, stdout=open(self.tmp_path / log, "w"),
                                   stderr=subprocess.STDOUT)
        self.processes.append(process)
        return process

    def says(self, log: str, text: str, within_s: float) -> bool:
        import time

        deadline = time.monotonic() + within_s
        while text not in (self.tmp_path / log).read_text():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def holds(self, log: str, within_s: float) -> bool:
        return self.says(log, "holding the lock", within_s)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.mark.parametrize("ends", ["terminated", "killed"])
def test_of_two_checkpointers_on_a_node_one_acts_until_it_ends_then_the_other(tmp_path, ends):
    """One acts at a time; when the one acting ends, cleanly or by SIGKILL (scenario 2 of issue #23 kills it while
    the API is down), the other takes over: the kernel releases a flock with its holder."""
    node = TwoCheckpointers(tmp_path)
    try:
        first = node.start("first.log")
        assert node.holds("first.log", within_s=20), (tmp_path / "first.log").read_text()
        node.start("second.log")
        # its start-up can take seconds under load: it must first say it waits, then not take the lock
        assert node.says("second.log", "waiting for", within_s=20), (tmp_path / "second.log").read_text()
        assert not node.holds("second.log", within_s=2), (tmp_path / "second.log").read_text()
        first.terminate() if ends == "terminated" else first.kill()
        first.wait(10)
        assert node.holds("second.log", within_s=10), (tmp_path / "second.log").read_text()
    finally:
        node.stop()


def test_the_twins_presence_lock_outlives_a_killed_holder_and_only_a_clean_exit_releases_it(tmp_path):
    """clusters/defects/kind-checkpointer-stale-lock.yaml: the lock is the file's existence."""
    node = TwoCheckpointers(tmp_path, "--presence-lock")
    try:
        first = node.start("first.log")
        assert node.holds("first.log", within_s=20), (tmp_path / "first.log").read_text()
        first.kill()
        first.wait(10)
        second = node.start("second.log")
        assert not node.holds("second.log", within_s=3), "a killed holder's presence lock was taken over"
        (tmp_path / "lock.held").unlink()  # what the killed one never did
        assert node.holds("second.log", within_s=10)
        second.terminate()
        assert second.wait(10) == 0 and not (tmp_path / "lock.held").exists()
    finally:
        node.stop()


def test_a_runtime_that_prints_no_pod_list_is_a_node_error_not_a_crash(tmp_path):
    from harness.checkpointer.node import Runtime

    crictl = tmp_path / "crictl"
    crictl.write_text("#!/bin/sh\necho 'level=fatal msg=\"connect: connection refused\"'\n")
    crictl.chmod(0o755)
    with pytest.raises(NodeError, match="printed no pod list"):
        Runtime(str(crictl), "unix:///run/containerd/containerd.sock").sandboxes()
    crictl.write_text("#!/bin/sh\nexit 1\n")
    with pytest.raises(NodeError, match="exited 1"):
        Runtime(str(crictl), "unix:///run/containerd/containerd.sock").sandboxes()


def test_a_self_hosted_pods_restarts_while_the_api_is_away_are_unknown_not_a_traceback():
    """`quorum status` during a power loss of a self-hosted control plane: the API's TLS handshake fails (seen: an
    SSLEOFError through the LB), so the restarts are unknown ('?'), not a crash of the command."""
    import types

    import requests

    from harness.backends.kind import self_hosted

    class Away:
        def request(self, *args, **kwargs):
            raise requests.exceptions.SSLError("EOF occurred in violation of protocol")

    cluster = types.SimpleNamespace(api=Away(), container=lambda node: f"quorum-x-{node}")
    assert self_hosted.pods(cluster, "kube-apiserver") == []
    assert self_hosted.pod_restarts(cluster, "kube-apiserver", "control-plane") is None


def test_a_self_hosted_pods_restarts_and_start_are_read_from_its_pods_on_the_node():
    """The kubelet's back-off for a self-hosted apiserver is read from its DaemonSet pod on that node (restarts and
    the running container's start), as a static pod's from its mirror pod."""
    import types

    from harness.backends.kind import self_hosted

    class Api:
        def request(self, *args, **kwargs):
            pods = [{"spec": {"nodeName": node}, "status": {"containerStatuses": [
                {"restartCount": count, "state": {"running": {"startedAt": "2026-11-28T13:00:00Z"}}}]}}
                for node, count in (("quorum-x-control-plane", 2), ("quorum-x-control-plane2", 0))]
            return types.SimpleNamespace(status_code=200, json=lambda: {"items": pods})

    cluster = types.SimpleNamespace(api=Api(), container=lambda node: f"quorum-x-{node}")
    pod = self_hosted.pod_restarts(cluster, "kube-apiserver", "control-plane")
    assert (pod.restarts, pod.started_at) == (2, 1795870800.0)
    assert self_hosted.pod_restarts(cluster, "kube-apiserver", "control-plane3") is None
