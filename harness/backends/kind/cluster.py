"""A kind cluster from the locally built node image, on a Quorum-owned Docker network.

kind creates its own "kind" network with IP masquerading, which would let the nodes reach the world (they
try registry.k8s.io). Quorum creates the network instead (kind uses it when KIND_EXPERIMENTAL_DOCKER_NETWORK
names it): a bridge with an address in the cluster subnet, no masquerading, and a FORWARD rule that drops
anything from the bridge to elsewhere (GOTCHAS). Both are journaled in the run's state before they exist,
so `quorum down` removes them after a crash too.
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml
from python_on_whales.exceptions import DockerException

from harness.backends import orphans
from harness.backends.docker import hosts as docker_backend
from harness.net import netns
from harness.backends.docker.engine import DOCKER_CLIENT, Engine, client
from harness.errors import ClusterError
from harness.backends.kind import node_image
from harness.backends.kind.host_limits import raise_inotify_limits
from harness.backends.kind.images import build_checkpointer, build_iperf3, build_lb_standin
from harness.components.apiserver import authentication_config
from harness.shell import run
from harness.run.state import RunState
from harness.toolchain.install import Toolchain
from harness.toolchain.versions import KUBERNETES_DEFAULT

CREATE_TIMEOUT_S = 900
LOAD_TIMEOUT_S = 300
KIND_LABEL = "io.x-k8s.kind.cluster"  # kind labels every container of a cluster with its name


@dataclass(frozen=True)
class KindShape:
    control_planes: int = 3
    workers: int = 2
    self_hosted: bool = False  # the static apiservers share their port with the self-hosted ones (self_hosted.py)
    checkpointer: bool = False  # its image is loaded into the nodes (checkpointer.py)
    kubernetes: str = KUBERNETES_DEFAULT  # the node image's release

    def __post_init__(self) -> None:
        if self.control_planes < 1 or self.workers < 0:
            raise ClusterError(f"a kind cluster needs at least one control plane (asked: {self.control_planes}, "
                               f"{self.workers} workers)", "ask for 1 or more control planes and 0 or more workers")


AUTHENTICATION = "/etc/kubernetes/quorum/authentication.yaml"  # inside each control-plane node
# kubeadm join's token discovery reads this anonymously (its RBAC grants system:anonymous exactly this object), so a
# node joining the cluster needs it (docs/backends.md)
KUBEADM_DISCOVERY_PATH = "/api/v1/namespaces/kube-public/configmaps/cluster-info"


def control_plane_names(name: str, count: int) -> list[str]:
    """kind's names for the control-plane node containers: <cluster>-control-plane, -control-plane2, ..."""
    return [f"{name}-control-plane{'' if i == 1 else i}" for i in range(1, count + 1)]


def hardening_patch(name: str, shape: KindShape) -> dict:
    """What makes kubeadm's control plane keep the invariants Quorum's own does: every apiserver lists every etcd
    member (by node name: Docker's DNS resolves it, and kubeadm's etcd serving certificates carry it), so losing its
    own node's member does not take an apiserver down; anonymous requests are served on the health endpoints only
    (the structured authentication config of harness/components/apiserver.py, mounted into each node)."""
    servers = ",".join(f"https://{node}:2379" for node in control_plane_names(name, shape.control_planes))
    return {"kind": "ClusterConfiguration",  # kubeadm.k8s.io/v1beta3, as kind 0.33 writes it for Kubernetes 1.34
            "apiServer": {"extraArgs": {"etcd-servers": servers, "authentication-config": AUTHENTICATION},
                          "extraVolumes": [{"name": "quorum-authentication", "hostPath": str(Path(AUTHENTICATION).parent),
                                            "mountPath": str(Path(AUTHENTICATION).parent), "readOnly": True,
                                            "pathType": "DirectoryOrCreate"}]}}


# Typhoon's kube-proxy serves its metrics on every address, so that a Prometheus on a worker scrapes every node
# (seed 001; scenarios/conformance/test_nodes.py); kubeadm keeps upstream's loopback-only default
KUBE_PROXY_METRICS = {"kind": "KubeProxyConfiguration", "metricsBindAddress": "0.0.0.0:10249"}


def kind_config(shape: KindShape, name: str = "kind", *, authentication: Path | None = None,
                defects: tuple[dict, ...] = ()) -> dict:
    """kind's cluster config: its roles, plus what this offline, cgroup v1 host needs (docs/backends.md); with
    `authentication` (the file to mount), kubeadm's layout hardened as Quorum's own (hardening_patch) and kube-proxy's
    metrics served as Typhoon serves them (KUBE_PROXY_METRICS); `defects`: a twin's patches of kubeadm's configuration,
    applied last (harness/backends/kind/defects.py)."""
    control_plane: dict = {"role": "control-plane"}
    if authentication is not None:
        control_plane["extraMounts"] = [{"hostPath": str(authentication), "containerPath": AUTHENTICATION,
                                         "readOnly": True}]
    nodes = [control_plane] * shape.control_planes + [{"role": "worker"}] * shape.workers
    patches = [] if authentication is None else [yaml.safe_dump(hardening_patch(name, shape)),
                                                  yaml.safe_dump(KUBE_PROXY_METRICS)]
    if shape.self_hosted:
        patches.append(yaml.safe_dump({"kind": "ClusterConfiguration",
                                       "apiServer": {"extraArgs": {"permit-port-sharing": "true"}}}))
    return {
        "kind": "Cluster",
        "apiVersion": "kind.x-k8s.io/v1alpha4",
        # the default CNI is Quorum's (the node image's /kind/manifests/default-cni.yaml); kube-proxy programs
        # Services with nft, the one tool its locally built image carries (harness/backends/kind/node_image.py), and
        # kubeadm's coredns addon runs the node image's coredns
        "networking": {"kubeProxyMode": "nftables"},
        "nodes": nodes,
        "kubeadmConfigPatches": [
            # the node image holds the toolchain's etcd and coredns under these tags (kubeadm 1.34 would ask for
            # etcd 3.6, kubeadm 1.35 for coredns v1.13.1)
            yaml.safe_dump({"kind": "ClusterConfiguration",
                            "etcd": {"local": {"imageTag": node_image.ETCD_IMAGE.rsplit(":", 1)[1]}},
                            "dns": {"imageTag": node_image.COREDNS_IMAGE.rsplit(":", 1)[1]}}),
            # kubelet 1.34 refuses cgroup v1 hosts unless told
            yaml.safe_dump({"kind": "KubeletConfiguration", "failCgroupV1": False}),
            *patches,
            *map(yaml.safe_dump, defects),
        ],
    }


def cluster_name(run_id: str) -> str:
    return f"quorum-{run_id}"


def _kind(toolchain: Toolchain, network: str, args: list[str], timeout_s: float, log: Path, fix: str) -> None:
    """Run `kind <args>` on the run's network, its output written to `log`; a ClusterError with `fix` when it
    fails or outlasts `timeout_s`."""
    what = f"kind {' '.join(args[:2])}"
    # kind runs `docker` from PATH: Debian's client, the one that matches the engine Quorum starts
    with tempfile.TemporaryDirectory(prefix="quorum-kind-path-") as client_dir:
        os.symlink(DOCKER_CLIENT, Path(client_dir) / "docker")
        env = {**os.environ, "KIND_EXPERIMENTAL_DOCKER_NETWORK": network, "PATH": f"{client_dir}:{os.environ['PATH']}"}
        try:
            result = subprocess.run([str(toolchain.path("kind")), *args], env=env, capture_output=True, text=True,
                                    timeout=timeout_s)
        except subprocess.TimeoutExpired as error:
            raise ClusterError(f"{what} did not finish within {timeout_s:.0f} s", fix) from error
    log.write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        raise ClusterError(f"{what} failed:\n{(result.stdout + result.stderr).strip()[-2500:]}",
                           f"the whole output is in {log}; {fix}")


def create_network(engine: Engine, state: RunState, subnet: ipaddress.IPv4Network) -> str:
    name, bridge = docker_backend.network_name(state.run_id), docker_backend.bridge_name(state.run_id)
    with netns.claim_subnet(subnet, reclaim=orphans.reclaim):
        state.record("docker_network", name)
        state.record("bridge", bridge)
        engine.client.network.create(name, driver="bridge", subnet=str(subnet), gateway=str(next(subnet.hosts())),
                                     labels={docker_backend.LABEL: state.run_id},
                                     options=[f"com.docker.network.bridge.name={bridge}",
                                              "com.docker.network.bridge.enable_ip_masquerade=false"])
    rule = docker_backend.egress_rule(state.run_id)
    state.record("iptables", rule)
    run(["iptables", "-w", "-I", rule[0], "1", *rule[1:]])
    return name


def create(engine: Engine, state: RunState, subnet: ipaddress.IPv4Network, shape: KindShape = KindShape(),
           say=lambda _: None, *, hardened: bool = True, defects: tuple[dict, ...] = ()) -> Path:
    """Create the cluster (`defects`: a twin's patches of kubeadm's configuration); returns its kubeconfig (0600, in
    the run directory). The caller tears down."""
    toolchain = Toolchain(shape.kubernetes)
    for raised in raise_inotify_limits():
        say(f"raised {raised} (kind's nodes share root's inotify allowance)")
    image, took = node_image.build(engine, str(toolchain.kubernetes), say=say)
    if took:
        say(f"built {image} in {took:.0f}s")
    if shape.control_planes > 1:
        build_lb_standin(engine, say=say)
    pod_images = [build_iperf3(engine, say=say)] + ([build_checkpointer(engine, say=say)] if shape.checkpointer else [])
    network = create_network(engine, state, subnet)
    run_dir = Path(state.run_dir)
    authentication = None
    if hardened:
        authentication = run_dir / "authentication.yaml"
        authentication.write_text(authentication_config(health_only=True, also=(KUBEADM_DISCOVERY_PATH,)))
    config = run_dir / "kind.yaml"
    config.write_text(yaml.safe_dump(kind_config(shape, cluster_name(state.run_id), authentication=authentication,
                                                 defects=defects), sort_keys=False))
    kubeconfig = run_dir / "kubeconfig"
    kubeconfig.touch(mode=0o600)
    say(f"kind create cluster {cluster_name(state.run_id)}: {shape.control_planes} control planes, "
        f"{shape.workers} workers")
    try:
        _kind(toolchain, network, ["create", "cluster", "--name", cluster_name(state.run_id), "--image", image,
                                   "--config", str(config), "--kubeconfig", str(kubeconfig), "--retain"],
              CREATE_TIMEOUT_S, run_dir / "kind-create.log", "docker logs <node> shows where a node stopped "
              "(`quorum up` removes the nodes; the log stays in the run directory)")
    finally:
        kubeconfig.chmod(0o600)
    # kind's own `kind load docker-image` into every node's containerd, so the pods Quorum's scenarios start
    # (iperf3, the checkpointer) never pull: there is no registry
    say(f"kind load docker-image {' '.join(pod_images)}")
    _kind(toolchain, network, ["load", "docker-image", *pod_images, "--name", cluster_name(state.run_id)],
          LOAD_TIMEOUT_S, run_dir / "kind-load.log", "quorum images build --kind, then quorum up again")
    return kubeconfig


def teardown(state: RunState) -> list[str]:
    """Delete the kind cluster's containers (kind labels them with the cluster name), then the network and
    its rule. Idempotent."""
    removed = remove_nodes(cluster_name(state.run_id))
    removed += docker_backend.teardown(state)
    removed += netns.teardown(state.run_id, netns=[], veths=[], bridge=None, rules=state.iptables)
    return removed


def remove_nodes(name: str | None = None) -> list[str]:
    """The containers of one Quorum kind cluster, or of every one (`name` None: `quorum down --all`)."""
    removed = []
    try:
        docker = client()
        for container in docker.container.list(all=True, filters=[("label", KIND_LABEL)]):
            # read before removing: python-on-whales inspects the container again when an attribute is stale
            owner, container_name = container.config.labels.get(KIND_LABEL, ""), container.name
            if owner == name or (name is None and owner.startswith("quorum-")):
                docker.container.remove(container_name, force=True, volumes=True)
                removed.append(f"container {container_name}")
    except DockerException as error:
        removed.append(f"(kind nodes not removed: {error})")
    return removed
