"""Reading HAProxy's `show stat` answer from a unix socket (a recorded HAProxy 2.6 answer served by a
socket server here; the integration tests read the real HAProxy's)."""

import socket
import threading

import pytest

from harness.errors import ClusterError
from harness.lbstate import check_socket_path, is_down, server_states

# HAProxy 2.6 `show stat`, trimmed to the leading columns (the parser reads columns by name)
SHOW_STAT = (
    "# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,weight\n"
    "apiserver,FRONTEND,,,3,9,4096,120,1,2,0,0,0,,,,,OPEN,\n"
    "apiservers,c1,0,0,1,3,,40,1,2,,0,,0,0,0,0,UP,1\n"
    "apiservers,c2,0,0,1,3,,40,1,2,,0,,0,0,0,0,UP 1/3,1\n"
    "apiservers,c3,0,0,0,3,,40,1,2,,0,,0,0,0,0,DOWN,1\n"
    "apiservers,BACKEND,0,0,2,9,410,120,1,2,0,0,,0,0,0,0,UP,2\n"
    "\n"
)


@pytest.fixture
def stats_socket(tmp_path):
    path = tmp_path / "haproxy.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    asked = []

    def serve():
        conn, _ = server.accept()
        with conn:
            asked.append(conn.recv(100))
            conn.sendall(SHOW_STAT.encode())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, asked
    server.close()
    thread.join(2)


def test_server_states_reads_each_apiserver_and_skips_the_aggregates(stats_socket):
    path, asked = stats_socket
    assert server_states(path) == {"c1": "UP", "c2": "UP 1/3", "c3": "DOWN"}
    assert asked == [b"show stat\n"]


def test_only_a_server_marked_down_counts_as_down():
    assert [is_down(s) for s in ("UP", "UP 1/3", "DOWN", "DOWN 1/2", "MAINT", "no check", "")] == [
        False, False, True, True, True, False, False]


def test_a_missing_socket_says_what_to_check(tmp_path):
    with pytest.raises(ClusterError, match="quorum status"):
        server_states(tmp_path / "absent.sock")


def test_a_socket_path_too_long_for_unix_sockets_is_refused_with_the_fix(tmp_path):
    with pytest.raises(ClusterError, match="shorter --run-dir"):
        check_socket_path(tmp_path / ("x" * 120) / "haproxy.sock")
