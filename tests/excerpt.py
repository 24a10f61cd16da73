"""What a failed inner pytest run said, short enough for CI's kept output: its error lines first, then its tail.

CI keeps only a part of a failed run's output. A run that checks a whole suite (the main job, a twin) used to show
the tail of its inner run, where a long verdict list pushed out which verdict failed (official CI, 2026-12-03)."""

from __future__ import annotations

import subprocess

MAX_ERROR_LINES = 30
MAX_LINE = 400  # a verdict list's repr runs to thousands of characters; its explanation comes first


def failure_excerpt(output: str | subprocess.CompletedProcess, tail: int = 2500) -> str:
    """pytest's error lines ("E ...", each cut to MAX_LINE) and its FAILED/ERROR summary lines first (the cause, which
    a long traceback pushes out of the tail), then the tail."""
    if isinstance(output, subprocess.CompletedProcess):
        output = (output.stdout or "") + (output.stderr or "")
    lines = output.splitlines()
    errors = [line[:MAX_LINE] for line in lines if line.lstrip().startswith("E ")][:MAX_ERROR_LINES]
    summary = [line[:MAX_LINE] for line in lines if line.startswith(("FAILED ", "ERROR "))]
    return "\n".join([*summary, *errors]) + "\n...\n" + output[-tail:]
