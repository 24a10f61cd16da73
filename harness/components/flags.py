"""A running component's command-line flags, read from its live process, and the Go durations they hold.

Conformance judges what runs, not what a spec or a manifest meant to run: the process backend reads
/proc/PID/cmdline on the machine, the kind backend the same file inside the node.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

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


_HELP_FLAG = re.compile(r"^\s+(?:-\w, )?(--[a-z0-9][a-z0-9-]*)", re.MULTILINE)


def known_flags(binary: Path) -> set[str]:
    """The flags a component binary takes, from its own --help (cached next to nothing: --help takes a second)."""
    result = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=60)
    return flags_in_help(result.stdout + result.stderr)


def flags_in_help(text: str) -> set[str]:
    """The long flags a component's --help lists, one per line ('      --etcd-servers strings  ...')."""
    return set(_HELP_FLAG.findall(text))


def unknown_extra_flags(binary: Path, flags: Iterable[str]) -> list[str]:
    """The flags of `flags` that `binary` does not take (a typo would only show as a crash-looping component)."""
    known = known_flags(binary)
    return sorted(flag for flag in flags if flag not in known)
