"""A running component's command-line flags, read from its live process, and the Go durations they hold.

Conformance judges what runs, not what a spec or a manifest meant to run: the process backend reads
/proc/PID/cmdline on the machine, the kind backend the same file inside the node.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from harness.errors import ClusterError

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_flags(argv: Iterable[str]) -> dict[str, str]:
    """'--name=value' arguments (after the program name) -> {'--name': 'value'}; a bare '--name' maps to ''.
    The last occurrence wins, as in the components' own flag parser."""
    flags = {}
    for arg in argv:
        name, _, value = arg.partition("=")
        if name.startswith("--"):
            flags[name] = value
    return flags


def go_duration_s(text: str) -> float:
    """A Go time.Duration string ('15s', '15000ms', '1m30s') in seconds."""
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        raise ClusterError(f"{text!r} is not a Go duration", "a component flag holding a duration is written like "
                           "15s, 1500ms or 1m30s; fix the topology or manifest that set it")
    return sum(float(number) * _SECONDS[unit] for number, unit in parts)
