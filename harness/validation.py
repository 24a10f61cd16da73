"""What a value from a topology (or an inventory) may be before it reaches a command line or a config file: the
rules the models use, in one place."""

from __future__ import annotations

import re

FLAG_NAME = r"^--[a-z0-9][a-z0-9-]*$"
# a flag's value reaches a command line as one argument: one line, no NUL, at most 1000 characters
FLAG_VALUE = r"^[^\x00\r\n]{0,1000}$"
# flags that make a component (a root process) write files where they say, or that replace what Quorum wires up
# itself (its kubeconfigs, its certificates): not for a topology to set
DENIED_FLAGS = {"--audit-log-path", "--log-file", "--log-dir", "--cert-dir", "--write-config-to",
                "--kubeconfig", "--authentication-kubeconfig", "--authorization-kubeconfig",
                "--tls-cert-file", "--tls-private-key-file", "--client-ca-file"}


def checked_flags(flags: dict[str, str]) -> dict[str, str]:
    """extra_flags as a component will get them: names of the form --name, values on one line, and none of
    DENIED_FLAGS. (Whether the built binary has the flag is checked before a cluster starts:
    harness/components/flags.py.)"""
    for name, value in flags.items():
        if not re.match(FLAG_NAME, name):
            raise ValueError(f"{name!r} is not a flag name; fix: write it as --flag-name")
        if not isinstance(value, str) or not re.match(FLAG_VALUE, value):
            raise ValueError(f"{name}'s value must be one line of at most 1000 characters")
        if name in DENIED_FLAGS:
            raise ValueError(f"{name} is not for a topology to set (it writes files on the host, or replaces what "
                             f"Quorum sets up); fix: remove it")
    return flags
