"""Two lanes for `./run.sh tests`: pytest-xdist runs them side by side (`-n 3`, scheduled by lane below), each
lane's tests one after another in file order, so module-scoped clusters stay as they are. A third, `background`,
first runs the process twins whose every check must fail (EARLY_TWINS: short, while the two lanes run twins too),
then the tests that build no cluster (unit tests, the toolchain's and the report's) at nice 10, so these take the
CPU the two lanes' clusters leave (none of its verdicts is a timing of a healthy cluster), and last, at full priority
again, the inventory's checks on their stand-in cluster (BACKGROUND_LAST).

Most of CI's time is spent waiting on clusters (availability windows, failover bounds, recovery times) rather
than computing, so two independent clusters at a time halve the wall time. Independent means: their own
subnets (every topology and every spare /24 a lane uses is its own), their own run directories, and nothing
that acts on every run of the machine. Two kinds of test must not share the machine, and are marked `alone`:
under xdist they are left out, and run.sh runs them afterwards with `--alone`:
- those that act on every run of the machine (`quorum down --all` would tear down the other lane's clusters);
- those whose verdict is a throughput or latency that the other lane's load would distort (iperf3 floors, the
  API latency SLOs under 1000 hollow nodes): measured beside a second cluster build on two cores, they judge
  the machine, not the control plane (seen in CI: a p99 of 1.07 s against 1 s, pod-to-pod at 3 Gbit/s, the API's
  availability through kind's LB at 94.5 % against 99.5 %).
"""

from __future__ import annotations

from pathlib import Path

import pytest

# tests/data holds inputs for tests (e.g. stand-in scenarios that fail on purpose), not tests to collect
collect_ignore = ["data"]

# The docker lane: whatever needs the Docker engine (docker backend, kind), the load on hollow nodes (the load twins,
# test_hollow_pods.py) and most broken twins, each on the subnet of its own topology; the process lane: the process
# backend's clusters on ha3, single and ha3-scale, the main job's suites, the team change
# (test_change.py) and the twins of process_lane_twins(). A process-backend cluster stays out of the docker lane:
# Docker's containers share one cgroup's CPU, a process cluster's processes take it each at full weight, from the
# process lane's (docs/ci.md). Balanced by CI's measured durations (`./run.sh tests --durations=0`; docs/ci.md).
DOCKER_LANE = {f"integration/{name}" for name in ("test_docker_backend.py", "test_kind_cluster.py",
                                                   "test_kind_lb_standin.py", "test_kind_self_hosted.py",
                                                   "test_scenarios_on_docker.py", "test_hollow_pods.py")}


# process-backend twins in the process lane, chosen to balance the lanes by CI's measured durations (`./run.sh tests
# --durations=0`; docs/ci.md); the others, the load twins among them, run in the docker lane
HANDED_OVER = "tests/integration/test_kind_cluster.py"  # its cluster goes on to the alone phase (handoff.py)
# scheduler-misnamed-profile: its conformance run and failover case (~2.3 min) put on the docker lane, the longest in
# presubmit, would lengthen presubmit by as much
PROCESS_LANE_TWINS = {"etcd-slow-election", "lb-no-health-check", "scheduler-misnamed-profile"}
# In the deep tier the docker lane also holds kind's self-hosted module with its deep twins and the docker main job:
# measured at 7084 s against the process lane's 3973 s (docs/ci.md), so this kind twin, deep but for one case, runs in
# the process lane there. The process lane builds kind clusters already (the inventory checks); a twin's failure
# proof is not turned into a pass by the CPU the other lane takes.
DEEP_PROCESS_LANE_TWINS = {"kind-restart-never"}
# With it moved the lanes ended together, but the background lane ended 40 minutes before them (docs/ci.md): in the
# deep tier it also takes the scale-down twin's docker build, a failure proof of the docker backend (the voter-first
# twin is not built on docker: test_defect_twins.py, DOCKER_COVERED_BY)
DEEP_BACKGROUND_TWINS = {"scale-member-first"}
# In presubmit the process lane is the longest (the main job, the scale smoke) and the background lane ends ~10
# minutes before it (docs/ci.md), so this process twin, whose every check must fail, runs at the background lane's
# start there; in the deep tier, where the background lane holds the kubeadm change, it stays in the process lane
PRESUBMIT_EARLY_TWINS = {"lb-no-health-check"}
# Process twins whose every selected check must fail, run first in the background lane at full priority (a third
# cluster lane for their ~9 minutes). Both lanes start with twins of their own (test_defect_twins.py precedes their
# other files), so the third lane overlaps failure proofs, which a shortage of CPU cannot turn into a pass, and no
# healthy cluster's timing verdict: not the objective twins, whose checks against their own configuration must pass,
# nor the load twins (hollow nodes and API load beside a lane's), nor kind's, which stay with Docker's clusters.
# docs/ci.md has the figures.
EARLY_TWINS = {"etcd-2-members", "etcd-no-peer-tls", "slow-links", "rotation-ca-first", "restart-never",
               "no-leader-election", "etcd-split-member", "upgrade-all-at-once"}


def process_lane_twins(deep: bool = False) -> set[str]:
    """The twins whose tests run in the process lane, in presubmit or (`deep`) in the deep tier; a twin's tests never
    split across lanes, since they share its topology's subnet. The load suite's twins (API load on 1000 hollow
    nodes) are not among them: they run in the docker lane with the other tests that put API load on hollow nodes
    (test_hollow_pods.py), never two at once, or both would judge a starved machine."""
    return set(PROCESS_LANE_TWINS) | (set(DEEP_PROCESS_LANE_TWINS) if deep else set())


def early_twins(deep: bool = False) -> set[str]:
    """The twins of the background lane's start: EARLY_TWINS and the process conformance twins (read-only checks),
    and in the deep tier (`deep`) DEEP_BACKGROUND_TWINS, in presubmit PRESUBMIT_EARLY_TWINS."""
    from tests.integration.test_defect_twins import CONFORMANCE_ONLY

    # kind's need Docker; a twin that serves a suite too has its conformance checks in that suite's case
    return EARLY_TWINS | {twin for twin in CONFORMANCE_ONLY if not twin.startswith("kind-")} | \
        (DEEP_BACKGROUND_TWINS if deep else PRESUBMIT_EARLY_TWINS)


def twin_of(nodeid: str) -> str | None:
    """The twin of a test_defect_twins.py test's node id (ids are "twin" or "twin:suite"), else None."""
    path, _, name = nodeid.partition("::")
    if not path.endswith("integration/test_defect_twins.py"):
        return None
    return name.partition("[")[2].rstrip("]").partition(":")[0]


# the tests that build no cluster: a lane of their own, at a lower priority (docs/ci.md); the deep tier's kubeadm
# upgrade also runs there, its lane having ended ~35 minutes before the others (docs/ci.md)
BACKGROUND = {"integration/test_toolchain_install.py", "integration/test_report.py",
              "integration/test_lifecycle_matrix.py", "integration/test_load_generators.py",
              "integration/test_kubeadm_change.py"}
BACKGROUND_NICE = 10
# A cluster module that runs last in the background lane, at full priority again: the lane's niced tests end ~11
# minutes before the process lane, whose tail leaves a third of the CPU idle (docs/ci.md). Its verdicts are the
# inventory's findings and bad-input errors, and the remote target's protocol: none is a timing of a healthy cluster
# that a third cluster beside the two lanes' tails could distort.
BACKGROUND_LAST = {"integration/test_inventory_check.py"}


def lane_of(nodeid: str, deep: bool = False) -> str:
    """The lane of a test, from its node id and the tier (`deep`: `--deep`): xdist's controller schedules by node id,
    without items."""
    path = nodeid.partition("::")[0]
    module = "/".join(Path(path).parts[-2:])
    if Path(path).parts[-2:-1] == ("unit",) or module in BACKGROUND | BACKGROUND_LAST:
        return "background"
    twin = twin_of(nodeid)
    if twin is not None:
        return "background" if twin in early_twins(deep) else "process" if twin in process_lane_twins(deep) else "docker"
    return "docker" if module in DOCKER_LANE else "process"


def last_in_background(nodeid: str) -> bool:
    """Whether a test is of BACKGROUND_LAST's modules: the end of the background lane, at full priority."""
    return "/".join(Path(nodeid.partition("::")[0]).parts[-2:]) in BACKGROUND_LAST


def last_in_its_lane(nodeid: str) -> bool:
    """The sort key of a worker's tests (False first, file order kept otherwise): the handed-over kind cluster's
    module ends the docker lane, BACKGROUND_LAST's modules the background lane."""
    return nodeid.startswith(HANDED_OVER) or last_in_background(nodeid)


def background_nice(nodeid: str, deep: bool = False) -> int:
    """The niceness a background-lane test runs at: 0 for the early twins and BACKGROUND_LAST's clusters, else
    BACKGROUND_NICE; 0 in the deep tier (`deep`), whose background lane holds no test without a cluster to yield to
    the others, but the kubeadm change and the lifecycle matrix, whose availability verdicts are timings of a healthy
    cluster: niced beside two cluster lanes, that lane was the longest and a drain's outage grew past the objective
    (docs/ci.md)."""
    if deep:
        return 0
    return 0 if twin_of(nodeid) is not None or last_in_background(nodeid) else BACKGROUND_NICE


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """xdist's scope scheduling with the lane as the scope: each worker takes one lane and runs it in order.
    (Not --dist loadgroup: with pytest 9.2 its xdist_group marks are silently ignored, pytest-xdist#1386.)"""
    from xdist.scheduler import LoadScopeScheduling

    class LaneScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return lane_of(nodeid, deep)

    deep = config.getoption("--deep")

    return LaneScheduling(config, log)


_LANE_SPAN: dict[str, list[float]] = {}  # lane -> [first start, last end, seconds spent in its tests], this worker
_DEEP_RUN = [False]  # whether this session runs the deep tier (pytest_configure): the hooks below get no config


def pytest_runtest_logstart(nodeid: str, location) -> None:
    import os
    import time

    lane = lane_of(nodeid, _DEEP_RUN[0])
    # after the early twins (first in file order), and only with a worker per lane (run.sh's -n 3): with fewer, this
    # worker would go on to a cluster lane still niced; back to full priority for the clusters of BACKGROUND_LAST
    # (root may raise a priority again: run.sh runs as root)
    if lane == "background" and int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0")) >= 3:
        wanted = background_nice(nodeid, _DEEP_RUN[0])
        if os.nice(0) < wanted or (wanted == 0 and os.nice(0) > 0 and os.geteuid() == 0):
            os.nice(wanted - os.nice(0))
    span = _LANE_SPAN.setdefault(lane, [time.time(), time.time(), 0.0])
    span[1] = time.time()


def pytest_runtest_logfinish(nodeid: str, location) -> None:
    import time

    span = _LANE_SPAN[lane_of(nodeid, _DEEP_RUN[0])]
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
                     help="run only the tests marked alone (run.sh runs them after the two parallel lanes)")
    parser.addoption("--deep", action="store_true",
                     help="run only the tests marked deep: the deep tier (`./run.sh tests --deep`), what CI skips")
    parser.addoption("--every-tier", action="store_true",
                     help="keep the tests of both tiers, none skipped for its tier (tests/tiers.py reads every proof)")


def pytest_configure(config: pytest.Config) -> None:
    # registered here, not in pyproject.toml: run.sh keys the virtualenv by that file's hash
    config.addinivalue_line("markers", "deep(reason): re-proves what a test CI runs already proves (on the other "
                                       "backend, or at another level); runs only with --deep, skipped with the "
                                       "reason otherwise")
    config.addinivalue_line("markers", "proof(Proof): the verdicts a test proves, in its tier (tests/tiers.py)")
    _DEEP_RUN[0] = bool(config.getoption("--deep"))


def deep_reason(item: pytest.Item) -> str | None:
    """The reason of a test marked deep (what presubmit proves instead), None for a presubmit test; a deep marker
    without its reason is a usage error."""
    marker = item.get_closest_marker("deep")
    if marker is None:
        return None
    if not marker.args:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.deep needs its reason, "
                                "e.g. @pytest.mark.deep(\"what already proves it in CI\")")
    return str(marker.args[0])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The tiers hold disjoint tests (docs/ci.md): presubmit skips a deep test with its reason, which says what CI
    # proves instead; the deep tier holds the rest and runs only that, since every landing's CI has run presubmit's
    # tests already (./run.sh nightly runs both).
    deep = bool(config.getoption("--deep"))
    every_tier = bool(config.getoption("--every-tier"))
    not_in_this_tier = []
    for item in items:
        if every_tier or not item.nodeid.startswith("tests/"):
            continue  # a scenario has no tier: Quorum's own tests do
        reason = deep_reason(item)
        if reason is not None and not deep:
            item.add_marker(pytest.mark.skip(reason=f"deep, runs with --deep (nightly): {reason}"))
        elif reason is None and deep:
            not_in_this_tier.append(item)
    if not_in_this_tier:
        config.hook.pytest_deselected(items=not_in_this_tier)
        left = {id(item) for item in not_in_this_tier}
        items[:] = [item for item in items if id(item) not in left]
    in_a_lane = hasattr(config, "workerinput")  # an xdist worker: the other lane runs at the same time
    only_alone = config.getoption("--alone")
    keep, left_out = [], []
    for item in items:
        alone = item.get_closest_marker("alone") is not None
        (left_out if (in_a_lane and alone) or (only_alone and not alone) else keep).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = keep
    if in_a_lane:  # the kind cluster's module last in its lane: the cluster it hands to the alone phase idles least;
        # BACKGROUND_LAST's after the niced tests of theirs
        items.sort(key=lambda item: last_in_its_lane(item.nodeid))
    elif only_alone:  # and first in the alone phase: taken down before the others measure anything
        items.sort(key=lambda item: not item.nodeid.startswith(HANDED_OVER))
