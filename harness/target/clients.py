"""How Quorum reaches what a cluster serves, and as whom: the Kubernetes API (through the load balancer or one
apiserver directly) and etcd (its members' client URLs and the certificate Quorum presents).

Part of the Target (harness/target/protocol.py). Each backend says where its cluster's API and etcd answer and where
the credentials come from (Quorum's own PKI, kind's kubeconfig, an inventory's files); the monitors, faults and
checks only ask for a client.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING

from harness.target.capabilities import Capability
from harness.target.hosts import HostRole

if TYPE_CHECKING:
    from harness.clients.etcdapi import EtcdClient, EtcdCredentials
    from harness.clients.kubeapi import ApiClient
    from harness.pki import Pair


class Clients(ABC):
    """Part of the Target: the API and etcd clients, the endpoints they reach and the identities they use."""

    # ---- the Kubernetes API --------------------------------------------------------------------

    @property
    @abstractmethod
    def api(self) -> "ApiClient":
        """The Kubernetes API through the load balancer, as an admin."""

    @abstractmethod
    def apiserver(self, host: str) -> "ApiClient":
        """One apiserver directly, bypassing the load balancer."""

    @property
    def api_endpoint(self) -> str:
        return self.api.endpoint

    @property
    @abstractmethod
    def admin_kubeconfig(self) -> Path:
        """A kubeconfig of the admin identity `api` uses (0600, outside reports/), for the tools that read one."""

    def lease_clients(self) -> list["ApiClient"]:
        """Where the lease watcher reads leases from, in order of preference."""
        return [self.api]

    # ---- etcd ----------------------------------------------------------------------------------

    @property
    @abstractmethod
    def etcd(self) -> "EtcdClient":
        """etcd's v3 API over every member's client URL, with the harness's client certificate."""

    @property
    @abstractmethod
    def etcd_urls(self) -> list[str]:
        """Every member's client URL, in the order of `hosts(HostRole.ETCD)`."""

    @abstractmethod
    def etcd_url(self, host: str) -> str:
        """The client URL of the member on `host`."""

    def unanswered_etcd_url(self) -> str:
        """An etcd client URL nothing answers at, for a component misconfigured on purpose. Here the apiserver
        host's own loopback, port 1 (not 2379: kubeadm's stacked etcd listens on loopback too): Quorum sends nothing
        into a network it did not create. A target on a network Quorum built names an address of it that no host
        owns, the common mistake (BuiltNetworkAddresses)."""
        return "https://127.0.0.1:1"

    def etcd_member_named(self, url: str) -> str | None:
        """The etcd host a client URL from a component's configuration reaches (by address, or by a name the
        cluster's DNS gives the host), or None when it names no member."""
        hosts = self.hosts(HostRole.ETCD)  # type: ignore[attr-defined]  # the Hosts part, beside this one
        return next((host for host in hosts if self.etcd_url(host) == url), None)

    @property
    @abstractmethod
    def etcd_credentials(self) -> "EtcdCredentials | None":
        """The harness's etcd client certificate (None when etcd takes plain-text clients)."""

    # ---- where the traffic goes, and as whom ---------------------------------------------------

    @abstractmethod
    def ensure_local(self) -> None:
        """Raise unless traffic to the cluster stays on this machine (checked before monitors send any)."""

    def client_credentials(self, user: str) -> tuple[Path, "Pair"]:
        """The cluster CA's certificate and a client pair for `user`, which Quorum's PKI issued (RUN_FILES)."""
        self.require(Capability.RUN_FILES)  # type: ignore[attr-defined]  # the Target's capabilities
        raise NotImplementedError

    def load_credentials(self) -> tuple[Path, "Pair"]:
        """The CA and client pair the API load runs as: Quorum's own loadgen identity where Quorum issued it."""
        return self.client_credentials("loadgen")
