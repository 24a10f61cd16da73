"""Which Kubernetes release each control-plane component runs, and another release's binaries to run instead.
Part of the Target (harness/target/protocol.py): the upgrade fault asks here, never which backend it is."""

from __future__ import annotations

from abc import ABC
from typing import Any
from urllib.parse import urlsplit

import yaml

from harness.errors import QuorumError, Unsupported
from harness.target.capabilities import Capability
from harness.components.flags import parse_flags
from harness.toolchain.versions import Version
from harness.topology import Component

LOOPBACK = ("127.0.0.1", "localhost", "::1")


class ComponentReleases(ABC):
    topology: Any

    def release_binary(self, component: Component | str, version: Version) -> str:
        """The path, as `exec` sees it inside every host, of `component`'s binary of release `version`; a
        ToolchainError with the install command when it is not built (Capability.RELEASES)."""
        raise Unsupported("this backend cannot run another release's binaries (it needs "
                          f"{Capability.RELEASES.value}: {Capability.RELEASES.meaning})",
                          "run it on a backend that offers it (process, docker)")

    def install_release(self, component: Component | str, host: str, version: Version) -> str:
        """Configure `component` on `host` to run release `version` from now on and restart it there, as a package
        upgrade does on a host (configuration, not a fault: nothing heals it); the binary it runs. Only where Quorum
        built the hosts: elsewhere the team's own tools install releases (kubeadm upgrade, their packages)."""
        raise Unsupported("this cluster's hosts have their own package manager, not Quorum's",
                          "install releases there with your own tools (kubeadm upgrade, your packages), and judge "
                          "the change with `quorum change`")

    def running_argv(self, component: Component | str, host: str) -> list[str] | None:
        """The live command line of the component's process on `host` (argv[0] first), None while it is down."""
        pid = self.pid(component, host)  # type: ignore[attr-defined]
        if pid is None:
            return None
        raw = self.exec(host, ["cat", f"/proc/{int(pid)}/cmdline"], check=False)  # type: ignore[attr-defined]
        return [part for part in raw.split("\0") if part] or None

    def running_version(self, component: Component | str, host: str) -> Version | None:
        """The release of the binary the component on `host` runs now, None while it is down: the `--version` of the
        very file its process runs (/proc/PID/exe), which also reaches a static pod's binary from its node, where
        the path of its command line names a file of the container's own filesystem."""
        pid = self.pid(component, host)  # type: ignore[attr-defined]
        if pid is None:
            return None
        try:
            return Version.parse(self.exec(host, [f"/proc/{int(pid)}/exe", "--version"],  # type: ignore[attr-defined]
                                           timeout=30.0))
        except (QuorumError, ValueError):
            return None  # gone between the two reads, or not a Kubernetes binary

    def apiservers_reached(self, component: Component | str, host: str) -> list[str] | None:
        """The hosts whose kube-apiserver `component` (a controller-manager or scheduler) on `host` talks to, from
        the server of the kubeconfig its live command line names: its own host's when that server is the host's
        address or loopback (kubeadm's layout: each node's controllers use its own apiserver), None for every
        apiserver (a load balancer's endpoint, as the version skew policy assumes), and None too when the file
        cannot be read or says no server (the stricter reading: every apiserver)."""
        argv = self.running_argv(component, host)
        path = parse_flags((argv or [])[1:]).get("--kubeconfig")
        if not path:
            return None
        try:
            config = yaml.safe_load(self.exec(host, ["cat", path], check=False))  # type: ignore[attr-defined]
            server = urlsplit(config["clusters"][0]["cluster"]["server"]).hostname
        except (QuorumError, yaml.YAMLError, KeyError, IndexError, TypeError, ValueError):
            return None
        return [host] if server in (*LOOPBACK, self.address(host)) else None  # type: ignore[attr-defined]
