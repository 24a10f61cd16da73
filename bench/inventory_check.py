"""How long `quorum inventory check` takes on the stand-in staging cluster (ha3 reached over kubeconfig, SSH and
etcd's client certificate: tests/integration/standin.py), against `quorum status` of the same cluster, which reads
it locally.

    python bench/inventory_check.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import ROOT, write_results  # noqa: E402

from harness.backends import registry  # noqa: E402
from harness.run import owner  # noqa: E402
from tests.integration.standin import standin  # noqa: E402


def timed(command: list[str]) -> float:
    started = time.monotonic()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {result.returncode}:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not 1 <= args.runs <= 50:
        parser.error("--runs must be between 1 and 50")
    rows = []
    with tempfile.TemporaryDirectory(prefix="quorum-bench-inventory-") as scratch:
        run_dir = Path(scratch) / "run"
        owner.claim(run_dir)
        try:
            cluster = registry.get("process").up(ROOT / "clusters" / "ha3.yaml", run_dir)
            with standin(cluster, Path(scratch) / "standin") as stand_in:
                for what, command in (
                        ("quorum inventory check (3 hosts over SSH, 12 components, API, etcd)",
                         [sys.executable, "-m", "harness.cli", "inventory", "check", str(stand_in.inventory)]),
                        ("quorum status (the same cluster, read locally)",
                         [sys.executable, "-m", "harness.cli", "status", str(run_dir)])):
                    seconds = [timed(command) for _ in range(args.runs)]
                    rows.append({"command": what, "runs": args.runs, "median_s": round(statistics.median(seconds), 2),
                                 "min_s": round(min(seconds), 2), "max_s": round(max(seconds), 2)})
        finally:
            registry.down(run_dir)
            owner.release(run_dir)
    write_results("inventory_check", rows, ["command", "runs", "median_s", "min_s", "max_s"],
                  "Checking a cluster Quorum did not build (issue #21)",
                  notes="Each run is a new process (Python start-up and imports included), as a user runs it.")


if __name__ == "__main__":
    main()
