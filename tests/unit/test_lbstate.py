"""Reading HAProxy's `show stat` answer from a unix socket (a recorded HAProxy 2.6 answer served by a
socket server here; the integration tests read the real HAProxy's)."""

import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from harness.errors import ClusterError
from harness.components import haproxy
from harness.components.base import Layout
from harness.clients.haproxy_admin import MAX_SOCKET_PATH, admin_command, check_socket_path, is_down, server_states
from harness.topology import load_topology
from harness.wait import until

CLUSTERS = Path(__file__).resolve().parents[2] / "clusters"

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


def test_a_socket_path_haproxy_would_refuse_is_refused_before_anything_starts(tmp_path):
    base = tmp_path / "r"
    name = "x" * (MAX_SOCKET_PATH - len(str(base)) - 1)
    assert len(str(check_socket_path(base / name)).encode()) == MAX_SOCKET_PATH
    with pytest.raises(ClusterError, match=f"more than the {MAX_SOCKET_PATH} HAProxy allows"):
        check_socket_path(base / (name + "x"))


def haproxy_accepts_socket(haproxy: str, path: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    cfg = tmp_path / "h.cfg"
    cfg.write_text(f"global\n  stats socket {path} mode 600 level user\ndefaults\n  mode tcp\n  timeout connect 1s\n"
                   "  timeout client 1s\n  timeout server 1s\nfrontend f\n  bind 127.0.0.1:6443\n")  # -c parses, binds nothing
    return subprocess.run([haproxy, "-c", "-f", str(cfg)], capture_output=True, text=True, timeout=30)


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed (quorum toolchain install)")
def test_the_socket_limit_is_the_one_the_installed_haproxy_enforces(tmp_path):
    base = tmp_path / "r"
    base.mkdir()
    longest = base / ("x" * (MAX_SOCKET_PATH - len(str(base)) - 1))
    accepted = haproxy_accepts_socket(shutil.which("haproxy"), longest, tmp_path)
    assert accepted.returncode == 0, accepted.stderr
    refused = haproxy_accepts_socket(shutil.which("haproxy"), Path(f"{longest}x"), tmp_path)
    assert refused.returncode != 0 and f"too long (max {MAX_SOCKET_PATH})" in refused.stderr


def test_the_admin_socket_of_a_run_directory_as_deep_as_pytests_fits():
    topology = load_topology(CLUSTERS / "ha3-1000.yaml")
    # the run directory of CI's main-job test (HAProxy refused the socket path inside config/lb/ there), one
    # level deeper in an xdist worker's directory (run.sh runs the tests in two lanes)
    run_dir = Path("/tmp/pytest-of-root/pytest-1001/popen-gw1/test_every_suite_passes_on_the0/run-ha3-1000")
    layout = Layout(topology, run_dir, binary=lambda name: Path("/usr/sbin") / name)
    socket_path = haproxy.admin_socket(layout, topology.load_balancer_host)
    assert socket_path.parent == run_dir and len(str(socket_path)) <= MAX_SOCKET_PATH


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed (quorum toolchain install)")
def answer_of(path: Path) -> dict[str, str] | None:
    """The server states on the admin socket at `path`, or None while nothing listens there yet."""
    try:
        return server_states(path)
    except ClusterError:
        return None


def test_a_server_listed_disabled_is_taken_into_rotation_and_out_again_without_a_restart(tmp_path):
    """What a scale does on the load balancer (harness/backends/process/membership.py): a real HAProxy whose config
    lists a spare host's server `disabled` (MAINT), enabled and disabled on its admin socket; a name it does not know
    is refused with HAProxy's own words."""
    path = tmp_path / "a.sock"
    cfg = tmp_path / "h.cfg"
    cfg.write_text(f"global\n  stats socket {path} mode 600 level admin\ndefaults\n  mode tcp\n  timeout connect 1s\n"
                   "  timeout client 1s\n  timeout server 1s\nbackend apiservers\n"
                   "  server c1 127.0.0.1:1\n  server c4 127.0.0.1:2 disabled\n")
    proxy = subprocess.Popen([shutil.which("haproxy"), "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        # the socket's file exists from its bind, before HAProxy listens on it: wait for an answer, not the file
        assert until(lambda: answer_of(path), 10.0, 0.05).value == {"c1": "no check", "c4": "MAINT"}
        admin_command(path, "enable server apiservers/c4")
        assert server_states(path)["c4"] == "no check"
        admin_command(path, "disable server apiservers/c4")
        assert server_states(path)["c4"] == "MAINT"
        with pytest.raises(ClusterError, match="refused 'enable server apiservers/c9': No such server"):
            admin_command(path, "enable server apiservers/c9")
        assert proxy.poll() is None, "HAProxy itself never restarted"
    finally:
        proxy.kill()
        proxy.wait(10)
