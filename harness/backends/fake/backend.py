"""The fake backend's entry point (harness/backends/registry.py). Not offered on the command line: `up` writes a
model of the topology's cluster into the run directory and nothing else, so nothing on the machine needs
registering or removing."""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path

from harness.backends.common import MARKER, check_run_dir, default_run_dir
from harness.backends.fake.target import MODEL, FakeTarget
from harness.errors import ClusterError
from harness.run.state import RunState
from harness.target.backend import Backend, Say
from harness.topology import Topology, load_topology


class FakeBackend(Backend):
    name = "fake"
    summary = "a model of the cluster, for Quorum's own unit tests"
    default_topology = "clusters/ha3.yaml"
    target_class = FakeTarget
    public = False

    def load_topology(self, path: Path) -> Topology:
        return load_topology(path)

    def up(self, topology_file: Path, run_dir: Path | None = None, say: Say = lambda _: None,
           timeout_s: float | None = None) -> FakeTarget:
        topology = load_topology(topology_file)
        run_dir = (run_dir or default_run_dir(topology.name)).resolve()
        if (run_dir / "state.json").exists():
            raise ClusterError(f"{run_dir} already holds a cluster", f"quorum down {run_dir}")
        check_run_dir(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(run_dir, 0o700)
        (run_dir / MARKER).touch()
        shutil.copyfile(topology_file, run_dir / "topology.yaml")
        RunState(run_id=secrets.token_hex(3), name=topology.name, backend=self.name, run_dir=str(run_dir),
                 status="ready").save()
        (run_dir / MODEL).write_text(json.dumps(FakeTarget.initial_model(topology), indent=1))
        return FakeTarget(run_dir)

    def teardown(self, state: RunState) -> list[str]:
        (Path(state.run_dir) / MODEL).unlink(missing_ok=True)
        return []


BACKEND = FakeBackend()
