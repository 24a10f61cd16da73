"""Creating a namespace survives a kept-alive connection that is closed before it answers (a load balancer shutting
the sessions of a backend it marked down), against a real HTTP server on loopback."""

import contextlib
import http.server
import threading
from collections.abc import Iterator

import pytest
from harness.clients.kubeapi import ApiClient
from harness.errors import ClusterError
from harness.load.hollow import ensure_namespace


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the apiserver
    posts = 0
    dropped = 1  # how many POSTs get their connection closed without a response

    def _answer(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def do_GET(self):  # noqa: N802 (http.server's name)
        self._answer(200)

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        _Handler.posts += 1
        if _Handler.posts <= _Handler.dropped:
            self.close_connection = True  # closed without a response, like a session shut down
            return
        self._answer(201)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def _api(dropped: int) -> Iterator[ApiClient]:
    """A client with a kept-alive connection to a loopback server, as after a cluster's bring-up; the server stops
    however the test ends."""
    _Handler.posts, _Handler.dropped = 0, dropped
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        api = ApiClient(f"http://127.0.0.1:{httpd.server_address[1]}", ca="", client=None)
        assert api.get("/readyz").status_code == 200
        yield api
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_post_closed_without_an_answer_is_sent_once_more():
    with _api(dropped=1) as api:
        ensure_namespace(api, "quorum-load")
    assert _Handler.posts == 2


def test_a_second_close_is_a_cluster_error_that_says_what_failed():
    with _api(dropped=2) as api, pytest.raises(ClusterError, match="creating namespace quorum-load"):
        ensure_namespace(api, "quorum-load")
    assert _Handler.posts == 2
