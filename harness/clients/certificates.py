"""The certificate a TLS listener serves, as its clients meet it: who issued it, until when it is valid, and whether
the CA those clients trust verifies it (OpenSSL's own verification, so an expired certificate or one from another
CA is named as OpenSSL names it)."""

from __future__ import annotations

import datetime
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes

from harness.errors import QuorumError
from harness.pki import Pair


class CertificateUnreadable(QuorumError):
    pass


@dataclass(frozen=True)
class ServedCertificate:
    endpoint: str  # host:port
    subject: str
    issuer: str
    not_after: datetime.datetime
    untrusted: str | None  # why the clients' CA does not verify it; None when it does
    fingerprint: str = ""  # sha256, hex

    def days_left(self, now: datetime.datetime | None = None) -> float:
        now = now or datetime.datetime.now(datetime.timezone.utc)
        return round((self.not_after - now).total_seconds() / 86400, 2)


def _context(ca: Path | None, client: Pair | None) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False  # the listener is named by address here; only the chain and validity are judged
    if ca is None:
        context.verify_mode = ssl.CERT_NONE
    else:
        context.load_verify_locations(cafile=str(ca))
    if client is not None:  # etcd asks its clients and peers for one
        context.load_cert_chain(str(client.cert), str(client.key))
    return context


def _handshake(address: str, port: int, context: ssl.SSLContext, timeout_s: float) -> bytes:
    with socket.create_connection((address, port), timeout=timeout_s) as raw:
        with context.wrap_socket(raw) as tls:
            return tls.getpeercert(binary_form=True) or b""


def served_certificate(address: str, port: int, ca: Path, client: Pair | None = None,
                       timeout_s: float = 5.0) -> ServedCertificate:
    """Connect twice: once without verification to read the certificate, once verifying it with `ca` (the CA the
    listener's clients trust) to learn whether and why that fails."""
    endpoint = f"{address}:{port}"
    try:
        der = _handshake(address, port, _context(None, client), timeout_s)
    except (OSError, ssl.SSLError) as error:
        raise CertificateUnreadable(f"no TLS certificate from {endpoint}: {error}",
                                    "is the component running and listening there? quorum status shows it") from None
    if not der:
        raise CertificateUnreadable(f"{endpoint} completed a TLS handshake without a certificate",
                                    "the listener must serve a certificate")
    cert = x509.load_der_x509_certificate(der)
    untrusted = None
    try:
        _handshake(address, port, _context(ca, client), timeout_s)
    except ssl.SSLCertVerificationError as error:
        untrusted = error.verify_message or str(error)
    except (OSError, ssl.SSLError) as error:
        raise CertificateUnreadable(f"{endpoint} served a certificate once, then failed a second handshake: {error}",
                                    "run the check again; a restarting component explains it") from None
    return ServedCertificate(endpoint, cert.subject.rfc4514_string(), cert.issuer.rfc4514_string(),
                             cert.not_valid_after_utc, untrusted, cert.fingerprint(hashes.SHA256()).hex())
