"""Passes of the checkpointer (harness/checkpointer/agent.py) over a directory standing for a node, fed what the
API and the runtime would say: the power loss, the return of the parent, an upgrade (never a stale
checkpoint), a changed secret, a parent deleted from the API."""

import json

from harness.checkpointer.agent import REFRESH_S, Agent, Seen
from harness.checkpointer.files import Disk
from harness.checkpointer.manifest import CHECKPOINT
from harness.checkpointer.state import Checkpoints

NAME = "kube-system/kube-apiserver-6r288"
ACTIVE = "etc/kubernetes/manifests/kube-system-kube-apiserver-6r288.json"
SECRET = "etc/kubernetes/checkpoint-secrets/kube-system/kube-apiserver-6r288/apiserver-tls/tls.key"


def parent(image: str = "kube-apiserver:v1.34.4") -> dict:
    return {"metadata": {"name": "kube-apiserver-6r288", "namespace": "kube-system", "annotations": {CHECKPOINT: "true"}},
            "spec": {"hostNetwork": True, "containers": [{"name": "kube-apiserver", "image": image}],
                     "volumes": [{"name": "tls", "secret": {"secretName": "apiserver-tls"}}]}}


class Api:
    def __init__(self) -> None:
        self.secret = b"key-1"

    def fetch(self, kind: str, namespace: str, name: str) -> dict[str, bytes] | None:
        return {"tls.key": self.secret} if (kind, namespace, name) == ("secrets", "kube-system", "apiserver-tls") else None


def agent(root) -> tuple[Agent, Api]:
    api = Api()
    return Agent(Disk(root), Checkpoints(grace_s=60.0), None, api.fetch), api


def test_power_loss_starts_the_checkpoint_and_the_parent_running_again_stops_it(tmp_path):
    checkpointer, _ = agent(tmp_path)
    running = Seen([parent()], [parent()], {NAME})
    assert checkpointer.run_once(0, running).starts == [] and not (tmp_path / ACTIVE).exists()
    assert (tmp_path / SECRET).read_bytes() == b"key-1"
    # power loss: a new agent (the node rebooted) with only the disk, no API, nothing running
    after_reboot, _ = agent(tmp_path)
    assert after_reboot.run_once(100, Seen(None, [], set())).starts == [NAME]
    pod = json.loads((tmp_path / ACTIVE).read_text())
    assert pod["spec"]["volumes"][0]["hostPath"]["path"].endswith("/apiserver-tls")
    # the checkpoint serves the API; the DaemonSet's pod is scheduled here again and runs: the checkpoint stops
    assert after_reboot.run_once(110, Seen([parent()], [parent()], {NAME})).stops == [NAME]
    assert not (tmp_path / ACTIVE).exists()


def test_after_an_upgrade_the_checkpoint_that_starts_is_the_new_version(tmp_path):
    checkpointer, _ = agent(tmp_path)
    checkpointer.run_once(0, Seen([parent()], [parent()], {NAME}))
    checkpointer.run_once(10, Seen([parent("kube-apiserver:v1.35.4")], [parent("kube-apiserver:v1.35.4")], {NAME}))
    after_reboot, _ = agent(tmp_path)
    after_reboot.run_once(100, Seen(None, [], set()))
    assert json.loads((tmp_path / ACTIVE).read_text())["spec"]["containers"][0]["image"] == "kube-apiserver:v1.35.4"


def test_a_changed_secret_is_copied_again_within_the_refresh_period(tmp_path):
    checkpointer, api = agent(tmp_path)
    checkpointer.run_once(0, Seen([parent()], [parent()], {NAME}))
    api.secret = b"key-2"
    checkpointer.run_once(REFRESH_S / 2, Seen([parent()], [parent()], {NAME}))
    assert (tmp_path / SECRET).read_bytes() == b"key-1"  # neither the parent nor the period changed
    checkpointer.run_once(REFRESH_S, Seen([parent()], [parent()], {NAME}))
    assert (tmp_path / SECRET).read_bytes() == b"key-2"


def test_a_parent_deleted_from_the_api_is_collected_after_the_grace_period(tmp_path):
    checkpointer, _ = agent(tmp_path)
    checkpointer.run_once(0, Seen([parent()], [parent()], {NAME}))
    assert checkpointer.run_once(1, Seen([], [], set())).removes == []
    assert checkpointer.run_once(61, Seen([], [], set())).removes == [NAME]
    assert not list((tmp_path / "etc/kubernetes/inactive-manifests").iterdir())
    assert not (tmp_path / SECRET).exists()
