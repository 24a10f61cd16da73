"""How a cluster Quorum did not build is looked at: each apiserver's /readyz and each etcd member's status asked
directly, the controller-manager's and the scheduler's /healthz from inside their host (they usually bind to
loopback), /readyz through the inventory's endpoint, and the leader leases, whose holders the inventory may name
otherwise than their hostnames."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from harness.errors import ClusterError
from harness.remote.ssh import RemoteError
from harness.target.health import Health
from harness.target.protocol import HostRole, component_name
from harness.topology import Component

if TYPE_CHECKING:
    from harness.backends.remote.target import RemoteTarget

# the controller-manager's and the scheduler's default --secure-port, asked from inside their host
HEALTH_PORTS = {"kube-controller-manager": 10257, "kube-scheduler": 10259}


class InventoryHealth(Health):
    target: "RemoteTarget"

    def problems(self) -> list[str]:
        target = self.target
        found = []
        for host in target.hosts():
            for component in target.topology.components:
                if host in target.component_hosts(component) and not self.component_healthy(component, host):
                    found.append(f"{component.value}@{host} unhealthy")
        if not target.api.ready(timeout=5.0):
            found.append(f"/readyz via {target.topology.api_endpoint}")
        found += [f"lease {name} unheld" for name, host in self.lease_holders().items() if host is None]
        return found

    def component_healthy(self, component: Component | str, host: str) -> bool:
        """The apiserver's /readyz and etcd's status, asked directly; the controller-manager's and the
        scheduler's /healthz from inside their host, on the port and address its running flags give."""
        target = self.target
        name = component_name(component)
        try:
            if name == Component.APISERVER.value:
                return target.apiserver(host).ready()
            if name == Component.ETCD.value:
                return target.etcd.status(target.etcd_url(host), timeout=2.0) is not None
            flags = target.flags_seen(name, host)
            port = int(flags.get("--secure-port", HEALTH_PORTS[name]))
            address = flags.get("--bind-address", "127.0.0.1")
            address = "127.0.0.1" if address in ("0.0.0.0", "::", "") else address
            answer = target.exec(host, ["curl", "-sk", "--max-time", "2", f"https://{address}:{port}/healthz"],
                                 check=False)
            return answer.strip() == "ok"
        except (ClusterError, RemoteError):
            return False

    @cached_property
    def _hostnames(self) -> dict[str, str]:
        """Each host's own hostname (what a lease holder's identity starts with) -> its inventory name."""
        names = {}
        for host in self.target.hosts(HostRole.CONTROLLER):
            hostname = self.target.exec(host, ["hostname"], check=False).strip()
            if hostname:
                names[hostname] = host
        return names

    def lease_host(self, identity: str) -> str:
        """Identities are '<hostname>_<uuid>'; the inventory may name the host otherwise."""
        hostname = identity.split("_", 1)[0]
        if hostname in self.target.hosts():
            return hostname
        return self._hostnames.get(hostname, hostname)
