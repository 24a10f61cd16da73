"""The docker backend's entry point (harness/backends/registry.py): each host a privileged container from the
node base image, on a Quorum-owned Docker network; components under the same supervisor as the process backend."""

from __future__ import annotations

from pathlib import Path

from harness.backends.docker import hosts
from harness.backends.docker.target import DockerTarget
from harness.backends.process import teardown
from harness.backends.process.backend import ProcessBackend
from harness.backends.process.build import Say, build
from harness.run.state import RunState


class DockerBackend(ProcessBackend):
    """The process backend's topologies and supervised components, on other hosts."""

    name = "docker"
    summary = "each host a privileged container; the same supervised components as process"
    default_topology = "clusters/ha3.yaml"
    target_class = DockerTarget

    def up(self, topology_file: Path, run_dir: Path | None = None, say: Say = lambda _: None,
           timeout_s: float | None = None) -> DockerTarget:
        return build(topology_file, run_dir, say, timeout_s, backend=self.name, hosts=hosts.ContainerHosts,
                     target=DockerTarget)  # type: ignore[return-value]

    def teardown(self, state: RunState) -> list[str]:
        removed = hosts.teardown(state)  # the containers take their processes
        return removed + teardown.teardown(state, own_bridge=False)  # Docker removed the bridge with the network

    def reclaim(self, run_id: str) -> list[str]:
        return hosts.remove_run(run_id)

    def leftovers(self) -> list[str]:
        return hosts.leftovers()


BACKEND = DockerBackend()
