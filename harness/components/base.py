"""What every component module produces, and the paths it may use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.pki import ClusterPKI, Pair
from harness.topology import Component, Host, RestartPolicy, Topology


@dataclass(frozen=True)
class HealthProbe:
    """How to tell the component is up: an HTTPS GET answering 200, or a TCP connect."""

    kind: str  # "https" | "http" | "tcp"
    address: str
    port: int
    path: str = "/"
    ca: Path | None = None  # None: TLS without verification (self-signed serving certificates)
    client: Pair | None = None

    @property
    def url(self) -> str:
        return f"{self.kind}://{self.address}:{self.port}{self.path}"


@dataclass(frozen=True)
class ComponentSpec:
    component: Component
    host: str
    argv: list[str]
    restart: RestartPolicy
    health: HealthProbe
    files: dict[Path, str] = field(default_factory=dict)  # configuration written before start (never secrets)
    env: dict[str, str] = field(default_factory=dict)  # environment added for the process

    @property
    def id(self) -> str:
        return f"{self.component.value}@{self.host}"


@dataclass(frozen=True)
class Layout:
    """Where a cluster's files live, and how to find binaries."""

    topology: Topology
    run_dir: Path
    binary: Callable[[str], Path]

    @property
    def pki(self) -> ClusterPKI:
        return ClusterPKI(self.run_dir / "pki")

    def config_dir(self, host: str) -> Path:
        return self.run_dir / "config" / host

    def data_dir(self, host: str) -> Path:
        return self.run_dir / "data" / host

    @property
    def admin_kubeconfig(self) -> Path:
        return self.run_dir / "admin.kubeconfig"

    def kubeconfig(self, host: str, who: str) -> Path:
        return self.config_dir(host) / f"{who}.kubeconfig"

    def address(self, host: Host | str) -> str:
        return str(self.topology.address_of(host))


def duration(seconds: float) -> str:
    """Go duration syntax for a number of seconds."""
    return f"{int(seconds * 1000)}ms"
