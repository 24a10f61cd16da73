"""harness/load/plain_http.py: a response is whole only with its whole body (a length or chunks), what follows it is
kept, a server's close is seen, and bytes that are no HTTP/1.1 response are refused."""

import pytest

from harness.load.plain_http import BadResponse, get_request, read_response

OK = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-type: text/plain\r\n\r\nok"
CHUNKED = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"5\r\n{\"a\":\r\n3;ext=1\r\n 1}\r\n0\r\n\r\n")


def test_a_response_with_a_length_is_whole_only_with_its_body_and_what_follows_is_kept():
    assert read_response(OK[:20]) is None
    assert read_response(OK[:-1]) is None
    assert read_response(OK) == (200, b"", False)
    assert read_response(OK + b"HTTP/1.1 503") == (200, b"HTTP/1.1 503", False)
    assert read_response(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n") == (503, b"", False)


def test_a_chunked_response_is_whole_after_its_last_chunk_and_trailers():
    for cut in range(len(CHUNKED)):
        assert read_response(CHUNKED[:cut]) is None, cut
    assert read_response(CHUNKED) == (200, b"", False)
    trailers = CHUNKED[:-2] + b"X-Trailer: 1\r\n\r\nnext"
    assert read_response(trailers) == (200, b"next", False)


def test_a_servers_close_and_a_bodiless_status_are_read():
    assert read_response(b"HTTP/1.1 429 Too Many\r\nConnection: close\r\nContent-Length: 0\r\n\r\n") == (429, b"", True)
    assert read_response(b"HTTP/1.1 204 No Content\r\n\r\n") == (204, b"", False)


@pytest.mark.parametrize("data, reason", [
    (b"SSH-2.0-OpenSSH_9.2\r\n\r\n", "not an HTTP/1.x status line"),
    (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nok", "neither Content-Length nor chunked"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not hexadecimal"),
    (b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 20000, "no end of the response head"),
])
def test_bytes_that_are_no_response_it_can_read_are_refused_with_why(data, reason):
    with pytest.raises(BadResponse, match=reason):
        read_response(data)


def test_the_request_names_the_path_and_the_endpoints_host():
    assert get_request("https://10.213.3.10:6443", "/api/v1/nodes/n1") == (
        b"GET /api/v1/nodes/n1 HTTP/1.1\r\nHost: 10.213.3.10:6443\r\nUser-Agent: quorum-load\r\n"
        b"Accept: application/json, */*\r\n\r\n")
