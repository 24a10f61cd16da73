#!/usr/bin/python3
"""dockerd's default runtime on hosts whose capability bounding set lacks capabilities runc is asked for.

A privileged container asks for every capability; on a host whose bounding set lacks one (ours lacks
CAP_SYS_RESOURCE), runc fails with "unable to apply caps: operation not permitted", for `docker run`
and `docker exec` alike. This wrapper removes, from the OCI process it is handed (the bundle's
config.json on create/run, the --process file on exec), every capability missing from the bounding
set, then execs the real runc with the same arguments. Standard library only: dockerd runs it for
every runtime call, outside any virtualenv.

The real runc's path is the first line of the file `real-runc` next to this script.
"""

import json
import os
import sys

CAP_NAMES = [
    "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
    "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER",
    "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
    "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
    "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF",
    "CHECKPOINT_RESTORE",
]


def bounding_set() -> set[str]:
    with open("/proc/self/status") as status:
        mask = next(int(line.split()[1], 16) for line in status if line.startswith("CapBnd:"))
    return {f"CAP_{name}" for bit, name in enumerate(CAP_NAMES) if mask >> bit & 1}


def strip(process: dict, allowed: set[str]) -> bool:
    capabilities = process.get("capabilities") or {}
    changed = False
    for kind, names in capabilities.items():
        kept = [name for name in names if name in allowed]
        if len(kept) != len(names):
            capabilities[kind] = kept
            changed = True
    return changed


def rewrite(path: str, allowed: set[str], nested: bool) -> None:
    try:
        with open(path) as handle:
            document = json.load(handle)
    except (OSError, ValueError):
        return
    process = document.get("process", {}) if nested else document
    if strip(process, allowed):
        temporary = f"{path}.quorum-tmp"
        with open(temporary, "w") as handle:
            json.dump(document, handle)
        os.replace(temporary, path)


def option(argv: list[str], name: str) -> str | None:
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def main(argv: list[str]) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "real-runc")) as handle:
        runc = handle.readline().strip()
    allowed = bounding_set()
    if "create" in argv or "run" in argv:
        bundle = option(argv, "--bundle") or option(argv, "-b") or os.getcwd()
        rewrite(os.path.join(bundle, "config.json"), allowed, nested=True)
    if "exec" in argv:
        process = option(argv, "--process") or option(argv, "-p")
        if process:
            rewrite(process, allowed, nested=False)
    os.execv(runc, [runc, *argv[1:]])


if __name__ == "__main__":
    main(sys.argv)
