"""One TLS context per credential (harness/clients/tls.py), against a real mutual-TLS server on loopback: each new
connection is a new TCP connection and a full handshake, the chain and the client certificate are still checked,
and a rewritten certificate takes effect on the next connection."""

import http.server
import ipaddress
import ssl
import threading
from pathlib import Path

import pytest
import requests

from harness.clients import tls
from harness.clients.health import session
from harness.pki import Authority


class _Handler(http.server.BaseHTTPRequestHandler):
    peers: list[tuple[str, int]] = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        _Handler.peers.append(self.client_address)
        body = self.connection.getpeercert()["subject"][0][0][1].encode()  # the client certificate's CN
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    authority = Authority(tmp_path / "ca", "test-ca")
    serving = authority.issue("server", "localhost", server=True, ips=(ipaddress.IPv4Address("127.0.0.1"),))
    client = authority.issue("client", "prober", client=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(authority.pair.cert))
    context.load_cert_chain(str(serving.cert), str(serving.key))
    context.verify_mode = ssl.CERT_REQUIRED
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Handler.peers.clear()
    yield f"https://127.0.0.1:{httpd.server_address[1]}/", authority, client
    httpd.shutdown()
    httpd.server_close()


def _fresh_get(url: str, ca: Path, client) -> requests.Response:
    with session() as fresh:  # a session of its own: a new connection, as the prober's fresh workers open
        fresh.verify, fresh.cert = str(ca), (str(client.cert), str(client.key))
        return fresh.get(url, timeout=10)


def test_new_connections_share_one_context_and_still_authenticate_both_ways(server):
    url, authority, client = server
    tls._CONTEXTS.clear()
    answers = [_fresh_get(url, authority.pair.cert, client) for _ in range(3)]
    assert [a.status_code for a in answers] == [200] * 3 and {a.text for a in answers} == {"prober"}
    assert len({port for _, port in _Handler.peers}) == 3, "each request came on a connection of its own"
    assert len(tls._CONTEXTS) == 1


def test_a_server_outside_the_ca_is_refused(server, tmp_path):
    url, _, client = server
    other = Authority(tmp_path / "other", "other-ca")
    with pytest.raises(requests.exceptions.SSLError):
        _fresh_get(url, other.pair.cert, client)


def test_a_rewritten_client_certificate_is_used_on_the_next_connection(server):
    url, authority, client = server
    assert _fresh_get(url, authority.pair.cert, client).text == "prober"
    renewed = authority.issue("client", "prober-renewed", client=True)  # the same files, new contents
    assert renewed == client
    assert _fresh_get(url, authority.pair.cert, client).text == "prober-renewed"
