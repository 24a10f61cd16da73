"""The suites run unchanged on the docker backend: a smoke subset (one or two scenarios of every suite but
load, and every read-only conformance check) against ha3 in containers. The whole set passed there too
(33 passed and 2 skipped on ha3 in 9 minutes, the 4 load scenarios on ha3-1000 in 7; docs/backends.md)."""

import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

import pytest

from tests.excerpt import failure_excerpt
from tests.integration.conftest import CLUSTERS, in_docker_lane

ROOT = Path(__file__).resolve().parents[2]
SUITES = {"self_healing", "leader_election", "etcd", "apiserver_flags", "bandwidth", "conformance", "lifecycle"}
# Not host_to_host nor the enforced limit: after its heal the limit's scenario judges iperf3's throughput against
# the 5 Gbit/s floor too, which the other lane of ./run.sh tests distorts (tests/conftest.py; 4463.7 Mbit/s in a CI
# run with a third lane on 2026-11-27, 4.28 Gbit/s in one beside other work). The slow controller link puts the
# docker backend's shaping under an availability verdict instead; that the shaping is installed and removed exactly
# on docker is checked by test_the_target_protocol_holds_on_docker; the throughput verdicts run alone.
SMOKE = ("(conformance and not host_to_host) or unknown-flag or leader_of_three or partitioned_leader "
         "or standby_takes_over or (killed_component_comes_back and etcd) or controller_link_is_slow or skew_policy")


@pytest.mark.deep("the main job proves these scenarios on the process backend, and the docker operations they use "
                  "(kills, pauses, partitions and shaping inside the host containers) are proven on docker by "
                  "test_docker_backend.py and its protocol checks, as the kind scenarios are (~4 min)")
@pytest.mark.timeout(1500)
def test_a_smoke_subset_of_every_suite_passes_on_the_docker_backend(tmp_path):
    junit = tmp_path / "junit.xml"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "scenarios", "--backend", "docker", "-m", "not hollow_nodes", "-k", SMOKE,
         f"--topology={in_docker_lane(CLUSTERS / 'ha3.yaml', tmp_path)}",
         f"--run-dir={tmp_path / 'run'}", f"--history-dir={tmp_path / 'histories'}", f"--junitxml={junit}",
         "-p", "no:cacheprovider", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=1400)
    assert result.returncode == 0, failure_excerpt(result)
    passed = Counter()
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        if case.find("failure") is None and case.find("error") is None and case.find("skipped") is None:
            passed[case.get("classname").split(".")[1]] += 1
    assert SUITES <= set(passed), f"suites without a passing scenario on docker: {SUITES - set(passed)}"
    assert not (tmp_path / "run" / "state.json").exists(), "the docker cluster must be torn down"
