"""What a scenario run records for the gate (fixtures/evidence.py): run.json with the scenarios planned before any
selection, and each scenario's result record of this run, its skip's kind with it. A pytest session over a stand-in
scenarios/ directory, as `pytest scenarios/` would run, with Quorum's plugin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness.report.results import history_slug

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = '''
import pytest

from harness.scenario.skips import lacks


@pytest.mark.measures("availability_pct", "lost_writes")
def test_passes():
    pass


def test_lacks_a_spare_host():
    lacks("spare-host", "roles: [spare]: this topology has none")


@pytest.mark.nightly
def test_nightly_only():
    pass


def test_left_out_by_k():
    pass
'''


def test_a_run_records_its_plan_before_selection_and_a_result_per_scenario(tmp_path):
    suite = tmp_path / "scenarios" / "demo"
    suite.mkdir(parents=True)
    (suite / "test_demo.py").write_text(SCENARIOS)
    (tmp_path / "scenarios" / "demo" / "test_other.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["fixtures.plugin"]\n')
    histories = tmp_path / "histories"
    out = subprocess.run([sys.executable, "-m", "pytest", "scenarios/demo/test_demo.py", "-k", "not left_out",
                          f"--history-dir={histories}", "-p", "no:cacheprovider", "-q"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stdout + out.stderr
    run = json.loads((histories / "run.json").read_text())
    demo = "scenarios/demo/test_demo.py"
    assert run["planned"]["demo"] == sorted(f"{demo}::test_{n}" for n in ("passes", "lacks_a_spare_host",
                                                                           "nightly_only", "left_out_by_k"))
    assert run["files"]["demo"] == ["scenarios/demo/test_demo.py", "scenarios/demo/test_other.py"]
    assert run["collected_files"] == [demo]  # test_other.py was not collected: the gate names it
    assert run["measures"] == {f"{demo}::test_passes": ["availability_pct", "lost_writes"]}

    def result(name: str) -> dict:
        lines = (histories / f"{history_slug(f'{demo}::{name}')}.jsonl").read_text().splitlines()
        records = [json.loads(line) for line in lines]
        assert all(r["run_id"] == run["run_id"] for r in records)
        return records[-1]

    assert result("test_passes")["outcome"] == "passed"
    assert result("test_lacks_a_spare_host")["skip"] == {"kind": "lacks", "lacking": ["spare-host"]}
    assert result("test_nightly_only")["skip"] == {"kind": "profile", "lacking": []}
    assert not (histories / f"{history_slug(f'{demo}::test_left_out_by_k')}.jsonl").exists()


def test_a_scenario_declaring_a_measure_that_does_not_exist_stops_the_session_naming_it(tmp_path):
    suite = tmp_path / "scenarios" / "demo"
    suite.mkdir(parents=True)
    (suite / "test_demo.py").write_text("import pytest\n\n\n@pytest.mark.measures('availability')\n"
                                        "def test_x():\n    pass\n")
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["fixtures.plugin"]\n')
    out = subprocess.run([sys.executable, "-m", "pytest", "scenarios/demo", f"--history-dir={tmp_path / 'h'}",
                          "-p", "no:cacheprovider", "-q"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 4, out.stdout + out.stderr
    assert "declares unknown measures ['availability']" in out.stderr and "availability_pct" in out.stderr
    assert "Traceback" not in out.stdout + out.stderr


def test_a_collection_writes_no_run_for_the_gate_to_find(tmp_path):
    """`pytest scenarios --collect-only` judges nothing: it leaves no run.json or junit.xml, so `quorum gate` never
    takes it for the newest run's results."""
    suite = tmp_path / "scenarios" / "demo"
    suite.mkdir(parents=True)
    (suite / "test_demo.py").write_text(SCENARIOS)
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["fixtures.plugin"]\n')
    histories = tmp_path / "histories"
    out = subprocess.run([sys.executable, "-m", "pytest", "scenarios/demo", "--collect-only",
                          f"--history-dir={histories}", "-p", "no:cacheprovider", "-q"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0 and "test_passes" in out.stdout, out.stdout + out.stderr
    assert not histories.exists() or not any(histories.iterdir()), sorted(histories.iterdir())
