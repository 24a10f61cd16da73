"""Where the load balancer sends new connections, seen from outside: no admin socket, only what a client meets.

Each apiserver serves its own certificate (Quorum's PKI and kubeadm's both issue one per host), and a TCP load
balancer passes the TLS handshake through to the apiserver it picked. So a fresh connection through the load
balancer, its handshake done and nothing sent, says which apiserver got it: the certificate's fingerprint, matched
against the one each apiserver presents when it is asked directly. A connection refused, reset or never handshaken
is recorded as a failure. The checker lb_routed_around (harness/checkers/lb.py) reads these records: when the load
balancer stopped sending new clients to an apiserver that cannot serve them.

A load balancer that terminates TLS itself hides the apiservers' certificates: every handshake shows its own, which
setup() refuses by name.
"""

from __future__ import annotations

import hashlib
import socket
import ssl
from urllib.parse import urlparse

from harness.checkers.lb import ROUTE
from harness.errors import ClusterError
from harness.history import History, Outcome, now
from harness.monitors.base import Monitor
from harness.target.protocol import Target

HANDSHAKE_TIMEOUT_S = 3.0  # a handshake the apiserver does not answer in this long counts as a failure


def tls_context(ca: object) -> ssl.SSLContext:
    """Verifying the apiservers' certificates with the cluster's CA (a path), or the system's when there is none."""
    context = ssl.create_default_context(cafile=ca if isinstance(ca, str) else None)
    context.check_hostname = True
    return context


def presented_fingerprint(endpoint: str, context: ssl.SSLContext, timeout_s: float = HANDSHAKE_TIMEOUT_S) -> str:
    """The SHA-256 of the certificate the TLS server at `endpoint` (https://host:port) presents; OSError or
    ssl.SSLError when no handshake completes."""
    url = urlparse(endpoint)
    if url.hostname is None or url.port is None:
        raise ValueError(f"{endpoint!r} is no https://host:port endpoint")
    with socket.create_connection((url.hostname, url.port), timeout=timeout_s) as raw:
        with context.wrap_socket(raw, server_hostname=url.hostname) as tls:
            certificate = tls.getpeercert(binary_form=True)
    if not certificate:
        raise ssl.SSLError(f"{endpoint} presented no certificate")
    return hashlib.sha256(certificate).hexdigest()


class LbRouteProber(Monitor):
    """New connections through the load balancer at `rate` per second, each recorded as ROUTE with the apiserver
    that took it (or the reason none did)."""

    name = "lb-routes"

    # workers enough that handshakes hanging on a frozen apiserver (each up to HANDSHAKE_TIMEOUT_S) leave the others
    # probing on schedule
    def __init__(self, cluster: Target, history: History, *, rate: float = 10.0, workers: int = 8, **limits) -> None:
        super().__init__(cluster, history, rate=rate, workers=workers, **limits)
        self.context = tls_context(cluster.api.session.verify)
        self.endpoint = cluster.api_endpoint
        self.apiservers: dict[str, str] = {}  # certificate fingerprint -> apiserver host

    def setup(self) -> None:
        """Each apiserver's certificate, asked directly; refused when they cannot be told apart through the load
        balancer (one certificate for all of them, or a balancer that shows its own)."""
        super().setup()
        for host in self.cluster.component_hosts("kube-apiserver"):
            try:
                fingerprint = presented_fingerprint(self.cluster.apiserver(host).endpoint, self.context)
            except (OSError, ssl.SSLError) as error:
                raise ClusterError(f"the apiserver on {host} completed no TLS handshake ({error}), so where the load "
                                   "balancer sends connections cannot be told",
                                   "start from a healthy cluster: quorum status shows what is down") from None
            if fingerprint in self.apiservers:
                raise ClusterError(f"the apiservers on {self.apiservers[fingerprint]} and {host} present the same "
                                   "certificate, so a connection through the load balancer does not say which one "
                                   "took it", "give each apiserver its own serving certificate (kubeadm does)")
            self.apiservers[fingerprint] = host
        try:
            through = presented_fingerprint(self.endpoint, self.context)
        except (OSError, ssl.SSLError) as error:
            raise ClusterError(f"no TLS handshake through the load balancer at {self.endpoint} ({error})",
                               "quorum status shows what is down") from None
        if through not in self.apiservers:
            raise ClusterError(f"the load balancer at {self.endpoint} presents a certificate no apiserver does: it "
                               "terminates TLS itself, so where it sends a connection cannot be seen from outside",
                               "judge it through its own view (its admin socket, Capability lb-admin) instead")

    def step(self, worker: int) -> None:
        invoke = now()
        try:
            fingerprint = presented_fingerprint(self.endpoint, self.context)
        except (OSError, ssl.SSLError) as error:
            self.history.record(f"lb-routes-{worker}", ROUTE, "lb", invoke, Outcome.FAIL,
                                error=f"{type(error).__name__}: {str(error)[:120]}")
            return
        self.history.record(f"lb-routes-{worker}", ROUTE, "lb", invoke, Outcome.OK,
                            value=self.apiservers.get(fingerprint, "an unknown certificate"))
