"""Control-plane scale timings: joining two spare hosts, retiring two controllers (the etcd leader's host first), and
each step between two observations of the memberships, on a healthy cluster without load. The cluster is built here
(clusters/ha3-scale.yaml, process backend), scaled up and down --runs times (the nemesis heals each run back to the
built shape, also timed), and torn down.

    python bench/scale.py [--runs 3] [--topology clusters/ha3-scale.yaml]
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
from harness.faults import JoinControllers, Nemesis, RetireControllers  # noqa: E402
from harness.target.protocol import HostRole  # noqa: E402
from harness.wait import eventually  # noqa: E402


def steps(fault, since: float, into: dict[str, list[float]]) -> None:
    """The time from the previous observation (or the fault's start) to each observed step, by the step's kind."""
    for shape in fault.captured["shapes"]:
        kind = shape["when"].split(": ", 1)[-1]  # "c4: etcd member promoted" -> "etcd member promoted"
        into.setdefault(kind, []).append(shape["at"] - since)
        since = shape["at"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=run_count, default=3)
    parser.add_argument("--topology", default=str(ROOT / "clusters" / "ha3-scale.yaml"))
    args = parser.parse_args()
    timings: dict[str, list[float]] = {"join two": [], "retire two": [], "heal both": []}
    step_s: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="quorum-bench-scale-") as scratch:
        cluster = registry.get("process").up(Path(args.topology), Path(scratch) / "run")
        try:
            for _ in range(args.runs):
                assert eventually(lambda: not cluster.health.problems(), 120, 1.0), \
                    "the cluster is not healthy before a run"
                nemesis = Nemesis(cluster)
                started = time.monotonic()
                join = nemesis.inject(JoinControllers(hosts=cluster.spare_hosts()[:2]))
                timings["join two"].append(time.monotonic() - started)
                steps(join, started, step_s)
                leaving = [cluster.etcd.leader()] + [h for h in cluster.hosts(HostRole.CONTROLLER)
                                                      if h != cluster.etcd.leader()][:1]
                started = time.monotonic()
                retire = nemesis.inject(RetireControllers(hosts=leaving))
                timings["retire two"].append(time.monotonic() - started)
                steps(retire, started, step_s)
                assert "stopped" not in join.captured and "stopped" not in retire.captured, "a scale stopped"
                started = time.monotonic()
                assert nemesis.heal_all() == [], "the heal left problems"
                timings["heal both"].append(time.monotonic() - started)
        finally:
            registry.down(Path(scratch) / "run")
    rows = [spread(f"step: {kind}", seconds) for kind, seconds in step_s.items()]
    rows += [spread(what, seconds) for what, seconds in timings.items()]
    write_results("scale", rows, TIMING_COLUMNS,
                  f"Control-plane scale, 3 to 5 controllers and back ({Path(args.topology).name}, process backend)",
                  notes="A step ends at the next observation of the memberships (docs/lifecycle.md, control-plane "
                        "scale): a join step once its etcd member is promoted, or once its apiserver is UP behind the "
                        "load balancer and its controller-manager and scheduler are healthy; 'joined' after the other "
                        "apiservers restarted one at a time with the new member list (each its 8 s shutdown delay, "
                        "its start, two rise checks). The heal retires the joined hosts and joins the retired ones "
                        "again. No load runs meanwhile (the scale suite's figures are under load).")


if __name__ == "__main__":
    main()
