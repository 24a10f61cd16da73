"""How a cluster of the process (and docker) backend is looked at: each component's process and its health endpoint,
/readyz through the load balancer, the leader leases, and HAProxy's own view of each apiserver read on its admin
socket in the run directory."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.clients.haproxy_admin import server_states
from harness.clients.health import probe
from harness.components import haproxy as haproxy_component
from harness.errors import ClusterError
from harness.target.health import Health
from harness.target.protocol import HostRole
from harness.topology import Component

if TYPE_CHECKING:
    from harness.backends.process.target import ProcessTarget


class SupervisedHealth(Health):
    LB_VIEW = True  # HAProxy's admin socket is a file of the run directory
    target: "ProcessTarget"

    def problems(self) -> list[str]:
        found = [f"{cid} unhealthy" for cid, ok in self.component_health().items() if not ok]
        if not self.target.api.ready():
            found.append("/readyz via the load balancer")
        if self.target.topology.leader_election.enabled:
            found += [f"lease {name} unheld" for name, host in self.lease_holders().items() if host is None]
        return found + self.lb_problems()

    def component_healthy(self, component: Component | str, host: str) -> bool:
        return (self.target.pid(component, host) is not None
                and probe(self.target.spec(component, host).health, 0.5))

    def component_health(self, timeout: float = 1.0) -> dict[str, bool]:
        """'<component>@<host>' -> its health endpoint answers within `timeout`, for every component of the run."""
        return {cid: probe(spec.health, timeout) for cid, spec in self.target.specs.items()}

    def lb_problems(self) -> list[str]:
        """Apiservers the load balancer does not (yet) mark UP. An apiserver can answer its own /readyz while
        the LB still counts its rise checks, or still routes to it while it restarts (a restart shorter than
        fall x inter); a test that starts then meets the stale routing (seen after a heal restarted every
        apiserver: anonymous /readyz through the LB got 403 and TLS EOFs)."""
        topology = self.target.topology
        if topology.load_balancer_host is None or not topology.load_balancer.health_check.enabled:
            return []  # without health checks HAProxy reports "no check": nothing to wait for
        try:
            states = self.lb_server_states()
        except ClusterError as error:
            return [f"load balancer state unreadable: {error}"]
        return [f"load balancer marks {server} {state}" for server, state in states.items() if state != "UP"]

    def lease_host(self, identity: str) -> str:
        """Identities are '<hostname>_<uuid>', and the supervisor names each host's UTS namespace after it."""
        return identity.split("_", 1)[0]

    def lb_server_states(self) -> dict[str, str]:
        topology = self.target.topology
        lb = topology.load_balancer_host
        if lb is None:
            raise ClusterError(f"topology {topology.name} has no load balancer host",
                               "add a host with roles: [loadbalancer] (clusters/ha3.yaml has one)")
        controllers = set(self.target.hosts(HostRole.CONTROLLER))  # a spare host's server waits in maintenance
        socket = haproxy_component.admin_socket(self.target.layout, lb)
        return {server: state for server, state in server_states(socket).items() if server in controllers}
