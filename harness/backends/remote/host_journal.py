"""The fault journal kept on the hosts of a remote target, beside the local one (harness/faults/journal.py): a
fault's record is written to every host it touches before it acts, and removed when it is healed, so that
`quorum heal --target FILE` from any machine finds what a harness whose machine died left active.

Each record names the harness process that owns it (machine id, boot id, pid and its start time). A heal leaves a
live owner's faults alone: on this machine it can tell whether the owner still runs; a fault owned on another
machine is healed only when the user says that machine's harness is gone (--force)."""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.backends.remote.keepers import FILES
from harness.backends.remote.limits import hosts_named
from harness.errors import ClusterError
from harness.run.harness_process import Harness

if TYPE_CHECKING:
    from harness.backends.remote.target import RemoteTarget
    from harness.faults.base import Fault

DIRECTORY = f"{FILES}journal"
FAULT_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # a record's id becomes a file name on the host


@dataclass
class Entry:
    """A fault's record as found on the hosts, and which hosts hold it."""

    fault: dict[str, Any]
    owner: Harness
    run_id: str
    wall: float = 0.0
    hosts: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return str(self.fault.get("id"))


def path(fault_id: str) -> str:
    if not FAULT_ID.match(fault_id):
        raise ClusterError(f"{fault_id!r} is not a fault id Quorum writes", "remove the record by hand")
    return f"{DIRECTORY}/{fault_id}.json"


def touched(target: "RemoteTarget", fault: "Fault") -> list[str]:
    """The hosts a fault acts on (every host when it names none)."""
    hosts = set(target.hosts())
    return sorted(hosts_named([fault.params(), fault.captured], hosts)) or sorted(hosts)


def remember(target: "RemoteTarget", fault: "Fault") -> None:
    text = json.dumps({"fault": fault.to_record(), "owner": asdict(Harness.this()), "run_id": target.run_id,
                       "target": target.name, "wall": time.time()})
    for host in touched(target, fault):
        target.exec(host, ["mkdir", "-p", "-m", "700", DIRECTORY])
        target.put_file(host, path(fault.id), text + "\n")


def forget(target: "RemoteTarget", fault_id: str, hosts: list[str]) -> None:
    for host in hosts:
        target.exec(host, ["rm", "-f", path(fault_id)])


def read(target: "RemoteTarget") -> tuple[list[Entry], list[str]]:
    """Every record on every host (merged by fault id), and what could not be read, described."""
    entries: dict[str, Entry] = {}
    problems = []
    script = f'for f in {DIRECTORY}/*.json; do [ -f "$f" ] && cat "$f"; done; true'
    for host in target.hosts():
        try:
            lines = target.exec(host, ["sh", "-c", script]).splitlines()
        except ClusterError as error:
            problems.append(f"the journal on {host} could not be read: {error.problem}")
            continue
        for line in filter(str.strip, lines):
            try:
                data = json.loads(line)
                entry = Entry(dict(data["fault"]), Harness(**data["owner"]), str(data.get("run_id", "")),
                              float(data.get("wall", 0.0)))
                path(entry.id)
            except (ValueError, KeyError, TypeError, ClusterError) as error:
                problems.append(f"a record in {DIRECTORY} on {host} is not Quorum's ({error}): {line[:160]}")
                continue
            entries.setdefault(entry.id, entry).hosts.append(host)
    return list(entries.values()), problems
