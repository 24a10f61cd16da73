"""A cluster of the docker backend as a Target: the process backend's supervised components, each host a
privileged container, so whole hosts can also lose power, freeze, reboot or lose their network interface.

Each heal leaves the container running and connected, its network namespace attached again under the harness's
name (a started container has a new one) and locked into the subnet (harness/backends/docker/hosts.py:attach)."""

from __future__ import annotations

from python_on_whales.exceptions import DockerException

from harness.backends.docker.engine import client
from harness.backends.docker.hosts import attach, container_name, network_name, source_root
from harness.backends.process.target import ProcessTarget
from harness.components import ComponentSpec
from harness.errors import ClusterError, FaultError
from harness.wait import wait_for
from harness.target.capabilities import Capability


class DockerTarget(ProcessTarget):
    BACKEND_NAME = "docker"

    KEEPERS_IN_HOSTS = True  # each host container runs its components' keepers, in its own namespaces

    @classmethod
    def capabilities(cls) -> frozenset[Capability]:
        return ProcessTarget.capabilities() | {Capability.NODE_POWER, Capability.NODE_DISCONNECT}

    def start_keepers_on(self, host: str, specs: list[ComponentSpec]) -> None:
        """Inside the host's container, as its own command starts the others at boot (a reboot starts these too:
        hostinit.py reads the run's control directories)."""
        for spec in specs:
            try:
                client().container.execute(
                    self.container(host), ["python3", "-m", "harness.backends.process.supervisor",
                                           str(self.run_dir / "components" / spec.id)],
                    detach=True, envs={"PYTHONPATH": str(source_root()), "PYTHONDONTWRITEBYTECODE": "1"})
            except DockerException as error:
                raise FaultError(f"could not start the keeper of {spec.id} in {self.container(host)}: "
                                 f"{str(error).strip().splitlines()[-1]}",
                                 f"docker start {self.container(host)}, then quorum heal {self.run_dir}") from None

    def container(self, host: str) -> str:
        self.topology.host(host)  # KeyError naming the hosts
        return container_name(self.run_id, host)

    def power_off(self, hosts: list[str]) -> None:
        client().container.kill([self.container(host) for host in hosts])

    def freeze(self, host: str) -> None:
        client().container.pause(self.container(host))

    def power_cycle(self, hosts: list[str]) -> None:
        """A reboot of each: its components come back from what is on disk, under their keepers."""
        for host in hosts:
            client().container.restart(self.container(host), time=0)
            attach(self.state, host, self.topology.network.link_rate_mbit)

    def disconnect(self, host: str) -> None:
        client().network.disconnect(network_name(self.run_id), self.container(host), force=True)
        address = str(self.topology.address_of(host))
        wait_for(lambda: address not in self.exec(host, ["ip", "-4", "-o", "addr"], check=False), 5,
                 what=f"{host}'s interface to go")

    def power_on(self, hosts: list[str]) -> None:
        for host in hosts:
            name = self.container(host)
            try:
                self._ensure_running(host, name)
            except (DockerException, ClusterError) as error:
                raise FaultError(f"could not bring host {host} back: {error}", f"docker start {name}") from None

    def _ensure_running(self, host: str, name: str) -> None:
        """Unpause or start the host's container, reconnect it, and re-attach its network namespace."""
        docker = client()
        state = docker.container.inspect(name).state
        if state.paused:
            docker.container.unpause(name)
        elif not state.running:
            docker.container.start(name)
        networks = docker.container.inspect(name).network_settings.networks or {}
        if network_name(self.run_id) not in networks:
            docker.network.connect(network_name(self.run_id), name, ip=str(self.topology.address_of(host)))
        attach(self.state, host, self.topology.network.link_rate_mbit)
