"""The plain reader, one process: `python -m harness.load.reader SPEC.json RECORDS SUMMARY.json`.

Sends a LoadSpec's read tasks (spec.READ_TASKS) at its rate over `users` kept-alive TLS connections, multiplexed
with epoll in one thread, one request in flight on each as a locust user keeps one, each connection paced as
locust's constant_throughput paces a user: its next request goes `users / rate_per_s` after the last one was sent, or
at its answer if that came later (a closed loop, as the load's locust users: docs/load.md says why). Writes the
summary harness/load/worker.py writes, and its request records in a binary form (harness/load/records.py). Neither
gevent nor locust: a request costs a few times less CPU here (docs/load.md)."""

from __future__ import annotations

import json
import random
import select
import signal
import ssl
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from harness.load import records
from harness.load.plain_http import BadResponse, connect, get_request, read_response, tls_context
from harness.load.spec import LoadSpec, read_path, spec_file_or_exit

GRACE_S = 30.0  # as the locust worker's: after the duration, the alarm ends the process whatever happens
DRAIN_S = 5.0  # after the duration: answers still on their way are waited for this long, then not counted
EXPIRY_CHECK_S = 0.1  # how often requests in flight are checked against the request timeout
PICKS = 1024  # random tasks and nodes drawn at a time with random.choices: cheaper per request than a choice() each


@dataclass
class Connection:
    """One kept-alive connection and the one request in flight on it."""
    socket: ssl.SSLSocket | None = None
    buffer: bytes = b""
    task: int = 0  # its index in records.TASK_ORDER
    sent_at: float | None = None  # monotonic; None when idle
    due: float = 0.0  # when its next request may go


class Reader:
    def __init__(self, spec: LoadSpec, out: BinaryIO, rng: random.Random | None = None) -> None:
        self.spec, self.out, self.rng = spec, out, rng or random.Random()
        self.context = tls_context(str(spec.ca), *((None, None) if spec.anonymous else (str(spec.cert), str(spec.key))))
        # weighed as locust's list of tasks; drawn PICKS at a time
        self.tasks = [records.TASK_INDEX[task] for task, weight in spec.mix.items() for _ in range(weight)]
        self.task_picks: list[int] = []
        self.node_picks: list[str] = []
        self.interval = 0.0 if spec.unpaced else spec.users / spec.rate_per_s  # of each connection
        self.connections = [Connection() for _ in range(spec.users)]  # each opens its socket when first used
        self.by_fd: dict[int, Connection] = {}
        self.poller = select.epoll()
        self.requests = self.failures = self.sent = self.in_flight = 0
        self.requests_by_path: dict[tuple[int, str], bytes] = {}  # (task, node) -> the request's bytes
        self.next_due = 0.0  # no idle connection is due before this
        self.end = float("inf")  # stop() may come before run()

    def stop(self, *_: object) -> None:
        self.end = min(self.end, time.monotonic())

    def run(self) -> float:
        """Until the duration or the request bound is reached (or stop()); the seconds it sent for."""
        started = next_expiry_check = time.monotonic()
        self.end = min(self.end, started + self.spec.duration_s)
        try:
            while True:
                now = time.monotonic()
                sending = now < self.end and self.sent < self.spec.max_requests
                if not sending and (not self.in_flight or now > self.end + DRAIN_S):
                    return min(now, self.end) - started
                if sending and now >= self.next_due:
                    self.send_due(now)
                if now >= next_expiry_check:
                    self.expire(now)
                    next_expiry_check = now + EXPIRY_CHECK_S
                wake = min(self.next_due if sending else now + 1.0, next_expiry_check)
                for fd, _ in self.poller.poll(min(max(wake - time.monotonic(), 0.0), 1.0)):
                    if fd in self.by_fd:
                        self.receive(self.by_fd[fd])
        finally:
            for connection in self.connections:
                self.close(connection)
            self.poller.close()

    def send_due(self, now: float) -> None:
        """A request on every idle connection whose time has come; when the next one's comes."""
        self.next_due = float("inf")
        for connection in self.connections:
            if connection.sent_at is None:
                if connection.due <= now and self.sent < self.spec.max_requests:
                    self.send(connection, now)
                if connection.sent_at is None:  # not due yet, or its send failed at once
                    self.next_due = min(self.next_due, connection.due)

    def send(self, connection: Connection, now: float) -> None:
        self.sent += 1
        self.in_flight += 1
        if not self.task_picks:
            self.task_picks = self.rng.choices(self.tasks, k=PICKS)
        task = self.task_picks.pop()
        node = ""
        if self.spec.nodes:
            if not self.node_picks:
                self.node_picks = self.rng.choices(self.spec.nodes, k=PICKS)
            node = self.node_picks.pop()
        connection.task, connection.sent_at = task, now
        try:
            if connection.socket is None:
                # a blocking connect and handshake: the LB is near, and this happens once per connection and after
                # the server closed one (a failover)
                connection.socket = connect(self.spec.endpoint, self.context, min(10.0, self.spec.request_timeout_s))
                connection.socket.setblocking(False)
                self.by_fd[connection.socket.fileno()] = connection
                self.poller.register(connection.socket.fileno(), select.EPOLLIN)
            request = self.requests_by_path.get((task, node))
            if request is None:
                request = get_request(self.spec.endpoint, read_path(records.TASK_ORDER[task], self.spec, node))
                self.requests_by_path[(task, node)] = request
            if connection.socket.send(request) != len(request):  # one small TLS record: an empty buffer takes it
                raise ConnectionError("a request did not fit the socket's buffer")
        except (OSError, ssl.SSLError) as error:
            self.fail(connection, f"{type(error).__name__}: {error}")

    def receive(self, connection: Connection) -> None:
        try:
            data = connection.socket.read(65536)
            while connection.socket.pending():  # TLS records already decrypted wait in the socket, not the kernel
                data += connection.socket.read(65536)
        except ssl.SSLWantReadError:
            return
        except (OSError, ssl.SSLError) as error:
            return self.fail(connection, f"{type(error).__name__}: {error}")
        if not data:
            return self.fail(connection, "the server closed the connection")
        if connection.sent_at is None:  # bytes nobody asked for: the connection is out of step
            return self.fail(connection, "an answer to no request")
        try:
            answer = read_response(connection.buffer + data)
        except BadResponse as error:
            return self.fail(connection, str(error))
        if answer is None:
            connection.buffer += data
            return
        status, rest, closing = answer
        self.record(connection, time.monotonic(), status)
        if closing or rest:
            self.close(connection)

    def expire(self, now: float) -> None:
        for connection in self.connections:
            if connection.sent_at is not None and now - connection.sent_at > self.spec.request_timeout_s:
                self.fail(connection, f"no answer in {self.spec.request_timeout_s:.0f} s")

    def fail(self, connection: Connection, error: str) -> None:
        """The request in flight failed (if one was) and the connection is closed: the next request opens another,
        as a locust user without retries does."""
        if connection.sent_at is not None:
            self.record(connection, time.monotonic(), 0, error)
        self.close(connection)

    def record(self, connection: Connection, end: float, status: int, error: str = "") -> None:
        """The request in flight ended: answered with `status`, or without an answer (0) for `error`."""
        records.write(self.out, connection.sent_at, end, connection.task, status, error)
        self.requests += 1
        self.failures += 0 if records.ok(status) else 1
        self.in_flight -= 1
        connection.due = max(connection.sent_at + self.interval, end)
        self.next_due = min(self.next_due, connection.due)
        connection.sent_at, connection.buffer = None, b""

    def close(self, connection: Connection) -> None:
        if connection.socket is not None:
            self.by_fd.pop(connection.socket.fileno(), None)
            try:
                self.poller.unregister(connection.socket.fileno())
            except (OSError, ValueError):
                pass  # never registered, or the poller is closed
            connection.socket.close()
        if connection.sent_at is not None:  # given up unanswered (the drain's end): not recorded
            self.in_flight -= 1
        connection.socket, connection.buffer, connection.sent_at = None, b"", None


def main(spec_file: str, records_file: str, summary_file: str) -> int:
    spec = spec_file_or_exit(spec_file, "harness.load.reader")
    signal.alarm(int(spec.duration_s + GRACE_S + spec.request_timeout_s))  # the last bound, whatever happens
    with open(records_file, "ab") as out:
        reader = Reader(spec, out)
        signal.signal(signal.SIGTERM, reader.stop)
        signal.signal(signal.SIGINT, reader.stop)
        elapsed = reader.run()
    Path(summary_file).write_text(json.dumps({
        "requests": reader.requests, "failures": reader.failures, "elapsed_s": elapsed,
        "rps": reader.requests / elapsed if elapsed > 0 else 0.0}))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:  # a usage line, not a traceback
        sys.exit("usage: python -m harness.load.reader SPEC.json RECORDS SUMMARY.json")
    sys.exit(main(*sys.argv[1:4]))
