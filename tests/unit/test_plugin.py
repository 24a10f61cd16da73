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


def test_a_fixture_that_needs_what_the_target_cannot_give_skips_its_scenario_with_the_reason(tmp_path):
    (tmp_path / "test_unsupported.py").write_text(
        "import pytest\n"
        "from harness.target.protocol import Unsupported\n\n"
        "@pytest.fixture\n"
        "def credentials():\n"
        "    raise Unsupported('the kubeconfig holds a token, not a client certificate', 'give a certificate')\n\n"
        "def test_load(credentials):\n"
        "    pass\n")
    result = subprocess.run([sys.executable, "-m", "pytest", str(tmp_path / "test_unsupported.py"), "-p",
                             "fixtures.plugin", "-p", "no:cacheprovider", "-rs", "--history-dir", str(tmp_path / "h"),
                             "--rootdir", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120, env={**__import__("os").environ,
                                                                                         "PYTHONPATH": str(ROOT)})
    assert "1 skipped" in result.stdout, result.stdout[-2000:] + result.stderr[-2000:]
    assert "not on this target: the kubeconfig holds a token" in result.stdout


def test_a_scaled_profile_keeps_its_load_and_shortens_its_durations():
    import pytest

    from fixtures.settings import PROFILES

    quick = PROFILES["nightly"].scaled(0.05)
    assert (quick.load_s, quick.slo_window_s, quick.soak_s) == (45.0, 15.0, 1.5)
    assert (quick.load_users, quick.load_rate_per_s, quick.repeats, quick.name) == (40, 40.0, 3, "nightly x0.05")
    assert PROFILES["ci"].scaled(1.0) is PROFILES["ci"]
    for wrong in (0.0, 1.5, -1.0):
        with pytest.raises(pytest.UsageError, match="not in"):
            PROFILES["nightly"].scaled(wrong)
