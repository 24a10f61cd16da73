"""The backends, by name: `quorum up --backend NAME`, the plugin's --backend and `quorum heal`/`down` of a run
directory all look a backend up here. A backend is a package with a `backend` module holding BACKEND; adding one
is one line below (docs/design.md).

Imported by name (importlib), not at the top: each backend imports what it needs (Docker's client, kind), and a
process-backend run must not need them."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

from harness.errors import ClusterError
from harness.run.state import RunState, unregister
from harness.target.backend import Backend
from harness.target.protocol import Target

# teardown order for `quorum down --all`: kind's node containers before the Docker networks they use, the containers
# before the process backend's namespaces and rules
BACKENDS = {
    "process": "harness.backends.process.backend",
    "kind": "harness.backends.kind.backend",
    "docker": "harness.backends.docker.backend",
    "fake": "harness.backends.fake.backend",
    "remote": "harness.backends.remote.backend",
}
# not offered by --backend: fake is for Quorum's own tests; remote is chosen with --target (an inventory)
NOT_PUBLIC = ("fake", "remote")


def get(name: str) -> Backend:
    if name not in BACKENDS:
        raise ClusterError(f"unknown backend {name!r}", f"use one of: {', '.join(public_names())}")
    return importlib.import_module(BACKENDS[name]).BACKEND


def public_names() -> list[str]:
    return [name for name in BACKENDS if name not in NOT_PUBLIC]


def all_backends() -> list[Backend]:
    return [get(name) for name in BACKENDS]


def open_target(run_dir: Path) -> Target:
    """The target of a run directory, whatever built it."""
    run_dir = Path(run_dir).resolve()
    return get(RunState.load(run_dir).backend).open(run_dir)


# what holds keys or cluster data goes with the run; logs, events and the fault journal stay for debugging
RUN_DATA = ("pki", "data", "snapshots", "config", "components", "admin.kubeconfig", "kubeconfig", "topology.yaml",
            "overrides", "state.json")


def down(run_dir: Path, keep_logs: bool = True) -> list[str]:
    """Remove one run: its backend's teardown, then its registration, keys and data. Idempotent."""
    from harness.backends.common import MARKER, require_root

    require_root("down")
    run_dir = Path(run_dir).resolve()
    if not (run_dir / "state.json").exists():
        return []
    if not (run_dir / MARKER).exists():
        raise ClusterError(f"{run_dir} holds a state.json but is not a Quorum run directory (no {MARKER}): "
                           "nothing there is deleted", "remove the run's leftovers by hand, or `quorum down --all`")
    state = RunState.load(run_dir)
    state.status = "stopping"
    state.save()
    removed = get(state.backend).teardown(state)
    unregister(state.run_id)
    # the journal's faults went with the cluster: kept as this run's log, never healed against the next cluster
    # built in the same directory (a stale disaster-recovery record would restore an old snapshot onto it)
    journal = run_dir / "faults.jsonl"
    if journal.exists():
        journal.rename(run_dir / f"faults-{state.run_id}.jsonl")
    for name in RUN_DATA:
        path = run_dir / name
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    if not keep_logs:
        shutil.rmtree(run_dir, ignore_errors=True)
    return removed


def down_all() -> list[str]:
    """Remove every run registered here, then whatever crashed runs of any backend left unregistered."""
    from harness.backends.common import require_root
    from harness.net.netns import remove_guard_route_if_unused
    from harness.run.state import registered_runs

    require_root("down")
    removed = []
    for run_id, run_dir in registered_runs().items():
        if (run_dir / "state.json").exists():
            try:
                removed += down(run_dir)
            except ClusterError as error:  # a state cut short: the sweep of every backend's leftovers below finds it
                removed.append(f"(run {run_id}: {error.problem})")
        unregister(run_id)
    for backend in all_backends():
        removed += backend.leftovers()
    remove_guard_route_if_unused()
    return removed


def reclaim(run_id: str) -> list[str]:
    """What an unregistered run left, whatever its backend (harness/backends/orphans.py)."""
    removed = []
    for backend in all_backends():
        removed += backend.reclaim(run_id)
    return removed
