"""Every scenario suite fails on its deliberately broken twin, for the right reason.

A scenario that passes on a broken cluster is worse than none: each case runs (part of) a suite with
pytest against a twin from clusters/defects/ and asserts that it fails, and that the failure names the
defect's consequence rather than some unrelated error.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CASES = [
    # (twin, suite file, -k expression, text the failure must contain)
    ("restart-never", "scenarios/self_healing/test_self_healing.py", "kube-scheduler",
     "was not healthy within"),
    ("no-leader-election", "scenarios/leader_election/test_leader_election.py",
     "standby_takes_over and kube-controller-manager", "no kube-controller-manager leader observed"),
    ("etcd-2-members", "scenarios/etcd/test_etcd_quorum.py", "leader_of_three_dies",
     "[write-outage: fail] longest stretch without an acknowledged etcd.put"),
    ("etcd-no-peer-tls", "scenarios/etcd/test_etcd_quorum.py", "use_tls", "etcd URLs without TLS"),
    ("lb-no-health-check", "scenarios/apiserver_flags/test_flag_corruption.py", "wrong-etcd-endpoint",
     "[availability: fail] availability"),
    ("slow-links", "scenarios/bandwidth/test_bandwidth.py", "host_to_host", "links below 5.0 Gbit/s"),
]


@pytest.mark.parametrize("twin, suite, select, reason", CASES, ids=[c[0] for c in CASES])
def test_the_suite_fails_on_its_broken_twin(tmp_path, twin, suite, select, reason):
    result = subprocess.run(
        [sys.executable, "-m", "pytest", suite, "-k", select, f"--topology=clusters/defects/{twin}.yaml",
         f"--run-dir={tmp_path / 'run'}", f"--history-dir={tmp_path / 'histories'}", "-p", "no:cacheprovider",
         "-q", "--no-header", "-rN", "--tb=short"],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    output = result.stdout + result.stderr
    assert result.returncode == 1, f"expected the suite to fail on {twin} (exit 1), got {result.returncode}:\n{output[-3000:]}"
    assert " failed" in output and " passed" not in output.splitlines()[-1], output[-2000:]
    assert reason in output, f"{twin}: the failure does not say {reason!r}:\n{output[-3000:]}"
    assert not (tmp_path / "run" / "state.json").exists(), "the twin cluster must be torn down"
