"""A stand-in staging cluster: a process-backend cluster Quorum built, then reached only the way a platform team's
cluster is (docs/target.md): an OpenSSH server on each host's address (in the host's network namespace, so every
packet stays in Quorum's subnet), a generated key, and an inventory holding only the kubeconfig, the API endpoint,
the SSH endpoints and the etcd client certificate's paths. `quorum down` removes the servers with the namespaces."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from harness.backends.docker.engine import client
from harness.backends.process.target import ProcessTarget
from harness.clients.health import probe
from harness.components.base import HealthProbe
from harness.net.netns import netns_name
from harness.target.protocol import HostRole
from harness.toolchain.debian import apt_install
from harness.wait import wait_for

if TYPE_CHECKING:
    from harness.backends.kind.target import KindTarget

ROOT = Path(__file__).resolve().parents[2]
SSHD = Path("/usr/sbin/sshd")


@dataclass
class Standin:
    inventory: Path
    key: Path
    known_hosts: Path
    directory: Path

    def write(self, **changes: object) -> Path:
        """A copy of the inventory with top-level keys replaced (a bad input), beside the original."""
        data = yaml.safe_load(self.inventory.read_text())
        data.update(changes)
        path = self.directory / f"inventory-{len(list(self.directory.glob('inventory-*')))}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path


def inventory_check(path: Path) -> tuple[int, str]:
    """`quorum inventory check PATH` as a user runs it: its exit code and output."""
    result = subprocess.run([sys.executable, "-m", "harness.cli", "inventory", "check", str(path)], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    return result.returncode, result.stdout + result.stderr


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "quorum-standin", "-f", str(path)], check=True)


class _Servers:
    """The keys every stand-in uses and the sshd processes it started (one per host, each on the host's address)."""

    def __init__(self, directory: Path) -> None:
        if not SSHD.exists():
            apt_install(["openssh-server"])  # only the tests need an SSH server here (docs/target.md)
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.directory, self.host_key, self.client_key = directory, directory / "host_ed25519", directory / "client_ed25519"
        _keygen(self.host_key)
        _keygen(self.client_key)
        self.authorized = directory / "authorized_keys"
        self.authorized.write_text(self.client_key.with_suffix(".pub").read_text())
        self.authorized.chmod(0o600)
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation directory
        self.servers: list[subprocess.Popen] = []
        self.known: list[str] = []

    def start(self, host: str, address: str, enter: list[str], *options: str) -> None:
        """sshd on address:22, started through `enter` (the command that puts it in the host's network namespace)."""
        self.servers.append(subprocess.Popen(
            [*enter, str(SSHD), "-D", "-e", "-f", "/dev/null", "-h", str(self.host_key),
             "-o", f"ListenAddress={address}:22", "-o", f"AuthorizedKeysFile={self.authorized} .ssh/authorized_keys",
             "-o", "PermitRootLogin=prohibit-password", "-o", "PasswordAuthentication=no",
             "-o", "KbdInteractiveAuthentication=no", "-o", "UsePAM=no", "-o", "PidFile=none", "-o", "StrictModes=no",
             *options],
            stdout=subprocess.DEVNULL, stderr=(self.directory / f"sshd-{host}.log").open("w")))
        wait_for(lambda: probe(HealthProbe("tcp", address, 22)), 10, what=f"sshd on {address}:22 to listen")
        self.known.append(f"{address} {' '.join(self.host_key.with_suffix('.pub').read_text().split()[:2])}")

    def inventory(self, **fields: object) -> Standin:
        known_hosts = self.directory / "known_hosts"
        known_hosts.write_text("\n".join(self.known) + "\n")
        inventory = self.directory / "inventory.yaml"
        data = {"name": "standin", "disposable": True, **fields,
                "ssh": {"user": "root", "key_file": str(self.client_key), "known_hosts": str(known_hosts)}}
        inventory.write_text(yaml.safe_dump(data, sort_keys=False))
        return Standin(inventory, self.client_key, known_hosts, self.directory)

    def stop(self) -> None:
        for server in self.servers:
            server.terminate()
        for server in self.servers:
            server.wait(timeout=10)


@contextlib.contextmanager
def standin(cluster: ProcessTarget, directory: Path) -> Iterator[Standin]:
    servers = _Servers(directory)
    hosts = [h for h in cluster.hosts() if h in set(cluster.hosts(HostRole.CONTROLLER)) | set(cluster.hosts(HostRole.ETCD))]
    try:
        for host in hosts:
            servers.start(host, str(cluster.topology.address_of(host)), ["ip", "netns", "exec", netns_name(cluster.run_id, host)])
        credentials = cluster.etcd_credentials
        yield servers.inventory(
            kubeconfig={"path": str(cluster.admin_kubeconfig)},
            api_endpoint=cluster.api_endpoint,
            hosts=[{"name": h, "address": str(cluster.topology.address_of(h)),
                    "roles": [r for r in ("controller", "etcd") if h in cluster.hosts(r)]} for h in hosts],
            components={c: {"runs_as": "process"} for c in
                        ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")},
            etcd={"endpoints": cluster.etcd_urls, "ca": str(credentials.ca), "cert": str(credentials.client.cert),
                  "key": str(credentials.client.key)},
            # what a team states about its load balancer, here as the topology configured HAProxy
            load_balancer={"health_check": cluster.topology.load_balancer.health_check.model_dump()})
    finally:
        servers.stop()


@contextlib.contextmanager
def kind_standin(cluster: "KindTarget", directory: Path) -> Iterator[Standin]:
    """A kubeadm cluster (kind: static pods run by each node's kubelet, kubeadm's PKI, systemd in every node) reached
    only as an inventory describes it. Each control-plane node gets an sshd in its network namespace whose
    commands run inside the node (nsenter into all its namespaces), as on a kubeadm host; the API endpoint is
    kind's load balancer as kind's kubeconfig reaches it (on loopback, a name its certificate carries)."""
    servers = _Servers(directory)
    nodes = cluster.hosts(HostRole.CONTROLLER)
    try:
        for node in nodes:
            pid = client().container.inspect(cluster.container(node)).state.pid
            servers.start(node, cluster.address(node), ["nsenter", f"--net=/proc/{pid}/ns/net"],
                          "-o", f'ForceCommand=exec nsenter -t {pid} -a /bin/sh -c "$SSH_ORIGINAL_COMMAND"')
        credentials = cluster.etcd_credentials
        yield servers.inventory(
            kubeconfig={"path": str(cluster.admin_kubeconfig)},
            api_endpoint=cluster.api_endpoint,
            hosts=[{"name": node, "address": cluster.address(node), "roles": ["controller", "etcd"]} for node in nodes],
            components={c: {"runs_as": "static-pod", "manifest_dir": "/etc/kubernetes/manifests"} for c in
                        ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")},
            etcd={"endpoints": cluster.etcd_urls, "ca": str(credentials.ca), "cert": str(credentials.client.cert),
                  "key": str(credentials.client.key)})
    finally:
        servers.stop()
