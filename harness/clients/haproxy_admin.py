"""What HAProxy thinks of each apiserver right now, read from its admin socket (`show stat`).

Scenarios use it to time the load balancer's own detection instead of estimating it: the moment the LB
marks a backend DOWN is when clients stop being sent there."""

from __future__ import annotations

import csv
import socket
from pathlib import Path

from harness.errors import ClusterError

BACKEND = "apiservers"
# AF_UNIX paths are limited to 108 bytes including the terminating NUL (unix(7)), and HAProxy binds a
# socket as "<path>.<pid>.tmp" before renaming it, so it refuses paths longer than 107 - 10 bytes
# (measured: HAProxy 2.6 says "socket path ... too long (max 97)"; tests/unit/test_lbstate.py asks the binary).
MAX_SOCKET_PATH = 97


def check_socket_path(path: Path) -> Path:
    """Refuse a socket path HAProxy could not bind, before anything starts."""
    if len(str(path).encode()) > MAX_SOCKET_PATH:
        raise ClusterError(f"the load balancer's admin socket path is {len(str(path).encode())} bytes, more than "
                           f"the {MAX_SOCKET_PATH} HAProxy allows for a unix socket: {path}",
                           "use a shorter --run-dir (or move the checkout to a shorter path)")
    return path


def _ask(socket_path: Path, line: str, timeout_s: float) -> str:
    """HAProxy's whole answer to one command line on its admin socket."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout_s)
            conn.connect(str(socket_path))
            conn.sendall(line.encode() + b"\n")
            chunks = []
            while data := conn.recv(65536):
                chunks.append(data)
    except OSError as error:
        raise ClusterError(f"cannot ask {line!r} on the load balancer's admin socket {socket_path}: {error}",
                           "is the cluster up? `quorum status` shows whether haproxy runs") from error
    return b"".join(chunks).decode(errors="replace")


def admin_command(socket_path: Path, line: str, timeout_s: float = 2.0) -> None:
    """One change on the admin socket (level admin), e.g. "disable server apiservers/c4"; a ClusterError when HAProxy
    names an error ("No such server.", "Permission denied."): it answers an accepted change with an empty line."""
    answer = _ask(socket_path, line, timeout_s).strip()
    if answer:
        raise ClusterError(f"the load balancer refused {line!r}: {answer[:200]}",
                           "its admin socket must be at level admin (harness/components/haproxy.py)")


def server_states(socket_path: Path, backend: str = BACKEND, timeout_s: float = 2.0) -> dict[str, str]:
    """Server name -> HAProxy's status for it: UP, DOWN, or a transition such as "UP 1/3" (failing, still
    UP) and "DOWN 1/2" (passing, still DOWN)."""
    lines = _ask(socket_path, "show stat", timeout_s).splitlines()
    if not lines or not lines[0].startswith("# "):
        raise ClusterError(f"unexpected answer to `show stat` from {socket_path}: {lines[:1]!r}")
    rows = csv.DictReader([lines[0][2:], *lines[1:]])
    return {row["svname"]: row["status"] for row in rows
            if row.get("pxname") == backend and row.get("svname") not in ("FRONTEND", "BACKEND")}


def is_down(status: str) -> bool:
    """Marked down: the LB sends this server no new connections ("DOWN", "DOWN 1/2", "MAINT")."""
    return status.split()[0] in ("DOWN", "MAINT") if status else False
