"""The key figures across runs: every measured figure (time to healthy, failovers, LB detection, availability...)
from each run's Histories under reports/histories/, one line per measure, so a slow drift shows before it fails
an objective. `quorum report` adds the picture and the table to the report as a result of their own."""

from __future__ import annotations

import csv
import io
import json
import time
import uuid
from pathlib import Path

from harness.objectives.catalog import MEASURES
from harness.objectives.measurement import Measurement

RUNS_SHOWN = 20


def run_figures(run: Path) -> dict[str, float]:
    """measure label -> the run's worst value of it (a measure recorded by several scenarios or repeats)."""
    worst: dict[str, float] = {}
    for history in run.glob("*.jsonl"):
        for line in history.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
                if not isinstance(record, dict) or record.get("type") != "measure":
                    continue
                measurement = Measurement.from_record(record)
            except (ValueError, KeyError, TypeError, RecursionError):
                continue
            if measurement.value is None:
                continue
            higher = MEASURES[measurement.name].higher_is_better
            known = worst.get(measurement.label)
            if known is None or (measurement.value < known if higher else measurement.value > known):
                worst[measurement.label] = measurement.value
    return worst


def collect(histories: Path, last: int = RUNS_SHOWN) -> list[tuple[str, dict[str, float]]]:
    """(run name, figures) of the newest `last` runs that measured anything, oldest first."""
    runs = sorted((d for d in histories.glob("*") if d.is_dir()), key=lambda d: d.name)
    found = [(run.name, figures) for run in runs if (figures := run_figures(run))]
    return found[-last:]


def table(runs: list[tuple[str, dict[str, float]]]) -> str:
    labels = sorted({label for _, figures in runs for label in figures})
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["run", *labels])
    for name, figures in runs:
        writer.writerow([name, *(figures.get(label, "") for label in labels)])
    return out.getvalue()


def picture(runs: list[tuple[str, dict[str, float]]], path: Path) -> Path | None:
    from harness.report.plotting import plt

    labels = sorted({label for _, figures in runs for label in figures})
    if not labels:
        return None
    columns = 3
    rows = (len(labels) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(4 * columns, 2.4 * rows), squeeze=False)
    for axis, label in zip(axes.flat, labels):
        points = [(i, figures[label]) for i, (_, figures) in enumerate(runs) if label in figures]
        axis.plot([i for i, _ in points], [v for _, v in points], "o-", markersize=3)
        axis.set_title(label, fontsize=8)
        axis.tick_params(labelsize=7)
        axis.set_xticks(range(len(runs)))
        axis.set_xticklabels([name[-6:] for name, _ in runs], rotation=90, fontsize=6)
    for axis in list(axes.flat)[len(labels):]:
        axis.axis("off")
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)
    return path


def add_to_results(histories: Path, results: Path) -> Path | None:
    """Write a 'figure trends across runs' result (picture and CSV) into allure-results; its picture, if any."""
    runs = collect(histories)
    if not runs:
        return None
    ident = str(uuid.uuid4())
    png = results / f"{ident}-attachment.png"
    if picture(runs, png) is None:
        return None
    (results / f"{ident}-attachment.csv").write_text(table(runs))
    now = int(time.time() * 1000)
    result = {"uuid": ident, "historyId": "quorum-figure-trends", "name": "key figures across runs",
              "fullName": "trends.key figures across runs", "status": "passed", "stage": "finished",
              "start": now, "stop": now, "labels": [{"name": "suite", "value": "trends"}],
              "description": f"The worst value of each measured figure in each of the last {len(runs)} runs "
                             "(reports/histories/); docs/gate.md says what each is and its objective.",
              "attachments": [{"name": "key figures across runs", "source": png.name, "type": "image/png"},
                              {"name": "key figures across runs (CSV)", "source": f"{ident}-attachment.csv",
                               "type": "text/csv"}]}
    (results / f"{ident}-result.json").write_text(json.dumps(result))
    return png
