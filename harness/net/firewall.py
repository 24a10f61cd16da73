"""iptables rules inside one host, each tagged with the fault that made it (comment quorum-fault:<id>), so a heal
removes exactly its own rules and a sweep finds every fault's. The host is reached through `run`, a callable that
runs a command inside it (a network namespace, a container, an SSH session): the rules are the same everywhere."""

from __future__ import annotations

import shlex
from collections.abc import Callable

TAG = "quorum-fault"

Run = Callable[..., str]  # run(argv, check=True) -> standard output, inside the host


def tag_arguments(tag: str) -> list[str]:
    return ["-m", "comment", "--comment", f"{TAG}:{tag}"]


def random(probability: float) -> list[str]:
    """Match a random fraction of packets (iptables' statistic module)."""
    if not 0 < probability <= 1:
        raise ValueError(f"probability {probability} must be in (0, 1]")
    return ["-m", "statistic", "--mode", "random", "--probability", str(probability)]


def add(run: Run, chain: str, match: list[str], tag: str) -> None:
    """Insert a DROP rule at the top of `chain` (INPUT or OUTPUT of the filter table)."""
    add_all(run, [(chain, match)], tag)


def add_all(run: Run, rules: list[tuple[str, list[str]]], tag: str) -> None:
    """Insert DROP rules (chain, match) in one command inside the host: a fault of several rules is in effect at
    once rather than one round trip into the host at a time (docs/scenarios.md, a partitioned leader on kind)."""
    commands = [["iptables", "-w", "-I", chain, *match, *tag_arguments(tag), "-j", "DROP"] for chain, match in rules]
    if len(commands) == 1:
        run(commands[0])
    elif commands:
        run(["sh", "-c", " && ".join(shlex.join(command) for command in commands)])


def remove(run: Run, tag: str | None = None) -> int:
    """Delete the rules of one fault (of every fault if tag is None); how many were removed."""
    marker = f"{TAG}:{tag}" if tag else f"{TAG}:"
    removed = 0
    for line in run(["iptables-save", "-t", "filter"], check=False).splitlines():
        words = shlex.split(line) if line.startswith("-A ") else []
        if marker in words or any(word.startswith(marker) for word in words if not tag):
            run(["iptables", "-w", "-D", *words[1:]], check=False)
            removed += 1
    return removed
