"""Rolling upgrade timings: each step (one component on the new release, ready, and for a leader-elected one its
lease held by a successor) and the whole upgrade and rollback, on a healthy cluster without load. The cluster is
built here (process backend unless --backend), upgraded and rolled back --runs times, and torn down.

    python bench/upgrade.py [--to v1.35.4] [--runs 3] [--backend process|docker] [--topology clusters/ha3.yaml]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import ROOT, TIMING_COLUMNS, run_count, spread, write_results  # noqa: E402

from harness.backends import registry  # noqa: E402
from harness.errors import QuorumError  # noqa: E402
from harness.faults import Nemesis  # noqa: E402
from harness.lifecycle.upgrade import roll_back_upgrade, rolling_upgrade  # noqa: E402
from harness.toolchain.versions import UPGRADE_TO, Version, kubernetes_version  # noqa: E402
from harness.wait import eventually  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--to", default=UPGRADE_TO)
    parser.add_argument("--runs", type=run_count, default=3)
    parser.add_argument("--backend", default="process", choices=("process", "docker"))
    parser.add_argument("--topology", default=str(ROOT / "clusters" / "ha3.yaml"))
    args = parser.parse_args()
    try:
        to = Version.parse(str(kubernetes_version(args.to)))
    except QuorumError as error:
        parser.error(f"--to: {error.problem} (fix: {error.fix})")
    steps: dict[str, list[float]] = {}
    upgrades, rollbacks = [], []
    with tempfile.TemporaryDirectory(prefix="quorum-bench-upgrade-") as scratch:
        cluster = registry.get(args.backend).up(Path(args.topology), Path(scratch) / "run")
        try:
            for _ in range(args.runs):
                assert eventually(lambda: not cluster.health.problems(), 120, 1.0), \
                    "the cluster is not healthy before a run"
                nemesis = Nemesis(cluster)
                started = time.monotonic()
                result = rolling_upgrade(cluster, nemesis, to)
                upgrades.append(time.monotonic() - started)
                assert result.completed, f"{result.rollout.failed_on} did not come back on {to}"
                for component_id, seconds in result.rollout.step_s.items():
                    steps.setdefault(component_id.partition("@")[0], []).append(seconds)
                started = time.monotonic()
                assert roll_back_upgrade(cluster, nemesis, result), "the rollback stalled"
                rollbacks.append(time.monotonic() - started)
        finally:
            registry.down(Path(scratch) / "run")
    rows = [spread(f"one {component} step", seconds) for component, seconds in steps.items()]
    rows += [spread("the whole upgrade", upgrades), spread("the whole rollback", rollbacks)]
    write_results("upgrade", rows, TIMING_COLUMNS,
                  f"Rolling upgrade to {to} ({args.backend} backend, {Path(args.topology).name})",
                  notes="A step ends when the component is ready on the new release and, for a leader-elected one, "
                        "its lease is held by a running process other than the one the step restarted "
                        "(docs/lifecycle.md). An apiserver step includes its shutdown delay (8 s on ha3). No load "
                        "runs meanwhile (the lifecycle suite's figures are under load). bench/scale.py times "
                        "control-plane scale.")


if __name__ == "__main__":
    main()
