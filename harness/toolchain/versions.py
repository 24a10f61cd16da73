"""Pinned versions and version parsing.

The default Kubernetes release is the newest v1.34 patch on the Go module proxy: v1.34 is the last
minor whose kubelet still starts on cgroup v1 hosts without extra configuration, and these machines
run cgroup v1. Later releases build the same way when asked for with --kubernetes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

from harness.errors import ToolchainError

KUBERNETES_DEFAULT = "v1.34.4"
# the lifecycle suite's default --upgrade-to: the next minor's newest patch on the Go module proxy (its control plane
# only: the process and docker backends run no kubelet)
UPGRADE_TO = "v1.35.4"
UPGRADE_BINARIES: tuple[str, ...] = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
# the lifecycle suite's release matrix (docs/lifecycle.md): adjacent minors from the default on, each the newest patch
# the Go module proxy served when it was added. The deep tier upgrades each release to the next one, and skips one
# minor (v1.34 to v1.36) to show the skew policy refusing it.
RELEASE_MATRIX: tuple[str, ...] = (KUBERNETES_DEFAULT, UPGRADE_TO, "v1.36.3", "v1.37.2")


def matrix_binaries(release: str) -> tuple[str, ...]:
    """What the lifecycle matrix runs of a release of RELEASE_MATRIX after the default (whose binaries the toolchain
    installs whole): its control plane, which a cluster is upgraded to, and kubectl when a cluster is also built on it
    (every release but the last)."""
    if release not in RELEASE_MATRIX[1:]:
        raise ValueError(f"{release} is not a release of the matrix {RELEASE_MATRIX} after the default")
    return UPGRADE_BINARIES + (() if release == RELEASE_MATRIX[-1] else ("kubectl",))
KUBERNETES_MIN_MINOR = 34  # older releases need a Go toolchain older than the one we can rely on
KWOK_VERSION = "v0.8.0"
KIND_VERSION = "v0.33.0"
# crictl for the pod checkpointer's image (the runtime's pod sandboxes): the release of Kubernetes 1.34's CRI
CRICTL_VERSION = "v1.34.0"
# a compiled HTTP load generator, beside locust: what generating a request costs without Python (docs/load.md)
VEGETA_VERSION = "v12.13.0"
# etcd from the Go module proxy (Debian bookworm's 3.4.23 is older than 3.4.31, so kube-apiserver turns
# off RequestWatchProgress; client-go >= 0.35 informers then stall, measured with kwok: docs/toolchain.md).
ETCD_VERSION = "v3.5.21"
# the lifecycle suite's etcd minor upgrade: the next minor's newest patch on the Go module proxy
ETCD_UPGRADE_TO = "v3.6.16"
ETCD_UPGRADE_BINARIES: tuple[str, ...] = ("etcd",)  # the members' server; etcdctl stays at ETCD_VERSION
ETCD_MIN = "v3.5.0"  # the oldest etcd release Quorum builds (see ETCD_VERSION)


def etcd_modules(version: str) -> tuple[str, ...]:
    """The module@version pins of the wrapper module that builds etcd and etcdctl of `version`: go.etcd.io/etcd's
    modules replace each other with ../ paths. 3.5 still has client/v2 and its own raft module; from 3.6 raft is
    go.etcd.io/raft/v3, which server/v3's go.mod pins, and client/v2 is gone."""
    parsed = Version.parse(version)
    pins = [f"go.etcd.io/etcd/{module}/v3@{version}" for module in ("server", "etcdctl", "api", "client/pkg", "client")]
    if (parsed.major, parsed.minor) == (3, 5):
        pins.append(f"go.etcd.io/etcd/client/v2@v2.305.{parsed.patch}")
    pins.append(f"go.etcd.io/etcd/pkg/v3@{version}")
    if (parsed.major, parsed.minor) == (3, 5):
        pins.append(f"go.etcd.io/etcd/raft/v3@{version}")
    return tuple(pins)


def etcd_version(text: str) -> Version:
    """Validate an etcd release name given by a user (`--etcd-upgrade-to`)."""
    try:
        version = Version.parse(text)
    except ValueError:
        version = None
    if version is None or not re.fullmatch(r"v?\d+\.\d+\.\d+", text):
        raise ToolchainError(f"{text!r} is not an etcd release (major.minor.patch)",
                             f"give a release such as {ETCD_UPGRADE_TO} (see `go list -m -versions "
                             "go.etcd.io/etcd/server/v3`)")
    if version.major != 3 or version < Version.parse(ETCD_MIN):
        raise ToolchainError(f"etcd {version} is not supported (Quorum builds etcd {ETCD_MIN} and later 3.x)",
                             f"give a release such as {ETCD_UPGRADE_TO}")
    return Version(version.major, version.minor, version.patch)


# kubeadm v1.34's constants.CoreDNSVersion: the image tag its coredns addon asks for (kind's node image holds it)
COREDNS_VERSION = "v1.12.1"
ALLURE_VERSION = "3.18.0"  # npm package `allure`: Allure Report 3, renders HTML without Java

KUBERNETES_BINARIES: tuple[str, ...] = (
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
    "kube-proxy",
    "kubeadm",
    "kubectl",
)

_SEMVER = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?")


@total_ordering
@dataclass(frozen=True)
class Version:
    """A release version such as v1.34.4 or v1.35.0-rc.1 (pre-releases sort before the release)."""

    major: int
    minor: int
    patch: int = 0
    pre: str = ""

    @classmethod
    def parse(cls, text: str) -> "Version":
        """Parse the first version number in `text` ("Kubernetes v1.34.4", "etcd Version: 3.4.23")."""
        match = _SEMVER.search(text)
        if not match:
            raise ValueError(f"no version number in {text!r}")
        major, minor, patch, pre = match.groups()
        return cls(int(major), int(minor), int(patch or 0), pre or "")

    def _key(self) -> tuple[int, int, int, int, str]:
        # a pre-release sorts before its release: v1.35.0-rc.1 < v1.35.0
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, self.pre)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __str__(self) -> str:
        core = f"v{self.major}.{self.minor}.{self.patch}"
        return f"{core}-{self.pre}" if self.pre else core


def kubernetes_version(text: str) -> Version:
    """Validate a Kubernetes release name given by a user or a topology file."""
    try:
        version = Version.parse(text)
    except ValueError:
        raise ToolchainError(
            f"{text!r} is not a Kubernetes version",
            "give a release such as v1.34.4 (see `go list -m -versions k8s.io/kubernetes`)",
        ) from None
    if not re.fullmatch(r"v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?", text):
        raise ToolchainError(
            f"{text!r} is not a full Kubernetes release (major.minor.patch)",
            f"give a full release such as {KUBERNETES_DEFAULT}",
        )
    if version.major != 1 or version.minor < KUBERNETES_MIN_MINOR:
        raise ToolchainError(
            f"Kubernetes {version} is not supported (Quorum builds v1.{KUBERNETES_MIN_MINOR} and later)",
            f"use --kubernetes {KUBERNETES_DEFAULT} or a later release",
        )
    return version


def staging_version(kubernetes: Version) -> str:
    """The published version of the k8s.io staging modules for a release: v1.34.4 -> v0.34.4."""
    core = f"v0.{kubernetes.minor}.{kubernetes.patch}"
    return f"{core}-{kubernetes.pre}" if kubernetes.pre else core
