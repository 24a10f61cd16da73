"""How long `quorum inventory check` takes on the stand-in staging cluster (ha3 reached over kubeconfig, SSH and
etcd's client certificate: tests/integration/standin.py), against `quorum status` of the same cluster, which reads
it locally; and how long a fault takes to act and to heal through the remote target (over SSH) against the process
target of the same cluster (a pause of c3's scheduler: a signal, then its process state read back).

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


def row(what: str, seconds: list[float]) -> dict:
    return {"command": what, "runs": len(seconds), "median_s": round(statistics.median(seconds), 3),
            "min_s": round(min(seconds), 3), "max_s": round(max(seconds), 3)}


def fault_latency(target, runs: int) -> tuple[list[float], list[float]]:
    """Seconds to inject and to heal a pause of c3's scheduler through the Nemesis, `runs` times."""
    from harness.faults import Nemesis, Pause

    nemesis, acts, heals = Nemesis(target), [], []
    for _ in range(runs):
        started = time.monotonic()
        fault = nemesis.inject(Pause(component="kube-scheduler@c3"))
        acts.append(time.monotonic() - started)
        started = time.monotonic()
        nemesis.heal(fault)
        heals.append(time.monotonic() - started)
    return acts, heals


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
                    rows.append(row(what, [timed(command) for _ in range(args.runs)]))
                remote = registry.get("remote").up(stand_in.inventory, Path(scratch) / "remote")
                try:
                    for name, target in (("over SSH (remote target)", remote), ("locally (process target)", cluster)):
                        acts, heals = fault_latency(target, args.runs)
                        rows += [row(f"pause act, {name}", acts), row(f"pause heal, {name}", heals)]
                finally:
                    remote.close()
                    registry.down(remote.run_dir)
        finally:
            registry.down(run_dir)
            owner.release(run_dir)
    write_results("inventory_check", rows, ["command", "runs", "median_s", "min_s", "max_s"],
                  "Checking a cluster Quorum did not build (issue #21)",
                  notes="Each command run is a new process (Python start-up and imports included), as a user runs it. "
                        "A fault's act includes its plan (finding the pid, its start time) and the journal entry.")


if __name__ == "__main__":
    main()
