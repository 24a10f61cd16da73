"""pytest-testinfra inside a Quorum host: a backend that runs every command in the host's network namespace.

    host = target.testinfra("c1"); host.file("/etc/hosts").exists; host.run("ss -ltn")
Hosts share the machine's filesystem and PID namespace, so file and process facts read the same files a
kubelet-less control-plane host would have; the network namespace is what makes each host its own.
"""

from __future__ import annotations

from typing import Any

import testinfra.host
from testinfra.backend import base
from testinfra.backend.local import LocalBackend



class NamespaceBackend(LocalBackend):
    NAME = "quorum-netns"

    def __init__(self, netns: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.netns = netns

    def get_pytest_id(self) -> str:
        return self.netns

    def run(self, command: str, *args: str, **kwargs: Any) -> base.CommandResult:
        return self.run_local("ip netns exec %s /bin/sh -c %s", self.netns, self.get_command(command, *args))

