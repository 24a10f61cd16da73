"""A CPU quota for a supervised component (the `cpu_limit_m` defect of a broken twin): a cgroup v1 `cpu`
directory per component with CFS's quota, as a kubelet enforces a pod's CPU limit. The keeper puts each (re)start of
its component in it; the run's teardown removes the directories once their processes are gone."""

from __future__ import annotations

import os
from pathlib import Path

from harness.errors import ClusterError

ROOT = Path("/sys/fs/cgroup/cpu")
PERIOD_US = 100_000  # CFS's default period: the quota is spent per 100 ms


def directory(run_id: str, component_id: str) -> Path:
    return ROOT / "quorum" / run_id / component_id


def create(run_id: str, component_id: str, millicores: int) -> Path:
    """The component's cgroup with a quota of `millicores` thousandths of a core per period."""
    path = directory(run_id, component_id)
    try:
        path.mkdir(parents=True, exist_ok=True)
        (path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (path / "cpu.cfs_quota_us").write_text(str(PERIOD_US * millicores // 1000))
    except OSError as error:
        raise ClusterError(f"cannot limit {component_id}'s CPU in {path}: {error.strerror}",
                           "the CPU-limit defect needs cgroup v1's cpu controller at /sys/fs/cgroup/cpu and root") \
            from None
    return path


def join(path: Path, pid: int) -> None:
    """Move a process (all its threads) into the cgroup."""
    (path / "cgroup.procs").write_text(str(pid))


def join_self_if_limited(path: str) -> None:
    """In a keeper's child before exec: enter the component's cgroup if its defect made one."""
    if path and os.path.isdir(path):
        join(Path(path), os.getpid())


def remove(run_id: str | None = None) -> list[str]:
    """Every component cgroup of a run (of every run if None) whose processes are gone; what was removed."""
    base = ROOT / "quorum"
    runs = [base / run_id] if run_id else (list(base.iterdir()) if base.is_dir() else [])
    removed = []
    for run in runs:
        for component in (list(run.iterdir()) if run.is_dir() else []):
            if component.is_dir():
                try:
                    component.rmdir()  # cgroupfs: rmdir of a directory holding only its control files
                    removed.append(f"cgroup {component}")
                except OSError:
                    pass  # a process is still inside; the next teardown tries again
        for empty in (run, base):
            try:
                empty.rmdir()
            except OSError:
                pass  # another run's cgroups are still there
    return removed
