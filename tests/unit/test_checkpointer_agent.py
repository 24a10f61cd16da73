"""Passes of the checkpointer (harness/checkpointer/agent.py) over a directory standing for a node, fed what the
API and the runtime would say: the power loss, the return of the parent, an upgrade (never a stale
checkpoint), a changed secret, a parent deleted from the API."""

import json

from harness.checkpointer.agent import Agent, Seen
from harness.checkpointer.files import Disk
from harness.checkpointer.manifest import CHECKPOINT
from harness.checkpointer.state import Checkpoints

NAME = "kube-system/kube-apiserver-6r288"
ACTIVE = "etc/kubernetes/manifests/kube-system-kube-apiserver-6r288.json"
SECRET = "etc/kubernetes/checkpoint-secrets/kube-system/kube-apiserver-6r288/apiserver-tls/tls.key"


DAEMONSET = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "kube-apiserver", "uid": "ds-1", "controller": True}]


def parent(image: str = "kube-apiserver:v1.34.4", name: str = "kube-apiserver-6r288", ready: bool = True) -> dict:
    return {"metadata": {"name": name, "namespace": "kube-system", "annotations": {CHECKPOINT: "true"},
                         "ownerReferences": DAEMONSET},
            "spec": {"hostNetwork": True, "containers": [{"name": "kube-apiserver", "image": image}],
                     "volumes": [{"name": "tls", "secret": {"secretName": "apiserver-tls"}}]},
            "status": {"conditions": [{"type": "Ready", "status": str(ready)}]}}


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


def test_a_changed_secret_is_copied_again_in_the_next_pass_and_only_its_files_change(tmp_path):
    checkpointer, api = agent(tmp_path)
    checkpointer.run_once(0, Seen([parent()], [parent()], {NAME}))
    written = (tmp_path / SECRET).stat().st_mtime_ns
    checkpointer.run_once(3, Seen([parent()], [parent()], {NAME}))
    assert (tmp_path / SECRET).stat().st_mtime_ns == written  # the same data: not written again
    api.secret = b"key-2"  # the pod's spec is unchanged
    checkpointer.run_once(6, Seen([parent()], [parent()], {NAME}))
    assert (tmp_path / SECRET).read_bytes() == b"key-2"
    # while the API is away the copy stays as it was
    api.secret = b"key-3"
    checkpointer.run_once(9, Seen(None, [parent()], {NAME}))
    assert (tmp_path / SECRET).read_bytes() == b"key-2"


def test_the_twins_checkpointer_that_never_refreshes_keeps_the_first_copy_until_the_spec_changes(tmp_path):
    """clusters/defects/kind-stale-secrets.yaml."""
    api = Api()
    checkpointer = Agent(Disk(tmp_path), Checkpoints(grace_s=60.0), None, api.fetch, refresh=False)
    checkpointer.run_once(0, Seen([parent()], [parent()], {NAME}))
    api.secret = b"key-2"
    checkpointer.run_once(3, Seen([parent()], [parent()], {NAME}))
    assert (tmp_path / SECRET).read_bytes() == b"key-1"
    upgraded = parent("kube-apiserver:v1.35.4")
    checkpointer.run_once(6, Seen([upgraded], [upgraded], {NAME}))
    assert (tmp_path / SECRET).read_bytes() == b"key-2"


def test_a_parent_deleted_from_the_api_is_collected_after_the_grace_period(tmp_path):
    checkpointer, _ = agent(tmp_path)
    checkpointer.run_once(0, Seen([parent()], [parent()], {NAME}))
    assert checkpointer.run_once(1, Seen([], [], set())).removes == []
    assert checkpointer.run_once(61, Seen([], [], set())).removes == [NAME]
    assert not list((tmp_path / "etc/kubernetes/inactive-manifests").iterdir())
    assert not (tmp_path / SECRET).exists()


def _images_started(root) -> list[str]:
    return sorted(json.loads(path.read_text())["spec"]["containers"][0]["image"]
                  for path in (root / "etc/kubernetes/manifests").glob("*.json"))


def test_a_daemonset_update_then_a_reboot_within_the_grace_period_starts_only_the_new_version(tmp_path):
    """A DaemonSet's update replaces the pod by one of another name: once the successor is Ready here, the old pod's
    checkpoint is collected at once, not after the grace period, so a reboot right after the update never starts it."""
    checkpointer, _ = agent(tmp_path)
    old, new = parent(), parent("kube-apiserver:v1.35.4", name="kube-apiserver-x7k2p")
    checkpointer.run_once(0, Seen([old], [old], {NAME}))
    # surge: the new pod starts beside the old one; not Ready yet, so nothing is superseded
    starting = parent("kube-apiserver:v1.35.4", name="kube-apiserver-x7k2p", ready=False)
    assert checkpointer.run_once(3, Seen([old, starting], [old, starting], {NAME, "kube-system/kube-apiserver-x7k2p"})
                                 ).removes == []
    # Ready, and the old pod is being deleted (still running through its grace period): superseded
    going = {**old, "metadata": {**old["metadata"], "deletionTimestamp": "2026-11-27T04:00:00Z"}}
    plan = checkpointer.run_once(6, Seen([going, new], [old, new], {NAME, "kube-system/kube-apiserver-x7k2p"}))
    assert plan.removes == [NAME]
    after_reboot, _ = agent(tmp_path)
    assert after_reboot.run_once(10, Seen(None, [], set())).starts == ["kube-system/kube-apiserver-x7k2p"]
    assert _images_started(tmp_path) == ["kube-apiserver:v1.35.4"]


def test_a_checkpointer_that_never_collects_starts_the_old_version_beside_the_new_after_a_reboot(tmp_path):
    """The broken twin's checkpointer (--never-collect): the superseded checkpoint stays, and the reboot starts it."""
    checkpointer, _ = agent(tmp_path)
    checkpointer.collect = False
    old, new = parent(), parent("kube-apiserver:v1.35.4", name="kube-apiserver-x7k2p")
    checkpointer.run_once(0, Seen([old], [old], {NAME}))
    checkpointer.run_once(6, Seen([new], [new], {"kube-system/kube-apiserver-x7k2p"}))
    checkpointer.run_once(100, Seen([new], [new], {"kube-system/kube-apiserver-x7k2p"}))  # past the grace period
    after_reboot, _ = agent(tmp_path)
    after_reboot.run_once(200, Seen(None, [], set()))
    assert _images_started(tmp_path) == ["kube-apiserver:v1.34.4", "kube-apiserver:v1.35.4"]


def test_an_update_that_never_turns_ready_keeps_the_old_checkpoint_for_an_outage(tmp_path):
    """A bad update (the successor never Ready): nothing is superseded, the old pod's checkpoint goes through the grace
    period as bootkube's does, so an API outage meanwhile still starts the version that worked."""
    checkpointer, _ = agent(tmp_path)
    old, bad = parent(), parent("kube-apiserver:bad", name="kube-apiserver-x7k2p", ready=False)
    checkpointer.run_once(0, Seen([old], [old], {NAME}))
    assert checkpointer.run_once(3, Seen([bad], [bad], {"kube-system/kube-apiserver-x7k2p"})).removes == []
    assert NAME in checkpointer.run_once(6, Seen(None, [bad], {"kube-system/kube-apiserver-x7k2p"})).starts
