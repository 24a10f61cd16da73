"""The other half of the defect-twin proof: on the default topology every suite passes (ci profile).

This is the README's main job (`pytest scenarios/`) run as a test, in two parts, so CI proves the suites are
green on a healthy cluster and red on each broken twin (test_defect_twins.py); the gate promotes each part
with the policy of gate.yaml narrowed to that part's suites. The suites whose verdict is a throughput or a
latency (bandwidth floors on ha3; the load suite's SLOs on clusters/ha3-1000.yaml, 1000 hollow nodes) run
`alone`, after the parallel lanes of ./run.sh tests (tests/conftest.py): beside another cluster's build they
would judge a busy machine, not the control plane.
"""

import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.excerpt import failure_excerpt
from tests.tiers import Selection, passes

ROOT = Path(__file__).resolve().parents[2]
MEASURING = {"bandwidth", "load"}  # their verdicts are throughput and latency figures
SUITES = {"self_healing", "leader_election", "etcd", "apiserver_flags", "lifecycle", "conformance"}


def run_main_job(tmp_path: Path, selection: Selection, suites: set[str], *options: str) -> subprocess.CompletedProcess:
    """`pytest <selection>` like the main job, asserting that every suite of `suites` passed a scenario and
    recorded its History, that no selected scenario was skipped but for a capability the backend lacks (a proof that
    skips proves nothing), and that every cluster was torn down; returns `quorum gate` over the Histories, with
    gate.yaml's policy narrowed to `suites`. `options` go to pytest (e.g. --backend docker and its topology)."""
    junit = tmp_path / "histories" / "junit.xml"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *selection.pytest_args(), *options, "--policy", str(ROOT / "gate.yaml"),
         f"--run-dir={tmp_path / 'run'}", f"--history-dir={tmp_path / 'histories'}", f"--junitxml={junit}",
         "-p", "no:cacheprovider", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=2300)
    assert result.returncode == 0, failure_excerpt(result)
    passed, skipped = Counter(), {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        skip = case.find("skipped")
        if skip is not None:
            skipped[case.get("name")] = skip.get("message", "")
        elif case.find("failure") is None and case.find("error") is None:
            passed[case.get("classname").split(".")[1]] += 1
    assert set(passed) == suites, f"suites without a passing scenario: {suites - set(passed)}; unexpected: {set(passed) - suites}"
    unexplained = {name: message for name, message in skipped.items() if not message.startswith("not on --")}
    assert not unexplained, f"skipped for another reason than a missing capability: {unexplained}"
    # every scenario records a History; the read-only conformance checks do not
    recorded = sum(count for suite, count in passed.items() if suite != "conformance")
    assert len(list((tmp_path / "histories").glob("*.jsonl"))) >= recorded
    assert not list(tmp_path.glob("run*/state.json")), "every cluster of the run must be torn down"
    ran = {f"{case.get('classname').replace('.', '/')}.py::{case.get('name')}"
           for case in ElementTree.parse(junit).getroot().iter("testcase")}
    (tmp_path / "gate.yaml").write_text(yaml.safe_dump(narrowed_policy(tmp_path / "histories", suites, ran)))
    return subprocess.run([sys.executable, "-m", "harness.cli", "gate", "--policy", str(tmp_path / "gate.yaml"),
                           "--results", str(tmp_path / "histories")], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def narrowed_policy(histories: Path, suites: set[str], ran: set[str]) -> dict:
    """gate.yaml narrowed to a part of the main job: its suites; the scenarios of theirs the part left out (its
    selection's --deselect and -m), excused by name; the objectives only the other suites measure, said not measured
    here (from the run's own run.json)."""
    from harness.objectives.catalog import MEASURES

    policy = yaml.safe_load((ROOT / "gate.yaml").read_text())
    assert suites <= set(policy["required_suites"]), "gate.yaml must require every suite"
    run = json.loads((histories / "run.json").read_text())
    planned, declared = run["planned"], run["measures"]
    left_out = [nodeid for suite in suites for nodeid in planned.get(suite, []) if nodeid not in ran]
    executed = [nodeid for suite in suites for nodeid in planned.get(suite, []) if nodeid in ran]
    policy["required_suites"] = sorted(suites)
    policy["not_run"] = [{"test": nodeid, "reason": "another part of CI's main job, or its deep tier, runs it"}
                         for nodeid in left_out]
    policy["not_measured"] = sorted(set(policy.get("not_measured", [])) | {
        name for name in MEASURES if not any(name in declared.get(n, []) for n in executed)})
    return policy


# scenarios the main job leaves to the deep tier: each re-proves, by another input, a verdict another scenario of the
# main job proves through the same mechanism
RE_PROOFS = {
    # the apiserver exits at start, as with [unknown-flag]: the LB meets a refused connection and marks it DOWN alike
    "scenarios/apiserver_flags/test_flag_corruption.py::test_one_apiserver_with_a_bad_flag_is_routed_around"
    "[missing-certificate]",
    # the readiness gate stops a rolling change at an apiserver that does not come back and the change is rolled back
    # (rolling_change, roll_back): the upgrade's abort proves it at the second apiserver, rolling back both; its
    # lb-detection is the bad flag's ([unknown-flag], [wrong-etcd-endpoint])
    "scenarios/apiserver_flags/test_flag_corruption.py::"
    "test_a_rolling_bad_change_stops_at_the_first_apiserver_and_rolls_it_back",
}


# scenarios ha3 cannot run, which the main job's pytest would skip: each is left out by name, so that a skip in the
# main job is never taken for a pass (run_main_job refuses any skip but a missing capability's)
NOT_ON_HA3 = {
    # it needs spare hosts: tests/integration/test_scale.py runs it on clusters/ha3-scale.yaml
    "scenarios/lifecycle/test_scale.py::test_spare_hosts_join_then_as_many_controllers_leave_the_leaders_first_without_an_outage",
    # ha3 has one HAProxy: killing it is an outage by design, not a redundancy test (no topology has a pair yet)
    "scenarios/self_healing/test_self_healing.py::test_a_killed_component_comes_back[haproxy]",
}
# the main job in two parts: the suites judged beside the other lane, and those whose verdicts are throughput and
# latency (alone); nightly-profile scenarios run only with --profile nightly
# a team's change runs only when one is given (--change, `quorum change`): tests/integration/test_change.py gives it
NOT_WITHOUT_A_CHANGE = "scenarios/change"
MAIN_JOB = Selection(("scenarios",), markers="not nightly",
                     ignore=(*(f"scenarios/{s}" for s in sorted(MEASURING)), NOT_WITHOUT_A_CHANGE),
                     deselect=tuple(sorted(RE_PROOFS | NOT_ON_HA3)))
# the faults under load (an apiserver killed, an etcd member cut off, the controller-manager leader restarted, ~4 min
# on 1000 hollow nodes) re-judge under load what the main job judges without it: the deep tier runs them
FAULTS_UNDER_LOAD = tuple(f"scenarios/load/test_load.py::test_{name}_under_load" for name in (
    "killing_one_apiserver", "partitioning_one_etcd_member", "restarting_the_controller_manager_leader"))
# the capacity search (two climbs of up to eight steps, ~5 min on ha3-1000) finds a figure no other scenario judges:
# the deep tier runs it (test_the_capacity_search_passes_on_ha3_1000_and_the_gate_promotes_it)
CAPACITY = ("scenarios/load/test_capacity.py::"
            "test_the_control_plane_carries_the_expected_load_with_headroom_also_with_its_busiest_apiserver_down")
MEASURING_JOB = Selection(tuple(f"scenarios/{suite}" for suite in sorted(MEASURING)), markers="not nightly",
                          deselect=(*FAULTS_UNDER_LOAD, CAPACITY))


@passes("process", MAIN_JOB)
@pytest.mark.timeout(1800)  # ~10 min
def test_every_suite_but_the_measuring_ones_passes_on_the_default_topology_and_the_gate_promotes_it(tmp_path):
    gate = run_main_job(tmp_path, MAIN_JOB, SUITES)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "decision: promote" in gate.stdout


@passes("process", MEASURING_JOB)
@pytest.mark.alone
@pytest.mark.timeout(2400)  # the bandwidth suite on ha3 (~2 min), then the load suite on ha3-1000 (~8 min)
def test_the_bandwidth_and_load_suites_pass_on_the_default_topologies_and_the_gate_promotes_them(tmp_path):
    gate = run_main_job(tmp_path, MEASURING_JOB, MEASURING)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "decision: promote" in gate.stdout


# the load suite's files collected whole and the faults under load selected by name: a required suite's file the run
# never collected cannot be excused, its scenarios deselected can (narrowed_policy)
UNDER_LOAD = Selection(("scenarios/load",), keyword="under_load")


@passes("process", UNDER_LOAD)
@pytest.mark.alone
@pytest.mark.deep("presubmit judges the load suite's steady load and pod start-up on ha3-1000, and these faults "
                  "without load in the main job; this judges them under load (~5 min)")
@pytest.mark.timeout(1800)
def test_the_faults_under_load_pass_on_the_load_topology_and_the_gate_promotes_them(tmp_path):
    gate = run_main_job(tmp_path, UNDER_LOAD, {"load"})
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "decision: promote" in gate.stdout


@passes("process", Selection(tuple(sorted(RE_PROOFS))))
@pytest.mark.deep("the main job proves the same verdict through the same mechanism (RE_PROOFS)")
@pytest.mark.timeout(900)
def test_the_scenarios_the_main_job_leaves_to_the_deep_tier_pass_on_the_default_topology(tmp_path):
    run_main_job(tmp_path, Selection(tuple(sorted(RE_PROOFS))), {"apiserver_flags"})


# the load suite's files collected whole, the capacity search selected by name (as UNDER_LOAD, below)
CAPACITY_JOB = Selection(("scenarios/load",), keyword="capacity")


@passes("process", CAPACITY_JOB)
@pytest.mark.alone  # its knee is a latency and a throughput: beside another lane's cluster it would be the machine's
@pytest.mark.deep("no other scenario measures the capacity headroom; presubmit judges the same SLOs inside the "
                  "apiservers at one load (the measuring job), and the knee's rules on recorded steps "
                  "(tests/unit/test_capacity.py) (~6 min)")
@pytest.mark.timeout(1800)
def test_the_capacity_search_passes_on_ha3_1000_and_the_gate_promotes_it(tmp_path):
    gate = run_main_job(tmp_path, CAPACITY_JOB, {"load"})
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "decision: promote" in gate.stdout
