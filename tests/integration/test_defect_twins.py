"""Every scenario suite fails on its deliberately broken twin, for the right reason.

A scenario that passes on a broken cluster is worse than none: each case runs (part of) a suite with
pytest against a twin from clusters/defects/ and asserts that it fails, and that the failure names the
defect's consequence rather than some unrelated error.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from harness.kind.topology import is_kind_topology

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
    # every load scenario (all their names contain "load") checks node heartbeats
    ("node-lease-too-long", "scenarios/load/test_load.py", "load", "[node-heartbeats: fail]"),
    # kind twins (run with --backend kind); every selected scenario must fail (the last line has no 'passed')
    ("kind-restart-never", "scenarios/static_pods/test_static_pods.py", "killed", "[recovery: fail]"),
    # one control plane whose static pods are never restarted: nobody can take a killed leader's lease
    ("kind-restart-never", "scenarios/leader_election/test_leader_election.py",
     "standby_takes_over and kube-controller-manager", "[failover: fail] kube-controller-manager: no new holder"),
    ("kind-restart-never", "scenarios/self_healing/test_self_healing.py", "kube-scheduler", "was not healthy within"),
    ("kind-lb-no-health-check", "scenarios/static_pods/test_static_pods.py", "corrupted or partitioned",
     "[availability: fail]"),
    ("kind-kubelet-disabled", "scenarios/static_pods/test_static_pods.py", "power", "[recovery: fail]"),
    ("kind-slow-pod-network", "scenarios/bandwidth/test_pod_bandwidth.py", "pod_to_pod",
     "pod-to-pod below 5.0 Gbit/s"),
    ("kind-etcd-2-members", "scenarios/etcd/test_etcd_quorum.py", "leader_of_three_dies",
     "[write-outage: fail] longest stretch without an acknowledged etcd.put"),
]


def case_id(twin: str, suite: str) -> str:
    """The twin's name; with the suite's too when a twin serves more than one suite."""
    return twin if sum(c[0] == twin for c in CASES) == 1 else f"{twin}:{Path(suite).stem.removeprefix('test_')}"


@pytest.mark.parametrize("twin, suite, select, reason", CASES, ids=[case_id(c[0], c[1]) for c in CASES])
def test_the_suite_fails_on_its_broken_twin(tmp_path, twin, suite, select, reason):
    backend = ["--backend=kind"] if is_kind_topology(ROOT / "clusters" / "defects" / f"{twin}.yaml") else []
    result = subprocess.run(
        [sys.executable, "-m", "pytest", suite, "-k", select, f"--topology=clusters/defects/{twin}.yaml", *backend,
         f"--run-dir={tmp_path / 'run'}", f"--history-dir={tmp_path / 'histories'}", "-p", "no:cacheprovider",
         "-q", "--no-header", "-rN", "--tb=short"],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    output = result.stdout + result.stderr
    assert result.returncode == 1, f"expected the suite to fail on {twin} (exit 1), got {result.returncode}:\n{output[-3000:]}"
    assert " failed" in output and " passed" not in output.splitlines()[-1], output[-2000:]
    assert reason in output, f"{twin}: the failure does not say {reason!r}:\n{output[-3000:]}"
    assert not (tmp_path / "run" / "state.json").exists(), "the twin cluster must be torn down"


CONFORMANCE = {
    "weak-apiserver": {"test_every_apiserver_lists_every_etcd_member", "test_authorization_is_rbac_and_node",
                       "test_anonymous_requests_are_refused_except_on_health_endpoints"},
    "etcd-plaintext-clients": {"test_etcd_peer_and_client_listeners_use_tls",
                               "test_plain_http_to_the_etcd_client_port_is_refused"},
    "etcd-no-peer-tls": {"test_etcd_peer_and_client_listeners_use_tls"},
    "no-leader-election": {"test_leader_election_is_on_with_the_topology_timings[kube-controller-manager]",
                           "test_leader_election_is_on_with_the_topology_timings[kube-scheduler]"},
    "lb-no-health-check": {"test_the_load_balancer_health_checks_readyz_over_tls_on_every_apiserver"},
    "loose-keys": {"test_private_keys_and_kubeconfigs_are_mode_0600"},
    "etcd-clients-blocked": {"test_the_etcd_client_port_is_reachable_from_every_controller"},
    "phantom-etcd-member": {"test_etcd_members_are_exactly_the_etcd_hosts"},
}


@pytest.mark.parametrize("twin", sorted(CONFORMANCE))
def test_each_conformance_check_fails_on_its_twin_and_only_there(tmp_path, twin):
    import xml.etree.ElementTree as ElementTree

    junit = tmp_path / "junit.xml"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "scenarios/conformance", f"--topology=clusters/defects/{twin}.yaml",
         f"--run-dir={tmp_path / 'run'}", f"--history-dir={tmp_path / 'histories'}", f"--junitxml={junit}",
         "-p", "no:cacheprovider", "-q"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    failed = {case.get("name") for case in ElementTree.parse(junit).getroot().iter("testcase")
              if case.find("failure") is not None or case.find("error") is not None}
    assert result.returncode == 1, (result.stdout + result.stderr)[-2000:]
    assert failed == CONFORMANCE[twin], f"{twin}: failed {sorted(failed)}, expected {sorted(CONFORMANCE[twin])}"
    assert not (tmp_path / "run" / "state.json").exists(), "the twin cluster must be torn down"
