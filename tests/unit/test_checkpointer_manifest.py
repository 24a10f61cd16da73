"""A parent pod's checkpoint (harness/checkpointer/manifest.py), as docs/checkpointer.md states the contract."""

import pytest

from harness.checkpointer.manifest import (CHECKPOINT, CHECKPOINT_OF, NotCheckpointable, file_name, full_name,
                                           is_parent, sanitized, serialized)

PARENT = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "kube-apiserver-6r288", "namespace": "kube-system", "uid": "u-1", "resourceVersion": "7",
                 "labels": {"k8s-app": "kube-apiserver"}, "ownerReferences": [{"kind": "DaemonSet"}],
                 "annotations": {CHECKPOINT: "true", "kubectl.kubernetes.io/restartedAt": "now"}},
    "spec": {"nodeName": "cp1", "serviceAccountName": "default", "hostNetwork": True,
             "containers": [{"name": "kube-apiserver", "image": "registry.k8s.io/kube-apiserver:v1.34.4",
                             "volumeMounts": [{"name": "pki", "mountPath": "/etc/kubernetes/pki"},
                                              {"name": "token", "mountPath": "/var/run/secrets/kubernetes.io"},
                                              {"name": "audit", "mountPath": "/etc/audit"},
                                              {"name": "tls", "mountPath": "/etc/tls"}]}],
             "volumes": [{"name": "pki", "hostPath": {"path": "/etc/kubernetes/pki"}},
                         {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
                         {"name": "audit", "configMap": {"name": "audit-policy"}},
                         {"name": "tls", "secret": {"secretName": "apiserver-tls"}}]},
    "status": {"phase": "Running"},
}


def test_the_checkpoint_keeps_the_pod_and_drops_what_needs_the_api():
    checkpoint, secrets, config_maps = sanitized(PARENT)
    assert checkpoint["metadata"] == {"name": "kube-apiserver-6r288", "namespace": "kube-system",
                                      "annotations": {CHECKPOINT_OF: "kube-apiserver-6r288"}}
    spec = checkpoint["spec"]
    assert "status" not in checkpoint and "nodeName" not in spec and "serviceAccountName" not in spec
    assert spec["automountServiceAccountToken"] is False and spec["hostNetwork"]
    assert [m["name"] for m in spec["containers"][0]["volumeMounts"]] == ["pki", "audit", "tls"]
    assert spec["volumes"] == [
        {"name": "pki", "hostPath": {"path": "/etc/kubernetes/pki"}},
        {"name": "audit", "hostPath": {"path": "/etc/kubernetes/checkpoint-configmaps/kube-system/kube-apiserver-6r288/audit-policy"}},
        {"name": "tls", "hostPath": {"path": "/etc/kubernetes/checkpoint-secrets/kube-system/kube-apiserver-6r288/apiserver-tls"}}]
    assert (secrets, config_maps) == (["apiserver-tls"], ["audit-policy"])
    assert PARENT["spec"]["nodeName"] == "cp1", "the parent itself is left as it was"


def test_the_same_parent_always_gives_the_same_bytes():
    assert serialized(sanitized(PARENT)[0]) == serialized(sanitized(PARENT)[0])


def test_only_annotated_pods_that_are_neither_mirrors_nor_checkpoints_are_parents():
    assert is_parent(PARENT)
    mirror = {"metadata": {"annotations": {CHECKPOINT: "true", "kubernetes.io/config.mirror": "x"}}}
    own = {"metadata": {"annotations": {CHECKPOINT: "true", CHECKPOINT_OF: "p"}}}
    assert not is_parent(mirror) and not is_parent(own) and not is_parent({"metadata": {}})
    with pytest.raises(NotCheckpointable, match="not a parent pod"):
        sanitized(mirror)


def test_a_name_that_would_leave_the_checkpoint_directories_is_refused():
    for bad in ("../etc", "a/b", "", "UPPER"):
        pod = {**PARENT, "metadata": {**PARENT["metadata"], "name": bad}}
        with pytest.raises(NotCheckpointable, match="is not a Kubernetes object name"):
            full_name(pod)
    volume = {"name": "tls", "secret": {"secretName": "../../shadow"}}
    pod = {**PARENT, "spec": {**PARENT["spec"], "volumes": [volume]}}
    with pytest.raises(NotCheckpointable, match="secret"):
        sanitized(pod)
    assert file_name("kube-system/kube-apiserver-6r288") == "kube-system-kube-apiserver-6r288.json"
