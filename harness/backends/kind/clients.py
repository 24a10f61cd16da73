"""How Quorum reaches a kind cluster (part of KindTarget, harness/target/clients.py): the API through kind's load
balancer as kind's admin, each apiserver at its node's address, and etcd at each control-plane node with kubeadm's
etcd CA and the apiserver's etcd client pair, copied from a node into the run directory (0600)."""

from __future__ import annotations

import base64
import os
from functools import cached_property
from pathlib import Path
from urllib.parse import urlparse

import yaml

from harness.backends.kind.static_pods import ETCD_CLIENT_PORT
from harness.clients.etcdapi import EtcdClient, EtcdCredentials
from harness.clients.kubeapi import ApiClient
from harness.errors import ClusterError
from harness.net.netns import assert_local
from harness.pki import Pair
from harness.run.state import RunState
from harness.target.clients import Clients
from harness.target.hosts import HostRole

APISERVER_PORT = 6443  # kubeadm's default bind port in every control-plane node
# kubeadm's etcd CA, and the client pair it gives kube-apiserver (etcd has no auth: any client of its CA may write)
ETCD_CREDENTIALS = {"etcd-ca.crt": "/etc/kubernetes/pki/etcd/ca.crt",
                    "etcd-client.crt": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
                    "etcd-client.key": "/etc/kubernetes/pki/apiserver-etcd-client.key"}


def _write_secret(path: Path, data: bytes) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


class KindClients(Clients):
    """The Clients part of a kind cluster; the target gives it `run_dir`, `state`, its nodes (`hosts`, `address`,
    `exec`, `container`) and kind's name for the cluster."""

    run_dir: Path
    state: RunState
    kind_name: str

    @property
    def admin_kubeconfig(self) -> Path:
        return self.run_dir / "kubeconfig"

    @cached_property
    def api(self) -> ApiClient:
        """Through kind's load balancer as kind's admin (credentials from its kubeconfig, written 0600)."""
        config = yaml.safe_load(self.admin_kubeconfig.read_text())
        cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
        directory = self.run_dir / "pki"
        directory.mkdir(mode=0o700, exist_ok=True)
        for name, data in {"ca.crt": cluster["certificate-authority-data"], "admin.crt": user["client-certificate-data"],
                           "admin.key": user["client-key-data"]}.items():
            _write_secret(directory / name, base64.b64decode(data))
        return ApiClient(cluster["server"], str(directory / "ca.crt"), Pair(directory / "admin.crt", directory / "admin.key"))

    def apiserver(self, host: str) -> ApiClient:
        other = self.api.on_a_new_connection()
        other.endpoint = f"https://{self._running_address(host)}:{APISERVER_PORT}"
        return other

    def _running_address(self, host: str) -> str:
        address = self.address(host)
        if address is None:
            raise ClusterError(f"kind node {host} has no address: its container is not running",
                               "quorum status shows the nodes; quorum heal brings stopped ones back")
        return address

    def etcd_url(self, host: str) -> str:
        return f"https://{self._running_address(host)}:{ETCD_CLIENT_PORT}"

    def etcd_member_named(self, url: str) -> str | None:
        """Also by node name (Docker's DNS in the kind network resolves it; Quorum's kubeadm patches list the
        members so)."""
        by_name = {f"https://{self.container(node)}:{ETCD_CLIENT_PORT}": node for node in self.hosts(HostRole.ETCD)}
        return by_name.get(url) or super().etcd_member_named(url)

    @cached_property
    def etcd_urls(self) -> list[str]:
        """Cached: monitors ask on every poll, and a node keeps its address (its Power part sees to that)."""
        return [self.etcd_url(node) for node in self.hosts(HostRole.ETCD)]

    @cached_property
    def etcd_credentials(self) -> EtcdCredentials:
        """kubeadm's etcd CA and kube-apiserver's etcd client pair, copied from the first control-plane node into
        run_dir/pki (0600, like the admin credentials)."""
        directory = self.run_dir / "pki"
        directory.mkdir(mode=0o700, exist_ok=True)
        node = self.hosts(HostRole.ETCD)[0]
        for name, source in ETCD_CREDENTIALS.items():
            text = self.exec(node, ["cat", source])
            if "-----BEGIN" not in text:
                raise ClusterError(f"{source} in kind node {node} holds no PEM data",
                                   "the node is not one kubeadm set up; quorum down and up again")
            _write_secret(directory / name, text.encode())
        return EtcdCredentials(directory / "etcd-ca.crt", Pair(directory / "etcd-client.crt", directory / "etcd-client.key"))

    @cached_property
    def etcd(self) -> EtcdClient:
        """kubeadm names each member after its node container; the harness knows nodes by their short names."""
        credentials, prefix = self.etcd_credentials, f"{self.kind_name}-"
        return EtcdClient(self.etcd_urls, str(credentials.ca), credentials.client,
                          host_of=lambda name: name.removeprefix(prefix))

    def ensure_local(self) -> None:
        """The API endpoint is on loopback (kind publishes its load balancer there) or in this run's network."""
        host = urlparse(self.api_endpoint).hostname or ""
        if host not in ("127.0.0.1", "localhost", "::1"):
            assert_local(host, self.state.bridge or "")
