"""A backend: how clusters of one kind are built, opened and removed. Each is one package under
harness/backends/<name>/ whose `backend` module holds BACKEND, an instance of this class, registered by name in
harness/backends/registry.py."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.run.state import RunState
from harness.target.capabilities import Capability
from harness.target.protocol import Target

Say = Callable[[str], None]


class Backend(ABC):
    name: str
    summary: str  # one line for --help
    default_topology: str  # the topology `pytest scenarios/ --backend NAME` uses without --topology
    target_class: type[Target]
    public: bool = True  # offered by `quorum up --backend` and the plugin's --backend
    builds: bool = True  # False: the cluster is someone else's; the plugin never tears it down or rebuilds it

    @property
    def capabilities(self) -> frozenset[Capability]:
        return self.target_class.capabilities()

    def lacks(self, *needed: Capability, topology: Any = None) -> str | None:
        """Why a cluster of this backend (and of `topology`, when given) cannot do what needs `needed`."""
        return self.target_class.lacks(*needed) or (self.topology_lacks(topology, *needed) if topology else None)

    def topology_lacks(self, topology: Any, *needed: Capability) -> str | None:
        """What the backend offers but this topology's clusters do not have (None: nothing missing)."""
        return None

    @abstractmethod
    def load_topology(self, path: Path) -> Any:
        """The validated topology model; TopologyError naming the field and the fix otherwise."""

    def describe(self, topology: Any) -> dict[str, str]:
        """What the report's environment says about a topology of this backend."""
        return {"cluster": topology.name}

    def destructive_refusal(self, topology: Any) -> str | None:
        """Why destructive scenarios must not run on a cluster of this topology (None: they may)."""
        if getattr(topology, "disposable", False):
            return None
        return (f"{topology.name} is not disposable (disposable: false): destructive scenarios never run on it; "
                "set disposable: true only on a cluster that may be broken on purpose")

    @abstractmethod
    def up(self, topology_file: Path, run_dir: Path | None = None, say: Say = lambda _: None,
           timeout_s: float | None = None) -> Target:
        """Build the cluster and return it healthy; a failed start is torn down and raises ClusterError."""

    def open(self, run_dir: Path) -> Target:
        """The target of a run directory this backend built."""
        return self.target_class(run_dir)  # type: ignore[call-arg]

    @abstractmethod
    def teardown(self, state: RunState) -> list[str]:
        """Remove everything the run made on this machine (idempotent); what was removed. Called by
        harness.backends.registry.down, which then removes the state and keys."""

    def reclaim(self, run_id: str) -> list[str]:
        """Remove what an unregistered run of this backend left, found without its state (labels, names)."""
        return []

    def leftovers(self) -> list[str]:
        """Remove every leftover of this backend's runs on the machine (`quorum down --all`)."""
        return []
