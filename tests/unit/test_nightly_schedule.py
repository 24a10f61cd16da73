"""The nightly schedule Quorum ships (contrib/, docs/ci.md): a systemd service and timer that systemd itself accepts,
and a GitHub Actions workflow that GitHub's published schema accepts, each running `./run.sh nightly`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SYSTEMD = ROOT / "contrib" / "systemd"
WORKFLOW = ROOT / "contrib" / "github" / "quorum-nightly.yml"


def test_the_systemd_service_and_timer_are_what_systemd_analyze_verify_accepts(tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed here")
    for unit in ("quorum-nightly.service", "quorum-nightly.timer"):  # the clone's path in place of /opt/quorum
        (tmp_path / unit).write_text((SYSTEMD / unit).read_text().replace("/opt/quorum", str(ROOT)))
    out = subprocess.run(["systemd-analyze", "verify", "--man=no", str(tmp_path / "quorum-nightly.service"),
                          str(tmp_path / "quorum-nightly.timer")], capture_output=True, text=True, timeout=60)
    problems = [line for line in (out.stdout + out.stderr).splitlines() if "quorum-nightly" in line]
    assert out.returncode == 0 and not problems, out.stdout + out.stderr
    assert f"ExecStart={ROOT}/run.sh nightly" in (tmp_path / "quorum-nightly.service").read_text()


def test_a_broken_unit_is_refused_by_the_same_check(tmp_path):
    """The check can fail: a service whose command does not exist."""
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed here")
    text = (SYSTEMD / "quorum-nightly.service").read_text().replace("/opt/quorum", str(ROOT))
    (tmp_path / "quorum-nightly.service").write_text(text.replace("run.sh nightly", "no-such-script nightly"))
    out = subprocess.run(["systemd-analyze", "verify", "--man=no", str(tmp_path / "quorum-nightly.service")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 or "no-such-script" in out.stdout + out.stderr


def _schema_check(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, timeout=120)


def test_the_workflow_is_what_githubs_workflow_schema_accepts_and_runs_the_nightly_job():
    out = _schema_check(WORKFLOW)
    assert out.returncode == 0, out.stdout + out.stderr
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["nightly"]["steps"]
    assert any("./run.sh nightly" in step.get("run", "") for step in steps)


def test_a_workflow_the_schema_refuses_is_refused(tmp_path):
    broken = yaml.safe_load(WORKFLOW.read_text())
    broken["jobs"]["nightly"]["runs-on"] = {"not": "a runner"}
    path = tmp_path / "broken.yml"
    path.write_text(yaml.safe_dump(broken))
    assert _schema_check(path).returncode != 0
