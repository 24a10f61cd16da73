"""What every backend's `up` and the commands share: root, run directories, finding a run, log excerpts."""

from __future__ import annotations

import os
import re
import secrets
import shutil
from pathlib import Path

from harness.errors import ClusterError
from harness.run.state import RunState, register, registered_runs
from harness.validation import checked_directory


def require_root(action: str) -> None:
    if os.geteuid() != 0:
        raise ClusterError(
            f"{action} needs root: it creates network namespaces, a bridge and iptables rules",
            f"run it as root (sudo quorum {action})",
        )


def default_run_dir(name: str) -> Path:
    """Where a topology named `name` runs unless told otherwise (every backend): beside Quorum's cache, not under
    reports/, which CI systems archive: a run directory holds the cluster's private keys and kubeconfigs."""
    from harness.toolchain.cache import default_root

    return default_root() / "runs" / name


MARKER = ".quorum-run"  # what makes a directory a Quorum run directory: a teardown deletes only in one of those


def outside_reports(run_dir: Path, *report_dirs: Path) -> None:
    """A run directory holds the cluster's private keys and kubeconfigs: never inside reports/ (or another directory
    whose files go into reports and CI archives, such as --history-dir)."""
    for reports in (Path("reports").resolve(), *(d.resolve() for d in report_dirs)):
        if run_dir.resolve() == reports or reports in run_dir.resolve().parents:
            raise ClusterError(f"run directory {run_dir} is inside {reports}, which reports and CI archive: it would "
                               "hold the cluster's private keys", "leave --run-dir out (the default is "
                               "~/.cache/quorum/runs/<name>) or give a directory outside it")


def check_run_dir(run_dir: Path) -> None:
    """A run directory must be new, empty, or one Quorum made: a failed start and `quorum down` delete what a run
    writes there (data, config, pki), which must never be someone's own files (`--run-dir ~`). It is a plain path
    outside reports/."""
    try:
        checked_directory(run_dir, "--run-dir")
    except ValueError as error:
        raise ClusterError(str(error).partition("; fix: ")[0], str(error).partition("; fix: ")[2]) from None
    outside_reports(run_dir)
    ours = {MARKER, "owner.lock", "owner.json"}  # a session claims a run directory before it builds there
    if run_dir.is_dir() and any(p.name not in ours for p in run_dir.iterdir()) and not (run_dir / MARKER).exists():
        raise ClusterError(f"{run_dir} is not empty and not a Quorum run directory: Quorum would write and later "
                           "delete data, config and pki there", "give --run-dir a new or empty directory")


def start_run(topology_file: Path, run_dir: Path, name: str, backend: str, components: list[str] = ()) -> RunState:  # type: ignore[assignment]
    """A new run directory (0700) with the topology copied in, its state saved and registered before anything
    exists on the machine, so that a teardown after a crash finds everything the run made."""
    check_run_dir(run_dir)
    if (run_dir / "state.json").exists():
        old = RunState.load(run_dir)
        raise ClusterError(f"{run_dir} already holds cluster {old.name} (run {old.run_id}, {old.status})",
                           f"quorum down {run_dir}   (or `quorum down --all` for every leftover)")
    run_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(run_dir, 0o700)
    (run_dir / MARKER).touch()
    shutil.copyfile(topology_file, run_dir / "topology.yaml")
    state = RunState(run_id=secrets.token_hex(3), name=name, backend=backend, run_dir=str(run_dir),
                     components=list(components))
    state.save()
    register(state)
    return state


def find_run(name_or_dir: str | None) -> Path:
    """A run directory from a path, a cluster name, or (if omitted) the only live run."""
    runs = {rid: d for rid, d in registered_runs().items() if (d / "state.json").exists()}
    if name_or_dir and Path(name_or_dir).is_dir() and (Path(name_or_dir) / "state.json").exists():
        return Path(name_or_dir).resolve()
    if name_or_dir:
        matches = [d for rid, d in runs.items() if rid == name_or_dir or RunState.load(d).name == name_or_dir]
        if len(matches) == 1:
            return matches[0]
        raise ClusterError(f"no running cluster named {name_or_dir!r}",
                           f"running: {', '.join(RunState.load(d).name for d in runs.values()) or 'none'}")
    if len(runs) == 1:
        return next(iter(runs.values()))
    if not runs:
        raise ClusterError("no cluster is running", "quorum up clusters/ha3.yaml")
    raise ClusterError("several clusters are running", "name one: " + ", ".join(RunState.load(d).name for d in runs.values()))


ERROR_WORDS = ("error", "fatal", "failed", "unknown flag", "panic", "[alert]")


def error_lines(log: str, limit: int) -> list[str]:
    """The last `limit` distinct lines of a log that look like errors. A component restarted by its keeper
    repeats the same lines with other pids and times; counting each once keeps the cause (often the first
    line of each attempt) from being pushed out by the summary lines after it."""
    latest: dict[str, str] = {}
    for line in log.splitlines():
        if any(word in line.lower() for word in ERROR_WORDS):
            key = re.sub(r"\d+", "#", line)
            latest.pop(key, None)  # re-insert: dict order becomes order of last occurrence
            latest[key] = line
    return list(latest.values())[-limit:]
