"""What every cluster handle shares (the process/docker Cluster and the KindCluster): a run directory's state,
its topology's name, and waiting for the cluster to heal itself."""

from __future__ import annotations

import time
from pathlib import Path

from harness.run.state import RunState


class RunHandle:
    run_dir: Path
    state: RunState
    # seconds between health checks while waiting; a kind cluster's problems() asks more (every node, every apiserver)
    poll_interval_s: float = 1.0

    @property
    def name(self) -> str:
        return self.topology.name  # type: ignore[attr-defined]

    @property
    def run_id(self) -> str:
        return self.state.run_id

    def problems(self) -> list[str]:
        raise NotImplementedError

    def problems_after(self, timeout_s: float) -> list[str]:
        """Wait up to `timeout_s` for the cluster to heal itself; what is still unhealthy (empty if healthy)."""
        deadline = time.monotonic() + timeout_s
        problems = self.problems()
        while problems and time.monotonic() < deadline:
            time.sleep(self.poll_interval_s)
            problems = self.problems()
        return problems
