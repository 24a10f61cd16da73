"""A stand-in staging cluster: a process-backend cluster Quorum built, then reached only the way a platform team's
cluster is (docs/target.md): an OpenSSH server on each host's address (in the host's network namespace, so every
packet stays in Quorum's subnet), a generated key, and an inventory holding only the kubeconfig, the API endpoint,
the SSH endpoints and the etcd client certificate's paths. `quorum down` removes the servers with the namespaces."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.backends.process.target import ProcessTarget
from harness.clients.health import probe
from harness.components.base import HealthProbe
from harness.net.netns import netns_name
from harness.target.protocol import HostRole
from harness.toolchain.debian import apt_install
from harness.wait import wait_for

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


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "quorum-standin", "-f", str(path)], check=True)


@contextlib.contextmanager
def standin(cluster: ProcessTarget, directory: Path) -> Iterator[Standin]:
    if not SSHD.exists():
        apt_install(["openssh-server"])  # only the tests need an SSH server here (docs/target.md)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    host_key, client_key = directory / "host_ed25519", directory / "client_ed25519"
    _keygen(host_key)
    _keygen(client_key)
    authorized = directory / "authorized_keys"
    authorized.write_text(client_key.with_suffix(".pub").read_text())
    authorized.chmod(0o600)
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation directory
    servers, known = [], []
    hosts = [h for h in cluster.hosts() if h in set(cluster.hosts(HostRole.CONTROLLER)) | set(cluster.hosts(HostRole.ETCD))]
    try:
        for host in hosts:
            address = str(cluster.topology.address_of(host))
            servers.append(subprocess.Popen(
                ["ip", "netns", "exec", netns_name(cluster.run_id, host), str(SSHD), "-D", "-e", "-f", "/dev/null",
                 "-h", str(host_key), "-o", f"ListenAddress={address}:22", "-o", f"AuthorizedKeysFile={authorized} .ssh/authorized_keys",
                 "-o", "PermitRootLogin=prohibit-password", "-o", "PasswordAuthentication=no",
                 "-o", "KbdInteractiveAuthentication=no", "-o", "UsePAM=no", "-o", "PidFile=none",
                 "-o", "StrictModes=no"],
                stdout=subprocess.DEVNULL, stderr=(directory / f"sshd-{host}.log").open("w")))
            wait_for(lambda: probe(HealthProbe("tcp", address, 22)), 10, what=f"sshd on {address}:22 to listen")
            known.append(f"{address} {' '.join(host_key.with_suffix('.pub').read_text().split()[:2])}")
        known_hosts = directory / "known_hosts"
        known_hosts.write_text("\n".join(known) + "\n")
        inventory = directory / "inventory.yaml"
        credentials = cluster.etcd_credentials
        inventory.write_text(yaml.safe_dump({
            "name": "standin", "disposable": True,
            "kubeconfig": {"path": str(cluster.admin_kubeconfig)},
            "api_endpoint": cluster.api_endpoint,
            "ssh": {"user": "root", "key_file": str(client_key), "known_hosts": str(known_hosts)},
            "hosts": [{"name": h, "address": str(cluster.topology.address_of(h)),
                       "roles": [r for r in ("controller", "etcd") if h in cluster.hosts(r)]} for h in hosts],
            "components": {c: {"runs_as": "process"} for c in
                           ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")},
            "etcd": {"endpoints": cluster.etcd_urls, "ca": str(credentials.ca), "cert": str(credentials.client.cert),
                     "key": str(credentials.client.key)},
            # what a team states about its load balancer, here as the topology configured HAProxy
            "load_balancer": {"health_check": cluster.topology.load_balancer.health_check.model_dump()},
        }, sort_keys=False))
        yield Standin(inventory, client_key, known_hosts, directory)
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait(timeout=10)
