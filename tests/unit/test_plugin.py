"""Quorum's pytest plugin registers every fixture a scenario relies on, the autouse ones included: a fixture that
is defined but not imported into the plugin is silently never used."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_scenario_that_uses_the_cluster_is_guarded_by_its_health_check_first(tmp_path):
    plan = subprocess.run([sys.executable, "-m", "pytest", "scenarios/etcd", "-k", "use_tls", "--setup-plan",
                           "-p", "no:cacheprovider", "--history-dir", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120).stdout
    setups = [line.split()[2] for line in plan.splitlines() if line.strip().startswith("SETUP")]
    assert "_cluster_guard" in setups, plan[-2000:]
