"""The process backend's entry point (harness/backends/registry.py): hosts are network namespaces on a Quorum
bridge, components run under Quorum's supervisor."""

from __future__ import annotations

from pathlib import Path

from harness.backends.process import teardown
from harness.backends.process.build import NamespaceHosts, Say, build
from harness.backends.process.target import ProcessTarget
from harness.run.state import RunState
from harness.target.backend import Backend
from harness.topology import Topology, load_topology


class ProcessBackend(Backend):
    name = "process"
    summary = "each host a network namespace, components under Quorum's supervisor (default)"
    default_topology = "clusters/ha3.yaml"
    target_class = ProcessTarget

    def load_topology(self, path: Path) -> Topology:
        return load_topology(path)

    def describe(self, topology: Topology) -> dict[str, str]:
        return {"kubernetes": topology.kubernetes, "cluster": topology.name,
                "hosts": ", ".join(h.name for h in topology.hosts)}

    def up(self, topology_file: Path, run_dir: Path | None = None, say: Say = lambda _: None,
           timeout_s: float | None = None) -> ProcessTarget:
        return build(topology_file, run_dir, say, timeout_s, backend=self.name, hosts=NamespaceHosts,
                     target=ProcessTarget)

    def teardown(self, state: RunState) -> list[str]:
        return teardown.teardown(state)

    def leftovers(self) -> list[str]:
        return teardown.leftovers()


BACKEND = ProcessBackend()
