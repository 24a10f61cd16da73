"""The docker backend's hosts as machines (harness/target/power.py): each host is a privileged container, so it
loses power with `docker kill`, freezes with `docker pause`, reboots with a restart, and loses its interface when
it is disconnected from the run's network.

Each heal leaves the container running and connected, its network namespace attached again under the harness's
name (a started container has a new one) and locked into the subnet (harness/backends/docker/hosts.py:attach)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from python_on_whales.exceptions import DockerException

from harness.backends.docker.engine import client
from harness.backends.docker.hosts import attach, network_name
from harness.errors import ClusterError, FaultError
from harness.target.power import Power
from harness.wait import wait_for

if TYPE_CHECKING:
    from harness.backends.docker.target import DockerTarget


class ContainerPower(Power):
    DISCONNECTS = True

    target: "DockerTarget"

    def off(self, hosts: list[str]) -> None:
        client().container.kill([self.target.container(host) for host in hosts])

    def on(self, hosts: list[str]) -> None:
        for host in hosts:
            name = self.target.container(host)
            try:
                self._ensure_running(host, name)
            except (DockerException, ClusterError) as error:
                raise FaultError(f"could not bring host {host} back: {error}", f"docker start {name}") from None

    def cycle(self, hosts: list[str]) -> None:
        """A reboot of each: its components come back from what is on disk, under their keepers."""
        for host in hosts:
            client().container.restart(self.target.container(host), time=0)
            attach(self.target.state, host, self.target.topology.network.link_rate_mbit)

    def freeze(self, host: str) -> None:
        client().container.pause(self.target.container(host))

    def disconnect(self, host: str) -> None:
        client().network.disconnect(network_name(self.target.run_id), self.target.container(host), force=True)
        address = str(self.target.topology.address_of(host))
        wait_for(lambda: address not in self.target.exec(host, ["ip", "-4", "-o", "addr"], check=False), 5,
                 what=f"{host}'s interface to go")

    def _ensure_running(self, host: str, name: str) -> None:
        """Unpause or start the host's container, reconnect it, and re-attach its network namespace."""
        docker, network = client(), network_name(self.target.run_id)
        state = docker.container.inspect(name).state
        if state.paused:
            docker.container.unpause(name)
        elif not state.running:
            docker.container.start(name)
        networks = docker.container.inspect(name).network_settings.networks or {}
        if network not in networks:
            docker.network.connect(network, name, ip=str(self.target.topology.address_of(host)))
        attach(self.target.state, host, self.target.topology.network.link_rate_mbit)
