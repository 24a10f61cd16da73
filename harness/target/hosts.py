"""Commands and files inside a target's hosts: the one transport a backend writes (`run`), and what derives from it.

As in testinfra, where a backend is one `run`, a target's backend says once how a command reaches a host (a network
namespace, a container, SSH); `exec` (the output, or a typed error), `read_file`, the process facts and the
pytest-testinfra host are built on it here, so no backend writes its transport twice.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import testinfra.host
from testinfra.backend import base

from harness.errors import QuorumError
from harness.shell import CommandError


class HostRole:
    """Roles `hosts(role)` understands."""

    CONTROLLER = "controller"  # runs an apiserver (and, on stacked etcd, a member)
    ETCD = "etcd"  # runs an etcd member
    WORKER = "worker"  # runs pods, not the control plane
    LOADBALANCER = "loadbalancer"


@dataclass(frozen=True)
class Ran:
    """What a command inside a host did: its exit code and both outputs."""

    argv: tuple[str, ...]
    rc: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.rc == 0


class Hosts(ABC):
    """Part of the Target (harness/target/protocol.py): its hosts, and commands and files inside them."""

    @abstractmethod
    def hosts(self, role: str | None = None) -> list[str]:
        """The target's hosts (of one HostRole), in a stable order."""

    @abstractmethod
    def run(self, host: str, argv: list[str], *, timeout: float = 60.0) -> Ran:
        """Run a command inside `host` and say what it did, whatever its exit code. Raises a QuorumError only when
        the command could not be run at all (the host unreachable, its transport broken)."""

    @abstractmethod
    def put_file(self, host: str, path: str, text: str) -> None:
        """Replace a file inside a host atomically (a hidden file beside it, then a rename): watchers such as the
        kubelet never read half a file."""

    def command_failed(self, host: str, ran: Ran) -> QuorumError:
        """The error `exec` raises for a command that exited non-zero (a backend may name its own fix)."""
        return CommandError(ran.argv, ran.rc, ran.stderr or ran.stdout)

    def exec(self, host: str, argv: list[str], *, check: bool = True, timeout: float = 60.0) -> str:
        """Run a command inside a host; its standard output. check: raise a QuorumError when it fails or cannot
        run; without it, a command that cannot run has no output."""
        try:
            ran = self.run(host, argv, timeout=timeout)
        except QuorumError:
            if not check:
                return ""
            raise
        if check and not ran.ok:
            raise self.command_failed(host, ran)
        return ran.stdout

    def read_file(self, host: str, path: str) -> str:
        return self.exec(host, ["cat", path])

    def process_state(self, host: str, pid: int) -> str | None:
        """The one-letter state of a process in `host` (R, S, T for stopped...), None if it is gone."""
        fields = self._stat(host, pid)
        return fields[0] if fields else None

    def process_started(self, host: str, pid: int) -> str | None:
        """When the process `pid` in `host` started (clock ticks since boot: with the pid, it names one process
        for good, where a pid alone may be reused after a reboot), None if it is gone."""
        fields = self._stat(host, pid)
        return fields[19] if len(fields) > 19 else None

    def _stat(self, host: str, pid: int) -> list[str]:
        """/proc/<pid>/stat after the command name: fields 3 onwards (proc(5))."""
        stat = self.exec(host, ["cat", f"/proc/{int(pid)}/stat"], check=False)
        return stat.rsplit(")", 1)[1].split() if ")" in stat else []

    def testinfra(self, host: str) -> testinfra.host.Host:
        """A pytest-testinfra host whose commands and file checks run inside `host`, through `run`."""
        if host not in self.hosts():
            raise KeyError(f"no host {host!r}; hosts: {', '.join(self.hosts())}")
        return testinfra.host.Host(HostBackend(self, host))


class HostBackend(base.BaseBackend):
    """pytest-testinfra's backend for one host of a target: each command testinfra builds (a shell command line)
    runs through the target's `run`, as `sh -c`, so testinfra reaches every backend's hosts the way faults do.

        host = target.testinfra("c1"); host.file("/etc/hosts").exists; host.run("ss -ltn")
    """

    NAME = "quorum"

    def __init__(self, target: Hosts, host: str, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self.target = target

    def get_pytest_id(self) -> str:
        return self.hostname

    def run(self, command: str, *args: str, **kwargs: Any) -> base.CommandResult:
        line = self.get_command(command, *args)
        ran = self.target.run(self.hostname, ["/bin/sh", "-c", line])
        return self.result(ran.rc, self.encode(line), ran.stdout, ran.stderr)
