"""Lean Python HTTP/1.1 clients over kept-alive TLS connections, for benchmarks of what a request costs the client
(bench/client_floor.py, `bench/load.py rps`): GET one path again and again, count the 200s, fail on anything else.

    python bench/python_clients.py KIND URL CONNECTIONS SECONDS [CA_FILE]

KIND is `plain` (blocking sockets; several connections are multiplexed with epoll) or `gevent` (one greenlet
per connection on gevent's sockets, as locust runs its users). Prints "<requests> <seconds from the first connection
to the last answer>". Without CA_FILE the server's certificate is not verified (a throwaway one on loopback).
Its request and parser are the load suite's plain reader's (harness/load/plain_http.py).
"""

from __future__ import annotations

import sys

if __name__ == "__main__" and sys.argv[1:2] == ["gevent"]:
    from gevent import monkey  # before ssl and socket are imported, as gevent requires

    monkey.patch_all()

import select  # noqa: E402
import ssl  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from urllib.parse import urlsplit  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the harness is beside bench/
from harness.load.plain_http import connect, get_request, read_response, tls_context  # noqa: E402

MAX_REQUESTS = 2_000_000  # every loop stops at this count or at its time, whichever comes first


def request_bytes(url: str) -> bytes:
    return get_request(url, urlsplit(url).path or "/")


def one_connection(url: str, context: ssl.SSLContext, seconds: float) -> int:
    """Requests on one connection, one at a time, until `seconds` or MAX_REQUESTS; the count (also under gevent)."""
    request, done, buffer, deadline = request_bytes(url), 0, b"", time.monotonic() + seconds
    with connect(url, context) as connection:
        while done < MAX_REQUESTS and (done % 256 or time.monotonic() < deadline):
            connection.sendall(request)
            while (answer := read_response(buffer)) is None:
                chunk = connection.recv(65536)
                if not chunk:
                    raise ConnectionError("the server closed the connection")
                buffer += chunk
            status, buffer, _ = answer
            if status != 200:
                raise RuntimeError(f"HTTP {status}")
            done += 1
    return done


def multiplexed(url: str, context: ssl.SSLContext, connections: int, seconds: float) -> int:
    """One request in flight on each of `connections` connections, multiplexed by epoll, in one thread."""
    request, deadline, done = request_bytes(url), time.monotonic() + seconds, 0
    poller, open_by_fd, buffers = select.epoll(), {}, {}
    try:
        for _ in range(connections):
            connection = connect(url, context)
            connection.sendall(request)
            connection.setblocking(False)
            poller.register(connection.fileno(), select.EPOLLIN)
            open_by_fd[connection.fileno()], buffers[connection.fileno()] = connection, b""
        while open_by_fd:
            events = poller.poll(10, len(open_by_fd))  # as many slots as connections, as selectors does
            if not events:
                raise TimeoutError("no answer on any connection for 10 s")
            for fd, _ in events:
                connection = open_by_fd[fd]
                try:
                    buffer = buffers[fd] + connection.read(65536)
                    while connection.pending():  # TLS records already decrypted wait in the socket, not the kernel
                        buffer += connection.read(65536)
                except ssl.SSLWantReadError:
                    continue
                if (answer := read_response(buffer)) is None:
                    buffers[fd] = buffer
                    continue
                status, buffers[fd], _ = answer
                if status != 200:
                    raise RuntimeError(f"HTTP {status}")
                done += 1
                if done >= MAX_REQUESTS or time.monotonic() >= deadline:
                    poller.unregister(fd)
                    del open_by_fd[fd]
                    connection.close()
                elif connection.send(request) != len(request):  # one small TLS record: the socket buffer takes it
                    raise ConnectionError("a request did not fit the socket's buffer")
    finally:
        for connection in open_by_fd.values():
            connection.close()
        poller.close()
    return done


def run(kind: str, url: str, connections: int, seconds: float, ca_file: str | None) -> tuple[int, float]:
    """(requests, seconds from the first connection to the last answer) of one client process."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise ValueError(f"{url!r} is not an https:// URL with a host")
    if connections < 1 or seconds <= 0:
        raise ValueError(f"{connections} connections for {seconds} s: both must be above 0")
    if kind == "gevent":  # run as a script: sockets and ssl are gevent's (patched at the top)
        import gevent

        context = tls_context(ca_file)
        started = time.monotonic()
        jobs = [gevent.spawn(one_connection, url, context, seconds) for _ in range(connections)]
        gevent.joinall(jobs, raise_error=True)
        return sum(job.value for job in jobs), time.monotonic() - started
    if kind != "plain":
        raise ValueError(f"unknown client kind {kind!r}: plain or gevent")
    context = tls_context(ca_file)
    started = time.monotonic()
    done = (one_connection(url, context, seconds) if connections == 1
            else multiplexed(url, context, connections, seconds))
    return done, time.monotonic() - started


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    try:
        requests, elapsed = run(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]),
                                sys.argv[5] if len(sys.argv) == 6 else None)
    except ValueError as error:  # a bad argument: say which, not a traceback
        sys.exit(f"python_clients: {error}\n{__doc__}")
    print(requests, round(elapsed, 3))
