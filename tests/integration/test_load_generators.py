"""bench/load.py rps's generators, run as the bench runs them against a local TLS server: vegeta and wrk accept the
flags it gives them, and each figure it reads (requests/s, the generator's CPU, the TCP connections it opened, the
cores it ran on) comes out of a real run. The server counts what it was sent, so a figure read from the wrong place
cannot pass."""

import ssl
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from harness.pki import LOOPBACK, Authority
from tests.http_ok import AnswersOk

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import load_rps  # noqa: E402

SECONDS = 3.0


class Server(ThreadingHTTPServer):
    # every generator connection waits in the kernel's queue, not refused, while the accept loop is slow (CI's lanes)
    request_queue_size = 128


class Counting(AnswersOk):
    protocol_version = "HTTP/1.1"  # keep-alive, as the apiserver answers
    served = connections = 0
    lock = threading.Lock()

    def setup(self) -> None:  # one handler per accepted connection
        with Counting.lock:
            Counting.connections += 1
        super().setup()

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        with Counting.lock:
            Counting.served += 1
        self.answer_ok()


@pytest.fixture
def server(tmp_path):
    authority = Authority(tmp_path / "ca", "quorum-test-ca")
    pair = authority.issue("server", "127.0.0.1", server=True, ips=(LOOPBACK,))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pair.cert, pair.key)
    httpd = Server(("127.0.0.1", 0), Counting)
    # the TLS handshake in each connection's thread, not in the accept loop: one slow handshake must not hold the rest
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Counting.served = Counting.connections = 0
    yield f"https://127.0.0.1:{httpd.server_address[1]}/readyz", authority.pair.cert
    httpd.shutdown()
    httpd.server_close()


def assert_figures_of_a_real_run(measured: load_rps.Measured) -> None:
    # the rate it reports is what the server answered, over the run's length (start-up makes the two differ a little)
    assert measured.requests_per_s > 0
    assert 0.5 < measured.requests_per_s * SECONDS / Counting.served < 1.5, (measured, Counting.served)
    # the namespace's counter holds at least the generator's connections (other processes on the host may add some),
    # and the server saw each kept for several requests: a handshake per request would make the two counts equal
    assert measured.tcp_opens >= Counting.connections > 0
    assert Counting.connections * 2 < Counting.served
    assert measured.cpu_s > 0 and measured.on_cpu > 0 and measured.waiting >= 0


def test_vegeta_runs_as_the_bench_runs_it_and_trusts_the_given_ca(server, tmp_path):
    url, ca = server
    measured = load_rps.vegeta(url, ca, SECONDS, tmp_path / "vegeta")
    assert_figures_of_a_real_run(measured)


def test_vegeta_against_a_server_it_does_not_trust_is_no_figure(server, tmp_path):
    url, _ = server
    stranger = Authority(tmp_path / "other", "someone-else").pair.cert
    with pytest.raises(RuntimeError, match="did not all succeed"):
        load_rps.vegeta(url, stranger, SECONDS, tmp_path / "vegeta")


def test_wrk_runs_as_the_bench_runs_it(server):
    url, _ = server
    assert_figures_of_a_real_run(load_rps.wrk(url, SECONDS))
