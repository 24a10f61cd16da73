"""How long a fault takes to act and to heal on a cluster Quorum did not build (the remote target: SSH into a kubeadm
stand-in, tests/integration/standin.py:kind_standin) against the kind target of the same cluster (docker exec):
a hold of a scheduler (its manifest moved out of the kubelet's directory), a flag override (its manifest rewritten)
and a shaped link (a tbf root qdisc). Through the Nemesis, as a scenario injects them: on the remote target the act
includes writing the fault's record to the host (before the fault's clock starts).

    python bench/remote_faults.py [--runs 5] [--run-dir DIR (a kind cluster that is up; kept)]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import ROOT, write_results  # noqa: E402

from harness.backends import registry  # noqa: E402
from harness.faults import Bandwidth, ModifyFlags, Nemesis, Stop  # noqa: E402
from harness.wait import eventually  # noqa: E402
from tests.integration.standin import kind_standin  # noqa: E402


def row(what: str, seconds: list[float]) -> dict:
    return {"fault": what, "runs": len(seconds), "median_s": round(statistics.median(seconds), 3),
            "min_s": round(min(seconds), 3), "max_s": round(max(seconds), 3)}


def latency(target, make, runs: int, settle) -> tuple[list[float], list[float]]:
    nemesis, acts, heals = Nemesis(target), [], []
    for _ in range(runs):
        started = time.monotonic()
        fault = nemesis.inject(make())
        acts.append(time.monotonic() - started)
        started = time.monotonic()
        nemesis.heal(fault)
        heals.append(time.monotonic() - started)
        settle()
    return acts, heals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--run-dir", type=Path, default=None, help="a kind cluster that is up (kept)")
    args = parser.parse_args()
    if not 1 <= args.runs <= 20:
        parser.error("--runs must be between 1 and 20")
    rows = []
    with tempfile.TemporaryDirectory(prefix="quorum-bench-remote-") as scratch:
        built = args.run_dir is None
        cluster = (registry.get("kind").up(ROOT / "clusters" / "kind.yaml", Path(scratch) / "kind") if built
                   else registry.open_target(args.run_dir))
        try:
            node = cluster.hosts("controller")[-1]
            with kind_standin(cluster, Path(scratch) / "standin") as stand_in:
                remote = registry.get("remote").up(stand_in.write(limits={"max_faults_at_once": 3}),
                                                   Path(scratch) / "remote")
                try:
                    for name, target in (("over SSH (remote target)", remote), ("docker exec (kind target)", cluster)):
                        def back() -> None:  # the scheduler answers again before the next hold
                            eventually(lambda: target.health.component_healthy("kube-scheduler", node), 120, 1.0)

                        for what, make, settle in (
                                ("hold kube-scheduler", lambda: Stop(component=f"kube-scheduler@{node}",
                                                                     signal="SIGKILL"), back),
                                ("override kube-scheduler's flags", lambda: ModifyFlags(
                                    component=f"kube-scheduler@{node}", add={"--v": "2"}), back),
                                ("shape the link", lambda: Bandwidth(host=node, rate_mbit=40000.0), lambda: None)):
                            acts, heals = latency(target, make, args.runs, settle)
                            rows += [row(f"{what}: act, {name}", acts), row(f"{what}: heal, {name}", heals)]
                finally:
                    remote.close()
                    registry.down(remote.run_dir)
        finally:
            if built:
                registry.down(cluster.run_dir)
    write_results("remote_faults", rows, ["fault", "runs", "median_s", "min_s", "max_s"],
                  "Faults over SSH against the same faults through docker exec (issue #21)",
                  notes="A kind cluster (3 control planes) reached twice: over SSH as an inventory describes it, and as "
                        "the kind target. Each act is the Nemesis's inject (plan, local journal, on the remote target "
                        "the record written to the host, then the fault); each heal its undo and the journal's end.",
                  script="remote_faults.py")


if __name__ == "__main__":
    main()
