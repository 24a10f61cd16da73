"""Shaping a host's link with a root qdisc (tbf for a rate, netem for a delay) that carries a handle of its own:
the baseline the topology asks for has handle 1:, a fault's has one derived from its id, so a fault's undo can
tell whether the link still carries its shaping or a later fault's (and then leaves it alone)."""

from __future__ import annotations

import hashlib
import re

BASELINE = "1:"


def handle(tag: str | None) -> str:
    """The qdisc handle of a fault's shaping (2: to ffff:), the baseline's without a tag."""
    if tag is None:
        return BASELINE
    return f"{int(hashlib.sha256(tag.encode()).hexdigest()[:4], 16) % 0xfffe + 2:x}:"


def tbf(link: str, rate_mbit: float, *, burst_kb: int = 256, latency_ms: int = 50, tag: str | None = None) -> list[str]:
    return ["tc", "qdisc", "replace", "dev", link, "root", "handle", handle(tag), "tbf", "rate", f"{float(rate_mbit)}mbit",
            "burst", f"{int(burst_kb)}kb", "latency", f"{int(latency_ms)}ms"]


def netem(link: str, delay_ms: int, jitter_ms: int = 0, *, tag: str | None = None) -> list[str]:
    argv = ["tc", "qdisc", "replace", "dev", link, "root", "handle", handle(tag), "netem", "delay", f"{int(delay_ms)}ms"]
    return argv + ([f"{int(jitter_ms)}ms"] if jitter_ms else [])


def root(show: str) -> tuple[str, str] | None:
    """(kind, handle) of the root qdisc in `tc qdisc show dev X root` output, None for the default ones."""
    found = re.search(r"qdisc (\S+) ([0-9a-f]+:) root", show)
    if found is None or found.group(1) not in ("tbf", "netem"):
        return None
    return found.group(1), found.group(2)
