"""Node faults of the docker backend: a whole host container killed, paused, restarted or cut from its
network. Each heal leaves the container running and connected, its network namespace attached again
under the harness's name (a started container has a new one) and locked into the subnet."""

from __future__ import annotations

from dataclasses import dataclass

from python_on_whales.exceptions import DockerException

from harness.backends.docker.hosts import attach, container_name, network_name
from harness.backends.process.target import Cluster
from harness.backends.docker.engine import client
from harness.errors import FaultError
from harness.faults.base import Fault, wait_for


def _backend_missing(cluster: Cluster) -> str | None:
    if cluster.state.backend != "docker":
        return f"node faults need the docker backend (hosts are containers); this cluster runs on {cluster.state.backend}"
    return None


def _ensure_running(cluster: Cluster, host: str) -> None:
    """Unpause or start the host's container, reconnect it, and re-attach its network namespace."""
    docker, name = client(), container_name(cluster.run_id, host)
    state = docker.container.inspect(name).state
    if state.paused:
        docker.container.unpause(name)
    elif not state.running:
        docker.container.start(name)
    networks = docker.container.inspect(name).network_settings.networks or {}
    if network_name(cluster.run_id) not in networks:
        docker.network.connect(network_name(cluster.run_id), name, ip=str(cluster.topology.address_of(host)))
    attach(cluster.state, host, cluster.topology.network.link_rate_mbit)


@dataclass
class NodeFault(Fault):
    host: str = ""

    def unavailable(self, cluster: Cluster) -> str | None:
        return _backend_missing(cluster)

    def plan(self, cluster: Cluster) -> None:
        cluster.topology.host(self.host)  # an unknown host is refused here, before anything acts
        if self.unavailable(cluster):
            raise FaultError(self.unavailable(cluster) or "", "run with --backend docker")

    def undo(self, cluster: Cluster) -> None:
        try:
            _ensure_running(cluster, self.host)
        except DockerException as error:
            raise FaultError(f"could not bring node {self.host} back: {error}",
                             f"docker start {container_name(cluster.run_id, self.host)}") from None


@dataclass
class NodeKill(NodeFault):
    """`docker kill` a host container: the node and all its components vanish at once (power loss)."""

    name = "node-kill"

    def act(self, cluster: Cluster) -> None:
        client().container.kill(container_name(cluster.run_id, self.host))


@dataclass
class NodePause(NodeFault):
    """`docker pause` (cgroup freezer): every process of the node stops, sockets stay open; peers see
    a silent host rather than a dead one."""

    name = "node-pause"

    def act(self, cluster: Cluster) -> None:
        client().container.pause(container_name(cluster.run_id, self.host))


@dataclass
class NodeRestart(NodeFault):
    """`docker restart` a host container: a reboot. Its components come back from what is on disk."""

    name = "node-restart"

    def act(self, cluster: Cluster) -> None:
        client().container.restart(container_name(cluster.run_id, self.host), time=0)
        attach(cluster.state, self.host, cluster.topology.network.link_rate_mbit)


@dataclass
class NodeDisconnect(NodeFault):
    """`docker network disconnect`: the node's interface is removed; processes run on, unreachable."""

    name = "node-disconnect"

    def act(self, cluster: Cluster) -> None:
        name = container_name(cluster.run_id, self.host)
        client().network.disconnect(network_name(cluster.run_id), name, force=True)
        address = str(cluster.topology.address_of(self.host))
        wait_for(lambda: address not in cluster.exec(self.host, ["ip", "-4", "-o", "addr"], check=False), 5,
                 what=f"{self.host}'s interface to go")
