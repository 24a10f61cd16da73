"""A component's keeper (Quorum's supervisor, harness/backends/process/supervisor.py): its files and spec written in
the run directory, and the keeper process started in its host's namespace. Shared by a build and a join."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness.backends.process import defects
from harness.backends.process.supervisor import KeeperSpec
from harness.components import ComponentSpec
from harness.net import netns
from harness.run.state import RunState
from harness.shell import python_environment
from harness.topology import Topology


def write_keeper(run_dir: Path, state: RunState, spec: ComponentSpec, in_container: bool,
                  cluster_topology: Topology) -> None:
    """The component's files and its keeper's spec (a container's keepers are already in its namespaces)."""
    for path, content in spec.files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    (run_dir / "logs").mkdir(exist_ok=True)
    KeeperSpec(
        component_id=spec.id, argv=spec.argv, netns="" if in_container else netns.netns_name(state.run_id, spec.host),
        hostname="" if in_container else spec.host,
        policy=spec.restart.policy, backoff_s=spec.restart.backoff_s, max_backoff_s=spec.restart.max_backoff_s,
        log=str(run_dir / "logs" / f"{spec.id}.log"), events=str(run_dir / "events.jsonl"), env=spec.env,
        cgroup="" if in_container else defects.cpu_cgroup(cluster_topology, state.run_id, spec),
    ).save(run_dir / "components" / spec.id)


def start_keepers(run_dir: Path, specs: list[ComponentSpec]) -> None:
    """One keeper process per spec, in a session of its own (it outlives the harness that started it)."""
    for spec in specs:
        control = run_dir / "components" / spec.id
        with open(run_dir / "logs" / "supervisor.log", "ab") as log:
            subprocess.Popen([sys.executable, "-m", "harness.backends.process.supervisor", str(control)],
                             stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True, env=python_environment())
