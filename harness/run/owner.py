"""Who owns a run: the live process using a cluster (a pytest session, a bench) holds an exclusive flock on
run_dir/owner.lock for as long as it uses it, with its pid, start time and command line in run_dir/owner.json.
The kernel drops the lock when that process ends, however it ends (SIGKILL included), so a lock nobody holds
means a run whose owner is gone: its leftovers are anyone's to heal. Another session must not heal, tear down or
reuse a run a live owner holds; it is refused with the owner named."""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.errors import ClusterError

LOCK, INFO = "owner.lock", "owner.json"
_held: dict[Path, int] = {}  # run dir -> the lock's file descriptor, for as long as this process owns the run


@dataclass(frozen=True)
class Owner:
    pid: int
    command: str
    since: float

    def describe(self) -> str:
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return f"pid {self.pid} ({self.command[:120]}), since {started}"


def owner_of(run_dir: Path) -> Owner | None:
    """The live owner of a run other than this process, or None (no owner, or this process)."""
    run_dir = Path(run_dir).resolve()
    if run_dir in _held or not (run_dir / LOCK).exists():
        return None
    descriptor = os.open(run_dir / LOCK, os.O_RDWR)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            return Owner(**json.loads((run_dir / INFO).read_text()))
        except (OSError, ValueError, TypeError):
            return Owner(0, "an owner that wrote no owner.json", 0.0)
    else:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        return None
    finally:
        os.close(descriptor)


def refuse_if_owned(run_dir: Path, action: str) -> None:
    owner = owner_of(run_dir)
    if owner is not None:
        raise ClusterError(f"{run_dir} is in use by {owner.describe()}; {action} would act on its live cluster",
                           "wait for that session to end, or stop it; `--force` acts anyway")


def claim(run_dir: Path) -> None:
    """Own a run until release() or this process ends; ClusterError naming the owner if another holds it."""
    run_dir = Path(run_dir).resolve()
    if run_dir in _held:
        return
    run_dir.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(run_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        refuse_if_owned(run_dir, "this session")
        raise ClusterError(f"{run_dir} is locked by another process", f"fuser -v {run_dir / LOCK} names it") from None
    os.set_inheritable(descriptor, False)  # keepers and other children must not keep the run owned
    _held[run_dir] = descriptor
    info = Owner(os.getpid(), " ".join(sys.argv)[:300], time.time())
    (run_dir / INFO).write_text(json.dumps(asdict(info)))


def release(run_dir: Path) -> None:
    descriptor = _held.pop(Path(run_dir).resolve(), None)
    if descriptor is not None:
        (Path(run_dir) / INFO).unlink(missing_ok=True)
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        os.close(descriptor)
