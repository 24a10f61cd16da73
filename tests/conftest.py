"""Three lanes for `./run.sh tests`: pytest-xdist runs them side by side (`-n 3`, scheduled by lane below), each
lane's tests one after another in file order, so module-scoped clusters stay as they are.

Most of CI's time is spent waiting on clusters (availability windows, failover bounds, recovery times) rather
than computing, so independent clusters side by side cut the wall time. Independent means: their own subnets
(every topology and every spare /24 a lane uses is its own), their own run directories, and nothing that acts on
every run of the machine. The third lane, `background`, runs at a lower CPU priority (nice BACKGROUND_NICE, which
its clusters' processes inherit): it holds only work whose verdict a shortage of CPU cannot flip, the twins whose
every selected check must fail and the tests without a cluster, so the other two lanes' timing verdicts keep their
share of the two cores (docs/design.md, CI's time). Two kinds of test must not share the machine, and are marked
`alone`: under xdist they are left out, and run.sh runs them afterwards with `--alone`:
- those that act on every run of the machine (`quorum down --all` would tear down the other lanes' clusters);
- those whose verdict is a throughput or latency that the other lanes' load would distort (iperf3 floors, the
  API latency SLOs under 1000 hollow nodes): measured beside a second cluster build on two cores, they judge
  the machine, not the control plane (seen in CI: a p99 of 1.07 s against 1 s, pod-to-pod at 3 Gbit/s, the API's
  availability through kind's LB at 94.5 % against 99.5 %).
"""

from __future__ import annotations

from pathlib import Path

import pytest

# tests/data holds inputs for tests (e.g. stand-in scenarios that fail on purpose), not tests to collect
collect_ignore = ["data"]

# The docker lane: the healthy docker and kind clusters (docker backend, kind, kubeadm stand-in, self-hosted); the
# process lane: the process backend's healthy clusters on ha3, single and ha3-1000 (the main job's suites, faults,
# monitors, targets), the load twin and the twins of PROCESS_LANE_TWINS; the background lane: every other twin and
# the tests without a cluster. Balanced by CI's measured durations (`./run.sh tests --durations=0`).
DOCKER_LANE = {f"integration/{name}" for name in ("test_docker_backend.py", "test_kind_cluster.py",
                                                   "test_kind_lb_standin.py", "test_kind_self_hosted.py",
                                                   "test_scenarios_on_docker.py")}
WITHOUT_A_CLUSTER = {"integration/test_report.py", "integration/test_toolchain_install.py"}  # and tests/unit
BACKGROUND_NICE = 10  # CFS weight 110 against 1024: it takes the CPU the other lanes leave

# Twins that stay at full priority: the objective twins, whose checks against their own configuration must pass
# (OBJECTIVE_TWINS: a starved cluster could fail one). 2026-11-27 (ci22, two lanes: process 2309 s, docker 2516 s;
# the docker lane's own clusters 1599 s, its kind twins 534 s): expected ~1712 s process, ~1775 s docker, ~1335 s of
# background work, which ran ~1.34 times slower niced beside both lanes (unit tests 199 s against ~150 s, six twins
# 488 s against 365 s). ci23, three lanes: background 1523 s, process 1980 s, docker 2047 s; so lb-no-health-check
# (~230 s) moves from the process lane to the background, and lb-slow-checks (~176 s) from the docker lane to the
# process lane (expected ~1920 s, ~1850 s, ~1830 s).
PROCESS_LANE_TWINS = {"slow-restart", "slow-leases", "etcd-slow-election", "lb-slow-checks"}
DOCKER_LANE_TWINS: set[str] = set()
HANDED_OVER = "tests/integration/test_kind_cluster.py"  # its cluster goes on to the alone phase (handoff.py)


def process_lane_twins() -> set[str]:
    """The twins whose tests run in the process lane; a twin's tests never split across lanes, since they share
    its topology's subnet. The load suite's twin: API load on 1000 hollow nodes, never two at once, or both would
    judge a starved machine."""
    from tests.integration.test_defect_twins import CASES

    return {twin for twin, suite, _, _ in CASES if suite.startswith("scenarios/load/")} | PROCESS_LANE_TWINS


def lane_of(nodeid: str) -> str:
    """The lane of a test, from its node id alone: xdist's controller schedules by node id, without items."""
    path, _, name = nodeid.partition("::")
    if path.endswith("integration/test_defect_twins.py"):
        twin = name.partition("[")[2].rstrip("]").partition(":")[0]  # ids are "twin" or "twin:suite"
        return ("process" if twin in process_lane_twins() else "docker" if twin in DOCKER_LANE_TWINS
                else "background")
    where = "/".join(Path(path).parts[-2:])
    if where in DOCKER_LANE:
        return "docker"
    return "background" if where in WITHOUT_A_CLUSTER or Path(path).parts[-2:-1] == ("unit",) else "process"


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """xdist's scope scheduling with the lane as the scope: each worker takes one lane and runs it in order.
    (Not --dist loadgroup: with pytest 9.2 its xdist_group marks are silently ignored, pytest-xdist#1386.)"""
    from xdist.scheduler import LoadScopeScheduling

    class LaneScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return lane_of(nodeid)

    return LaneScheduling(config, log)


_NICED: list[bool] = []  # this worker lowered its priority (once: os.nice adds)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A worker that starts the background lane lowers its CPU priority; the clusters and pytest runs it starts
    inherit it (docker and kind containers are dockerd's children, so they do not)."""
    import os

    if not _NICED and hasattr(item.config, "workerinput") and lane_of(item.nodeid) == "background":
        os.nice(BACKGROUND_NICE)
        _NICED.append(True)


_LANE_SPAN: dict[str, list[float]] = {}  # lane -> [first start, last end, seconds spent in its tests], this worker


def pytest_runtest_logstart(nodeid: str, location) -> None:
    import time

    span = _LANE_SPAN.setdefault(lane_of(nodeid), [time.time(), time.time(), 0.0])
    span[1] = time.time()


def pytest_runtest_logfinish(nodeid: str, location) -> None:
    import time

    span = _LANE_SPAN[lane_of(nodeid)]
    span[2] += time.time() - span[1]
    span[1] = time.time()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Each lane's span, so the lanes can be balanced from a CI log (run.sh prints it after the lanes): a worker
    appends one line per lane it ran to $QUORUM_LANE_LOG."""
    import os
    import time

    log = os.environ.get("QUORUM_LANE_LOG")
    if not log or not hasattr(session.config, "workerinput"):
        return
    with open(log, "a") as out:
        for lane, (start, end, busy) in sorted(_LANE_SPAN.items()):
            out.write(f"lane {lane}: {session.config.workerinput['workerid']} ran {busy:.0f} s of tests, ended "
                      f"{end - start:.0f} s after its first test started ({time.strftime('%H:%M:%S', time.localtime(end))})\n")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--alone", action="store_true",
                     help="run only the tests marked alone (run.sh runs them after the three parallel lanes)")
    parser.addoption("--deep", action="store_true",
                     help="also run the tests marked deep (`./run.sh tests --deep`, nightly): re-proofs that CI skips")


def pytest_configure(config: pytest.Config) -> None:
    # registered here, not in pyproject.toml: run.sh keys the virtualenv by that file's hash
    config.addinivalue_line("markers", "deep(reason): re-proves what a test CI runs already proves (on the other "
                                       "backend, or at another level); runs with --deep, skipped with the reason otherwise")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # CI's run stays well under its 45 minutes: a deep test re-proves, at several minutes' cost, what a test that
    # CI runs already proves (the same scenario on a twin of the other backend, a fault inside a scenario)
    if not config.getoption("--deep"):
        for item in items:
            marker = item.get_closest_marker("deep")
            if marker is not None and not marker.args:
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.deep needs its reason, "
                                        "e.g. @pytest.mark.deep(\"what already proves it in CI\")")
            if marker is not None:
                item.add_marker(pytest.mark.skip(reason=f"deep, runs with --deep (nightly): {marker.args[0]}"))
    in_a_lane = hasattr(config, "workerinput")  # an xdist worker: the other lanes run at the same time
    only_alone = config.getoption("--alone")
    keep, left_out = [], []
    for item in items:
        alone = item.get_closest_marker("alone") is not None
        (left_out if (in_a_lane and alone) or (only_alone and not alone) else keep).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = keep
    if in_a_lane:
        items.sort(key=lane_order)


def lane_order(item: pytest.Item) -> tuple[bool, int]:
    """Where a test goes in its lane. The kind module's last in the docker lane: the cluster it hands to the alone
    phase idles least. In the background lane the tests without a cluster first, then the process twins, then the
    kind twins (their containers run at full priority whatever the lane's nice): by then the docker lane is past
    the self-hosted cluster and the docker smoke, whose verdicts are availability and recovery times."""
    kind_twin = "integration/test_defect_twins.py::" in item.nodeid and "[kind-" in item.nodeid
    rank = 0 if lane_of(item.nodeid) != "background" else 2 if kind_twin else 1 if "test_defect_twins" in item.nodeid else 0
    return item.nodeid.startswith(HANDED_OVER), rank
