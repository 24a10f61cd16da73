"""Every TLS listener of a control plane, with the CA its clients trust: each apiserver (the CA of the kubeconfig
Quorum uses), each etcd member's client listener (the CA the apiservers' etcd client trusts) and peer listener (the
CA the member itself trusts for peers, read from its --peer-trusted-ca-file on its host)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from harness.clients.certificates import ServedCertificate, served_certificate
from harness.pki import Pair
from harness.target.protocol import HostRole, Target
from harness.topology import Component


@dataclass(frozen=True)
class Listener:
    what: str  # e.g. "kube-apiserver@c1", "etcd peer@c2"
    address: str
    port: int
    ca: Path
    client: Pair | None = None


def _endpoint(url: str) -> tuple[str, int]:
    parsed = urlparse(url)
    if parsed.hostname is None or parsed.port is None:
        raise ValueError(f"{url!r} names no host and port")
    return parsed.hostname, parsed.port


def listeners(cluster: Target, scratch: Path) -> list[Listener]:
    """The listeners to judge; a member's peer CA is copied into `scratch` (the check reads it from the host)."""
    found = []
    for host in cluster.hosts(HostRole.CONTROLLER):
        apiserver = cluster.apiserver(host)
        found.append(Listener(f"kube-apiserver@{host}", *_endpoint(apiserver.endpoint), Path(apiserver.session.verify)))
    credentials = cluster.etcd_credentials
    if credentials is None:  # etcd without TLS: the conformance TLS checks name that
        return found
    # a plain-text listener serves no certificate: test_etcd_peer_and_client_listeners_use_tls names it
    for host, flags in cluster.live_flags(Component.ETCD).items():
        client_url = cluster.etcd_url(host)
        if client_url.startswith("https://"):
            found.append(Listener(f"etcd client@{host}", *_endpoint(client_url), credentials.ca, credentials.client))
        peer_url = flags.get("--initial-advertise-peer-urls", "").split(",")[0]
        if peer_url.startswith("https://") and flags.get("--peer-trusted-ca-file"):
            peer_ca = scratch / f"{host}-peer-ca.crt"
            peer_ca.write_text(cluster.read_file(host, flags["--peer-trusted-ca-file"]))
            found.append(Listener(f"etcd peer@{host}", *_endpoint(peer_url), peer_ca, credentials.client))
    return found


def served_by(listener: Listener) -> ServedCertificate:
    return served_certificate(listener.address, listener.port, listener.ca, listener.client)


def served_certificates(cluster: Target) -> dict[str, ServedCertificate]:
    """What each listener serves, judged with the CA its clients trust."""
    with tempfile.TemporaryDirectory(prefix="quorum-certs-") as scratch:
        return {listener.what: served_by(listener) for listener in listeners(cluster, Path(scratch))}
