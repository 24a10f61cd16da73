"""The API prober counts an answer as available however slowly it comes (harness/thresholds.py), and a request
nothing answers within the probe's timeout as a failure: a real prober against a local HTTP server."""

import threading
import time
from http.server import ThreadingHTTPServer

import pytest
import requests

from harness.backends.fake.target import FakeTarget
from harness.history import History
from harness.monitors import ApiProber
from harness.thresholds import AVAILABILITY_PROBE_TIMEOUT_S
from tests.http_ok import AnswersOk
from tests.unit.conftest import fake_target


class SlowReadyz(AnswersOk):
    delay_s = 1.5

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        time.sleep(self.delay_s)
        self.answer_ok()


@pytest.fixture
def slow_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowReadyz)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class Connection:
    def __init__(self) -> None:
        self.session = requests.Session()


def target_at(tmp_path, endpoint: str) -> FakeTarget:
    api = type("Api", (), {"endpoint": endpoint, "on_a_new_connection": lambda self: Connection()})()
    cls = type("Served", (FakeTarget,), {"api": property(lambda self: api)})
    return fake_target(tmp_path, cls=cls)


def probe(target: FakeTarget, **options) -> History:
    history = History()
    prober = ApiProber(target, history, rate=10, workers=1, max_ops=2, **options).start()
    try:
        deadline = time.monotonic() + 20
        while len(history.ops_of("api.readyz")) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        prober.stop()
    return history


def test_an_answer_slower_than_a_second_is_available(tmp_path, slow_server):
    assert AVAILABILITY_PROBE_TIMEOUT_S > SlowReadyz.delay_s
    ops = probe(target_at(tmp_path, slow_server)).ops_of("api.readyz")
    assert len(ops) == 2 and all(op.ok for op in ops), [(op.outcome, op.error) for op in ops]
    assert all(op.complete - op.invoke >= SlowReadyz.delay_s for op in ops)


def test_a_request_unanswered_within_the_probes_timeout_fails(tmp_path, slow_server):
    ops = probe(target_at(tmp_path, slow_server), timeout=0.5).ops_of("api.readyz")
    assert len(ops) == 2 and not any(op.ok for op in ops) and all("timeout" in op.error for op in ops)
