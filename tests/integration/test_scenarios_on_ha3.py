"""The other half of the defect-twin proof: on the default topology every suite passes (ci profile).

This is the README's main job (`pytest scenarios/`) run as a test, in two parts, so CI proves the suites are
green on a healthy cluster and red on each broken twin (test_defect_twins.py); the gate promotes each part
with the policy of gate.yaml narrowed to that part's suites. The suites whose verdict is a throughput or a
latency (bandwidth floors on ha3; the load suite's SLOs on clusters/ha3-1000.yaml, 1000 hollow nodes) run
`alone`, after the parallel lanes of ./run.sh tests (tests/conftest.py): beside another cluster's build they
would judge a busy machine, not the control plane.
"""

import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.excerpt import failure_excerpt

ROOT = Path(__file__).resolve().parents[2]
MEASURING = {"bandwidth", "load"}  # their verdicts are throughput and latency figures
SUITES = {"self_healing", "leader_election", "etcd", "apiserver_flags", "lifecycle", "conformance"}


def run_main_job(tmp_path: Path, selection: list[str], suites: set[str]) -> subprocess.CompletedProcess:
    """`pytest <selection>` like the main job, asserting that every suite of `suites` passed a scenario and
    recorded its History, and that every cluster was torn down; returns `quorum gate` over the Histories, with
    gate.yaml's policy narrowed to `suites`."""
    junit = tmp_path / "histories" / "junit.xml"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *selection, "--policy", str(ROOT / "gate.yaml"), f"--run-dir={tmp_path / 'run'}",
         f"--history-dir={tmp_path / 'histories'}", f"--junitxml={junit}", "-p", "no:cacheprovider", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=2300)
    assert result.returncode == 0, failure_excerpt(result)
    passed = Counter()
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        if case.find("failure") is None and case.find("error") is None and case.find("skipped") is None:
            passed[case.get("classname").split(".")[1]] += 1
    assert set(passed) == suites, f"suites without a passing scenario: {suites - set(passed)}; unexpected: {set(passed) - suites}"
    # every scenario records a History; the read-only conformance checks do not
    recorded = sum(count for suite, count in passed.items() if suite != "conformance")
    assert len(list((tmp_path / "histories").glob("*.jsonl"))) >= recorded
    assert not list(tmp_path.glob("run*/state.json")), "every cluster of the run must be torn down"
    policy = yaml.safe_load((ROOT / "gate.yaml").read_text())
    assert suites <= set(policy["required_suites"]), "gate.yaml must require every suite"
    policy["required_suites"] = sorted(suites)
    (tmp_path / "gate.yaml").write_text(yaml.safe_dump(policy))
    return subprocess.run([sys.executable, "-m", "harness.cli", "gate", "--policy", str(tmp_path / "gate.yaml"),
                           "--results", str(tmp_path / "histories")], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


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


@pytest.mark.timeout(1800)  # ~10 min
def test_every_suite_but_the_measuring_ones_passes_on_the_default_topology_and_the_gate_promotes_it(tmp_path):
    gate = run_main_job(tmp_path, ["scenarios", *(f"--ignore=scenarios/{suite}" for suite in sorted(MEASURING)),
                                   *(f"--deselect={node}" for node in sorted(RE_PROOFS))], SUITES)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "decision: promote" in gate.stdout


@pytest.mark.alone
@pytest.mark.timeout(2400)  # the bandwidth suite on ha3 (~2 min), then the load suite on ha3-1000 (~8 min)
def test_the_bandwidth_and_load_suites_pass_on_the_default_topologies_and_the_gate_promotes_them(tmp_path):
    gate = run_main_job(tmp_path, [f"scenarios/{suite}" for suite in sorted(MEASURING)], MEASURING)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "decision: promote" in gate.stdout


@pytest.mark.deep("the main job proves the same verdict through the same mechanism (RE_PROOFS)")
@pytest.mark.timeout(900)
def test_the_scenarios_the_main_job_leaves_to_the_deep_tier_pass_on_the_default_topology(tmp_path):
    run_main_job(tmp_path, sorted(RE_PROOFS), {"apiserver_flags"})
