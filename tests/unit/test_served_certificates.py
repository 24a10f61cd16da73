"""What a TLS listener serves, read as its clients meet it: a real TLS server on loopback with certificates issued by
Quorum's own PKI code, one good, one expired, one from another CA, one about to expire."""

import datetime
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.clients.certificates import CertificateUnreadable, served_certificate
from harness.pki import Authority, Pair


@contextmanager
def tls_server(pair: Pair) -> Iterator[int]:
    """A loopback listener serving `pair` that completes handshakes until closed; its port."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(pair.cert), str(pair.key))
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except TimeoutError:
                continue
            try:
                with context.wrap_socket(raw, server_side=True) as tls:
                    tls.settimeout(1)
                    tls.recv(1)  # until the client closes (or aborts, having refused the certificate)
            except (OSError, ssl.SSLError):
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        listener.close()


@pytest.fixture()
def ca(tmp_path: Path) -> Authority:
    return Authority(tmp_path / "ca", "quorum-test-ca")


def test_a_certificate_the_ca_issued_is_trusted_with_its_days_left(ca):
    pair = ca.issue("server", "kube-apiserver", server=True)
    with tls_server(pair) as port:
        served = served_certificate("127.0.0.1", port, ca.pair.cert)
    assert served.untrusted is None and served.endpoint == f"127.0.0.1:{port}"
    assert 364 < served.days_left() <= 365 and "quorum-test-ca" in served.issuer


def test_an_expired_certificate_is_named_as_expired(ca):
    pair = ca.issue("server", "kube-apiserver", server=True, validity=datetime.timedelta(minutes=-1))
    with tls_server(pair) as port:
        served = served_certificate("127.0.0.1", port, ca.pair.cert)
    assert served.untrusted == "certificate has expired" and served.days_left() <= 0


def test_a_certificate_from_another_ca_is_not_trusted_however_long_it_has(ca, tmp_path):
    other = Authority(tmp_path / "other", "someone-elses-ca")
    with tls_server(other.issue("server", "kube-apiserver", server=True)) as port:
        served = served_certificate("127.0.0.1", port, ca.pair.cert)
    assert served.untrusted is not None and "local issuer" in served.untrusted and served.days_left() > 300


def test_a_certificate_close_to_expiry_is_trusted_and_says_how_little_is_left(ca):
    pair = ca.issue("server", "kube-apiserver", server=True, validity=datetime.timedelta(days=5))
    with tls_server(pair) as port:
        served = served_certificate("127.0.0.1", port, ca.pair.cert)
    assert served.untrusted is None and 4.9 < served.days_left() <= 5


def test_a_listener_that_does_not_answer_is_a_clear_error(ca):
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    with pytest.raises(CertificateUnreadable, match=f"no TLS certificate from 127.0.0.1:{port}"):
        served_certificate("127.0.0.1", port, ca.pair.cert, timeout_s=1)
