"""How Quorum reaches a cluster it did not build (part of RemoteTarget, harness/target/clients.py): the API through
the inventory's endpoint with the kubeconfig's credentials (copied into the run directory, 0600), each apiserver at
its host's address and the port it was seen serving, and etcd at the inventory's endpoints with its client
certificate, members mapped to the inventory's hosts by address."""

from __future__ import annotations

import socket
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from harness.clients.etcdapi import EtcdClient, EtcdCredentials
from harness.clients.kubeapi import ApiClient
from harness.errors import ClusterError, Unsupported
from harness.pki import Pair
from harness.remote.credentials import ApiCredentials, api_credentials, load_pair
from harness.remote.ssh import RemoteError
from harness.target.clients import Clients
from harness.target.hosts import HostRole
from harness.topology import Component

if TYPE_CHECKING:
    from harness.inventory.model import Inventory
    from harness.remote.ssh import SshHost

APISERVER_PORT = 6443  # kube-apiserver's default --secure-port


def resolved(address: str) -> set[str]:
    try:
        return {info[4][0] for info in socket.getaddrinfo(address, None)}
    except socket.gaierror:
        return set()


class InventoryClients(Clients):
    """The Clients part of a target an inventory describes; the target gives it `topology` (the inventory),
    `run_dir`, its hosts, SSH to them, and the flags a component was seen running with."""

    topology: "Inventory"
    run_dir: Path
    ssh: "dict[str, SshHost]"

    @cached_property
    def _credentials(self) -> ApiCredentials:
        return api_credentials(self.topology, self.run_dir, self.run_dir)

    @property
    def admin_kubeconfig(self) -> Path:
        return self._credentials.kubeconfig

    def load_credentials(self) -> tuple[Path, Pair]:
        return load_pair(self._credentials)  # the identity the inventory gave Quorum

    @cached_property
    def api(self) -> ApiClient:
        return ApiClient(self.topology.api_endpoint, str(self._credentials.ca), self._credentials.client,
                         self._credentials.token)

    def apiserver(self, host: str) -> ApiClient:
        other = self.api.on_a_new_connection()
        try:
            port = self.flags_seen(Component.APISERVER, host).get("--secure-port", str(APISERVER_PORT))
        except (ClusterError, RemoteError):  # not running now (nor seen before): its default port
            port = str(APISERVER_PORT)
        other.endpoint = f"https://{self._address(host)}:{int(port)}"
        return other

    def _address(self, host: str) -> str:
        return next(h.address for h in self.topology.hosts if h.name == host)

    def lease_clients(self) -> list[ApiClient]:
        """Through the load balancer and, if that fails, from each apiserver directly."""
        return [self.api] + [self.apiserver(host) for host in self.hosts(HostRole.CONTROLLER)]

    def _host_by_address(self, address: str) -> str | None:
        addresses = resolved(address) | {address}
        return next((h.name for h in self.topology.hosts if (resolved(h.address) | {h.address}) & addresses), None)

    @cached_property
    def etcd_urls(self) -> list[str]:
        return list(self._etcd_access().endpoints)

    def etcd_url(self, host: str) -> str:
        for url in self.etcd_urls:
            if self._host_by_address(urlparse(url).hostname or "") == host:
                return url
        raise ClusterError(f"no etcd endpoint in the inventory reaches host {host}",
                           "list each etcd host's https://address:2379 under etcd.endpoints")

    def etcd_member_named(self, url: str) -> str | None:
        """By address: a component may name a member by a DNS name the inventory gives as an IP, or the reverse."""
        parsed = urlparse(url)
        host = self._host_by_address(parsed.hostname or "")
        return host if host in self.hosts(HostRole.ETCD) else None

    def _etcd_access(self):
        if self.topology.etcd is None:
            raise Unsupported("the inventory has no etcd: section", "add etcd.endpoints and the client certificate")
        return self.topology.etcd

    @cached_property
    def etcd_credentials(self) -> EtcdCredentials:
        """The inventory's client certificate: local files, or (on_hosts) copied from an etcd host (0600)."""
        access = self._etcd_access()
        if not access.on_hosts:
            return EtcdCredentials(Path(access.ca), Pair(Path(access.cert), Path(access.key)))
        directory = self.run_dir / "pki"
        directory.mkdir(mode=0o700, exist_ok=True)
        source = self.ssh[self.hosts(HostRole.ETCD)[0]]
        paths = {}
        for field in ("ca", "cert", "key"):
            path = directory / f"etcd-{field}.pem"
            path.touch(mode=0o600)
            path.write_bytes(source.read_file(getattr(access, field)))
            paths[field] = path
        return EtcdCredentials(paths["ca"], Pair(paths["cert"], paths["key"]))

    @cached_property
    def etcd(self) -> EtcdClient:
        """Members are named by etcd's --name, which need not be the inventory's host name: mapped by address."""
        credentials = self.etcd_credentials
        client = EtcdClient(self.etcd_urls, str(credentials.ca), credentials.client)
        names: dict[str, str] = {}
        for url in self.etcd_urls:
            try:
                members = client.post(url, "/v3/cluster/member/list", {}, 5.0).get("members", [])
            except Exception:  # noqa: BLE001 - another member may answer
                continue
            for member in members:
                for member_url in member.get("peerURLs", []) + member.get("clientURLs", []):
                    host = self._host_by_address(urlparse(member_url).hostname or "")
                    if host:
                        names[member.get("name", "")] = host
            break
        client.host_of = lambda name: names.get(name, name)
        return client

    def ensure_local(self) -> None:
        """Traffic goes only where the inventory points: the API endpoint and the etcd endpoints must be the load
        balancer's address or an inventory host's (a kubeconfig or URL pointing elsewhere is refused)."""
        lb = urlparse(self.topology.api_endpoint).hostname or ""
        allowed = resolved(lb) | {lb} | {a for h in self.topology.hosts for a in resolved(h.address) | {h.address}}
        for url in [self.topology.api_endpoint, *(self.etcd_urls if self.topology.etcd else [])]:
            address = urlparse(url).hostname or ""
            if not (resolved(address) | {address}) & allowed:
                raise ClusterError(f"{url} is not an address the inventory names: refusing to send traffic there",
                                   "point api_endpoint and etcd.endpoints at the inventory's hosts")
