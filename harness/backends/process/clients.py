"""How Quorum reaches a cluster it built (part of ProcessTarget and DockerTarget, harness/target/clients.py): the API
through the topology's endpoint (its load balancer, or the one apiserver) and each apiserver at its health address,
etcd at the members' client URLs, each as an identity Quorum's own PKI issued in the run directory."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from harness.clients.etcdapi import EtcdClient, EtcdCredentials
from harness.clients.kubeapi import ApiClient
from harness.components import etcd as etcd_component
from harness.net.netns import assert_local
from harness.pki import Pair
from harness.run.state import RunState
from harness.target.clients import Clients
from harness.target.hosts import HostRole
from harness.topology import Component, Topology, unowned_address

if TYPE_CHECKING:
    from harness.components import Layout


class BuiltClients(Clients):
    """The Clients part of a cluster Quorum built; the target gives it the topology, the run's layout (its PKI) and
    state, its hosts, and each component's spec (where an apiserver answers)."""

    topology: Topology
    layout: "Layout"
    state: RunState

    @property
    def api_endpoint(self) -> str:
        return self.topology.api_endpoint

    @cached_property
    def api(self) -> ApiClient:
        return ApiClient(self.api_endpoint, str(self.layout.pki.ca.cert), self.layout.pki.client("admin"))

    def apiserver(self, host: str) -> ApiClient:
        spec = self.spec(Component.APISERVER, host)  # type: ignore[attr-defined]  # the target's components
        return ApiClient(f"https://{spec.health.address}:{spec.health.port}", str(self.layout.pki.ca.cert),
                         self.layout.pki.client("admin"))

    def lease_clients(self) -> list[ApiClient]:
        """Through the LB and, if that fails, from each apiserver directly."""
        controllers = self.hosts(HostRole.CONTROLLER)  # type: ignore[attr-defined]  # the target's Hosts part
        return [self.api] + [self.apiserver(host) for host in controllers]

    @property
    def admin_kubeconfig(self) -> Path:
        return self.layout.admin_kubeconfig

    @property
    def etcd_urls(self) -> list[str]:
        return etcd_component.client_urls(self.topology)

    def etcd_url(self, host: str) -> str:
        return etcd_component.client_url(self.topology, self.topology.host(host))

    @property
    def etcd_credentials(self) -> EtcdCredentials | None:
        if not self.topology.etcd.tls:
            return None
        return EtcdCredentials(self.layout.pki.etcd_ca.cert, self.layout.pki.etcd_client("quorum-client"))

    @cached_property
    def etcd(self) -> EtcdClient:
        credentials = self.etcd_credentials
        return EtcdClient(self.etcd_urls, str(credentials.ca) if credentials else None,
                          credentials.client if credentials else None)

    def ensure_local(self) -> None:
        for host in self.topology.hosts:
            assert_local(str(self.topology.address_of(host)), self.state.bridge or "")

    def unanswered_etcd_url(self) -> str:
        """An address of the run's own subnet that no host has (the common mistake: an address that does not
        answer), on etcd's client port."""
        taken = {str(self.topology.address_of(host)) for host in self.topology.hosts}
        return f"https://{unowned_address(self.topology.network.subnet, taken)}:{etcd_component.CLIENT_PORT}"

    def client_credentials(self, user: str) -> tuple[Path, Pair]:
        return self.layout.pki.ca.cert, self.layout.pki.client(user)
