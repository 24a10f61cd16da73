"""The plain reader (harness/load/reader.py) against a local TLS server that asks for the client certificate: it keeps
its connections, paces each and lets it wait for its answer as a locust user does, records each answer as the
locust workers do (an HTTP error a failure), reconnects after a server's close, gives up on a request after its
timeout, and a split load spec hands it the reads."""

import http.server
import io
import socketserver
import ssl
import threading
import time

import pytest

from harness.load import records as reader_records
from harness.load.reader import Reader
from harness.load.spec import DEFAULT_MIX, READ_TASKS, parse_spec
from harness.pki import LOOPBACK, Authority


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.server.paths.append(self.path)
        if self.path == "/readyz":  # chunked, as the apiserver sends a long answer
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"1\r\no\r\n1\r\nk\r\n0\r\n\r\n")
        elif self.path.startswith("/api/v1/nodes?"):  # an error on a connection the server keeps
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/api/v1/nodes/slow":
            time.sleep(6)
        else:
            body = b'{"kind":"Node"}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            if self.server.closing:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, *_):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True

    def __init__(self, context: ssl.SSLContext, closing: bool) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.context, self.closing, self.paths, self.handshakes = context, closing, [], 0

    def get_request(self):
        connection, address = self.socket.accept()
        self.handshakes += 1
        return self.context.wrap_socket(connection, server_side=True), address


@pytest.fixture
def pki(tmp_path):
    authority = Authority(tmp_path / "ca", "quorum-test-ca")
    server = authority.issue("server", "server", server=True, ips=(LOOPBACK,))
    client = authority.issue("client", "load", client=True)
    return authority, server, client


def serve(pki, closing=False):
    authority, pair, _ = pki
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(authority.pair.cert))
    context.verify_mode = ssl.CERT_REQUIRED  # as the apiserver: a request without the client certificate fails
    context.load_cert_chain(str(pair.cert), str(pair.key))
    server = Server(context, closing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def spec(pki, server, **settings):
    authority, _, client = pki
    return parse_spec({"endpoint": f"https://127.0.0.1:{server.server_address[1]}", "ca": str(authority.pair.cert),
                       "cert": str(client.cert), "key": str(client.key), "nodes": ["n1"], **settings})


def records(out: io.BytesIO) -> list[reader_records.Record]:
    return list(reader_records.read(out.getvalue()))


def test_the_reads_are_paced_on_kept_connections_and_recorded_as_the_workers_record_them(pki):
    server = serve(pki)
    try:
        out = io.BytesIO()
        reader = Reader(spec(pki, server, users=2, rate_per_s=20, duration_s=2.0,
                             mix={"readyz": 1, "get_node": 1, "list_nodes": 1}), out)
        reader.run()
    finally:
        server.shutdown()
    seen = records(out)
    assert 0 < len(seen) <= 20 * 2 + 2 and reader.requests == len(seen)  # paced: unpaced would make hundreds
    assert 1 <= server.handshakes <= 2, server.handshakes  # kept alive: ~40 requests, at most one connection per user
    by_path = {("get", "readyz", "health"): True, ("get", "nodes", "resource"): True,
               ("list", "nodes", "cluster"): False}
    for r in seen:
        assert r.ok is by_path[(r.verb, r.resource, r.scope)], r
        assert r.t0 <= r.t1
        assert r.error == ("" if r.ok else "HTTP 500") and r.status == (200 if r.ok else 500)
    assert reader.failures == sum(not r.ok for r in seen)
    assert set(server.paths) <= {"/readyz", "/api/v1/nodes/n1", "/api/v1/nodes?limit=500"}


def test_a_server_that_closes_each_connection_is_reconnected_and_no_request_fails(pki):
    server = serve(pki, closing=True)
    try:
        reader = Reader(spec(pki, server, users=1, rate_per_s=20, duration_s=1.0, mix={"get_node": 1}), io.BytesIO())
        reader.run()
    finally:
        server.shutdown()
    assert reader.requests > 1 and reader.failures == 0
    assert server.handshakes == reader.requests


def test_each_connection_waits_for_its_answer_and_its_interval_before_its_next_request(pki):
    server = serve(pki)
    try:
        reader = Reader(spec(pki, server, users=2, rate_per_s=4, duration_s=3.0, request_timeout_s=30.0,
                             nodes=["slow"], mix={"get_node": 1}), io.BytesIO())
        reader.run()
    finally:
        server.shutdown()
    # both connections send at once, then wait for answers that come after the run: a closed loop, as locust's users
    assert reader.sent == 2 and server.handshakes == 2 and reader.requests == 0, (reader.sent, reader.requests)


def test_a_request_without_an_answer_fails_after_its_timeout_and_stop_ends_the_run(pki):
    server = serve(pki)
    try:
        out = io.BytesIO()
        reader = Reader(spec(pki, server, users=1, rate_per_s=1, duration_s=60.0, request_timeout_s=1.0,
                             nodes=["slow"], mix={"get_node": 1}), out)
        threading.Timer(2.5, reader.stop).start()
        elapsed = reader.run()
    finally:
        server.shutdown()
    assert elapsed < 10, elapsed
    first = records(out)[0]
    assert not first.ok and first.error == "no answer in 1 s" and 1.0 <= first.t1 - first.t0 < 2.5


def test_a_load_spec_hands_its_reads_to_the_reader_and_keeps_rate_users_and_churn_whole(pki):
    whole = parse_spec({"endpoint": "https://127.0.0.1:6443", "ca": "/ca", "cert": "/c", "key": "/k", "nodes": ["n1"],
                        "users": 10, "rate_per_s": 20, "processes": 2, "plain_reads": True})
    reads, rest = whole.split()
    share = sum(w for t, w in DEFAULT_MIX.items() if t in READ_TASKS) / sum(DEFAULT_MIX.values())
    assert set(reads.mix) == set(READ_TASKS) & set(DEFAULT_MIX) and not set(rest.mix) & set(READ_TASKS)
    assert reads.rate_per_s == pytest.approx(20 * share) and reads.rate_per_s + rest.rate_per_s == pytest.approx(20)
    assert reads.users == round(10 * share) and reads.users + rest.users == 10
    assert reads.processes == 1 and rest.processes == 2
    assert rest.churn_per_s == pytest.approx(whole.churn_per_s)
    in_locust = whole.model_copy(update={"plain_reads": False})
    assert in_locust.split() == (None, in_locust)
    only_reads = whole.model_copy(update={"mix": {"readyz": 1}})
    assert only_reads.split() == (only_reads.model_copy(update={"processes": 1}), None)
    no_reads = whole.model_copy(update={"mix": {"configmap": 1}})
    assert no_reads.split() == (None, no_reads)
