"""The lanes of ./run.sh tests (tests/conftest.py): tests that share a cluster's subnet never run side by side."""

from pathlib import Path

import pytest

from tests.collect import collect_only, node_ids
from tests.conftest import lane_of
from tests.integration.test_defect_twins import CASES, CONFORMANCE, case_id

ROOT = Path(__file__).resolve().parents[2]
TWINS = "tests/integration/test_defect_twins.py"


def twin_lanes(deep: bool = False) -> dict[str, set[str]]:
    lanes: dict[str, set[str]] = {}
    for twin, suite, _, _ in CASES:
        lanes.setdefault(twin, set()).add(
            lane_of(f"{TWINS}::test_the_suite_fails_on_its_broken_twin[{case_id(twin, suite)}]", deep))
    for twin in CONFORMANCE:
        lanes.setdefault(twin, set()).add(
            lane_of(f"{TWINS}::test_each_conformance_check_fails_on_its_twin_and_only_there[{twin}]", deep))
    return lanes


@pytest.mark.parametrize("deep", [False, True], ids=["presubmit", "deep"])
def test_every_twins_tests_run_in_one_lane(deep):
    """A twin's topology has one subnet: two of its tests side by side would collide on it."""
    split = {twin: lanes for twin, lanes in twin_lanes(deep).items() if len(lanes) > 1}
    assert not split, f"twins whose tests are in both lanes: {split}"


def test_the_deep_tier_moves_only_the_twins_that_balance_its_lanes():
    """The deep tier's lanes differ from presubmit's only by the kind twins moved to the process lane and the process
    twins moved to the background lane (tests/conftest.py), each out of the docker lane, and by the process twins
    presubmit runs at the background lane's start, which the deep tier keeps in the process lane."""
    from tests.conftest import DEEP_BACKGROUND_TWINS, DEEP_PROCESS_LANE_TWINS, PRESUBMIT_EARLY_TWINS

    presubmit, deep = twin_lanes(), twin_lanes(deep=True)
    moved = {twin for twin in presubmit if presubmit[twin] != deep[twin]}
    assert moved == DEEP_PROCESS_LANE_TWINS | DEEP_BACKGROUND_TWINS | PRESUBMIT_EARLY_TWINS
    assert all(presubmit[twin] == {"background"} and deep[twin] == {"process"} for twin in PRESUBMIT_EARLY_TWINS)
    assert all(twin.startswith("kind-") for twin in DEEP_PROCESS_LANE_TWINS)
    assert all(presubmit[twin] == {"docker"} and deep[twin] == {"process"} for twin in DEEP_PROCESS_LANE_TWINS)
    assert all(presubmit[twin] == {"docker"} and deep[twin] == {"background"} for twin in DEEP_BACKGROUND_TWINS)


def test_kind_and_docker_tests_share_the_docker_lane_and_so_do_the_load_twins_and_the_hollow_node_load():
    lanes = twin_lanes()
    assert {lane for twin, twin_lane in lanes.items() if twin.startswith("kind-") for lane in twin_lane} == {"docker"}
    # the scheduler's failover puts no API load beside the lane's: a pod asked for every 2 s
    load_twins = {twin for twin, suite, _, _ in CASES
                  if suite.startswith("scenarios/load/") and suite != "scenarios/load/test_scheduling.py"}
    assert load_twins and all(lanes[twin] == {"docker"} for twin in load_twins)
    assert lane_of("tests/integration/test_hollow_pods.py::test_x") == "docker"
    assert lane_of("tests/integration/test_kind_cluster.py::test_every_node_turns_ready_with_quorums_cni") == "docker"
    assert lane_of("tests/integration/test_scenarios_on_ha3.py::test_x") == "process"


@pytest.mark.parametrize("topology", ["ha3.yaml", "single.yaml"])
def test_the_docker_lanes_copies_of_topologies_are_on_subnets_of_their_own(topology, tmp_path):
    """The docker lane's ha3 and single run beside the process lane's, which hold the checked-in subnets."""
    import yaml

    from harness.topology import load_topology
    from tests.integration.conftest import in_docker_lane

    used = {yaml.safe_load(path.read_text())["network"]["subnet"]
            for path in (ROOT / "clusters").rglob("*.yaml") if "network" in (yaml.safe_load(path.read_text()) or {})}
    copy = in_docker_lane(ROOT / "clusters" / topology, tmp_path)
    subnet = load_topology(copy).network.subnet
    assert str(subnet) not in {str(s) for s in used}, f"{topology}'s docker-lane copy shares {subnet} with a checked-in topology"


def test_ci_keeps_a_kind_twin_for_each_kind_only_suite():
    """A kind-only suite (static pods, pod bandwidth, the checkpointer's power loss) keeps a twin in presubmit, its
    smoke's failure proof (which tier proves each verdict is tests/unit/test_tiers.py's rule)."""
    from tests.integration.test_defect_twins import DEEP, DEEP_ONLY, PROVEN_ELSEWHERE

    in_ci = {suite for twin, suite, _, _ in CASES
             if case_id(twin, suite) not in DEEP | DEEP_ONLY or case_id(twin, suite) in PROVEN_ELSEWHERE}
    assert {"scenarios/static_pods/test_static_pods.py", "scenarios/bandwidth/test_pod_bandwidth.py",
            "scenarios/checkpointer/test_checkpointer.py"} <= in_ci


def test_a_conformance_twin_that_serves_a_suite_is_judged_in_that_suites_ci_case():
    """Its conformance checks run on the same build as its first suite case (test_defect_twins.py), so that case must
    be one CI runs, or CI would never see those checks fail."""
    from tests.integration.test_defect_twins import CONFORMANCE_ONLY, DEEP

    shared = set(CONFORMANCE) - set(CONFORMANCE_ONLY)
    assert shared, "no conformance twin serves a suite: the shared path would be untested"
    for twin in shared:
        first = next(case for case in CASES if case[0] == twin)
        assert case_id(twin, first[1]) not in DEEP, f"{twin}'s conformance checks ride on a deep case"


def test_the_tests_without_a_cluster_run_in_the_background_lane_and_the_others_do_not():
    assert lane_of("tests/unit/test_topology.py::test_x") == "background"
    assert lane_of("tests/integration/test_toolchain_install.py::test_x") == "background"
    assert lane_of("tests/integration/test_report.py::test_x") == "background"
    assert lane_of("tests/integration/test_faults.py::test_x") == "process"
    assert lane_of("tests/integration/test_docker_backend.py::test_x") == "docker"


def test_the_inventory_checks_end_the_background_lane_after_its_niced_tests_and_at_full_priority_again():
    """The stand-in cluster of the inventory's checks runs in the background lane's idle tail (docs/ci.md): after the
    niced tests in a worker's order, un-niced, while the unit tests before it stay niced."""
    from tests.conftest import BACKGROUND_NICE, background_nice, last_in_its_lane

    inventory = "tests/integration/test_inventory_check.py::test_a_wrong_manifest_dir_is_named"
    unit, report = "tests/unit/test_topology.py::test_x", "tests/integration/test_report.py::test_x"
    twin = f"{TWINS}::test_the_suite_fails_on_its_broken_twin[etcd-2-members]"
    for deep in (False, True):
        assert {lane_of(node, deep) for node in (inventory, unit, report, twin)} == {"background"}
    order = sorted([inventory, twin, report, unit], key=last_in_its_lane)
    assert order == [twin, report, unit, inventory]
    assert [background_nice(node) for node in order] == [0, BACKGROUND_NICE, BACKGROUND_NICE, 0]
    # the deep tier's background lane holds cluster tests only (the kubeadm change, the lifecycle matrix): none niced
    assert [background_nice(node, deep=True) for node in order] == [0, 0, 0, 0]
    assert lane_of("tests/integration/test_scale.py::test_x") == "process"


def test_the_alone_phase_takes_the_handed_over_kind_cluster_down_before_anything_else_measures():
    """The kind cluster the docker lane hands over idles at ~0.75 core (docs/design.md): its module runs first, and
    the latency and throughput verdicts after it."""
    from tests.conftest import HANDED_OVER

    ids = node_ids(collect_only("tests", "--alone", timeout_s=300))
    kind = [i for i, node in enumerate(ids) if node.startswith(HANDED_OVER)]
    assert kind and kind == list(range(len(kind))), ids
    assert any("test_hollow_pods.py::test_the_nightly_profile_shortened" in node for node in ids[len(kind):]), ids


def test_the_background_lanes_twins_are_failure_proofs_of_the_process_backend_and_run_before_its_niced_tests():
    """The third lane's twins overlap the two lanes' own twins: each must be one whose every check fails (no objective
    twin, whose checks against its configuration must pass; no load twin, whose load would starve a lane), built by
    the process backend, and first in the background worker's file order, which lowers its priority at the first test
    that is not a twin."""
    from tests.conftest import BACKGROUND, early_twins, twin_of
    from tests.integration.test_defect_twins import OBJECTIVE_TWINS

    loads = {twin for twin, suite, _, _ in CASES if suite.startswith("scenarios/load/")}
    for deep in (False, True):
        early = early_twins(deep)
        assert early and not early & (OBJECTIVE_TWINS | loads)
        assert not any(twin.startswith("kind-") for twin in early)
        assert {twin for twin, lanes in twin_lanes(deep).items() if "background" in lanes} == early
    # pytest collects tests/integration before tests/unit, and files by name
    assert all(TWINS.rsplit("/", 1)[1] < name.rsplit("/", 1)[1] for name in BACKGROUND if name.startswith("integration/"))
    assert twin_of(f"{TWINS}::test_the_suite_fails_on_its_broken_twin[etcd-2-members]") == "etcd-2-members"
    assert twin_of(f"{TWINS}::test_the_suite_fails_on_its_broken_twin[kind-restart-never:static_pods]") == \
        "kind-restart-never"
    assert twin_of("tests/unit/test_topology.py::test_x") is None


def test_the_deep_tier_holds_only_the_tests_presubmit_skips_and_every_tier_holds_both():
    """`--deep` runs the deep tier alone: every test it collects is marked deep, and every deep test is one of them;
    presubmit collects the rest (the deep ones skipped with their reason at run time); `--every-tier` keeps both for
    tests/tiers.py. Collected over tests/integration/, where the deep tests are."""
    deep = collect_only("tests/integration", "--deep")
    marked = collect_only("tests/integration", "-m", "deep", "--every-tier")
    everything = collect_only("tests/integration", "--every-tier")
    presubmit = collect_only("tests/integration")
    for result in (deep, marked, everything, presubmit):
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    in_deep, deep_marked = set(node_ids(deep)), set(node_ids(marked))
    assert in_deep and in_deep == deep_marked
    assert set(node_ids(everything)) == set(node_ids(presubmit)) and deep_marked < set(node_ids(everything))
