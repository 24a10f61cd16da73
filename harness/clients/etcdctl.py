"""etcdctl against a Quorum cluster, with the harness's client certificate."""

from __future__ import annotations

from harness.backends.process.target import Cluster
from harness.shell import run


def etcdctl(cluster: Cluster, url: str, *args: str, check: bool = True, timeout: float = 30.0) -> str:
    pki = cluster.layout.pki
    tls = []
    if cluster.topology.etcd.tls:
        client = pki.etcd_client("quorum-client")
        tls = [f"--cacert={pki.etcd_ca.cert}", f"--cert={client.cert}", f"--key={client.key}"]
    return run([str(cluster.layout.binary("etcdctl")), f"--endpoints={url}", *tls, "--command-timeout=5s", *args],
               check=check, timeout=timeout)
