"""kind's cluster config and the node image's image names: what this offline, cgroup v1 host needs."""

import pytest
import yaml

from harness.errors import ClusterError
from harness.backends.kind.cluster import KindShape, kind_config
from harness.backends.kind.host_limits import INOTIFY_MINIMUMS, raise_inotify_limits
from harness.backends.kind.node_image import COREDNS_IMAGE, ETCD_IMAGE, _normalized


def _patch(config: dict, kind: str) -> dict:
    """The kubeadm config patches of one kind, merged (kind applies them in order)."""
    merged: dict = {}
    for patch in map(yaml.safe_load, config["kubeadmConfigPatches"]):
        if patch["kind"] == kind:
            merged |= patch
    return merged


def test_the_config_has_the_asked_roles_and_the_offline_settings():
    config = kind_config(KindShape(control_planes=3, workers=2))
    assert [n["role"] for n in config["nodes"]] == ["control-plane"] * 3 + ["worker"] * 2
    # Quorum's CNI comes from the node image; kube-proxy's image carries nft, not the iptables extensions
    assert config["networking"] == {"kubeProxyMode": "nftables"}
    assert _patch(config, "KubeletConfiguration")["failCgroupV1"] is False
    assert f"registry.k8s.io/etcd:{_patch(config, 'ClusterConfiguration')['etcd']['local']['imageTag']}" == ETCD_IMAGE
    # no addon is skipped: the node image holds kube-proxy's and coredns's images, and kubeadm is told coredns's tag
    # (kubeadm 1.34's own; 1.35 would ask for v1.13.1, which the image does not hold)
    assert not any(yaml.safe_load(p).get("kind") == "InitConfiguration" for p in config["kubeadmConfigPatches"])
    assert COREDNS_IMAGE == "registry.k8s.io/coredns/coredns:v1.12.1"
    assert f"registry.k8s.io/coredns/coredns:{_patch(config, 'ClusterConfiguration')['dns']['imageTag']}" == COREDNS_IMAGE


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


def test_kubeadms_layout_is_hardened_as_quorums_own_unless_a_twin_keeps_its_defaults(tmp_path):
    """Every apiserver lists every etcd member (by node name) and serves anonymous clients the health endpoints
    only, through the same structured authentication config as the process backend's apiservers; kube-proxy serves
    its metrics on every address, as Typhoon's does (seed 001)."""
    from harness.backends.kind.cluster import AUTHENTICATION

    authentication = tmp_path / "authentication.yaml"
    config = kind_config(KindShape(control_planes=3, workers=1), "quorum-abc123", authentication=authentication)
    patch = _patch(config, "ClusterConfiguration")
    assert patch["apiServer"]["extraArgs"] == {
        "etcd-servers": "https://quorum-abc123-control-plane:2379,https://quorum-abc123-control-plane2:2379,"
                        "https://quorum-abc123-control-plane3:2379",
        "authentication-config": AUTHENTICATION}
    assert patch["apiServer"]["extraVolumes"][0]["mountPath"] == "/etc/kubernetes/quorum"
    mounts = [node.get("extraMounts") for node in config["nodes"]]
    assert mounts[:3] == [[{"hostPath": str(authentication), "containerPath": AUTHENTICATION, "readOnly": True}]] * 3
    assert mounts[3] is None, "workers run no apiserver"
    assert _patch(config, "KubeProxyConfiguration") == {"kind": "KubeProxyConfiguration",
                                                         "metricsBindAddress": "0.0.0.0:10249"}
    defaults = kind_config(KindShape(control_planes=3, workers=1), "quorum-abc123")
    assert "apiServer" not in _patch(defaults, "ClusterConfiguration")
    assert all("extraMounts" not in node for node in defaults["nodes"])
    assert not [p for p in defaults["kubeadmConfigPatches"] if "KubeProxyConfiguration" in p], \
        "kubeadm's own layout keeps kube-proxy's metrics on loopback"
