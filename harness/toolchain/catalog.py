"""Every binary Quorum runs: where it comes from and how to ask it for its version."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from harness.toolchain.versions import (ALLURE_VERSION, COREDNS_VERSION, CRICTL_VERSION, ETCD_VERSION,
                                       KIND_VERSION, KUBERNETES_BINARIES, KWOK_VERSION, VEGETA_VERSION, Version,
                                       etcd_modules)


class Source(str, Enum):
    KUBERNETES = "kubernetes"  # built from k8s.io/kubernetes through a wrapper module
    GO_INSTALL = "go-install"  # `go install <package>@<version>` from the Go module proxy
    GO_WRAPPER = "go-wrapper"  # `go build <package>` in a wrapper module pinning the project's modules (etcd)
    DEBIAN = "debian"  # a Debian package, installed with apt-get
    NPM = "npm"  # an npm package, installed with npm into the cache


@dataclass(frozen=True)
class Tool:
    name: str
    source: Source
    version_args: tuple[str, ...]
    package: str = ""  # Go package (without version) or Debian package name
    system_path: str = ""  # where a Debian package puts the binary
    pinned: str = ""  # version for GO_INSTALL tools
    minimum: str = ""  # lowest acceptable version for DEBIAN tools
    # GO_WRAPPER tools: the module@version pins of the wrapper module that builds a given version
    modules: Callable[[str], tuple[str, ...]] | None = None
    version_variable: str = ""  # a GO_INSTALL tool whose version is set at link time (-X), as its Makefile does

    def describe_source(self, version: str) -> str:
        if self.source is Source.KUBERNETES:
            return f"Go proxy: k8s.io/kubernetes@{version} (wrapper module)"
        if self.source is Source.GO_INSTALL:
            return f"Go proxy: go install {self.package}@{version}"
        if self.source is Source.GO_WRAPPER:
            return f"Go proxy: {self.package}@{version} (wrapper module)"
        if self.source is Source.NPM:
            return f"npm: {self.package}@{version}"
        return f"Debian: {self.package} {version}"


def _kubernetes_tool(name: str) -> Tool:
    args = {"kubectl": ("version", "--client"), "kubeadm": ("version", "-o", "short")}.get(name, ("--version",))
    return Tool(name, Source.KUBERNETES, args, package=f"k8s.io/kubernetes/cmd/{name}")


TOOLS: tuple[Tool, ...] = (
    *(_kubernetes_tool(name) for name in KUBERNETES_BINARIES),
    Tool("kwok", Source.GO_INSTALL, ("--version",), package="sigs.k8s.io/kwok/cmd/kwok", pinned=KWOK_VERSION),
    Tool("kwokctl", Source.GO_INSTALL, ("--version",), package="sigs.k8s.io/kwok/cmd/kwokctl", pinned=KWOK_VERSION),
    Tool("kind", Source.GO_INSTALL, ("version",), package="sigs.k8s.io/kind", pinned=KIND_VERSION),
    # the CRI's client, in the pod checkpointer's image (the runtime's pod sandboxes: docs/checkpointer.md)
    Tool("crictl", Source.GO_INSTALL, ("--version",), package="sigs.k8s.io/cri-tools/cmd/crictl",
         pinned=CRICTL_VERSION, version_variable="sigs.k8s.io/cri-tools/pkg/version.Version"),
    # the cluster DNS of kind clusters (kubeadm's coredns addon), built into the kind node image
    Tool("coredns", Source.GO_INSTALL, ("-version",), package="github.com/coredns/coredns", pinned=COREDNS_VERSION),
    # a compiled load generator: bench/load.py rps compares it with locust and wrk on the same endpoint
    Tool("vegeta", Source.GO_INSTALL, ("-version",), package="github.com/tsenart/vegeta/v12", pinned=VEGETA_VERSION,
         version_variable="main.Version"),
    Tool("etcd", Source.GO_WRAPPER, ("--version",), package="go.etcd.io/etcd/server/v3", pinned=ETCD_VERSION,
         modules=etcd_modules),
    Tool("etcdctl", Source.GO_WRAPPER, ("version",), package="go.etcd.io/etcd/etcdctl/v3", pinned=ETCD_VERSION,
         modules=etcd_modules),
    Tool("haproxy", Source.DEBIAN, ("-v",), package="haproxy", system_path="/usr/sbin/haproxy", minimum="2.0.0"),
    Tool("iperf3", Source.DEBIAN, ("--version",), package="iperf3", system_path="/usr/bin/iperf3", minimum="3.0.0"),
    Tool("ip", Source.DEBIAN, ("-V",), package="iproute2", system_path="/usr/sbin/ip", minimum="5.0.0"),
    Tool("tc", Source.DEBIAN, ("-V",), package="iproute2", system_path="/usr/sbin/tc", minimum="5.0.0"),
    Tool("ping", Source.DEBIAN, ("-V",), package="iputils-ping", system_path="/usr/bin/ping", minimum="20210202.0.0"),
    Tool("chromium", Source.DEBIAN, ("--version",), package="chromium", system_path="/usr/bin/chromium", minimum="120.0.0"),
    Tool("allure", Source.NPM, ("--version",), package="allure", pinned=ALLURE_VERSION),
    Tool("wrk", Source.DEBIAN, ("-v",), package="wrk", system_path="/usr/bin/wrk", minimum="4.0.0"),
    Tool("iptables", Source.DEBIAN, ("--version",), package="iptables", system_path="/usr/sbin/iptables", minimum="1.8.0"),
    # the docker backend: the engine, its client, and the base image's rootfs builder
    Tool("dockerd", Source.DEBIAN, ("--version",), package="docker.io", system_path="/usr/sbin/dockerd", minimum="20.10.0"),
    Tool("docker", Source.DEBIAN, ("--version",), package="docker.io", system_path="/usr/bin/docker", minimum="20.10.0"),
    Tool("debootstrap", Source.DEBIAN, ("--version",), package="debootstrap", system_path="/usr/sbin/debootstrap",
         minimum="1.0.0"),
)


def tool(name: str) -> Tool:
    for candidate in TOOLS:
        if candidate.name == name:
            return candidate
    raise KeyError(f"unknown binary {name!r}; known: {', '.join(t.name for t in TOOLS)}")


def probe_version(path: Path, spec: Tool) -> Version | None:
    """Run the binary and parse the version it prints; None if it does not run."""
    try:
        out = subprocess.run([str(path), *spec.version_args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = out.stdout + out.stderr
    if spec.name in ("ip", "tc"):
        text = text.split("iproute2-", 1)[-1]  # "ip utility, iproute2-6.1.0, libbpf 1.1.0"
    if spec.name == "ping":
        text = re.sub(r"iputils[ -](\d+)", r"\1.0.0", text)  # "ping from iputils 20221126"
    try:
        return Version.parse(text)
    except ValueError:
        return None
