"""A lean HTTP/1.1 client over kept-alive TLS sockets: GET requests written as one TLS record each and responses
read only as far as their status and length. What the paced reader (harness/load/reader.py) and the client benches
need, and no more: a request costs ~22 us of Python here, against ~90 us for h11's parser alone and ~290 us for a
locust user (docs/load.md, docs/libraries.md)."""

from __future__ import annotations

import re
import socket
import ssl
import struct
from urllib.parse import urlsplit

CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:\s*(\d+)", re.I)
CHUNKED = re.compile(rb"\r\ntransfer-encoding:[^\r]*chunked", re.I)
CONNECTION_CLOSE = re.compile(rb"\r\nconnection:\s*close", re.I)
MAX_HEAD = 65536  # a response head longer than this is not an apiserver's


class BadResponse(ValueError):
    """The bytes on a connection are not an HTTP/1.1 response this client can read."""


def _chunked_end(buffer: bytes, at: int) -> int | None:
    """Where a chunked body that starts at `at` ends (after its trailers), or None while it is incomplete."""
    while True:
        line_end = buffer.find(b"\r\n", at)
        if line_end < 0:
            return None
        try:
            size = int(buffer[at:line_end].split(b";", 1)[0], 16)
        except ValueError:
            raise BadResponse(f"a chunk size that is not hexadecimal: {buffer[at:line_end][:40]!r}") from None
        if size == 0:  # the last chunk: trailer lines (the apiserver sends none), then an empty line
            end = buffer.find(b"\r\n\r\n", line_end)
            return None if end < 0 else end + 4
        at = line_end + 2 + size + 2
        if at > len(buffer):
            return None


def read_response(buffer: bytes) -> tuple[int, bytes, bool] | None:
    """(status, the bytes after the response, whether the server closes the connection) once `buffer` holds a whole
    response, else None. Bodies with a Content-Length or chunked; a HEAD-like bodiless status has neither."""
    head_end = buffer.find(b"\r\n\r\n")
    if head_end < 0:
        if len(buffer) > MAX_HEAD:
            raise BadResponse(f"no end of the response head in {MAX_HEAD} bytes")
        return None
    if not buffer.startswith(b"HTTP/1.") or not buffer[9:12].isdigit():
        raise BadResponse(f"not an HTTP/1.x status line: {buffer[:40]!r}")
    status, close = int(buffer[9:12]), CONNECTION_CLOSE.search(buffer, 0, head_end) is not None
    if (match := CONTENT_LENGTH.search(buffer, 0, head_end)) is not None:
        end = head_end + 4 + int(match.group(1))
        return (status, buffer[end:], close) if len(buffer) >= end else None
    if CHUNKED.search(buffer, 0, head_end) is not None:
        end = _chunked_end(buffer, head_end + 4)
        return None if end is None else (status, buffer[end:], close)
    if status < 200 or status in (204, 304):
        return status, buffer[head_end + 4:], close
    raise BadResponse(f"HTTP {status} with neither Content-Length nor chunked encoding")


def get_request(url: str, path: str) -> bytes:
    """A GET of `path` on the host of `url`, kept alive, asking for JSON uncompressed (what it measures is the
    server's answer, not a decompressor)."""
    return (f"GET {path} HTTP/1.1\r\nHost: {urlsplit(url).netloc}\r\nUser-Agent: quorum-load\r\n"
            "Accept: application/json, */*\r\n\r\n").encode()


def tls_context(ca_file: str | None, cert: str | None = None, key: str | None = None) -> ssl.SSLContext:
    """The cluster's CA only (none: the certificate is not verified, for a throwaway one on loopback), with the
    client certificate when one is given. No ALPN: the server answers in HTTP/1.1."""
    context = ssl.create_default_context(cafile=ca_file)
    if ca_file is None:
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    if cert:
        context.load_cert_chain(cert, key)
    return context


def connect(url: str, context: ssl.SSLContext, timeout_s: float = 10.0) -> ssl.SSLSocket:
    """A TLS connection whose reads and writes give up after `timeout_s`. Without gevent the kernel keeps that time
    (SO_RCVTIMEO, SO_SNDTIMEO), not Python: a Python socket timeout polls before every call, one more system call
    per request."""
    parts = urlsplit(url)
    connection = context.wrap_socket(socket.create_connection((parts.hostname, parts.port or 443), timeout=timeout_s),
                                     server_hostname=parts.hostname)
    if socket.socket.__module__.startswith("gevent"):
        return connection  # gevent's sockets keep their timeout themselves, with a timer, no extra call
    connection.settimeout(None)
    whole, fraction = divmod(timeout_s, 1.0)
    limit = struct.pack("ll", int(whole), int(fraction * 1_000_000))
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, limit)
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, limit)
    return connection
