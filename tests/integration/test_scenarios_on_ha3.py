"""The other half of the defect-twin proof: on the default topology every suite passes (ci profile).

This is the README's main job (`pytest scenarios/`) run as a test, so CI proves the suites are green on a
healthy cluster and red on each broken twin (test_defect_twins.py). The load suite runs last, on
clusters/ha3-1000.yaml (1000 hollow nodes), after the ha3 cluster is taken down.
"""

import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITES = {"self_healing", "leader_election", "etcd", "apiserver_flags", "bandwidth", "conformance", "load"}


@pytest.mark.timeout(2400)  # the whole main job: ha3 suites (~11 min), then the load suite on ha3-1000 (~8 min)
def test_every_suite_passes_on_the_default_topology_and_the_gate_promotes_it(tmp_path):
    junit = tmp_path / "histories" / "junit.xml"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "scenarios", f"--run-dir={tmp_path / 'run'}",
         f"--history-dir={tmp_path / 'histories'}", f"--junitxml={junit}", "-p", "no:cacheprovider", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=2300)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    passed = Counter()
    for case in cases:
        if case.find("failure") is None and case.find("error") is None and case.find("skipped") is None:
            passed[case.get("classname").split(".")[1]] += 1
    assert SUITES <= set(passed), f"suites without a passing scenario: {SUITES - set(passed)}"
    # every scenario records a History; the read-only conformance checks do not
    recorded = sum(count for suite, count in passed.items() if suite != "conformance")
    assert len(list((tmp_path / "histories").glob("*.jsonl"))) >= recorded
    assert not (tmp_path / "run" / "state.json").exists()
    assert not (tmp_path / "run-ha3-1000" / "state.json").exists(), "the load cluster must be torn down"
    gate = subprocess.run([sys.executable, "-m", "harness.cli", "gate", "--policy", "gate.yaml", "--results",
                           str(tmp_path / "histories")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "decision: promote" in gate.stdout
