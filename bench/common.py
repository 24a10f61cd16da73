"""Helpers for benchmark scripts: figures go to bench/results/*.json and a table in docs/benchmarks.md."""

from __future__ import annotations

import argparse
import json
import platform
import os
import re
import statistics
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
BENCHMARKS_MD = ROOT / "docs" / "benchmarks.md"


MAX_RUNS = 10  # every bench loop is bounded: a run of a bench script is at most this many clusters' work


def run_count(value: str) -> int:
    """argparse's type for --runs: a whole number from 1 to MAX_RUNS, refused with the bounds otherwise."""
    try:
        runs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= runs <= MAX_RUNS:
        raise argparse.ArgumentTypeError(f"{runs} is outside 1..{MAX_RUNS}")
    return runs


def machine() -> str:
    return f"{os.cpu_count()} cores, {platform.machine()}, Linux {platform.release()}"


TIMING_COLUMNS = ["what", "samples", "median_s", "min_s", "max_s"]


def spread(name: str, seconds: list[float]) -> dict:
    """A row of TIMING_COLUMNS: how many samples of `name`, their median, min and max."""
    return {"what": name, "samples": len(seconds), "median_s": round(statistics.median(seconds), 1),
            "min_s": round(min(seconds), 1), "max_s": round(max(seconds), 1)}


def write_results(name: str, rows: list[dict], columns: list[str], title: str, notes: str = "",
                  script: str | None = None) -> None:
    """Store the raw figures as JSON and (re)write this benchmark's section of docs/benchmarks.md."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    (RESULTS / f"{name}.json").write_text(json.dumps({"measured_at": stamp, "machine": machine(), "rows": rows}, indent=2))
    table = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    table += ["| " + " | ".join(str(row.get(column, "")) for column in columns) + " |" for row in rows]
    section = f"<!-- {name} -->\n## {title}\n\nMeasured {stamp} on {machine()} by `bench/{script or name + '.py'}`.\n\n" + "\n".join(table)
    section += (f"\n\n{notes}" if notes else "") + f"\n<!-- /{name} -->"
    text = BENCHMARKS_MD.read_text() if BENCHMARKS_MD.exists() else "# Benchmarks\n\nFigures written by the scripts in bench/.\n"
    pattern = re.compile(rf"<!-- {re.escape(name)} -->.*?<!-- /{re.escape(name)} -->", re.S)
    text = pattern.sub(section, text) if pattern.search(text) else text.rstrip() + "\n\n" + section + "\n"
    BENCHMARKS_MD.parent.mkdir(parents=True, exist_ok=True)
    BENCHMARKS_MD.write_text(text)
