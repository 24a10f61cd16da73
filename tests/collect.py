"""pytest's own collection of a selection, as CI would run it: several tests check what a run would hold (the
deep twins' cover, the lanes' alone phase, the objectives' scenarios, the destructive ones) without running it."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def collect_only(*args: str, timeout_s: float = 120.0) -> subprocess.CompletedProcess:
    """`pytest ARGS --collect-only -q` from the repository's root, without the cache plugin, its Histories in a
    temporary directory (a collection writes no run there, but the option's default would name a new one)."""
    with tempfile.TemporaryDirectory(prefix="quorum-collect-") as histories:
        return subprocess.run([sys.executable, "-m", "pytest", *args, "--collect-only", "-q", "-p", "no:cacheprovider",
                               "--history-dir", histories], cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout_s)


def node_ids(result: subprocess.CompletedProcess) -> list[str]:
    """The node ids a collect_only run listed, in its order."""
    return [line.strip() for line in result.stdout.splitlines() if "::" in line]
