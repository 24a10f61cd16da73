"""kind's cluster config and the node image's image names: what this offline, cgroup v1 host needs."""

import pytest
import yaml

from harness.errors import ClusterError
from harness.backends.kind.cluster import KindShape, kind_config
from harness.backends.kind.host_limits import INOTIFY_MINIMUMS, raise_inotify_limits
from harness.backends.kind.node_image import COREDNS_IMAGE, ETCD_IMAGE, _normalized


def _patch(config: dict, kind: str) -> dict:
    return next(p for p in map(yaml.safe_load, config["kubeadmConfigPatches"]) if p["kind"] == kind)


def test_the_config_has_the_asked_roles_and_the_offline_settings():
    config = kind_config(KindShape(control_planes=3, workers=2))
    assert [n["role"] for n in config["nodes"]] == ["control-plane"] * 3 + ["worker"] * 2
    # Quorum's CNI comes from the node image; kube-proxy's image carries nft, not the iptables extensions
    assert config["networking"] == {"kubeProxyMode": "nftables"}
    assert _patch(config, "KubeletConfiguration")["failCgroupV1"] is False
    assert f"registry.k8s.io/etcd:{_patch(config, 'ClusterConfiguration')['etcd']['local']['imageTag']}" == ETCD_IMAGE
    # no addon is skipped: the node image holds kube-proxy's and coredns's images (kubeadm's coredns tag)
    assert not any(yaml.safe_load(p).get("kind") == "InitConfiguration" for p in config["kubeadmConfigPatches"])
    assert COREDNS_IMAGE == "registry.k8s.io/coredns/coredns:v1.12.1"


@pytest.mark.parametrize("control_planes, workers", [(0, 2), (1, -1)])
def test_a_shape_without_a_control_plane_is_refused(control_planes, workers):
    with pytest.raises(ClusterError, match="at least one control plane"):
        KindShape(control_planes=control_planes, workers=workers)


@pytest.mark.parametrize("image, full", [
    ("quorum/kind-cni:1", "docker.io/quorum/kind-cni:1"),
    ("busybox:1", "docker.io/library/busybox:1"),
    ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"),
    ("localhost/x:1", "localhost/x:1"),
])
def test_image_names_are_compared_as_containerd_lists_them(image, full):
    assert _normalized(image) == full


def test_inotify_limits_are_raised_to_kinds_minimums_and_never_lowered(tmp_path):
    instances, watches = tmp_path / "fs/inotify/max_user_instances", tmp_path / "fs/inotify/max_user_watches"
    instances.parent.mkdir(parents=True)
    instances.write_text("128\n")
    watches.write_text("1048576\n")
    assert raise_inotify_limits(tmp_path) == ["fs.inotify.max_user_instances 128 -> 512"]
    assert int(instances.read_text()) == INOTIFY_MINIMUMS["fs.inotify.max_user_instances"]
    assert int(watches.read_text()) == 1048576  # above kind's minimum: left alone
    assert raise_inotify_limits(tmp_path) == []


def test_an_unreadable_inotify_limit_is_a_clear_error(tmp_path):
    with pytest.raises(ClusterError, match="cannot read fs.inotify.max_user_instances"):
        raise_inotify_limits(tmp_path)
