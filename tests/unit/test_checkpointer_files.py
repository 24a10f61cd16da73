"""The checkpointer's files (harness/checkpointer/files.py) in a directory standing for a node's root."""

import json

import pytest

from harness.checkpointer.files import Disk
from harness.checkpointer.manifest import CHECKPOINT_OF, NotCheckpointable, config_map_dir, secret_dir

NAME = "kube-system/kube-apiserver-6r288"


def checkpoint_text(name: str = "kube-apiserver-6r288") -> str:
    return json.dumps({"metadata": {"name": name, "namespace": "kube-system", "annotations": {CHECKPOINT_OF: name}}})


def test_a_checkpoint_is_saved_once_started_stopped_and_removed_with_its_data(tmp_path):
    disk = Disk(tmp_path)
    (tmp_path / "etc/kubernetes/manifests").mkdir(parents=True)
    (tmp_path / "etc/kubernetes/manifests/etcd.json").write_text(json.dumps({"metadata": {"name": "etcd",
                                                                                           "namespace": "kube-system"}}))
    assert disk.save(NAME, checkpoint_text()) and not disk.save(NAME, checkpoint_text())  # unchanged: not rewritten
    assert disk.inactive() == {NAME} and disk.active() == set()  # etcd's static manifest is not a checkpoint
    disk.save_data(secret_dir(NAME, "apiserver-tls"), {"tls.key": b"k", "tls.crt": b"c"})
    disk.save_data(config_map_dir(NAME, "audit"), {"policy.yaml": b"p"})
    disk.start(NAME)
    assert disk.active() == {NAME}
    active = tmp_path / "etc/kubernetes/manifests/kube-system-kube-apiserver-6r288.json"
    assert active.read_text() == checkpoint_text() and oct(active.stat().st_mode & 0o777) == "0o600"
    disk.stop(NAME)
    assert disk.active() == set() and disk.inactive() == {NAME}
    disk.remove(NAME)
    assert disk.inactive() == set() and not (tmp_path / "etc/kubernetes/checkpoint-secrets/kube-system").joinpath(
        "kube-apiserver-6r288").exists()
    assert (tmp_path / "etc/kubernetes/manifests/etcd.json").exists()


def test_a_secrets_keys_follow_the_secret_and_a_key_that_is_a_path_is_refused(tmp_path):
    disk, directory = Disk(tmp_path), secret_dir(NAME, "apiserver-tls")
    disk.save_data(directory, {"a": b"1", "b": b"2"})
    disk.save_data(directory, {"a": b"3"})
    where = tmp_path / directory.lstrip("/")
    assert sorted(p.name for p in where.iterdir()) == ["a"] and (where / "a").read_bytes() == b"3"
    with pytest.raises(NotCheckpointable, match="not a file name"):
        disk.save_data(directory, {"../../escape": b"x"})
