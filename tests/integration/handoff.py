"""The kind cluster the lanes of `./run.sh tests` hand to the alone phase, so CI builds it once (~60 s).

run.sh exports QUORUM_KIND_HANDOFF, a directory of its own: the docker lane builds its kind cluster there and, at
the module's end, leaves it up with a `handed-over` mark instead of taking it down; the alone phase takes the
mark and the cluster, and its last test takes the cluster down. run.sh downs whatever is left there when it
exits, whatever happened. Without the variable each session builds and removes its own cluster."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

VARIABLE = "QUORUM_KIND_HANDOFF"


@dataclass(frozen=True)
class KindHandoff:
    directory: Path

    @classmethod
    def from_environment(cls) -> KindHandoff | None:
        value = os.environ.get(VARIABLE)
        if not value:
            return None
        directory = Path(value)
        if not directory.is_dir():
            raise pytest.UsageError(f"{VARIABLE}={value}: no such directory; run.sh creates it (unset it to build a cluster)")
        return cls(directory)

    @property
    def mark(self) -> Path:
        return self.directory / "handed-over"

    def give(self, run_dir: Path, topology: Path) -> None:
        self.mark.write_text(f"{run_dir}\n{topology}\n")

    def take(self) -> tuple[Path, Path] | None:
        """The cluster the lanes left, once: the mark is removed, so a second session builds its own."""
        if not self.mark.exists():
            return None
        run_dir, topology = (Path(line) for line in self.mark.read_text().splitlines()[:2])
        self.mark.unlink()
        return (run_dir, topology) if (run_dir / "state.json").exists() else None
