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


def server_states(socket_path: Path, backend: str = BACKEND, timeout_s: float = 2.0) -> dict[str, str]:
    """Server name -> HAProxy's status for it: UP, DOWN, or a transition such as "UP 1/3" (failing, still
    UP) and "DOWN 1/2" (passing, still DOWN)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout_s)
            conn.connect(str(socket_path))
            conn.sendall(b"show stat\n")
            chunks = []
            while data := conn.recv(65536):
                chunks.append(data)
    except OSError as error:
        raise ClusterError(f"cannot read the load balancer's state from {socket_path}: {error}",
                           "is the cluster up? `quorum status` shows whether haproxy runs") from error
    lines = b"".join(chunks).decode(errors="replace").splitlines()
    if not lines or not lines[0].startswith("# "):
        raise ClusterError(f"unexpected answer to `show stat` from {socket_path}: {lines[:1]!r}")
    rows = csv.DictReader([lines[0][2:], *lines[1:]])
    return {row["svname"]: row["status"] for row in rows
            if row.get("pxname") == backend and row.get("svname") not in ("FRONTEND", "BACKEND")}


def is_down(status: str) -> bool:
    """Marked down: the LB sends this server no new connections ("DOWN", "DOWN 1/2", "MAINT")."""
    return status.split()[0] in ("DOWN", "MAINT") if status else False
