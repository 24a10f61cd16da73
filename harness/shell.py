"""Running host commands with typed errors."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from harness.errors import QuorumError


class CommandError(QuorumError):
    def __init__(self, argv: Sequence[str], code: int, output: str) -> None:
        self.argv = list(argv)
        self.code = code
        self.output = output
        super().__init__(f"`{' '.join(argv)}` exited {code}: {output.strip()[-800:]}")


def completed(argv: Sequence[str], *, timeout: float = 60.0, input: str | None = None) -> subprocess.CompletedProcess:
    """Run a command to its end: its exit code and both outputs; CommandError only when it cannot start."""
    try:
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, input=input)
    except FileNotFoundError:
        raise CommandError(argv, 127, f"{argv[0]} is not installed") from None


def run(argv: Sequence[str], *, check: bool = True, timeout: float = 60.0, input: str | None = None) -> str:
    """Run a command; return stdout; raise CommandError with its output when it fails and check is set."""
    result = completed(argv, timeout=timeout, input=input)
    if check and result.returncode != 0:
        raise CommandError(argv, result.returncode, result.stderr or result.stdout)
    return result.stdout


def in_netns(netns: str, argv: Sequence[str]) -> list[str]:
    """The argv that runs a command inside a network namespace."""
    return ["ip", "netns", "exec", netns, *argv]


def python_environment() -> dict[str, str]:
    """The environment for a child `python -m harness...` (a keeper, a load process): it imports this harness."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env
