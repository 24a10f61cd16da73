"""A cluster of the docker backend as a Target: the process backend's supervised components, each host a
privileged container, so whole hosts can also lose power, freeze, reboot or lose their network interface (its Power
part, harness/backends/docker/power.py)."""

from __future__ import annotations

from python_on_whales.exceptions import DockerException

from harness.backends.docker.engine import client
from harness.backends.docker.hosts import container_name, source_root
from harness.backends.docker.power import ContainerPower
from harness.backends.process.target import ProcessTarget
from harness.components import ComponentSpec
from harness.errors import FaultError


class DockerTarget(ProcessTarget):
    BACKEND_NAME = "docker"

    KEEPERS_IN_HOSTS = True  # each host container runs its components' keepers, in its own namespaces

    POWER = ContainerPower

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
