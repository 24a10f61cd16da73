"""The runs the gate promoted, kept so the next run is compared with them (harness/gate/baseline.py).

A store is a directory (reports/promoted by default, `quorum gate --store DIR`) with one small record per promoted
run: its id, where its results were, what it judged, and each scenario's figures. The newest KEEP are kept. Nothing
is written through a symbolic link."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from harness.gate.evaluate import Earlier, GateResult
from harness.report.results import RunRecord, ScenarioResult

KEEP = 20
RECORD = "promoted.json"


@dataclass(frozen=True)
class Promoted:
    run_id: str
    results: str
    at: str
    figures: dict[str, dict[str, float]]  # scenario -> measure label -> value

    @property
    def directory_name(self) -> str:
        return f"{self.at}-{self.run_id}"


def write_new(path: Path, text: str) -> None:
    """Write a file of the gate's, refusing to follow a symbolic link (a link there is not the gate's to overwrite)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(descriptor, "w") as out:
        out.write(text)


def promoted(store: Path) -> list[Promoted]:
    """The store's promoted runs, oldest first (records that cannot be read are left out)."""
    found = []
    for record in sorted(store.glob(f"*/{RECORD}")) if store.is_dir() else []:
        try:
            data = json.loads(record.read_text())
            figures = {str(n): {str(k): float(v) for k, v in f.items()} for n, f in data["figures"].items()}
            found.append(Promoted(str(data["run_id"]), str(data["results"]), str(data["at"]), figures))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return found


def earlier_figures(runs: list[Promoted]) -> Earlier:
    earlier: Earlier = {}
    for run in runs:
        for nodeid, figures in run.figures.items():
            for label, value in figures.items():
                earlier.setdefault((nodeid, label), []).append(value)
    return earlier


def remember(store: Path, run: RunRecord, results_dir: Path, results: list[ScenarioResult], gate: GateResult) -> Path:
    """Keep a promoted run's record in the store; the oldest beyond KEEP go."""
    figures = {r.nodeid: {m.label: m.value for m in r.measures if m.value is not None} for r in results if r.measures}
    entry = Promoted(run.run_id, str(results_dir.resolve()), time.strftime("%Y%m%d-%H%M%S"), figures)
    directory = store / entry.directory_name
    directory.mkdir(parents=True, exist_ok=True)
    write_new(directory / RECORD, json.dumps({"run_id": entry.run_id, "results": entry.results, "at": entry.at,
                                              "cluster": gate.cluster, "figures": entry.figures}, indent=1))
    for old in promoted(store)[:-KEEP]:
        stale = store / old.directory_name
        (stale / RECORD).unlink(missing_ok=True)
        stale.rmdir()
    return directory
