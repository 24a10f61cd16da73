"""A free port on the loopback address, for a listener Quorum starts on this machine (a bench's server, a locust
master)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port nothing listens on at the moment of asking (the kernel's choice); the caller binds it soon after."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
