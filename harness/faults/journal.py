"""The journal of injected faults (run_dir/faults.jsonl): 'begin' before a fault acts, 'healed' after it is undone,
each line fsynced, so `quorum heal` knows what a harness killed with SIGKILL left active."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.faults.base import Fault


class Journal:
    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / "faults.jsonl"
        self._lock = threading.Lock()

    def _append(self, record: dict[str, Any]) -> None:
        with self._lock, self.path.open("a") as handle:
            handle.write(json.dumps({**record, "wall": time.time()}) + "\n")
            handle.flush()
            os.fsync(handle.fileno())  # on disk before the fault acts: a crash right after must find it

    def begin(self, fault: "Fault") -> None:
        self._append({"state": "begin", **fault.to_record()})

    def healed(self, fault: "Fault") -> None:
        self._append({"state": "healed", "id": fault.id})

    def read(self) -> tuple[list[dict[str, Any]], list[str]]:
        """(faults begun and not healed, oldest first; lines that are not journal records, described)."""
        if not self.path.exists():
            return [], []
        begun: dict[str, dict[str, Any]] = {}
        unreadable = []
        text = self.path.read_bytes().decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                unreadable.append(f"{self.path}:{number} is not JSON (a write cut short?)")
                continue
            if not isinstance(record, dict) or "id" not in record or record.get("state") not in ("begin", "healed"):
                unreadable.append(f"{self.path}:{number} is not a journal record: {line[:200]}")
            elif record["state"] == "begin":
                begun[str(record["id"])] = record
            else:
                begun.pop(str(record["id"]), None)
        return list(begun.values()), unreadable

    def active(self) -> list[dict[str, Any]]:
        return self.read()[0]
