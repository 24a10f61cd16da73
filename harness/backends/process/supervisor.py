"""The cluster's self-healing: one keeper process per component, like a kubelet for a static pod.

A keeper starts its component inside the host's network namespace (and a UTS namespace named after
the host, so leader-election identities name the host), appends every start and exit to the run's
events.jsonl on the system-wide monotonic clock, and restarts the component according to its restart
policy with exponential backoff. Faults steer it through files in its control directory:

    child.pid      pid of the running component (written by the keeper)
    hold           present: do not restart after an exit (a "stopped" fault)
    kick           present: restart now, whatever the policy or backoff (consumed by the keeper)
    argv.override  JSON argv to start instead of the spec's (a corrupted command line)

SIGTERM stops the component (SIGTERM, then SIGKILL after a grace period) and the keeper.

    python -m harness.backends.process.supervisor <control-dir>
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.backends.process import cpu_limit
from harness.wait import until

CLONE_NEWNET = 0x40000000
CLONE_NEWUTS = 0x04000000
STABLE_AFTER_S = 30.0  # a run this long resets the backoff, as the kubelet does
POLL_S = 0.05
STOP_GRACE_S = 10.0


@dataclass(frozen=True)
class KeeperSpec:
    component_id: str
    argv: list[str]
    netns: str  # name under /run/netns, "" for the root namespace
    hostname: str
    policy: str  # "always" | "never"
    backoff_s: float
    max_backoff_s: float
    log: str
    events: str
    env: dict[str, str] = field(default_factory=dict)  # added to the keeper's environment
    cgroup: str = ""  # a cgroup the component joins at each start if it exists (a twin's CPU limit: cpu_limit.py)

    def save(self, control: Path) -> None:
        control.mkdir(parents=True, exist_ok=True)
        temporary = control / "spec.json.tmp"  # a keeper reads it at each start: never half-written
        temporary.write_text(json.dumps(asdict(self), indent=1))
        os.replace(temporary, control / "spec.json")

    @classmethod
    def load(cls, control: Path) -> "KeeperSpec":
        return cls(**json.loads((control / "spec.json").read_text()))


def append_event(path: str | Path, **fields: object) -> None:
    """One JSON line per event; O_APPEND writes of one short line are atomic between processes."""
    record = {"t": time.monotonic(), "wall": time.time(), **fields}
    with open(path, "a") as handle:
        handle.write(json.dumps(record) + "\n")


def _enter_host(netns: str, hostname: str, cgroup: str = ""):
    """Runs in the child between fork and exec: join the host's network namespace, name the host, enter the
    component's cgroup (if it has one)."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)

    def enter() -> None:
        cpu_limit.join_self_if_limited(cgroup)
        if netns:
            fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
            if libc.setns(fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns {netns}")
            os.close(fd)
        if hostname:
            if libc.unshare(CLONE_NEWUTS) != 0:
                raise OSError(ctypes.get_errno(), "unshare UTS")
            name = hostname.encode()
            if libc.sethostname(name, len(name)) != 0:
                raise OSError(ctypes.get_errno(), "sethostname")
        os.setsid()  # the component gets its own session: a Ctrl-C in the harness's terminal never reaches it

    return enter


class Keeper:
    def __init__(self, control: Path) -> None:
        self.control = control
        self.spec = KeeperSpec.load(control)
        self.stopping = False
        self.child: subprocess.Popen | None = None

    def _flag(self, name: str) -> Path:
        return self.control / name

    def _argv(self) -> list[str]:
        override = self._flag("argv.override")
        if override.exists():
            return json.loads(override.read_text())
        # read again at each start: a scale changes a component's configured line (the apiservers' etcd members)
        return KeeperSpec.load(self.control).argv

    def _event(self, event: str, **fields: object) -> None:
        append_event(self.spec.events, component=self.spec.component_id, event=event, **fields)

    def _on_signal(self, signum: int, _frame: object) -> None:
        self.stopping = True
        if self.child is not None and self.child.poll() is None:
            try:
                os.kill(self.child.pid, signal.SIGCONT)  # a paused child cannot act on SIGTERM
                os.kill(self.child.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def _start(self) -> None:
        argv = self._argv()
        log = open(self.spec.log, "ab")
        log.write(f"\n--- quorum supervisor: starting {self.spec.component_id} at {time.strftime('%H:%M:%S')}\n".encode())
        log.flush()
        try:
            self.child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                          env={**os.environ, **self.spec.env} if self.spec.env else None,
                                          preexec_fn=_enter_host(self.spec.netns, self.spec.hostname, self.spec.cgroup))
        except OSError as error:
            log.write(f"--- quorum supervisor: cannot start: {error}\n".encode())
            self.child = None
            self._event("exit", pid=None, code=127, error=str(error))
            return
        finally:
            log.close()
        self._flag("child.pid").write_text(str(self.child.pid))
        self._event("start", pid=self.child.pid, overridden=self._flag("argv.override").exists())

    def _wait_child(self) -> int:
        assert self.child is not None
        while True:
            try:
                return self.child.wait(timeout=STOP_GRACE_S if self.stopping else None)
            except subprocess.TimeoutExpired:
                os.kill(self.child.pid, signal.SIGKILL)
            except InterruptedError:
                continue

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless stopped or kicked; True when kicked."""
        def woken() -> str | None:
            return "stopped" if self.stopping else "kicked" if self._consume_kick() else None

        return until(woken, seconds, POLL_S).value == "kicked"

    def _wait_for_kick(self, reason: str) -> None:
        """Held, or never restarted: wait for a kick (a fault's heal) or the end."""
        self._event("held", reason=reason)
        while not self.stopping and not self._consume_kick():
            time.sleep(POLL_S)

    def _consume_kick(self) -> bool:
        try:
            self._flag("kick").unlink()
            return True
        except FileNotFoundError:
            return False

    def run(self) -> None:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        self._flag("keeper.pid").write_text(str(os.getpid()))
        backoff = self.spec.backoff_s
        self._consume_kick()
        if self._flag("hold").exists():  # configured held (a host a scale joins): its first start waits for a release
            self._wait_for_kick("hold")
        while not self.stopping:
            started = time.monotonic()
            self._start()
            code = self._wait_child() if self.child is not None else 127
            self._flag("child.pid").unlink(missing_ok=True)
            if self.child is not None:
                self._event("exit", pid=self.child.pid, code=code, ran_s=round(time.monotonic() - started, 3))
            if self.stopping:
                break
            if time.monotonic() - started >= STABLE_AFTER_S:
                backoff = self.spec.backoff_s
            # held or never restarted: wait for a kick (a fault's heal) or the end
            if self.spec.policy == "never" or self._flag("hold").exists():
                self._wait_for_kick("policy never" if self.spec.policy == "never" else "hold")
                continue
            delay = backoff
            kicked = self._sleep(delay)
            if not kicked:
                backoff = min(max(backoff, 0.1) * 2, self.spec.max_backoff_s)
            if not kicked and self._flag("hold").exists():  # held while it waited out its back-off: it stays down
                self._wait_for_kick("hold")
                continue
            if not self.stopping:
                self._event("restart", after_s=round(delay, 3), kicked=kicked)
        self._event("stopped")
        self._flag("keeper.pid").unlink(missing_ok=True)


def main() -> None:
    Keeper(Path(sys.argv[1])).run()


if __name__ == "__main__":
    main()


class Control:
    """The harness's side of a keeper's control directory (used by faults and heal)."""

    def __init__(self, control: Path) -> None:
        self.dir = control

    def child_pid(self) -> int | None:
        try:
            pid = int((self.dir / "child.pid").read_text())
        except (FileNotFoundError, ValueError):
            return None
        return pid if Path(f"/proc/{pid}").exists() else None

    def hold(self) -> None:
        (self.dir / "hold").touch()

    def release(self) -> None:
        (self.dir / "hold").unlink(missing_ok=True)

    def held(self) -> bool:
        return (self.dir / "hold").exists()

    def kick(self) -> None:
        """Restart now if the component is down (a running component ignores it until it next exits)."""
        if self.child_pid() is None:
            (self.dir / "kick").touch()

    def override(self, argv: list[str]) -> None:
        temporary = self.dir / "argv.override.tmp"
        temporary.write_text(json.dumps(argv))
        os.replace(temporary, self.dir / "argv.override")

    def clear_override(self) -> None:
        (self.dir / "argv.override").unlink(missing_ok=True)

    def overridden(self) -> bool:
        return (self.dir / "argv.override").exists()

    def spec(self) -> KeeperSpec:
        return KeeperSpec.load(self.dir)
