"""etcdctl against a cluster's etcd with the target's etcd client certificate: run on this machine, or inside one
of the cluster's hosts (etcdctl_argv with Target.exec)."""

from __future__ import annotations

from harness.shell import run
from harness.target.protocol import Target
from harness.toolchain.install import Toolchain


def etcdctl_argv(target: Target, url: str, *args: str, binary: str | None = None) -> list[str]:
    credentials = target.etcd_credentials
    tls = []
    if credentials is not None:
        tls = [f"--cacert={credentials.ca}", f"--cert={credentials.client.cert}", f"--key={credentials.client.key}"]
    return [binary or target.tool_path("etcdctl"), f"--endpoints={url}", *tls, "--command-timeout=5s", *args]


def etcdctl(target: Target, url: str, *args: str, check: bool = True, timeout: float = 30.0) -> str:
    """From this machine: only once the target confirmed that its traffic stays here."""
    target.ensure_local()
    return run(etcdctl_argv(target, url, *args, binary=str(Toolchain().path("etcdctl"))), check=check, timeout=timeout)
