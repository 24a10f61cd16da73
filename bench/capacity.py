"""The capacity search's spread: scenarios/load/test_capacity.py run --runs times on its own cluster (ha3-1000,
process backend, the ci profile, gate.yaml's expected load), and, per run and apiservers serving, the headroom, the
verdict and what ended the climb (the cluster's limit, the generator's machine, or the steps). One run's figure is
at the 0.5x steps' resolution and on this machine often a lower bound: the spread says how far one run can be
trusted.

    python bench/capacity.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, run_count, write_results  # noqa: E402

SCENARIO = ("scenarios/load/test_capacity.py::"
            "test_the_control_plane_carries_the_expected_load_with_headroom_also_with_its_busiest_apiserver_down")
COLUMNS = ["run", "apiservers_up", "verdict", "headroom_x", "steps", "ended_by"]


def ended_by(explanation: str, figures: dict) -> str:
    """What ended the climb, in a few words: the cluster's own limit, the generator's core or machine, or the
    steps (the verdict's text says whether the knee was the cluster's)."""
    stopped = figures.get("stopped_by") or ""
    if "the cluster's knee" in explanation:
        return "the cluster: " + stopped.split(";")[0].split(", the generator")[0]
    if not stopped:
        return "the steps ran out"
    return "the generator's machine busy (lower bound)" if "machine" in stopped else "the generator (lower bound)"


def one_run(index: int, scratch: Path) -> list[dict]:
    """The scenario once, on a cluster of its own; a row per headroom verdict it recorded."""
    histories = scratch / f"histories-{index}"
    subprocess.run([sys.executable, "-m", "pytest", SCENARIO, "--policy", str(ROOT / "gate.yaml"),
                    f"--run-dir={scratch / f'run-{index}'}", f"--history-dir={histories}", "-p", "no:cacheprovider",
                    "-q"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    rows = []
    for path in sorted(histories.glob("*.jsonl")):
        for line in path.open():
            record = json.loads(line)
            if record.get("type") == "verdict" and record.get("checker") == "capacity-headroom":
                figures = record.get("figures", {})
                rows.append({"run": index + 1, "apiservers_up": figures.get("apiservers_up"),
                             "verdict": record["status"], "headroom_x": figures.get("headroom_x"),
                             "steps": figures.get("steps"),
                             "ended_by": ended_by(record.get("explanation", ""), figures)})
    if not rows:
        rows.append({"run": index + 1, "verdict": "no verdict recorded (the scenario did not reach its judgement)"})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=run_count, default=3)
    args = parser.parse_args()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="quorum-bench-capacity-") as scratch:
        for index in range(args.runs):
            rows += one_run(index, Path(scratch))
    write_results("capacity", rows, COLUMNS, "The capacity search, run by run (ha3-1000, process backend, ci profile)",
                  notes="The headroom is the users' multiple the last carried step offered beside the 1000 nodes' "
                        "Lease renewals (docs/load.md, capacity), at 0.5, 1, 1.5, 2, 3, 4, 6, 8 times gate.yaml's "
                        "expected users' rate, 20 s a step. A climb ended by the generator's machine (over 90 % of "
                        "its cores busy with a short answer) gives a lower bound: on two cores the cluster and the "
                        "generator share them.")


if __name__ == "__main__":
    main()
