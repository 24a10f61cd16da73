"""A team's change through `quorum change`: the time of each step (one `quorum install` of one component on one host)
and of the whole upgrade and downgrade, with the availability through the load balancer that the change scenario
measured over each, on a cluster built here (process backend unless --backend), --runs times, then torn down.

    python bench/change.py [--to v1.35.4] [--runs 3] [--backend process|docker]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import ROOT, run_count, spread, write_results  # noqa: E402

from harness.backends import registry  # noqa: E402
from harness.change.runner import CHANGE_STEP  # noqa: E402
from harness.errors import QuorumError  # noqa: E402
from harness.history import History  # noqa: E402
from harness.toolchain.versions import KUBERNETES_DEFAULT, UPGRADE_TO, kubernetes_version  # noqa: E402

HOSTS = ("c1", "c2", "c3")
UPGRADE_ORDER = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
# a step's time in seconds and the availability in percent, in one table: each row says its unit
KEYS = ("what", "unit", "samples", "median_s", "min_s", "max_s")
COLUMNS = ["what", "unit", "samples", "median", "min", "max"]


def procedure(to: str, order: tuple[str, ...]) -> dict:
    """One step per component and host, in `order`, each a `quorum install` that waits for its component."""
    return {"budget_s": 900, "expect": {"kubernetes": to},
            "steps": [{"name": f"{component}@{host}", "run": ["quorum", "install", f"{component}@{host}", to]}
                      for component in order for host in HOSTS]}


def change(work: Path, name: str, plan: dict, backend: str) -> History:
    """`quorum change --procedure` on ha3, kept across runs: the History of its scenario (exit 0 required)."""
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    histories = work / "histories" / name
    result = subprocess.run(
        [sys.executable, "-m", "harness.cli", "change", f"--procedure={path}",
         f"--topology={ROOT / 'clusters' / 'ha3.yaml'}", f"--backend={backend}", "--keep-cluster",
         f"--run-dir={work / 'run'}", f"--history-dir={histories}"],
        cwd=ROOT, capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        raise SystemExit(f"{name} did not pass (exit {result.returncode}):\n{result.stdout[-3000:]}{result.stderr[-2000:]}")
    return History.load(next(histories.glob("scenarios_change_*.jsonl")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--to", default=UPGRADE_TO)
    parser.add_argument("--runs", type=run_count, default=3)
    parser.add_argument("--backend", default="process", choices=("process", "docker"))
    args = parser.parse_args()
    try:
        to = str(kubernetes_version(args.to))
    except QuorumError as error:
        parser.error(f"--to: {error.problem} (fix: {error.fix})")
    steps: dict[str, list[float]] = {}
    wholes: dict[str, list[float]] = {"upgrade": [], "downgrade": []}
    available: dict[str, list[float]] = {"upgrade": [], "downgrade": []}
    with tempfile.TemporaryDirectory(prefix="quorum-bench-change-") as scratch:
        work = Path(scratch)
        try:
            for run in range(args.runs):
                for name, plan in (("upgrade", procedure(to, UPGRADE_ORDER)),
                                   ("downgrade", procedure(KUBERNETES_DEFAULT, UPGRADE_ORDER[::-1]))):
                    history = change(work, f"{name}-{run}", plan, args.backend)
                    took = [float(e.get("took_s")) for e in history.events_of(CHANGE_STEP, phase="change")]
                    for event in history.events_of(CHANGE_STEP, phase="change"):
                        component = str(event.get("title")).partition("@")[0]
                        steps.setdefault(f"one {component} step ({name})", []).append(float(event.get("took_s")))
                    wholes[name].append(sum(took))
                    measured = [e for e in history.events_of("measure") if e.get("name") == "availability_pct"]
                    available[name].append(float(measured[-1].get("value")))
        finally:
            if (work / "run" / "state.json").exists():
                registry.down(work / "run")
    rows = [{**spread(what, seconds), "unit": "s"} for what, seconds in steps.items()]
    rows += [{**spread(f"the whole {name}", seconds), "unit": "s"} for name, seconds in wholes.items()]
    rows += [{"what": f"availability through the {name}", "unit": "%", "samples": len(values),  # to 0.01 %: 0.1 is a
              "median_s": round(statistics.median(values), 2), "min_s": round(min(values), 2),  # 99.5 % budget's 20 %
              "max_s": round(max(values), 2)} for name, values in available.items()]
    write_results("change", [{COLUMNS[i]: row[key] for i, key in enumerate(KEYS)} for row in rows], COLUMNS,
                  f"A team's change through quorum change: {KUBERNETES_DEFAULT} to {to} and back ({args.backend} "
                  "backend, ha3.yaml)",
                  notes="Each step is one `quorum install COMPONENT@HOST RELEASE`, which restarts the component and "
                        "waits until it answers on the release (an apiserver's step includes its 8 s shutdown "
                        "delay). Availability: reads through the load balancer over the whole change scenario. "
                        "bench/upgrade.py times Quorum's own rolling upgrade, whose steps also wait for a lease "
                        "handover.")


if __name__ == "__main__":
    main()
